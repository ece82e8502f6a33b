package gitpack

// The connectivity check of a received pack: before refs move to its tips,
// everything reachable from them must exist, in the pack or in the Store.
// Only the incoming objects are walked (stored ones are complete by
// construction), and tree entry names can be checked on the way.

import (
	"bytes"
	"fmt"
	"strconv"
)

// CheckConnected verifies that everything reachable from tips exists
// either in the incoming pack or in the store, walking only into the
// incoming objects (the stored ones are complete by construction).
func (s *Store) CheckConnected(in *Incoming, tips []Hash) error {
	return s.CheckConnectedTrees(in, tips, nil)
}

// TreeEntryError is CheckConnectedTrees's refusal of a tree entry's name.
type TreeEntryError struct {
	Tree    Hash
	Problem string
}

func (e *TreeEntryError) Error() string {
	return "gitpack: object " + e.Tree.String() + ": " + e.Problem
}

// CheckConnectedTrees is CheckConnected that also hands the name of every
// entry of every incoming tree to checkName (nil: no check), which answers
// "" for a good name and the problem otherwise (returned as a
// *TreeEntryError). The trees the walk reads are checked as it reads them,
// so a push's trees are read once; the incoming trees no tip reaches are
// read afterwards (the pack would be installed with them, and a later
// push could point at them without their being walked again).
func (s *Store) CheckConnectedTrees(in *Incoming, tips []Hash, checkName func(name []byte) string) error {
	var inp *pack
	if in != nil {
		inp = in.p
	}
	c := &connCheck{s: s, inp: inp, seen: make(map[Hash]bool), checkName: checkName}
	if inp != nil {
		c.sn = &snapshot{packs: []*pack{inp}}
	}
	for _, t := range tips {
		if err := c.need(t, 0, Hash{}, "tip", nil); err != nil {
			return err
		}
	}
	for len(c.queue) > 0 {
		q := c.queue[len(c.queue)-1]
		c.queue = c.queue[:len(c.queue)-1]
		if err := c.walk(q); err != nil {
			return err
		}
	}
	if checkName == nil || inp == nil {
		return nil
	}
	for _, h := range in.trees {
		if c.seen[h] {
			continue // walked above
		}
		i, ok := inp.idx.find(h)
		if !ok {
			continue // a base a thin pack was completed with: stored already
		}
		_, data, err := s.readEntry(c.sn, inp, inp.idx.offset(i))
		if err != nil {
			return fmt.Errorf("gitpack: object %s: %w", h, err)
		}
		if err := c.checkNames(h, data); err != nil {
			return err
		}
	}
	return nil
}

type connCheck struct {
	s         *Store
	inp       *pack
	sn        *snapshot
	seen      map[Hash]bool
	queue     []queued
	checkName func([]byte) string
}

// checkNames runs checkName on the entries of tree h.
func (c *connCheck) checkNames(h Hash, data []byte) error {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return fmt.Errorf("gitpack: tree %s: corrupt", h)
		}
		nul := bytes.IndexByte(data[sp:], 0)
		if nul < 0 || sp+nul+21 > len(data) {
			return fmt.Errorf("gitpack: tree %s: corrupt", h)
		}
		if p := c.checkName(data[sp+1 : sp+nul]); p != "" {
			return &TreeEntryError{Tree: h, Problem: p}
		}
		data = data[sp+nul+21:]
	}
	return nil
}

type queued struct {
	h   Hash
	off int64
	typ Type // expected type, 0 if any
}

// need records a reference from `from` to h, which should be of type t
// (0: any). what (and name, for a tree entry) say what the reference is,
// for the error (formatted only then: trees have many entries).
func (c *connCheck) need(h Hash, t Type, from Hash, what string, name []byte) error {
	if c.seen[h] {
		return nil
	}
	c.seen[h] = true
	if c.inp != nil {
		if i, ok := c.inp.idx.find(h); ok {
			if t == Blob {
				return nil // present; blobs reference nothing
			}
			c.queue = append(c.queue, queued{h, c.inp.idx.offset(i), t})
			return nil
		}
	}
	if c.s.Has(h) {
		return nil
	}
	if name != nil {
		what += " " + strconv.Quote(string(name))
	}
	if from.IsZero() {
		return fmt.Errorf("gitpack: missing object %s (%s)", h, what)
	}
	return fmt.Errorf("gitpack: missing object %s (%s of %s)", h, what, from)
}

// walk reads an incoming object and needs what it references.
func (c *connCheck) walk(q queued) error {
	t, data, err := c.s.readEntry(c.sn, c.inp, q.off)
	if err != nil {
		return fmt.Errorf("gitpack: object %s: %w", q.h, err)
	}
	if q.typ != 0 && t != q.typ {
		return fmt.Errorf("gitpack: object %s is a %s, referenced as a %s", q.h, t, q.typ)
	}
	switch t {
	case Commit:
		return c.walkCommit(q.h, data)
	case Tag:
		return c.walkTag(q.h, data)
	case Tree:
		return c.walkTree(q.h, data)
	}
	return nil
}

func (c *connCheck) walkCommit(h Hash, data []byte) error {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			break // end of the headers
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		var t Type
		switch string(key) {
		case "tree":
			t = Tree
		case "parent":
			t = Commit
		default:
			continue
		}
		id, ok := ParseHex(val)
		if !ok {
			return fmt.Errorf("gitpack: commit %s: bad %s line", h, key)
		}
		if err := c.need(id, t, h, string(key), nil); err != nil {
			return err
		}
	}
	return nil
}

func (c *connCheck) walkTag(h Hash, data []byte) error {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	val, ok := bytes.CutPrefix(line, []byte("object "))
	if !ok {
		return fmt.Errorf("gitpack: tag %s: no object line", h)
	}
	id, ok := ParseHex(val)
	if !ok {
		return fmt.Errorf("gitpack: tag %s: bad object line", h)
	}
	return c.need(id, 0, h, "tagged object", nil)
}

func (c *connCheck) walkTree(h Hash, data []byte) error {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return fmt.Errorf("gitpack: tree %s: corrupt", h)
		}
		mode := data[:sp]
		nul := bytes.IndexByte(data[sp:], 0)
		if nul < 0 || sp+nul+21 > len(data) {
			return fmt.Errorf("gitpack: tree %s: corrupt", h)
		}
		name := data[sp+1 : sp+nul]
		if c.checkName != nil {
			if p := c.checkName(name); p != "" {
				return &TreeEntryError{Tree: h, Problem: p}
			}
		}
		var id Hash
		copy(id[:], data[sp+nul+1:])
		data = data[sp+nul+21:]
		var t Type
		switch string(mode) {
		case "160000":
			continue // a submodule's commit lives elsewhere
		case "40000", "040000":
			t = Tree
		default:
			t = Blob
		}
		if err := c.need(id, t, h, "entry", name); err != nil {
			return err
		}
	}
	return nil
}
