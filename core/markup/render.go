package markup

import (
	"bytes"
	"context"
	"html"
	"html/template"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxRenderBytes bounds Render: a longer text is shown as escaped plain
// text, so no document costs the renderer more than its size.
const MaxRenderBytes = 1 << 20

// Context says where a text is shown, so its references and relative
// links resolve.
type Context struct {
	// BaseURL is the server's external URL with any embedding prefix, no
	// trailing slash ("http://host/git"); links are BaseURL + "/" + path.
	BaseURL string
	// Project is the full path of the project the text belongs to
	// ("group/sub/project"); "" when none.
	Project string
	// Ref and Dir place a file read from a repository: its relative links
	// and images resolve in Dir ("" for the root) at Ref.
	Ref, Dir string
	// Resolver tells which references name something the viewer may see;
	// nil leaves references as text.
	Resolver Resolver
}

// Resolver answers whether a reference names something the viewer may see
// (ok), and its title, shown on the link. Pages implement it over the
// module services, with the viewer's principal in ctx.
type Resolver interface {
	Reference(ctx context.Context, r Reference) (ok bool, title string)
}

// RefKind is what a reference names.
type RefKind int

// The kinds of GitLab references.
const (
	Issue        RefKind = iota // #12
	MergeRequest                // !3
	Snippet                     // $4
	User                        // @name
	Commit                      // 7 to 40 hex digits
)

// Reference is one reference found in a text.
type Reference struct {
	Kind RefKind
	// Project is the full path the reference names, the Context's when
	// the text names none (and "" for users).
	Project string
	// ID is the number, username or commit id, as written.
	ID string
}

type renderState struct {
	ctx context.Context
	c   Context
	// asked: the Resolver was asked about a reference, so the render is
	// the visitor's own (rendercache.go).
	asked bool
}

var stateKey = parser.NewContextKey()

var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(parser.WithAutoHeadingID(),
			parser.WithASTTransformers(util.Prioritized(transformer{}, 100))),
		// Raw HTML goes through, to be cut down by the sanitiser to what
		// user content may hold.
		goldmark.WithRendererOptions(gmhtml.WithUnsafe(),
			renderer.WithNodeRenderers(util.Prioritized(codeRenderer{}, 100))),
	)
})

var policy = sync.OnceValue(func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^(hl-[a-zA-Z0-9]+|code-block|anchor|gfm gfm-[a-z_]+)$`)).OnElements("span", "pre", "a")
	p.AllowAttrs("id").Matching(regexp.MustCompile(`^[\p{L}\p{N}_-]+$`)).OnElements("h1", "h2", "h3", "h4", "h5", "h6")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").OnElements("input")
	p.AllowAttrs("title").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	// Only fully qualified links get rel, "nofollow noreferrer" (which
	// implies noopener in browsers); fragments and relative links stay bare.
	p.RequireNoFollowOnLinks(false)
	p.RequireNoFollowOnFullyQualifiedLinks(true)
	p.RequireNoReferrerOnFullyQualifiedLinks(true)
	return p
})

// Render is src, Markdown, as sanitised HTML (see the package's doc). A
// src over MaxRenderBytes is rendered as escaped plain text in a <pre>.
func Render(ctx context.Context, src []byte, c Context) template.HTML {
	if len(src) > MaxRenderBytes || tooDeep(src) {
		return template.HTML(`<pre class="plain">` + template.HTMLEscapeString(string(src)) + `</pre>`) //nolint:gosec // escaped
	}
	return renderCached(src, c, func() (template.HTML, bool) {
		st := &renderState{ctx: ctx, c: c}
		pc := parser.NewContext(parser.WithIDs(&slugs{taken: map[string]bool{}, next: map[string]int{}}))
		pc.Set(stateKey, st)
		var buf bytes.Buffer
		if err := md().Convert(src, &buf, parser.WithContext(pc)); err != nil {
			return template.HTML(`<pre class="plain">` + template.HTMLEscapeString(string(src)) + `</pre>`), st.asked //nolint:gosec // escaped
		}
		return template.HTML(policy().SanitizeBytes(buf.Bytes())), st.asked //nolint:gosec // sanitised
	})
}

// maxNesting bounds how deep a line may sit in quotes and lists: goldmark
// spends on each line time in proportion to its depth, so a megabyte
// nested a thousand deep takes seconds. A document nested deeper is shown
// as plain text.
const maxNesting = 100

// tooDeep reports whether a line of src may sit more than maxNesting
// quotes or list items deep. A line's depth is at most the markers that
// open it ("> - 1. ") plus half the columns of its indentation (a level
// inherited from the lines above needs two columns at least).
func tooDeep(src []byte) bool {
	for _, line := range bytes.Split(src, []byte("\n")) {
		markers, indent, leading := 0, 0, true
	scan:
		for i := 0; i < len(line); i++ {
			c := line[i]
			spaceAfter := func(j int) bool { return j < len(line) && (line[j] == ' ' || line[j] == '\t') }
			switch {
			case c == ' ' || c == '\t':
				if leading {
					indent += 1 + 3*btoi(c == '\t')
				}
				continue
			case c == '>':
				markers++
			case c == '-' || c == '*' || c == '+':
				// A list marker is followed by a space; "-----" is a rule.
				if !spaceAfter(i + 1) {
					break scan
				}
				markers++
			case c >= '0' && c <= '9':
				j := i
				for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
					j++
				}
				if j >= len(line) || line[j] != '.' && line[j] != ')' || !spaceAfter(j+1) {
					break scan
				}
				markers, i = markers+1, j
			default:
				break scan
			}
			leading = false
			if markers+indent/2 > maxNesting {
				return true
			}
		}
		if markers+indent/2 > maxNesting {
			return true
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// codeRenderer renders fenced code blocks highlighted.
type codeRenderer struct{}

func (codeRenderer) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindFencedCodeBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.FencedCodeBlock)
		lang := ""
		if b.Info != nil {
			lang = string(b.Language(source))
		}
		_, _ = w.WriteString(highlightBlock(lang, blockText(b, source)))
		return ast.WalkSkipChildren, nil
	})
}

func blockText(n ast.Node, source []byte) []byte {
	var b bytes.Buffer
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(source))
	}
	return b.Bytes()
}

// transformer resolves relative links and images, links references, and
// gives each heading an anchor link to itself.
type transformer struct{}

func (transformer) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	st, _ := pc.Get(stateKey).(*renderState)
	if st == nil {
		return
	}
	source := reader.Source()
	var texts []*ast.Text
	var headings []*ast.Heading
	// inside counts the raw HTML <a>, <code> and <pre> elements open around
	// the walk's position: text in them is no place for a reference link.
	inside := 0
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *ast.Link:
			v.Destination = st.c.resolve(v.Destination, "blob")
			return ast.WalkSkipChildren, nil // no references inside a link
		case *ast.Image:
			v.Destination = st.c.resolve(v.Destination, "raw")
			return ast.WalkSkipChildren, nil // the children are the alt text
		case *ast.RawHTML:
			inside = max(0, inside+rawHTMLDepth(v, source))
			return ast.WalkSkipChildren, nil
		case *ast.Paragraph:
			inside = 0 // inline raw HTML does not span blocks
		case *ast.AutoLink, *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			return ast.WalkSkipChildren, nil
		case *ast.Heading:
			headings = append(headings, v)
			inside = 0
		case *ast.Text:
			if inside == 0 {
				texts = append(texts, v)
			}
		}
		return ast.WalkContinue, nil
	})
	if st.c.Resolver != nil {
		for _, t := range texts {
			st.linkReferences(t, source)
		}
	}
	for _, h := range headings {
		id, ok := h.AttributeString("id")
		if !ok {
			continue
		}
		idb, _ := id.([]byte)
		a := ast.NewLink()
		a.Destination = append([]byte("#"), idb...)
		a.SetAttributeString("class", []byte("anchor"))
		a.SetAttributeString("title", []byte("Link to this heading"))
		a.AppendChild(a, ast.NewString([]byte("#")))
		h.AppendChild(h, a)
	}
}

// rawTag matches an inline HTML tag that opens or closes an element
// references must stay out of.
var rawTag = regexp.MustCompile(`^<(/?)(?i:a|code|pre)(?:[\s/>]|$)`)

// rawHTMLDepth is +1 for an inline raw <a>, <code> or <pre>, -1 for its
// end tag, 0 for anything else.
func rawHTMLDepth(n *ast.RawHTML, source []byte) int {
	if n.Segments.Len() == 0 {
		return 0
	}
	seg := n.Segments.At(0)
	m := rawTag.FindSubmatch(seg.Value(source))
	switch {
	case m == nil:
		return 0
	case len(m[1]) > 0:
		return -1
	}
	return 1
}

// slugs makes heading ids as GitLab does: the text lower-cased, letters,
// digits, "_", "-" and spaces kept, spaces turned into "-"; a repeated id
// gets "-1", "-2" and so on.
type slugs struct {
	taken map[string]bool
	next  map[string]int // the last suffix given to an id
}

func (s *slugs) Generate(value []byte, _ ast.NodeKind) []byte {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(string(value))) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	id := b.String()
	if id == "" {
		id = "heading"
	}
	if !s.taken[id] {
		s.taken[id] = true
		return []byte(id)
	}
	for n := s.next[id] + 1; ; n++ {
		if c := id + "-" + strconv.Itoa(n); !s.taken[c] {
			s.taken[c], s.next[id] = true, n
			return []byte(c)
		}
	}
}

// Put records an id written in the text ({#id}), so no heading repeats it.
func (s *slugs) Put(value []byte) { s.taken[string(value)] = true }

// resolve makes a relative link of a repository file point into the
// repository at the file's ref: kind "blob" for links, "raw" for images.
// Absolute URLs, fragments and links outside a repository stay as they are.
func (c Context) resolve(dest []byte, kind string) []byte {
	// The destination is still as written: character references
	// ("&#106;") are decoded by goldmark's renderer, so decode them here
	// to judge the URL, and escape "&" in what is written back.
	d := html.UnescapeString(string(dest))
	if c.Project == "" || c.Ref == "" || d == "" || strings.HasPrefix(d, "#") || strings.HasPrefix(d, "//") {
		return dest
	}
	if u, err := url.Parse(d); err != nil || u.Scheme != "" || u.Host != "" {
		return dest
	}
	p, suffix := d, ""
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p, suffix = p[:i], p[i:]
	}
	if unescaped, err := url.PathUnescape(p); err == nil {
		p = unescaped
	}
	if !strings.HasPrefix(p, "/") {
		p = c.Dir + "/" + p
	}
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	u := c.BaseURL + "/" + escapePath(c.Project) + "/-/" + kind + "/" + escapePath(c.Ref) + "/" + escapePath(p) + suffix
	return []byte(strings.ReplaceAll(u, "&", "&amp;"))
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// refPattern finds GitLab references in text; the first group is the
// character before (none at the start), which must not be part of a word
// or a path, so "abc#12" and URLs' fragments are not references.
var refPattern = regexp.MustCompile(`(^|[^\w/.&#!$@-])(?:([A-Za-z0-9_][\w.-]*(?:/[A-Za-z0-9_][\w.-]*)+)?([#!$])(\d{1,9})\b|@([A-Za-z0-9_](?:[\w.-]*[A-Za-z0-9_])?)|\b([0-9a-f]{7,40})\b)`)

// linkReferences replaces the references in t that the resolver accepts
// with links.
func (st *renderState) linkReferences(t *ast.Text, source []byte) {
	seg := t.Segment
	value := seg.Value(source)
	matches := refPattern.FindAllSubmatchIndex(value, -1)
	if len(matches) == 0 {
		return
	}
	parent := t.Parent()
	if parent == nil {
		return
	}
	pos := 0
	var added bool
	for _, m := range matches {
		start := m[3] // the reference starts after the character before it
		end := m[1]
		ref, href, class := st.reference(value, m)
		if href == "" {
			continue
		}
		st.asked = true
		ok, title := st.c.Resolver.Reference(st.ctx, ref)
		if !ok {
			continue
		}
		if start > pos {
			parent.InsertBefore(parent, t, ast.NewTextSegment(text.NewSegment(seg.Start+pos, seg.Start+start)))
		}
		link := ast.NewLink()
		link.Destination = []byte(href)
		if title != "" {
			link.Title = []byte(title)
		}
		link.SetAttributeString("class", []byte("gfm gfm-"+class))
		link.AppendChild(link, ast.NewTextSegment(text.NewSegment(seg.Start+start, seg.Start+end)))
		parent.InsertBefore(parent, t, link)
		pos, added = end, true
	}
	if !added {
		return
	}
	t.Segment = text.NewSegment(seg.Start+pos, seg.Stop)
}

// reference reads a match of refPattern: the reference, its URL and the
// class of its link ("" href when the match names nothing linkable here).
func (st *renderState) reference(value []byte, m []int) (Reference, string, string) {
	group := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return string(value[m[2*i]:m[2*i+1]])
	}
	base := st.c.BaseURL
	switch {
	case group(3) != "":
		project := group(2)
		if project == "" {
			project = st.c.Project
		}
		if project == "" {
			return Reference{}, "", ""
		}
		kind, page, class := Issue, "issues", "issue"
		switch group(3) {
		case "!":
			kind, page, class = MergeRequest, "merge_requests", "merge_request"
		case "$":
			kind, page, class = Snippet, "snippets", "snippet"
		}
		return Reference{Kind: kind, Project: project, ID: group(4)},
			base + "/" + escapePath(project) + "/-/" + page + "/" + group(4), class
	case group(5) != "":
		return Reference{Kind: User, ID: group(5)}, base + "/" + url.PathEscape(group(5)), "project_member"
	case group(6) != "" && st.c.Project != "":
		return Reference{Kind: Commit, Project: st.c.Project, ID: group(6)},
			base + "/" + escapePath(st.c.Project) + "/-/commit/" + group(6), "commit"
	}
	return Reference{}, "", ""
}
