package internal

import (
	"bytes"
	"context"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/modules/repository/gitrepo"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// DiffView is the spec's diff entry (the contract's gitrepo.Diff).
type DiffView = gitrepo.Diff

// singlePatch lets the unified encoder write one file's patch.
type singlePatch struct{ fp fdiff.FilePatch }

func (p singlePatch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (p singlePatch) Message() string                { return "" }

// maxDiffBlob bounds the blobs a diff or a line count reads. go-git
// inflates both sides of a changed file whole, and diffs them whole when
// they are text, so a commit adding a 400 MB file cost gigabytes on every
// GET of the commit, its diff or its contributors. A changed file whose old
// or new blob is larger (sizes come from the object headers) gets an empty
// diff, as GitLab's too-large diffs have, and counts no lines, as a binary
// file does.
const maxDiffBlob = 1 << 20

// tooLargeToDiff reports whether either side of a change is a blob over
// maxDiffBlob.
func tooLargeToDiff(objs *gitpack.Store, ch *object.Change) bool {
	for _, e := range []object.ChangeEntry{ch.From, ch.To} {
		if e.Name == "" || e.TreeEntry.Mode == filemode.Submodule || e.TreeEntry.Mode == filemode.Dir {
			continue
		}
		if _, size, err := objs.Stat(e.TreeEntry.Hash); err == nil && size > maxDiffBlob {
			return true
		}
	}
	return false
}

// diffEntries compares two trees (from may be nil: a root commit) with
// rename detection, as GitLab's diff entries.
func diffEntries(ctx context.Context, objs *gitpack.Store, from, to *object.Tree) ([]DiffView, error) {
	changes, err := object.DiffTreeWithOptions(ctx, from, to, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, err
	}
	out := []DiffView{}
	for _, ch := range changes {
		if tooLargeToDiff(objs, ch) {
			out = append(out, largeEntry(ch))
			continue
		}
		patch, err := ch.PatchContext(ctx)
		if err != nil {
			return nil, err
		}
		for _, fp := range patch.FilePatches() {
			v, err := entryOf(fp)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// largeEntry is the entry of a change too large to diff: paths and modes,
// an empty diff.
func largeEntry(ch *object.Change) DiffView {
	v := DiffView{NewFile: ch.From.Name == "", DeletedFile: ch.To.Name == "", OldPath: ch.From.Name, NewPath: ch.To.Name}
	zero := "0"
	v.AMode, v.BMode = &zero, &zero
	if ch.From.Name != "" {
		m := modeOf(ch.From.TreeEntry.Mode)
		v.AMode = &m
	} else {
		v.OldPath = v.NewPath
	}
	if ch.To.Name != "" {
		m := modeOf(ch.To.TreeEntry.Mode)
		v.BMode = &m
	} else {
		v.NewPath = v.OldPath
	}
	v.RenamedFile = ch.From.Name != "" && ch.To.Name != "" && ch.From.Name != ch.To.Name
	return v
}

// entryOf is the entry of one file's patch.
func entryOf(fp fdiff.FilePatch) (DiffView, error) {
	a, b := fp.Files()
	v := DiffView{NewFile: a == nil, DeletedFile: b == nil}
	if a != nil {
		v.OldPath = a.Path()
		m := modeOf(a.Mode())
		v.AMode = &m
	}
	if b != nil {
		v.NewPath = b.Path()
		m := modeOf(b.Mode())
		v.BMode = &m
	}
	if a == nil {
		v.OldPath = v.NewPath
		zero := "0"
		v.AMode = &zero
	}
	if b == nil {
		v.NewPath = v.OldPath
		zero := "0"
		v.BMode = &zero
	}
	v.RenamedFile = a != nil && b != nil && a.Path() != b.Path()
	var buf bytes.Buffer
	if err := fdiff.NewUnifiedEncoder(&buf, fdiff.DefaultContextLines).Encode(singlePatch{fp}); err != nil {
		return v, err
	}
	v.Diff = hunks(buf.String(), fp.IsBinary())
	return v, nil
}

// commitStats counts the lines a commit adds and deletes against its first
// parent, as go-git's Commit.Stats does (no rename detection; binary files
// count nothing), except that files over maxDiffBlob count nothing either
// instead of being read.
func commitStats(ctx context.Context, objs *gitpack.Store, c *object.Commit) (Stats, error) {
	var st Stats
	to, err := c.Tree()
	if err != nil {
		return st, err
	}
	from := &object.Tree{}
	if c.NumParents() > 0 {
		p, err := c.Parent(0)
		if err != nil {
			return st, err
		}
		if from, err = p.Tree(); err != nil {
			return st, err
		}
	}
	changes, err := object.DiffTreeContext(ctx, from, to)
	if err != nil {
		return st, err
	}
	small := changes[:0]
	for _, ch := range changes {
		if !tooLargeToDiff(objs, ch) {
			small = append(small, ch)
		}
	}
	patch, err := small.PatchContext(ctx)
	if err != nil {
		return st, err
	}
	for _, fp := range patch.FilePatches() {
		for _, chunk := range fp.Chunks() {
			text := chunk.Content()
			if text == "" {
				continue
			}
			n := strings.Count(text, "\n")
			if text[len(text)-1] != '\n' {
				n++
			}
			switch chunk.Type() {
			case fdiff.Add:
				st.Additions += n
			case fdiff.Delete:
				st.Deletions += n
			}
		}
	}
	st.Total = st.Additions + st.Deletions
	return st, nil
}

// hunks keeps the part of a file's unified diff from its first "@@" on (the
// headers are in the entry's fields); a binary file keeps git's one line.
func hunks(patch string, binary bool) string {
	if binary {
		if i := strings.Index(patch, "Binary files"); i >= 0 {
			return patch[i:]
		}
		return ""
	}
	if i := strings.Index(patch, "\n@@ "); i >= 0 {
		return patch[i+1:]
	}
	if strings.HasPrefix(patch, "@@ ") {
		return patch
	}
	return ""
}

// commitDiffEntries is a commit's diff against its first parent (a root
// commit's against nothing): the API's commit diff and the commit page.
func (rd *Reader) commitDiffEntries(ctx context.Context, projectID int64, c *object.Commit) ([]DiffView, error) {
	to, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var from *object.Tree
	if c.NumParents() > 0 {
		p, err := c.Parent(0)
		if err != nil {
			return nil, err
		}
		if from, err = p.Tree(); err != nil {
			return nil, err
		}
	}
	objs, err := rd.store.Objects(projectID)
	if err != nil {
		return nil, err
	}
	return diffEntries(ctx, objs, from, to)
}
