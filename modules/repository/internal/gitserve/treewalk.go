package gitserve

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// pathTable interns tree paths (as parent path and name) and remembers,
// for each path, the last tree walked there. Successive versions of a
// tree differ in a few entries, so an entry byte-identical to one of the
// previous version at the same path is known to be marked already and
// needs no look-up in the object table.
type pathTable struct {
	ids  map[string]int32
	prev [][]byte
	key  []byte
}

func newPathTable() *pathTable {
	return &pathTable{ids: make(map[string]int32), prev: make([][]byte, 1)} // 0 is the root
}

func (p *pathTable) child(parent int32, name []byte) int32 {
	p.key = binary.LittleEndian.AppendUint32(p.key[:0], uint32(parent))
	p.key = append(p.key, name...)
	if id, ok := p.ids[string(p.key)]; ok {
		return id
	}
	id := int32(len(p.prev))
	p.ids[string(p.key)] = id
	p.prev = append(p.prev, nil)
	return id
}

// treeJob is a tree to read and walk.
type treeJob struct {
	idx  int32
	path int32
}

// walkTrees marks the trees at roots and everything under them wanted,
// except what is uninteresting or already wanted (and, with checkTaken,
// what is in a closed pack taken whole: its closure is in the pack too).
// Roots are taken in order (commits newest first) and each walked depth
// first, so that successive versions of a tree follow each other: they
// are one delta chain in the pack, whose bases the store has just cached.
// (Reading ahead on other goroutines was tried: the chains then get
// resolved twice, for more CPU and no gain in time.)
func (w *walker) walkTrees(roots []int32, inTaken func(plumbing.Hash) bool, checkTaken bool) error {
	if w.paths == nil {
		w.paths = newPathTable()
	}
	stack := w.jobs[:0]
	for _, root := range roots {
		if w.t.ents[root].flags&(fWanted|fUninteresting|fClosed) != 0 {
			continue
		}
		if checkTaken && inTaken(w.t.ents[root].id) {
			w.t.ents[root].flags |= fClosed
			continue
		}
		w.t.ents[root].flags |= fWanted
		w.count()
		stack = append(stack, treeJob{idx: root, path: 0})
		for len(stack) > 0 {
			if w.err != nil {
				return w.err
			}
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			t, data, err := w.read(j.idx)
			if err != nil {
				return err
			}
			if t != gitpack.Tree {
				return fmt.Errorf("gitserve: %s is a %s, not a tree", w.t.ents[j.idx].id, t)
			}
			if stack, err = w.walkTreeEntries(j, data, stack, inTaken, checkTaken); err != nil {
				return err
			}
		}
	}
	w.jobs = stack[:0]
	return nil
}

// walkTreeEntries marks the entries of one tree read for the walk.
func (w *walker) walkTreeEntries(r treeJob, tree []byte, stack []treeJob, inTaken func(plumbing.Hash) bool, checkTaken bool) ([]treeJob, error) {
	data := tree
	prev := w.paths.prev[r.path]
	for len(data) > 0 {
		// The common case: the entry is the previous version's next one
		// (the NUL ending the name is at the same place and the bytes up
		// to the end of the id are the same).
		if nul := bytes.IndexByte(data, 0); nul > 0 {
			if n := nul + 21; n <= len(data) && n <= len(prev) && prev[nul] == 0 && bytes.Equal(prev[:n], data[:n]) {
				prev = prev[n:]
				data = data[n:]
				continue
			}
		}
		kind, name, id, rest, ok := nextTreeEntry(data)
		if !ok {
			return stack, fmt.Errorf("gitserve: malformed tree %s", w.t.ents[r.idx].id)
		}
		n := len(data) - len(rest)
		entry := data[:n]
		data = rest
		// Line up the previous version: skip its entries that sort
		// before this one (removed since), and an entry of the same name.
		for len(prev) > 0 {
			if len(prev) >= n && bytes.Equal(prev[:n], entry) {
				break
			}
			_, pname, _, prest, ok := nextTreeEntry(prev)
			if !ok {
				prev = nil
				break
			}
			c := bytes.Compare(pname, name)
			if c > 0 {
				break // this entry is new
			}
			prev = prest
			if c == 0 {
				break // changed
			}
		}
		if len(prev) >= n && bytes.Equal(prev[:n], entry) {
			prev = prev[n:]
			continue // as in the previous version: marked already
		}
		if kind == entryGitlink {
			continue
		}
		idx, added := w.t.add(id)
		if !added && w.t.ents[idx].flags&(fWanted|fUninteresting|fClosed) != 0 {
			continue
		}
		if checkTaken && inTaken(id) {
			w.t.ents[idx].flags |= fClosed
			continue
		}
		w.t.ents[idx].flags |= fWanted
		w.count()
		if kind == entryTree {
			stack = append(stack, treeJob{idx: idx, path: w.paths.child(r.path, name)})
		}
	}
	w.paths.prev[r.path] = tree
	return stack, nil
}
