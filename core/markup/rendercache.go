package markup

import (
	"crypto/sha256"
	"html/template"
	"strings"
)

// A page of 500 comments spends most of its time in Render, and the same
// comments are rendered again for every visitor. What Render makes of a
// text is the same for every visitor unless the text holds references
// (#12, @name...): those are linked or not as the Resolver answers for
// the visitor. So only the renders that asked the Resolver nothing are
// kept, keyed by the text and every field of the Context but the
// Resolver (only whether there is one); the same text in the same Context finds the same references,
// so a text that asked nothing once never asks, and a kept render can
// show no visitor what another may see. Texts with references are
// rendered each time.

// renderCacheBytes bounds the renders kept (the HTML's bytes).
const renderCacheBytes = 16 << 20

// maxCachedRender: longer texts are rendered each time (few, and they
// would crowd the cache).
const maxCachedRender = 64 << 10

var renders = newLineCache(renderCacheBytes)

// renderKey is src's key in the cache: its hash, the Context's fields
// and whether it has a Resolver (without one, references stay text:
// that render must not be served to a page with one). The lexer field
// holds them, NUL-separated.
func renderKey(src []byte, c Context) cacheKey {
	resolving := "text"
	if c.Resolver != nil {
		resolving = "resolving"
	}
	return cacheKey{lexer: strings.Join([]string{"markdown", resolving, c.BaseURL, c.Project, c.Ref, c.Dir}, "\x00"), sum: sha256.Sum256(src)}
}

// renderCached is Render through the cache: render renders, and says
// whether it asked the Resolver.
func renderCached(src []byte, c Context, render func() (template.HTML, bool)) template.HTML {
	if len(src) > maxCachedRender {
		out, _ := render()
		return out
	}
	k := renderKey(src, c)
	if kept, ok := renders.get(k); ok {
		return kept[0]
	}
	out, asked := render()
	if !asked {
		renders.put(k, []template.HTML{out})
	}
	return out
}
