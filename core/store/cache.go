package store

import "sync"

// ReadCache keeps decoded records for hot read paths (token lookups on every
// request) without letting a stale value outlive a write. The owner of the
// records calls Invalidate after each commit that changes them (tx.OnCommit);
// a reader takes Gen() before reading the store and passes it to Put, which
// refuses the value if a write committed in between. Values must be treated
// as read-only: write paths read from the store, never from the cache.
type ReadCache[K comparable, V any] struct {
	mu  sync.RWMutex
	gen uint64
	m   map[K]V
	max int
}

// NewReadCache makes a cache holding at most max entries (it is cleared
// when full: simple, and the hot set refills at once).
func NewReadCache[K comparable, V any](max int) *ReadCache[K, V] {
	return &ReadCache[K, V]{m: make(map[K]V), max: max}
}

// Get returns a cached value.
func (c *ReadCache[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

// Gen is the generation to pass to Put; take it before reading the store.
func (c *ReadCache[K, V]) Gen() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// Put stores v unless the cache was invalidated since gen.
func (c *ReadCache[K, V]) Put(gen uint64, k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
}

// Invalidate drops everything and starts a new generation.
func (c *ReadCache[K, V]) Invalidate() {
	c.mu.Lock()
	c.gen++
	clear(c.m)
	c.mu.Unlock()
}
