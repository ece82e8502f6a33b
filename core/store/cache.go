package store

import (
	"reflect"
	"sync"
)

// ReadCache keeps decoded records for hot read paths (token lookups on every
// request) without letting a stale value outlive a write. The owner of the
// records calls Invalidate after each commit that changes them (tx.OnCommit);
// a reader takes Gen() before reading the store and passes it to Put, which
// refuses the value if a write committed in between. Values must be treated
// as read-only: write paths read from the store, never from the cache.
type ReadCache[K comparable, V any] struct {
	mu       sync.RWMutex
	gen      uint64
	m        map[K]V
	max      int
	bytes    int64 // the entries' estimated size (ApproxSize)
	maxBytes int64
}

// ReadCacheBytes bounds each read cache's entries in bytes, as estimated by
// ApproxSize: the caches are a few per process, and a server's idle memory
// must not depend on how large the records its users read happen to be
// (issue 33), while the hot set of a busy server (tokens, users of the
// last minutes) fits many times over.
const ReadCacheBytes = 4 << 20

// NewReadCache makes a cache holding at most max entries and
// ReadCacheBytes bytes (it is cleared when full: simple, and the hot set
// refills at once).
func NewReadCache[K comparable, V any](max int) *ReadCache[K, V] {
	return &ReadCache[K, V]{m: make(map[K]V), max: max, maxBytes: ReadCacheBytes}
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

// Put stores v unless the cache was invalidated since gen. A value larger
// than a quarter of the byte bound is not kept.
func (c *ReadCache[K, V]) Put(gen uint64, k K, v V) {
	size := int64(ApproxSize(k) + ApproxSize(v))
	if size > c.maxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if _, ok := c.m[k]; ok {
		return // put by another reader of the same generation: the same value
	}
	if len(c.m) >= c.max || c.bytes+size > c.maxBytes {
		clear(c.m)
		c.bytes = 0
	}
	c.m[k] = v
	c.bytes += size
}

// Invalidate drops everything and starts a new generation.
func (c *ReadCache[K, V]) Invalidate() {
	c.mu.Lock()
	c.gen++
	clear(c.m)
	c.bytes = 0
	c.mu.Unlock()
}

// Len and Bytes are the cache's entries and their estimated size.
func (c *ReadCache[K, V]) Len() (entries int, bytes int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m), c.bytes
}

// ApproxSize estimates the memory v holds: its own size and what its
// pointers, strings, slices and maps reach, each pointer followed once,
// plus a map entry's overhead. It errs on the high side (shared values
// count for each holder) and stops eight levels down.
func ApproxSize(v any) int {
	if v == nil {
		return 0
	}
	rv := reflect.ValueOf(v)
	seen := map[uintptr]bool{}
	return int(rv.Type().Size()) + 48 + indirect(rv, seen, 8) // 48: a map entry and its hash slot, roughly
}

// indirect is what v reaches beyond its own inline size.
func indirect(v reflect.Value, seen map[uintptr]bool, depth int) int {
	if depth == 0 {
		return 0
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		e := v.Elem()
		return int(e.Type().Size()) + indirect(e, seen, depth-1)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int(e.Type().Size()) + indirect(e, seen, depth-1)
	case reflect.String:
		return v.Len()
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		n := v.Cap() * int(v.Type().Elem().Size())
		if flat(v.Type().Elem()) {
			return n
		}
		for i := range v.Len() {
			n += indirect(v.Index(i), seen, depth-1)
		}
		return n
	case reflect.Array:
		if flat(v.Type().Elem()) {
			return 0
		}
		n := 0
		for i := range v.Len() {
			n += indirect(v.Index(i), seen, depth-1)
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		n := 48
		for it := v.MapRange(); it.Next(); {
			n += 16 + int(it.Key().Type().Size()+it.Value().Type().Size()) +
				indirect(it.Key(), seen, depth-1) + indirect(it.Value(), seen, depth-1)
		}
		return n
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			n += indirect(v.Field(i), seen, depth-1)
		}
		return n
	}
	return 0
}

// flat tells whether a type's values hold nothing beyond their own size.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	return false
}
