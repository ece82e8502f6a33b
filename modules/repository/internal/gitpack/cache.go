package gitpack

import "sync"

// cacheKey names a pack entry: packs get a process-unique id when opened.
type cacheKey struct {
	pack uint64
	off  int64
}

type cacheEntry struct {
	key        cacheKey
	typ        Type
	data       []byte
	prev, next *cacheEntry
}

// lru is a byte-bounded least-recently-used cache of inflated objects.
type lru struct {
	mu   sync.Mutex
	max  int64
	used int64
	m    map[cacheKey]*cacheEntry
	root cacheEntry // sentinel: root.next is the most recent
}

func newLRU(max int64) *lru {
	c := &lru{max: max, m: make(map[cacheKey]*cacheEntry)}
	c.root.next = &c.root
	c.root.prev = &c.root
	return c
}

const cacheOverhead = 96 // map slot and entry, roughly

func (c *lru) get(k cacheKey) (Type, []byte, bool) {
	c.mu.Lock()
	e, ok := c.m[k]
	if !ok {
		c.mu.Unlock()
		return 0, nil, false
	}
	if c.root.next != e {
		c.unlink(e)
		c.pushFront(e)
	}
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
	if _, ok := c.m[k]; ok {
		return
	}
	e := &cacheEntry{key: k, typ: t, data: data}
	c.m[k] = e
	c.pushFront(e)
	c.used += size
	for c.used > c.max {
		old := c.root.prev
		c.unlink(old)
		delete(c.m, old.key)
		c.used -= int64(len(old.data)) + cacheOverhead
	}
}

func (c *lru) unlink(e *cacheEntry) {
	e.prev.next = e.next
	e.next.prev = e.prev
}

func (c *lru) pushFront(e *cacheEntry) {
	e.prev = &c.root
	e.next = c.root.next
	c.root.next.prev = e
	c.root.next = e
}
