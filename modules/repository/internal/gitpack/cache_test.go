package gitpack

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// TestCacheBounded fills the cache far beyond its bound with a skewed
// mix of hits: it stays within the bound, never returns wrong data, and
// keeps hot entries.
func TestCacheBounded(t *testing.T) {
	t.Parallel()
	c := newLRU(64 << 10)
	rng := rand.New(rand.NewSource(1))
	val := func(k int64) []byte { return bytes.Repeat([]byte{byte(k)}, int(k%700)) }
	hot := cacheKey{3, 5}
	c.put(hot, Blob, val(5))
	for i := 0; i < 20000; i++ {
		k := cacheKey{1, int64(rng.Intn(3000))}
		if typ, d, ok := c.get(k); ok {
			if typ != Tree || !bytes.Equal(d, val(k.off)) {
				t.Fatalf("wrong data for %v", k)
			}
		} else {
			c.put(k, Tree, val(k.off))
		}
		if _, _, ok := c.get(hot); !ok && i < 100 {
			t.Fatalf("hot entry evicted at %d", i)
		}
		if c.used > c.max {
			t.Fatalf("used %d > max %d", c.used, c.max)
		}
	}
	if len(c.m)+len(c.free) != len(c.ring) {
		t.Fatalf("map %d free %d ring %d", len(c.m), len(c.free), len(c.ring))
	}
	// Too big for the cache: not kept.
	c.put(cacheKey{2, 1}, Blob, make([]byte, 32<<10))
	if _, _, ok := c.get(cacheKey{2, 1}); ok {
		t.Fatal("kept an object over a quarter of the cache")
	}
}

// TestCachesShareABound: the caches of many Stores together stay within
// their shared budget, the cache in use takes its room from idle ones,
// and a dropped cache gives its bytes back.
func TestCachesShareABound(t *testing.T) {
	t.Parallel()
	b := &budget{max: 256 << 10}
	var caches []*lru
	for range 8 {
		c := newLRU(64 << 10) // each alone could hold 64 KiB: 512 KiB in all
		c.shared = b
		b.add(c)
		caches = append(caches, c)
	}
	for i, c := range caches {
		for k := range int64(200) {
			c.put(cacheKey{uint64(i), k}, Blob, make([]byte, 1000))
			if used := b.used.Load(); used > b.max {
				t.Fatalf("cache %d entry %d: %d bytes used in all, bound %d", i, k, used, b.max)
			}
		}
	}
	var sum int64
	for _, c := range caches {
		sum += c.used
	}
	if sum != b.used.Load() {
		t.Fatalf("the caches hold %d bytes, the budget counts %d", sum, b.used.Load())
	}
	// The last cache filled, the one in use, holds what it may alone.
	if last := caches[len(caches)-1]; last.used < last.max-2*(1000+cacheOverhead) {
		t.Fatalf("the cache in use holds %d of its %d bytes", last.used, last.max)
	}
	for _, c := range caches {
		b.remove(c)
	}
	if b.used.Load() != 0 || len(b.caches) != 0 {
		t.Fatalf("after every cache was dropped: %d bytes, %d caches", b.used.Load(), len(b.caches))
	}
}

// TestRetiredStoreReadsOn: a retired Store leaves the shared budget,
// emptied, and caches nothing more, yet every read through it still
// answers (a reader that held it when its holder let go is not failed).
func TestRetiredStoreReadsOn(t *testing.T) {
	t.Parallel()
	dir := repotest.Reference(t, smallShape())
	want := catAll(t, dir)
	s := mustOpen(t, dir)
	checkAll(t, s, want)
	if s.cache.used == 0 {
		t.Fatal("reading every object cached nothing")
	}
	s.Retire()
	checkAll(t, s, want)
	s.cache.mu.Lock()
	used, entries, off := s.cache.used, len(s.cache.m), s.cache.off
	s.cache.mu.Unlock()
	if used != 0 || entries != 0 || !off {
		t.Fatalf("retired store's cache: %d bytes, %d entries, off %v", used, entries, off)
	}
	objectCaches.mu.Lock()
	defer objectCaches.mu.Unlock()
	for _, c := range objectCaches.caches {
		if c == s.cache {
			t.Fatal("the retired store's cache is still in the process's budget")
		}
	}
}
