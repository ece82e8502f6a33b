package markup

import (
	"container/list"
	"crypto/sha256"
	"html/template"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// Highlighting a large file costs tens of milliseconds (chroma's lexers
// are regular expressions); a file is read far more often than it
// changes, and a blob's content never changes. highlighted keeps the
// lines of the files highlighted last, keyed by the lexer and the
// content's hash, bounded by the bytes of their HTML: a second view of
// a file costs a hash of it and a lookup.

// highlightCacheBytes bounds the cache: the HTML of the lines kept.
const highlightCacheBytes = 32 << 20

// minCachedBytes: smaller texts are highlighted again (they would crowd
// the cache). A side of a diff hunk of a few lines still costs chroma
// about half a millisecond, hundreds of times its hash, and a Changes
// tab or a commit page highlights a hundred of them.
const minCachedBytes = 64

type cacheKey struct {
	lexer string
	sum   [sha256.Size]byte
}

type cached struct {
	key   cacheKey
	lines []template.HTML
	size  int
}

type lineCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // front: used last
	items map[cacheKey]*list.Element
}

func newLineCache(max int) *lineCache {
	return &lineCache{max: max, order: list.New(), items: map[cacheKey]*list.Element{}}
}

var highlighted = newLineCache(highlightCacheBytes)

// get returns a copy of the cached lines (callers may keep or change
// their slice) and whether they were there.
func (c *lineCache) get(k cacheKey) ([]template.HTML, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	lines := e.Value.(*cached).lines
	return append([]template.HTML(nil), lines...), true
}

// put keeps lines, dropping the entries used longest ago while the cache
// is over its bound; an entry larger than the whole bound is not kept.
func (c *lineCache) put(k cacheKey, lines []template.HTML) {
	size := 0
	for _, l := range lines {
		size += len(l) + 16
	}
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = c.order.PushFront(&cached{key: k, lines: append([]template.HTML(nil), lines...), size: size})
	c.size += size
	for c.size > c.max {
		last := c.order.Back()
		v := last.Value.(*cached)
		c.order.Remove(last)
		delete(c.items, v.key)
		c.size -= v.size
	}
}

// highlightCached is highlightWith through the cache.
func highlightCached(lexer chroma.Lexer, code []byte) []template.HTML {
	if lexer == nil || len(code) < minCachedBytes || len(code) > MaxHighlightBytes {
		return highlightWith(lexer, code)
	}
	k := cacheKey{lexer: lexer.Config().Name, sum: sha256.Sum256(code)}
	if lines, ok := highlighted.get(k); ok {
		return lines
	}
	lines := highlightWith(lexer, code)
	highlighted.put(k, lines)
	return lines
}

func sha(b []byte) [sha256.Size]byte { return sha256.Sum256(b) }
