package markup

import (
	"bytes"
	"fmt"
	"html/template"
	"sort"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// Bounds of Highlight: beyond them a file's lines are shown as plain text,
// so a huge or pathological file costs its size, not a lexer's worst case.
const (
	MaxHighlightBytes = 512 << 10
	MaxHighlightLines = 20000
)

// Highlight is code as HTML, one fragment per line (the line ending not
// included; a last line without one counts, CRLF ends a line as LF does).
// Each fragment is whole: a token spanning lines is closed at the end of
// each line and opened again on the next, so any line can be shown alone.
// Tokens carry classes (hl-<chroma's short name>) that Stylesheet colours.
// Code in no language chroma knows from filename, or beyond the bounds,
// is escaped text. The lines of files of 4 KiB and more are kept in a
// bounded cache (cache.go), so the second view of a file costs a hash.
func Highlight(filename string, code []byte) []template.HTML {
	return highlightCached(matchLexer(filename), code)
}

// highlightWith is Highlight with the lexer chosen (nil: none).
func highlightWith(lexer chroma.Lexer, code []byte) []template.HTML {
	text := strings.ReplaceAll(string(code), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	if lexer == nil || len(code) > MaxHighlightBytes || strings.Count(text, "\n") >= MaxHighlightLines {
		return plainLines(text)
	}
	it, err := chroma.Coalesce(lexer).Tokenise(nil, text)
	if err != nil {
		return plainLines(text)
	}
	var out []template.HTML
	var line strings.Builder
	for tok := it(); tok != chroma.EOF; tok = it() {
		class := tokenClass(tok.Type)
		parts := strings.Split(tok.Value, "\n")
		for i, part := range parts {
			if i > 0 {
				out = append(out, template.HTML(line.String())) //nolint:gosec // built from escaped parts
				line.Reset()
			}
			if part == "" {
				continue
			}
			if class == "" {
				line.WriteString(template.HTMLEscapeString(part))
			} else {
				fmt.Fprintf(&line, `<span class="hl-%s">%s</span>`, class, template.HTMLEscapeString(part))
			}
		}
	}
	out = append(out, template.HTML(line.String())) //nolint:gosec // built from escaped parts
	// Lexers may drop or add a final newline; the line count is the file's.
	want := strings.Count(text, "\n") + 1
	for len(out) < want {
		out = append(out, "")
	}
	return out[:want]
}

func plainLines(text string) []template.HTML {
	lines := strings.Split(text, "\n")
	out := make([]template.HTML, len(lines))
	for i, l := range lines {
		out[i] = template.HTML(template.HTMLEscapeString(l)) //nolint:gosec // escaped
	}
	return out
}

// tokenClass is the short class of a token type, or of its nearest
// ancestor that has one; "" for plain text.
func tokenClass(t chroma.TokenType) string {
	for ; t > 0; t = t.Parent() {
		if c, ok := chroma.StandardTypes[t]; ok {
			return c
		}
		if t.Parent() == t {
			break
		}
	}
	return ""
}

// highlightBlock is a fenced code block's HTML: <pre><code> with the lines
// highlighted when lang names a language chroma knows.
func highlightBlock(lang string, code []byte) string {
	var b bytes.Buffer
	b.WriteString(`<pre class="code-block"><code>`)
	var lexer chroma.Lexer
	if lang != "" {
		lexer = lexers.Get(lang)
	}
	lines := highlightWith(lexer, code)
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(string(l))
	}
	b.WriteString("</code></pre>\n")
	return b.String()
}

// Stylesheet is the CSS of the highlighted tokens (a light theme, and a
// dark one when the system prefers it) and of rendered Markdown.
func Stylesheet() string { return stylesheet() }

var stylesheet = sync.OnceValue(func() string {
	var b strings.Builder
	writeStyle(&b, styles.Get("github"))
	b.WriteString("@media (prefers-color-scheme:dark){")
	writeStyle(&b, styles.Get("github-dark"))
	b.WriteString("}\n")
	b.WriteString(markdownCSS)
	return b.String()
})

func writeStyle(b *strings.Builder, s *chroma.Style) {
	types := make([]chroma.TokenType, 0, len(chroma.StandardTypes))
	for t := range chroma.StandardTypes {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	for _, t := range types {
		class := chroma.StandardTypes[t]
		if class == "" || t == chroma.Background {
			continue
		}
		e := s.Get(t)
		var decl []string
		if e.Colour.IsSet() {
			decl = append(decl, "color:"+e.Colour.String())
		}
		if e.Bold == chroma.Yes {
			decl = append(decl, "font-weight:bold")
		}
		if e.Italic == chroma.Yes {
			decl = append(decl, "font-style:italic")
		}
		if len(decl) > 0 {
			fmt.Fprintf(b, ".hl-%s{%s}", class, strings.Join(decl, ";"))
		}
	}
	b.WriteByte('\n')
}

const markdownCSS = `.markdown h1,.markdown h2{border-bottom:1px solid var(--line,#ddd);padding-bottom:.2em}
.markdown .anchor{margin-left:.3em;text-decoration:none;opacity:.4}
.markdown .anchor:hover,.markdown .anchor:focus{opacity:1}
.markdown blockquote{margin:0;padding:0 1em;border-left:4px solid var(--line,#ddd);color:var(--muted,#555)}
.markdown ul.contains-task-list{list-style:none;padding-left:1.2em}
.markdown code{background:var(--soft,#f4f4f7);padding:.1em .3em;border-radius:4px}
.markdown pre code{background:none;padding:0}
`
