package gitserve

import (
	"encoding/binary"

	"github.com/go-git/go-git/v5/plumbing"
)

// objEntry is one object a walk met.
type objEntry struct {
	id     plumbing.Hash
	flags  uint16
	commit int32 // index into walker.commits, -1 when not parsed
}

// objTable numbers the objects a walk meets: an open-addressed hash table
// from id to a dense index into ents. Object ids are uniformly
// distributed, so their bytes are the hash: a slot holds 32 bits of the id
// (bytes 8-12) beside the index, so that a probe touches an entry only
// when those match. Nothing is allocated per object beyond amortised
// slice growth.
type objTable struct {
	slots []uint64 // tag<<32 | index+1; 0 = empty
	mask  uint64
	ents  []objEntry
}

func newObjTable(hint int) *objTable {
	n := 1024
	for n < hint*2 {
		n <<= 1
	}
	return &objTable{
		slots: make([]uint64, n),
		mask:  uint64(n - 1),
		ents:  make([]objEntry, 0, hint),
	}
}

func hashParts(h *plumbing.Hash) (slot, tag uint64) {
	return binary.LittleEndian.Uint64(h[:8]), uint64(binary.LittleEndian.Uint32(h[8:12]))
}

// find returns the index of h, or -1.
func (t *objTable) find(h plumbing.Hash) int32 {
	s, tag := hashParts(&h)
	i := s & t.mask
	for {
		v := t.slots[i]
		if v == 0 {
			return -1
		}
		if v>>32 == tag {
			if idx := int32(uint32(v)) - 1; t.ents[idx].id == h {
				return idx
			}
		}
		i = (i + 1) & t.mask
	}
}

// add returns the index of h, adding it with no flags when new.
func (t *objTable) add(h plumbing.Hash) (idx int32, added bool) {
	s, tag := hashParts(&h)
	i := s & t.mask
	for {
		v := t.slots[i]
		if v == 0 {
			break
		}
		if v>>32 == tag {
			if idx := int32(uint32(v)) - 1; t.ents[idx].id == h {
				return idx, false
			}
		}
		i = (i + 1) & t.mask
	}
	idx = int32(len(t.ents))
	t.ents = append(t.ents, objEntry{id: h, commit: -1})
	t.slots[i] = tag<<32 | uint64(idx+1)
	if uint64(len(t.ents))*2 > uint64(len(t.slots)) {
		t.grow()
	}
	return idx, true
}

func (t *objTable) grow() {
	n := len(t.slots) * 2
	t.slots = make([]uint64, n)
	t.mask = uint64(n - 1)
	for idx := range t.ents {
		s, tag := hashParts(&t.ents[idx].id)
		i := s & t.mask
		for t.slots[i] != 0 {
			i = (i + 1) & t.mask
		}
		t.slots[i] = tag<<32 | uint64(idx+1)
	}
}

func (t *objTable) len() int { return len(t.ents) }
