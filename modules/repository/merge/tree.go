package merge

// This file owns the tree-level merge. It follows git's merge-ort: walk the
// three trees together, resolve what one side alone changed, detect renames
// on each side, then settle every remaining path (content merges, add/add,
// modify/delete, file/directory and type conflicts) children first, so that
// a directory is known to survive before a file that wants its place is
// moved aside.

import (
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Entry is one non-tree entry of a tree: a file, symlink or gitlink.
type Entry struct {
	Mode filemode.FileMode
	Hash plumbing.Hash
}

// ConflictKind names a kind of conflict with the word git prints in
// "CONFLICT (kind): ...".
type ConflictKind string

// Conflict kinds.
const (
	// ConflictContent: both sides changed a file and the line merge left
	// conflict markers.
	ConflictContent ConflictKind = "content"
	// ConflictAddAdd: both sides added different files at one path.
	ConflictAddAdd ConflictKind = "add/add"
	// ConflictBinary: both sides changed a binary file; ours was kept.
	ConflictBinary ConflictKind = "binary"
	// ConflictModifyDelete: one side changed a file the other deleted;
	// the changed file is kept.
	ConflictModifyDelete ConflictKind = "modify/delete"
	// ConflictRenameDelete: one side renamed a file the other deleted.
	ConflictRenameDelete ConflictKind = "rename/delete"
	// ConflictRenameRename: the sides renamed one file to different paths.
	ConflictRenameRename ConflictKind = "rename/rename"
	// ConflictRenameCollision: a renamed file collides with another path
	// and their contents conflict.
	ConflictRenameCollision ConflictKind = "rename involved in collision"
	// ConflictFileDirectory: a file where the other side has a directory;
	// the file was moved to path~side.
	ConflictFileDirectory ConflictKind = "file/directory"
	// ConflictDistinctTypes: the sides have different kinds of entry
	// (file, symlink, submodule) at one path; one or both were moved to
	// path~side.
	ConflictDistinctTypes ConflictKind = "distinct types"
	// ConflictSubmodule: both sides moved a submodule to different
	// commits (submodule histories are not consulted).
	ConflictSubmodule ConflictKind = "submodule"
)

// Different executable bits on the two sides can only conflict when both
// sides added the file (otherwise one side kept the base mode and the other
// side's change wins); git reports that as add/add, and so do we.

// Options configures MergeTrees. The zero value labels the sides "base",
// "ours" and "theirs" and detects renames as git does.
type Options struct {
	// BaseLabel, OursLabel and TheirsLabel name the sides in conflict
	// markers, in messages and in the path~side names of moved files,
	// as branch names do in git.
	BaseLabel, OursLabel, TheirsLabel string
	// NoRenames turns rename detection off.
	NoRenames bool
	// RenameScore is the similarity, in percent, from which a deleted
	// and an added file count as a rename; 0 means git's 50.
	RenameScore int
	// RenameLimit bounds inexact rename detection to sources*targets <=
	// RenameLimit²; 0 means git's 7000.
	RenameLimit int
	// Style and Favor are passed to the line merge of each file.
	Style Style
	Favor Favor
}

// Conflict is one path left conflicted, with the index stages git would
// record for it.
type Conflict struct {
	// Path is where the conflict is in the result tree.
	Path string
	Kind ConflictKind
	// Base, Ours and Theirs are the versions involved (nil when absent),
	// and BasePath, OursPath and TheirsPath where they came from; those
	// differ from Path after renames.
	Base, Ours, Theirs             *Entry
	BasePath, OursPath, TheirsPath string
	// Message is git's message for the conflict.
	Message string
}

// Message is one line of what git merge-tree --messages prints, with the
// paths it is about.
type Message struct {
	Kind  ConflictKind // empty for informational messages
	Paths []string
	Text  string
}

// Result is the outcome of MergeTrees.
type Result struct {
	// Tree is the merged tree, written to the storer whether or not the
	// merge is clean; conflicted files hold conflict markers.
	Tree      plumbing.Hash
	Clean     bool
	Conflicts []Conflict
	Messages  []Message
}

// Err returns nil for a clean merge and otherwise an error wrapping
// ErrConflict that names the conflicted paths.
func (r *Result) Err() error {
	if r.Clean {
		return nil
	}
	paths := make([]string, len(r.Conflicts))
	for i, c := range r.Conflicts {
		paths[i] = c.Path
	}
	return fmt.Errorf("%w in %s", ErrConflict, strings.Join(paths, ", "))
}

const (
	sideBase   = 0
	sideOurs   = 1
	sideTheirs = 2
)

// node is one path seen in at least one of the three trees.
type node struct {
	path string
	// stages are the entries at path on each side; directories appear
	// with mode Dir and their tree hash until they are set aside.
	stages       [3]Entry
	pathnames    [3]string
	filemask     uint8 // sides with a non-tree entry here
	dirmask      uint8 // sides with a tree here
	matchMask    uint8 // sides known equal: 3 ours=base, 5 theirs=base, 6 ours=theirs
	dfConflict   bool
	pathConflict bool
	// clean marks a path settled; result is its entry, isNull that it
	// is gone from the result.
	clean  bool
	isNull bool
	result Entry
	// nonEmpty marks a directory that keeps entries in the result.
	nonEmpty bool
}

// treeMerge is the state of one MergeTrees call.
type treeMerge struct {
	s          storer.EncodedObjectStorer
	opts       Options
	labels     [3]string
	paths      map[string]*node
	conflicted map[string]*node
	messages   []Message
	candidates [3]renameCandidates
}

// MergeTrees merges the changes from base to ours and from base to theirs.
// A nil tree stands for the empty tree (a nil base merges histories without
// a common ancestor). The result tree and any new blobs are written to s.
func MergeTrees(s storer.EncodedObjectStorer, base, ours, theirs *object.Tree, opts Options) (*Result, error) {
	m := &treeMerge{
		s:          s,
		opts:       opts,
		labels:     [3]string{opts.BaseLabel, opts.OursLabel, opts.TheirsLabel},
		paths:      make(map[string]*node),
		conflicted: make(map[string]*node),
	}
	for i, def := range []string{"base", "ours", "theirs"} {
		if m.labels[i] == "" {
			m.labels[i] = def
		}
	}
	if err := m.collect("", [3]*object.Tree{base, ours, theirs}); err != nil {
		return nil, err
	}
	if !opts.NoRenames {
		if err := m.renames(); err != nil {
			return nil, err
		}
	}
	if err := m.process(); err != nil {
		return nil, err
	}
	tree, err := m.writeTree()
	if err != nil {
		return nil, err
	}
	return m.result(tree), nil
}

// readEntries lists a tree's entries by name; a nil tree has none.
func readEntries(t *object.Tree) (map[string]Entry, error) {
	out := make(map[string]Entry)
	if t == nil {
		return out, nil
	}
	for _, e := range t.Entries {
		mode := e.Mode
		switch mode {
		case filemode.Regular, filemode.Executable, filemode.Symlink, filemode.Submodule, filemode.Dir:
		case filemode.Deprecated:
			mode = filemode.Regular // git reads 100664 as 100644
		default:
			return nil, fmt.Errorf("%w: %q has mode %o", ErrUnsupportedEntry, e.Name, uint32(e.Mode))
		}
		out[e.Name] = Entry{Mode: mode, Hash: e.Hash}
	}
	return out, nil
}

func (m *treeMerge) getTree(h plumbing.Hash, where string) (*object.Tree, error) {
	t, err := object.GetTree(m.s, h)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("%w: tree %s at %q", ErrMissingObject, h, where)
		}
		return nil, fmt.Errorf("merge: read tree %s at %q: %w", h, where, err)
	}
	return t, nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// collect walks one directory level of the three trees. Paths where at
// most one side differs from the base in a way that cannot involve renames
// are settled right away; the rest become open nodes.
func (m *treeMerge) collect(dir string, trees [3]*object.Tree) error {
	var entries [3]map[string]Entry
	names := map[string]bool{}
	for i, t := range trees {
		e, err := readEntries(t)
		if err != nil {
			return err
		}
		entries[i] = e
		for n := range e {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)

	for _, name := range sorted {
		p := joinPath(dir, name)
		n := &node{path: p, pathnames: [3]string{p, p, p}}
		for i := range 3 {
			e, ok := entries[i][name]
			if !ok {
				continue
			}
			n.stages[i] = e
			if e.Mode == filemode.Dir {
				n.dirmask |= 1 << i
			} else {
				n.filemask |= 1 << i
			}
		}
		m.paths[p] = n
		present := func(i int) bool { return n.stages[i].Mode != 0 }
		same := func(i, j int) bool { return present(i) && present(j) && n.stages[i] == n.stages[j] }
		oursIsBase, theirsIsBase, sidesMatch := same(sideOurs, sideBase), same(sideTheirs, sideBase), same(sideOurs, sideTheirs)
		switch {
		case oursIsBase && theirsIsBase:
			n.settle(n.stages[sideBase])
			continue
		case sidesMatch && n.filemask == 7:
			n.settle(n.stages[sideOurs])
			continue
		case oursIsBase && n.filemask == 7:
			n.settle(n.stages[sideTheirs])
			continue
		case theirsIsBase && n.filemask == 7:
			n.settle(n.stages[sideOurs])
			continue
		}
		switch {
		case oursIsBase && theirsIsBase:
		case oursIsBase:
			n.matchMask = 3
		case theirsIsBase:
			n.matchMask = 5
		case sidesMatch:
			n.matchMask = 6
		}
		n.dfConflict = n.filemask != 0 && n.dirmask != 0
		m.noteRenameCandidates(n)
		if n.dirmask == 0 {
			continue
		}
		n.isNull = true // until something is written under it
		n.matchMask &= n.filemask
		var sub [3]*object.Tree
		for i := range 3 {
			if n.dirmask&(1<<i) == 0 {
				continue
			}
			t, err := m.getTree(n.stages[i].Hash, p)
			if err != nil {
				return err
			}
			sub[i] = t
		}
		if err := m.collect(p, sub); err != nil {
			return err
		}
	}
	return nil
}

func (n *node) settle(e Entry) {
	n.clean = true
	n.result = e
	n.isNull = e.Mode == 0
}

// sameType compares the kind of two entries: regular file (either mode),
// symlink, gitlink, tree, or absent.
func sameType(a, b filemode.FileMode) bool { return typeOf(a) == typeOf(b) }

func typeOf(m filemode.FileMode) int {
	switch m {
	case filemode.Regular, filemode.Executable:
		return 1
	case filemode.Symlink:
		return 2
	case filemode.Submodule:
		return 3
	case filemode.Dir:
		return 4
	}
	return 0
}

func isRegular(m filemode.FileMode) bool { return typeOf(m) == 1 }

func (m *treeMerge) msg(kind ConflictKind, paths []string, format string, args ...any) {
	m.messages = append(m.messages, Message{Kind: kind, Paths: paths, Text: fmt.Sprintf(format, args...)})
}

// uniquePath is where a file that cannot stay at p goes: p~label, with a
// numeric suffix when that is taken.
func (m *treeMerge) uniquePath(p, label string) string {
	base := p + "~" + strings.ReplaceAll(label, "/", "_")
	np := base
	for i := 0; m.paths[np] != nil; i++ {
		np = fmt.Sprintf("%s_%d", base, i)
	}
	return np
}

// processOrder sorts paths as if each ended in "/", so that a directory
// comes right before its contents; walking it backwards settles a
// directory's contents before the directory.
func processOrder(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	c1, c2 := byte('/'), byte('/')
	if i < len(a) {
		c1 = a[i]
	}
	if i < len(b) {
		c2 = b[i]
	}
	if c1 == c2 {
		if i < len(a) {
			return 1
		}
		return -1
	}
	return int(c1) - int(c2)
}

func (m *treeMerge) process() error {
	order := make([]string, 0, len(m.paths))
	for p := range m.paths {
		order = append(order, p)
	}
	slices.SortFunc(order, processOrder)
	for i := len(order) - 1; i >= 0; i-- {
		n := m.paths[order[i]]
		switch {
		case n == nil || n.path != order[i]:
			// Moved away while handling a path processed earlier.
		case n.clean:
			if !n.isNull {
				m.markParents(n.path)
			}
		default:
			if err := m.processNode(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// markParents records that the directories above p keep entries.
func (m *treeMerge) markParents(p string) {
	for {
		d := path.Dir(p)
		if d == "." || d == "/" {
			return
		}
		if n := m.paths[d]; n != nil {
			if n.nonEmpty {
				return
			}
			n.nonEmpty = true
		}
		p = d
	}
}

func (m *treeMerge) processNode(n *node) error {
	dfFileSide := 0
	if n.dirmask != 0 {
		if n.filemask == 0 {
			return nil
		}
		if !n.nonEmpty {
			// The directory merged away: the file can have the path.
			n.dfConflict = false
			n.matchMask &^= n.dirmask
			n.dirmask = 0
			for i := range 3 {
				if n.filemask&(1<<i) == 0 {
					n.stages[i] = Entry{}
				}
			}
			n.isNull = false
		} else {
			if n.filemask == 1 {
				n.filemask = 0
				return nil
			}
			// The directory stays; move the file aside.
			f := *n
			f.matchMask &^= f.dirmask
			f.dirmask = 0
			f.nonEmpty = false
			f.isNull = false
			for i := range 3 {
				if f.filemask&(1<<i) == 0 {
					f.stages[i] = Entry{}
				}
			}
			dfFileSide = sideOurs
			if n.dirmask&(1<<sideOurs) != 0 {
				dfFileSide = sideTheirs
			}
			label := m.labels[dfFileSide]
			old := n.path
			f.path = m.uniquePath(old, label)
			m.paths[f.path] = &f
			m.msg(ConflictFileDirectory, []string{f.path, old},
				"CONFLICT (file/directory): directory in the way of %s from %s; moving it to %s instead.",
				old, label, f.path)
			n.filemask = 0
			n = &f
		}
	}

	o, a, b := n.stages[sideBase], n.stages[sideOurs], n.stages[sideTheirs]
	switch {
	case n.matchMask != 0:
		n.clean = !n.dfConflict && !n.pathConflict
		if n.matchMask == 6 {
			n.result = a
		} else {
			side := sideOurs
			if 7&^n.matchMask == 4 {
				side = sideTheirs
			}
			n.result = n.stages[side]
			n.isNull = n.result.Mode == 0
			if n.isNull {
				n.clean = true
			}
		}
	case n.filemask >= 6 && !sameType(a.Mode, b.Mode):
		return m.distinctTypes(n)
	case n.filemask >= 6:
		merged, clean, err := m.contentMerge(n.path, o, a, b, n.pathnames, 0)
		if err != nil {
			return err
		}
		n.clean = clean && !n.dfConflict && !n.pathConflict
		n.result = merged
		n.isNull = merged.Mode == 0
		if clean && n.dfConflict {
			n.filemask = 1 << dfFileSide
			n.stages[dfFileSide] = merged
		}
		if !clean {
			kind, reason := ConflictContent, "content"
			if n.filemask == 6 {
				kind, reason = ConflictAddAdd, "add/add"
			}
			if merged.Mode == filemode.Submodule {
				kind, reason = ConflictSubmodule, "submodule"
			}
			m.msg(kind, []string{n.path}, "CONFLICT (%s): Merge conflict in %s", reason, n.path)
		}
	case n.filemask == 3 || n.filemask == 5:
		side, other := sideOurs, sideTheirs
		if n.filemask == 5 {
			side, other = sideTheirs, sideOurs
		}
		n.result = n.stages[side]
		n.clean = false
		if !(n.pathConflict && o.Hash == n.stages[side].Hash) {
			m.msg(ConflictModifyDelete, []string{n.path},
				"CONFLICT (modify/delete): %s deleted in %s and modified in %s.  Version %s of %s left in tree.",
				n.path, m.labels[other], m.labels[side], m.labels[side], n.path)
		}
	case n.filemask == 2 || n.filemask == 4:
		side := sideOurs
		if n.filemask == 4 {
			side = sideTheirs
		}
		n.result = n.stages[side]
		n.clean = !n.dfConflict && !n.pathConflict
	case n.filemask == 1:
		n.isNull = true
		n.result = Entry{}
		n.clean = !n.pathConflict
	}
	m.finish(n)
	return nil
}

// finish records a processed node as conflicted when it is, and its
// directories as non-empty when it stays.
func (m *treeMerge) finish(n *node) {
	if !n.clean {
		m.conflicted[n.path] = n
	}
	if !n.isNull {
		m.markParents(n.path)
	}
}

// distinctTypes handles a path where the sides hold different kinds of
// entry: the regular file (or, failing that, both) moves to path~side.
func (m *treeMerge) distinctTypes(n *node) error {
	a, b := n.stages[sideOurs], n.stages[sideTheirs]
	renameA, renameB := false, false
	switch {
	case isRegular(a.Mode):
		renameA = true
	case isRegular(b.Mode):
		renameB = true
	default:
		renameA, renameB = true, true
	}
	var aPath, bPath string
	if renameA {
		aPath = m.uniquePath(n.path, m.labels[sideOurs])
	}
	if renameB {
		bPath = m.uniquePath(n.path, m.labels[sideTheirs])
	}
	if renameA && renameB {
		m.msg(ConflictDistinctTypes, []string{n.path, aPath, bPath},
			"CONFLICT (distinct types): %s had different types on each side; renamed both of them so each can be recorded somewhere.", n.path)
	} else {
		moved := aPath
		if renameB {
			moved = bPath
		}
		m.msg(ConflictDistinctTypes, []string{n.path, moved},
			"CONFLICT (distinct types): %s had different types on each side; renamed one of them so each can be recorded somewhere.", n.path)
	}

	theirsNode := *n
	theirsNode.clean = false
	theirsNode.result = b
	theirsNode.isNull = false
	theirsNode.stages[sideOurs] = Entry{}
	theirsNode.filemask = 5
	if !sameType(b.Mode, n.stages[sideBase].Mode) {
		theirsNode.stages[sideBase] = Entry{}
		theirsNode.filemask = 4
	}

	n.clean = false
	n.result = a
	n.isNull = false
	n.stages[sideTheirs] = Entry{}
	n.filemask = 3
	if !sameType(a.Mode, n.stages[sideBase].Mode) {
		n.stages[sideBase] = Entry{}
		n.filemask = 2
	}

	orig := n.path
	if renameA {
		n.path = aPath
		m.paths[aPath] = n
	}
	if !renameB {
		bPath = orig
	}
	theirsNode.path = bPath
	m.paths[bPath] = &theirsNode
	if renameA && renameB {
		delete(m.paths, orig)
	}
	m.finish(&theirsNode)
	m.finish(n)
	return nil
}

// contentMerge merges one file's three versions: modes first (a mode
// change on one side wins; different changes on both sides conflict), then
// contents. o may be absent (add/add) or of another type; the merge is then
// two-way. pathnames are where each version came from, for the markers.
func (m *treeMerge) contentMerge(p string, o, a, b Entry, pathnames [3]string, extraMarker int) (Entry, bool, error) {
	clean := true
	var res Entry
	if a.Mode == b.Mode || a.Mode == o.Mode {
		res.Mode = b.Mode
	} else {
		res.Mode = a.Mode
		clean = b.Mode == o.Mode
	}

	switch {
	case a.Hash == b.Hash || a.Hash == o.Hash:
		res.Hash = b.Hash
	case b.Hash == o.Hash:
		res.Hash = a.Hash
	case isRegular(a.Mode):
		var baseContent []byte
		if sameType(o.Mode, a.Mode) {
			var err error
			if baseContent, err = m.readBlob(o.Hash, pathnames[0]); err != nil {
				return res, false, err
			}
		}
		oursContent, err := m.readBlob(a.Hash, pathnames[1])
		if err != nil {
			return res, false, err
		}
		theirsContent, err := m.readBlob(b.Hash, pathnames[2])
		if err != nil {
			return res, false, err
		}
		name1, name2 := m.labels[sideOurs], m.labels[sideTheirs]
		if pathnames[0] != pathnames[1] || pathnames[1] != pathnames[2] {
			name1 += ":" + pathnames[1]
			name2 += ":" + pathnames[2]
		}
		merged, conflicts, err := Merge3(baseContent, oursContent, theirsContent, LineOptions{
			OursLabel:   name1,
			TheirsLabel: name2,
			BaseLabel:   m.labels[sideBase],
			Style:       m.opts.Style,
			Favor:       m.opts.Favor,
			MarkerSize:  DefaultMarkerSize + extraMarker,
		})
		if errors.Is(err, ErrBinary) {
			m.msg(ConflictBinary, []string{p}, "warning: Cannot merge binary files: %s (%s vs. %s)", p, name1, name2)
		} else if err != nil {
			return res, false, err
		}
		if res.Hash, err = m.writeBlob(merged); err != nil {
			return res, false, err
		}
		clean = clean && len(conflicts) == 0
		m.msg("", []string{p}, "Auto-merging %s", p)
	case a.Mode == filemode.Submodule:
		// Submodule histories are not available here, so two different
		// moves of a submodule always conflict, keeping ours.
		res.Hash = a.Hash
		clean = false
		m.msg(ConflictSubmodule, []string{p}, "Failed to merge submodule %s (not checked out)", pathnames[0])
	default: // symlinks: no merging of targets
		res.Hash = a.Hash
		clean = m.opts.Favor == FavorOurs || m.opts.Favor == FavorTheirs
		if m.opts.Favor == FavorTheirs {
			res.Hash = b.Hash
		}
	}
	return res, clean, nil
}

func (m *treeMerge) readBlob(h plumbing.Hash, where string) ([]byte, error) {
	if h.IsZero() {
		return nil, nil
	}
	b, err := object.GetBlob(m.s, h)
	if err != nil {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil, fmt.Errorf("%w: blob %s at %q", ErrMissingObject, h, where)
		}
		return nil, fmt.Errorf("merge: read blob %s at %q: %w", h, where, err)
	}
	r, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("merge: read blob %s at %q: %w", h, where, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("merge: read blob %s at %q: %w", h, where, err)
	}
	return data, nil
}

func (m *treeMerge) writeBlob(data []byte) (plumbing.Hash, error) {
	obj := m.s.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge: write blob: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return plumbing.ZeroHash, fmt.Errorf("merge: write blob: %w", err)
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge: write blob: %w", err)
	}
	h, err := m.s.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge: write blob: %w", err)
	}
	return h, nil
}

// writeTree writes the result: every settled, present, non-directory node,
// and directories settled whole, nested into tree objects.
func (m *treeMerge) writeTree() (plumbing.Hash, error) {
	type dirEntries map[string]object.TreeEntry
	dirs := map[string]dirEntries{"": {}}
	var ensure func(d string)
	ensure = func(d string) {
		if _, ok := dirs[d]; ok {
			return
		}
		dirs[d] = dirEntries{}
		parent := path.Dir(d)
		if parent == "." {
			parent = ""
		}
		ensure(parent)
	}
	for p, n := range m.paths {
		if n.isNull || n.result.Mode == 0 {
			continue
		}
		if n.dirmask != 0 && !n.clean {
			continue // an open directory: written from its contents
		}
		d := path.Dir(p)
		if d == "." {
			d = ""
		}
		ensure(d)
		dirs[d][path.Base(p)] = object.TreeEntry{Name: path.Base(p), Mode: n.result.Mode, Hash: n.result.Hash}
	}
	// Write the deepest directories first so parents can refer to them.
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Slice(names, func(i, j int) bool {
		ci, cj := strings.Count(names[i], "/"), strings.Count(names[j], "/")
		if names[i] == "" || names[j] == "" {
			return names[j] == ""
		}
		if ci != cj {
			return ci > cj
		}
		return names[i] < names[j]
	})
	for _, d := range names {
		entries := dirs[d]
		if d == "" {
			continue
		}
		if len(entries) == 0 {
			continue
		}
		h, err := m.writeTreeObject(entries)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		parent := path.Dir(d)
		if parent == "." {
			parent = ""
		}
		dirs[parent][path.Base(d)] = object.TreeEntry{Name: path.Base(d), Mode: filemode.Dir, Hash: h}
	}
	return m.writeTreeObject(dirs[""])
}

// writeTreeObject writes one tree with its entries in git's order: by name,
// comparing a tree's name as if it ended in "/".
func (m *treeMerge) writeTreeObject(entries map[string]object.TreeEntry) (plumbing.Hash, error) {
	list := make([]object.TreeEntry, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(list, func(i, j int) bool { return key(list[i]) < key(list[j]) })
	t := &object.Tree{Entries: list}
	obj := m.s.NewEncodedObject()
	if err := t.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge: encode tree: %w", err)
	}
	h, err := m.s.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge: write tree: %w", err)
	}
	return h, nil
}

// result assembles the Result: one Conflict per conflicted path, with the
// first conflict message that names the path.
func (m *treeMerge) result(tree plumbing.Hash) *Result {
	r := &Result{Tree: tree, Clean: len(m.conflicted) == 0, Messages: m.messages}
	paths := make([]string, 0, len(m.conflicted))
	for p := range m.conflicted {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		n := m.conflicted[p]
		c := Conflict{Path: p}
		stage := func(i int) *Entry {
			if n.filemask&(1<<i) == 0 {
				return nil
			}
			e := n.stages[i]
			return &e
		}
		c.Base, c.Ours, c.Theirs = stage(sideBase), stage(sideOurs), stage(sideTheirs)
		if c.Base != nil {
			c.BasePath = n.pathnames[sideBase]
		}
		if c.Ours != nil {
			c.OursPath = n.pathnames[sideOurs]
		}
		if c.Theirs != nil {
			c.TheirsPath = n.pathnames[sideTheirs]
		}
		for _, msg := range m.messages {
			if msg.Kind != "" && slices.Contains(msg.Paths, p) {
				c.Kind, c.Message = msg.Kind, msg.Text
				break
			}
		}
		r.Conflicts = append(r.Conflicts, c)
	}
	return r
}
