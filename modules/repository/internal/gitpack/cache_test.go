package gitpack

import (
	"bytes"
	"math/rand"
	"testing"
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
