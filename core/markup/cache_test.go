package markup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2/lexers"
)

// TestHighlightCache: a file highlighted twice gives the same lines, the
// second time from the cache (a caller changing its copy does not change
// the cache's); the cache stays within its bound, dropping the entries
// used longest ago; small files are not kept.
func TestHighlightCache(t *testing.T) {
	var src strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&src, "func f%d() int { return %d } // <b>\n", i, i)
	}
	code := []byte(src.String())
	lexer := lexers.Match("x.go")
	first := Highlight("x.go", code)
	want := highlightWith(lexer, code)
	if len(first) != 300 || strings.Join(htmlStrings(first), "\n") != strings.Join(htmlStrings(want), "\n") {
		t.Fatalf("first highlight differs from the uncached one")
	}
	first[0] = "changed by the caller"
	second := Highlight("x.go", code)
	if second[0] == "changed by the caller" || second[0] != want[0] {
		t.Fatalf("the cached lines: %q", second[0])
	}

	entry := 0
	for _, l := range want {
		entry += len(l) + 16
	}
	c := newLineCache(3*entry + 1) // room for three
	keys := make([]cacheKey, 10)
	for i := range keys {
		keys[i] = cacheKey{lexer: "Go", sum: [32]byte{byte(i)}}
		c.put(keys[i], want)
		if c.size > c.max {
			t.Fatalf("cache at %d bytes, bound %d", c.size, c.max)
		}
	}
	for i, k := range keys {
		if _, ok := c.get(k); ok != (i >= 7) {
			t.Errorf("entry %d kept: %v (the last three only should be)", i, ok)
		}
	}
	small := []byte("package x\n")
	Highlight("small.go", small)
	if _, ok := highlighted.get(cacheKey{lexer: "Go", sum: sha(small)}); ok {
		t.Error("a small file was cached")
	}
}

func htmlStrings[T ~string](v []T) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = string(x)
	}
	return out
}
