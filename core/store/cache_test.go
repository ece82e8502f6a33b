package store_test

import (
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// A read cache is bounded in bytes as well as in entries: records large
// enough that the entry bound alone would keep 20 MB stay under
// store.ReadCacheBytes (issue 33).
func TestReadCacheBoundedInBytes(t *testing.T) {
	type record struct {
		ID   int64
		Body string
		Tags []string
	}
	c := store.NewReadCache[int64, *record](1000)
	for i := range int64(100) {
		c.Put(c.Gen(), i, &record{ID: i, Body: strings.Repeat("x", 200<<10), Tags: []string{"a", "b"}})
	}
	kept := 0
	for i := range int64(100) {
		if r, ok := c.Get(i); ok {
			kept++
			if r.ID != i {
				t.Fatalf("entry %d holds record %d", i, r.ID)
			}
		}
	}
	if max := store.ReadCacheBytes / (200 << 10); kept == 0 || kept > max {
		t.Fatalf("%d records of 200 KiB kept, want 1 to %d", kept, max)
	}
	if _, bytes := c.Len(); bytes > store.ReadCacheBytes {
		t.Fatalf("%d bytes cached, past the bound %d", bytes, store.ReadCacheBytes)
	}
	// A record over a quarter of the bound is not kept at all.
	c.Put(c.Gen(), 1000, &record{Body: strings.Repeat("x", store.ReadCacheBytes/2)})
	if _, ok := c.Get(1000); ok {
		t.Fatal("a record of half the bound was kept")
	}
	// Small records are kept up to the entry bound, as before.
	small := store.NewReadCache[int64, *record](1000)
	for i := range int64(500) {
		small.Put(small.Gen(), i, &record{ID: i, Body: "short"})
	}
	if n, _ := small.Len(); n != 500 {
		t.Fatalf("%d small records kept, want 500", n)
	}
}

// ApproxSize counts what pointers, strings, slices and maps reach.
func TestApproxSize(t *testing.T) {
	type inner struct{ Name string }
	type outer struct {
		P    *inner
		List []byte
		M    map[string]int
	}
	small := store.ApproxSize(&outer{P: &inner{Name: "x"}})
	big := store.ApproxSize(&outer{P: &inner{Name: strings.Repeat("x", 10000)}, List: make([]byte, 5000),
		M: map[string]int{strings.Repeat("k", 3000): 1}})
	if d := big - small; d < 18000 || d > 19000 {
		t.Fatalf("ApproxSize grew by %d for 18,000 more bytes", d)
	}
}
