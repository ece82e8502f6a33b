package gitpack

import "sync"

// cacheKey names a pack entry: packs get a process-unique id when opened.
type cacheKey struct {
	pack uint64
	off  int64
}

type cacheSlot struct {
	key  cacheKey
	data []byte
	typ  Type
	live bool
	ref  bool // used since the clock hand last passed
}

// lru is a byte-bounded cache of inflated objects with CLOCK eviction (an
// approximation of least-recently-used): a hit only sets a bit, so hits
// touch no other entry; the hand evicts entries not used since it last
// passed them.
type lru struct {
	mu   sync.Mutex
	max  int64
	used int64
	m    map[cacheKey]int32 // slot in ring
	ring []cacheSlot
	free []int32
	hand int
}

func newLRU(max int64) *lru {
	return &lru{max: max, m: make(map[cacheKey]int32, 256)}
}

const cacheOverhead = 96 // map slot and ring slot, roughly

func (c *lru) get(k cacheKey) (Type, []byte, bool) {
	c.mu.Lock()
	i, ok := c.m[k]
	if !ok {
		c.mu.Unlock()
		return 0, nil, false
	}
	e := &c.ring[i]
	e.ref = true
	t, d := e.typ, e.data
	c.mu.Unlock()
	return t, d, true
}

func (c *lru) put(k cacheKey, t Type, data []byte) {
	size := int64(len(data)) + cacheOverhead
	if size > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.m[k]; ok {
		// Someone else put it meanwhile.
		c.ring[i].ref = true
		return
	}
	for c.used+size > c.max {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		e := &c.ring[c.hand]
		switch {
		case !e.live:
		case e.ref:
			e.ref = false
		default:
			delete(c.m, e.key)
			c.used -= int64(len(e.data)) + cacheOverhead
			*e = cacheSlot{}
			c.free = append(c.free, int32(c.hand))
		}
		c.hand++
	}
	var i int32
	if n := len(c.free); n > 0 {
		i = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		c.ring = append(c.ring, cacheSlot{})
		i = int32(len(c.ring) - 1)
	}
	c.ring[i] = cacheSlot{key: k, data: data, typ: t, live: true}
	c.m[k] = i
	c.used += size
}
