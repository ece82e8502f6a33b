package gitpack

import (
	"sync"
	"sync/atomic"
)

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
	mu     sync.Mutex
	max    int64
	used   int64
	shared *budget            // the process's bound over every Store's cache; nil for a push's own
	m      map[cacheKey]int32 // slot in ring
	ring   []cacheSlot
	free   []int32
	hand   int
	// off is set when the cache is dropped (its Store closed or retired):
	// it caches nothing more, so that a reader still at work does not
	// grow a cache outside the budget.
	off bool
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
	if c.shared != nil {
		c.shared.makeRoom(size)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off {
		return
	}
	if i, ok := c.m[k]; ok {
		// Someone else put it meanwhile.
		c.ring[i].ref = true
		return
	}
	for c.used+size > c.max {
		c.step()
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
	if c.shared != nil {
		c.shared.used.Add(size)
	}
}

// step moves the clock hand one slot, evicting the entry there unless it
// was used since the hand last passed (or clearing that mark). c.mu is held.
func (c *lru) step() {
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
		size := int64(len(e.data)) + cacheOverhead
		c.used -= size
		if c.shared != nil {
			c.shared.used.Add(-size)
		}
		*e = cacheSlot{}
		c.free = append(c.free, int32(c.hand))
	}
	c.hand++
}

// evictSome evicts about want bytes from c (fewer if it holds less).
func (c *lru) evictSome(want int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	goal := max(c.used-want, 0)
	// Each slot is passed at most twice: once to clear its mark, once to
	// evict it.
	for n := 2 * len(c.ring); c.used > goal && n > 0; n-- {
		c.step()
	}
}

// drop empties c for good and gives its bytes back (a closed or retired
// Store).
func (c *lru) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shared != nil {
		c.shared.used.Add(-c.used)
	}
	clear(c.m)
	c.ring, c.free, c.used, c.hand = nil, nil, 0, 0
	c.off = true
}

// budget bounds, in bytes, the caches of inflated objects of every open
// Store together: the repository module keeps a Store open per repository
// used, so a bound per Store alone let a server's memory grow with the
// number of repositories read since it started (issue 33). A cache that
// needs room past the bound takes it from the caches in turn (a clock over
// caches, as each cache is a clock over its entries), its own included, so
// that the repositories in use keep their objects and idle ones give them
// up.
type budget struct {
	max  int64
	used atomic.Int64

	mu     sync.Mutex
	caches []*lru
	hand   int
}

// processCacheBytes is the bound of every Store's cache together: what
// one Store's cache alone could hold before.
const processCacheBytes = defaultCacheBytes

var objectCaches = &budget{max: processCacheBytes}

func (b *budget) add(c *lru) {
	b.mu.Lock()
	b.caches = append(b.caches, c)
	b.mu.Unlock()
}

func (b *budget) remove(c *lru) {
	b.mu.Lock()
	for i, x := range b.caches {
		if x == c {
			b.caches = append(b.caches[:i], b.caches[i+1:]...)
			break
		}
	}
	b.mu.Unlock()
	c.drop()
}

// makeRoom evicts from the caches in turn until size more bytes fit. It
// holds no cache's lock while it takes another's: puts run concurrently,
// so the bound may be passed by a few entries for a moment.
func (b *budget) makeRoom(size int64) {
	if b.used.Load()+size <= b.max {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for tries := 2 * len(b.caches); b.used.Load()+size > b.max && tries > 0; tries-- {
		if b.hand >= len(b.caches) {
			b.hand = 0
		}
		c := b.caches[b.hand]
		b.hand++
		c.evictSome(max(size, b.max/16))
	}
}
