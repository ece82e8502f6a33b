package markup_test

import (
	"context"
	"html/template"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/markup"
)

// resolver accepts every reference but those with ID "999", and says which
// it was asked about.
type resolver struct{ asked []markup.Reference }

func (r *resolver) Reference(_ context.Context, ref markup.Reference) (bool, string) {
	r.asked = append(r.asked, ref)
	return ref.ID != "999", "Title <" + ref.ID + ">"
}

var repoCtx = markup.Context{BaseURL: "http://h/git", Project: "g/p", Ref: "feature/x", Dir: "docs"}

func render(t *testing.T, src string, c markup.Context) string {
	t.Helper()
	return strings.TrimSpace(string(markup.Render(context.Background(), []byte(src), c)))
}

func TestRenderGFM(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"# Title\n## Title", `<h1 id="title">Title<a href="#title" class="anchor" title="Link to this heading">#</a></h1>` + "\n" +
			`<h2 id="title-1">Title<a href="#title-1" class="anchor" title="Link to this heading">#</a></h2>`},
		{"- [x] done\n- [ ] todo", "<ul>\n<li><input checked=\"\" disabled=\"\" type=\"checkbox\"> done</li>\n<li><input disabled=\"\" type=\"checkbox\"> todo</li>\n</ul>"},
		{"|a|b|\n|-|-|\n|1|2|", "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n<td>2</td>\n</tr>\n</tbody>\n</table>"},
		{"~~gone~~ https://example.com", `<p><del>gone</del> <a href="https://example.com" rel="nofollow noreferrer">https://example.com</a></p>`},
		{"```go\nx := 1 /* a\nb */\n```", "<pre class=\"code-block\"><code><span class=\"hl-nx\">x</span><span class=\"hl-w\"> </span><span class=\"hl-o\">:=</span><span class=\"hl-w\"> </span><span class=\"hl-mi\">1</span><span class=\"hl-w\"> </span><span class=\"hl-cm\">/* a</span>\n<span class=\"hl-cm\">b */</span></code></pre>"},
		{"```nosuchlanguage\n<b>x</b>\n```", "<pre class=\"code-block\"><code>&lt;b&gt;x&lt;/b&gt;</code></pre>"},
	} {
		if got := render(t, c.src, markup.Context{}); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

func TestRenderReferences(t *testing.T) {
	r := &resolver{}
	c := repoCtx
	c.Resolver = r
	got := render(t, "see #12, !3, $4, @alice, g2/q#7, abc#12, a@b.example, 1a2b3c4d and #999. `#5` [x #6](http://e.com)", c)
	want := `<p>see <a href="http://h/git/g/p/-/issues/12" title="Title &lt;12&gt;" class="gfm gfm-issue" rel="nofollow noreferrer">#12</a>, ` +
		`<a href="http://h/git/g/p/-/merge_requests/3" title="Title &lt;3&gt;" class="gfm gfm-merge_request" rel="nofollow noreferrer">!3</a>, ` +
		`<a href="http://h/git/g/p/-/snippets/4" title="Title &lt;4&gt;" class="gfm gfm-snippet" rel="nofollow noreferrer">$4</a>, ` +
		`<a href="http://h/git/alice" title="Title &lt;alice&gt;" class="gfm gfm-project_member" rel="nofollow noreferrer">@alice</a>, ` +
		`<a href="http://h/git/g2/q/-/issues/7" title="Title &lt;7&gt;" class="gfm gfm-issue" rel="nofollow noreferrer">g2/q#7</a>, abc#12, <a href="mailto:a@b.example">a@b.example</a>, ` +
		`<a href="http://h/git/g/p/-/commit/1a2b3c4d" title="Title &lt;1a2b3c4d&gt;" class="gfm gfm-commit" rel="nofollow noreferrer">1a2b3c4d</a> and #999. ` +
		`<code>#5</code> <a href="http://e.com" rel="nofollow noreferrer">x #6</a></p>`
	if got != want {
		t.Errorf("references:\n got %s\nwant %s", got, want)
	}
	for _, ref := range r.asked {
		if ref.ID == "5" || ref.ID == "6" || ref.ID == "b" {
			t.Errorf("asked about %+v, inside code, a link or an address", ref)
		}
	}
	// Without a resolver nothing is linked.
	if got := render(t, "#12 @alice", repoCtx); got != "<p>#12 @alice</p>" {
		t.Errorf("no resolver: %s", got)
	}
}

func TestRenderRelativeLinks(t *testing.T) {
	got := render(t, "[a](guide.md) ![i](../img/logo%20x.png) [b](/top.md#s) [c](#frag) [d](../../../x) [e](ü b/#1.md) [f](https://o.example/y)", repoCtx)
	want := `<p><a href="http://h/git/g/p/-/blob/feature/x/docs/guide.md" rel="nofollow noreferrer">a</a> ` +
		`<img src="http://h/git/g/p/-/raw/feature/x/img/logo%20x.png" alt="i"> ` +
		`<a href="http://h/git/g/p/-/blob/feature/x/top.md#s" rel="nofollow noreferrer">b</a> <a href="#frag">c</a> ` +
		`<a href="http://h/git/g/p/-/blob/feature/x/x" rel="nofollow noreferrer">d</a> [e](ü b/#1.md) ` +
		`<a href="https://o.example/y" rel="nofollow noreferrer">f</a></p>`
	if got != want {
		t.Errorf("relative links:\n got %s\nwant %s", got, want)
	}
	if got := render(t, "[a](<ü b/x#1.md>)", repoCtx); got != `<p><a href="http://h/git/g/p/-/blob/feature/x/docs/%C3%BC%20b/x#1.md" rel="nofollow noreferrer">a</a></p>` {
		t.Errorf("unicode and spaces: %s", got)
	}
	// Outside a repository, relative links stay relative.
	if got := render(t, "[a](guide.md)", markup.Context{}); got != `<p><a href="guide.md">a</a></p>` {
		t.Errorf("no repository: %s", got)
	}
}

func TestRenderHostile(t *testing.T) {
	for _, src := range []string{"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))", "[x](JaVaScRiPt:alert(1))",
		"[x](&#106;avascript:alert(1))", `<a href="data:text/html,<script>alert(1)</script>">d</a>`, "<svg onload=alert(1)>", "<iframe src=x></iframe>",
		`<p style="background:url(x)">s</p>`, `<a href="vbscript:x">v</a>`, "![x](data:image/svg+xml,<svg onload=alert(1)>)", `<form action=x><input name=y></form>`} {
		got := strings.ToLower(render(t, src, repoCtx))
		for _, bad := range []string{"<script", "onerror", "onload", `href="javascript`, `href="data:`, `src="data:`, "<iframe", "style=", "vbscript:", "<form", `name="y"`} {
			if strings.Contains(got, bad) {
				t.Errorf("%q renders %q: %s", src, bad, got)
			}
		}
	}
}

func TestRenderBounded(t *testing.T) {
	big := strings.Repeat("<b>x</b> ", markup.MaxRenderBytes/9+1)
	if got := render(t, big, markup.Context{}); !strings.HasPrefix(got, `<pre class="plain">&lt;b&gt;x`) {
		t.Errorf("an oversized text: %.80s", got)
	}
	if got := render(t, strings.Repeat("-", 300)+"\n\n"+strings.Repeat("> ", 20)+"deep enough", markup.Context{}); !strings.HasPrefix(got, "<hr>") || !strings.Contains(got, "deep enough") {
		t.Errorf("a long rule and a quote 20 deep are rendered: %.100s", got)
	}
	normal := strings.Repeat("Some *text* with a [link](x) and `code`.\n\n", 200)
	t0 := time.Now()
	render(t, normal, markup.Context{})
	base := time.Since(t0)
	for _, deep := range []string{strings.Repeat(">", 10000) + " x", strings.Repeat("- ", 10000) + "x", strings.Repeat("[", 10000) + "x" + strings.Repeat("](y)", 10000),
		strings.Repeat("*", 20000) + "x" + strings.Repeat("*", 20000), strings.Repeat("1. ", 10000) + "x", indentedList(700)} {
		t0 := time.Now()
		render(t, deep, markup.Context{})
		if d := time.Since(t0); d > 50*base+100*time.Millisecond {
			t.Errorf("%.20q took %v, a normal document %v", deep, d, base)
		}
	}
}

// indentedList is a list nested depth deep, one level a line, each
// inheriting the levels above by its indentation.
func indentedList(depth int) string {
	var b strings.Builder
	for i := range depth {
		b.WriteString(strings.Repeat("  ", i) + "- x\n")
	}
	return b.String()
}

func TestHighlight(t *testing.T) {
	for _, c := range []struct {
		name, code string
		lines      int
	}{
		{"a.go", "package x\n/* a\nb */\nfunc f() {}\n", 4},
		{"a.go", "package x\r\nfunc f() {}", 2},
		{"a.py", "x = '''\n\n'''\n", 3},
		{"README", "plain <b>text</b>\n\nend", 3},
	} {
		got := markup.Highlight(c.name, []byte(c.code))
		if len(got) != c.lines {
			t.Errorf("%s %q: %d lines, want %d", c.name, c.code, len(got), c.lines)
		}
		for i, l := range got {
			if strings.Count(string(l), "<span") != strings.Count(string(l), "</span>") || strings.Contains(string(l), "<b>") {
				t.Errorf("%s line %d not whole or not escaped: %s", c.name, i+1, l)
			}
		}
	}
	if got := markup.Highlight("a.go", []byte("/* a\nb */")); got[1] != template.HTML(`<span class="hl-cm">b */</span>`) {
		t.Errorf("a comment's second line: %s", got[1])
	}
	huge := strings.Repeat("x := 1\n", markup.MaxHighlightLines+1)
	if got := markup.Highlight("a.go", []byte(huge)); len(got) != markup.MaxHighlightLines+1 || got[0] != "x := 1" {
		t.Errorf("a file over the bound: %d lines, first %q", len(got), got[0])
	}
	css := markup.Stylesheet()
	if !strings.Contains(css, ".hl-cm{") || !strings.Contains(css, "@media (prefers-color-scheme:dark){") || strings.Contains(css, "style=") {
		t.Errorf("stylesheet: %.300s", css)
	}
}

func TestRenderHeadingIDs(t *testing.T) {
	anchor := func(level, id, href, text string) string {
		return `<h` + level + ` id="` + id + `">` + text + `<a href="#` + href + `" class="anchor" title="Link to this heading">#</a></h` + level + `>`
	}
	got := render(t, "# Hello, World!\n# Hello World\n## Ünïcode Straße?\n# Hello World\n# !!!", markup.Context{})
	want := strings.Join([]string{
		anchor("1", "hello-world", "hello-world", "Hello, World!"),
		anchor("1", "hello-world-1", "hello-world-1", "Hello World"),
		anchor("2", "ünïcode-straße", "%C3%BCn%C3%AFcode-stra%C3%9Fe", "Ünïcode Straße?"),
		anchor("1", "hello-world-2", "hello-world-2", "Hello World"),
		anchor("1", "heading", "heading", "!!!"),
	}, "\n")
	if got != want {
		t.Errorf("heading ids:\n got %s\nwant %s", got, want)
	}
}

func TestRenderReferencesUntouched(t *testing.T) {
	r := &resolver{}
	c := repoCtx
	c.Resolver = r
	got := render(t, "g2/q!3 and g2/sub/q$5, https://x.example/#12 <a href=\"http://e.com\">#7 <code>#10</code></a> #11 ![#8](i.png) [#9](x) <code>!4</code> x/#12 `abcdef0`", c)
	want := `<p><a href="http://h/git/g2/q/-/merge_requests/3" title="Title &lt;3&gt;" class="gfm gfm-merge_request" rel="nofollow noreferrer">g2/q!3</a> and ` +
		`<a href="http://h/git/g2/sub/q/-/snippets/5" title="Title &lt;5&gt;" class="gfm gfm-snippet" rel="nofollow noreferrer">g2/sub/q$5</a>, ` +
		`<a href="https://x.example/#12" rel="nofollow noreferrer">https://x.example/#12</a> <a href="http://e.com" rel="nofollow noreferrer">#7 <code>#10</code></a> ` +
		`<a href="http://h/git/g/p/-/issues/11" title="Title &lt;11&gt;" class="gfm gfm-issue" rel="nofollow noreferrer">#11</a> ` +
		`<img src="http://h/git/g/p/-/raw/feature/x/docs/i.png"> <a href="http://h/git/g/p/-/blob/feature/x/docs/x" rel="nofollow noreferrer">#9</a> <code>!4</code> x/#12 <code>abcdef0</code></p>`
	if got != want {
		t.Errorf("references:\n got %s\nwant %s", got, want)
	}
	want3 := []markup.Reference{{Kind: markup.MergeRequest, Project: "g2/q", ID: "3"}, {Kind: markup.Snippet, Project: "g2/sub/q", ID: "5"}, {Kind: markup.Issue, Project: "g/p", ID: "11"}}
	if len(r.asked) != len(want3) {
		t.Fatalf("asked about %+v, want %+v", r.asked, want3)
	}
	for i := range want3 {
		if r.asked[i] != want3[i] {
			t.Errorf("asked about %+v, want %+v", r.asked[i], want3[i])
		}
	}
	// A commit id outside a project names nothing; a user does.
	r.asked = nil
	got = render(t, "1a2b3c4d @bob", markup.Context{BaseURL: "http://h", Resolver: r})
	if want := `<p>1a2b3c4d <a href="http://h/bob" title="Title &lt;bob&gt;" class="gfm gfm-project_member" rel="nofollow noreferrer">@bob</a></p>`; got != want {
		t.Errorf("no project:\n got %s\nwant %s", got, want)
	}
}

func TestRenderHostileExact(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"<script>alert(1)</script>", ""},
		{"<img src=x onerror=alert(1)>", `<img src="x">`},
		{"[x](javascript:alert(1))", "<p>x</p>"},
		{"[x](JaVaScRiPt:alert(1))", "<p>x</p>"},
		{"[x](&#106;avascript:alert(1))", "<p>x</p>"},
		{`<a href="&#x6A;avascript:alert(1)">e</a>`, "<p>e</p>"},
		{`<a href="data:text/html,<script>alert(1)</script>">d</a>`, "<p>d</p>"},
		{"![x](data:image/png;base64,AAAA)", `<p><img alt="x"></p>`},
		{"<svg onload=alert(1)>", ""},
		{"<iframe src=x></iframe>", ""},
		{`<p style="background:url(x)">s</p>`, "<p>s</p>"},
		{`<a href="vbscript:x">v</a>`, "<p>v</p>"},
		{`<form action=x><input name=y></form>`, ""},
		{`<a href="http://o.example/" rel="opener" target="_top">o</a>`, `<p><a href="http://o.example/" rel="nofollow noreferrer">o</a></p>`},
	} {
		if got := render(t, c.src, repoCtx); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

func TestRenderRelativeEscapes(t *testing.T) {
	got := render(t, "[h](x%231.md) ![i](/img/a%20b.png) [q](a.md?plain=1&amp;x=2#L2) [e](&#46;&#46;/&#46;&#46;/up.md)", repoCtx)
	want := `<p><a href="http://h/git/g/p/-/blob/feature/x/docs/x%231.md" rel="nofollow noreferrer">h</a> ` +
		`<img src="http://h/git/g/p/-/raw/feature/x/img/a%20b.png" alt="i"> ` +
		`<a href="http://h/git/g/p/-/blob/feature/x/docs/a.md?plain=1&amp;x=2#L2" rel="nofollow noreferrer">q</a> ` +
		`<a href="http://h/git/g/p/-/blob/feature/x/up.md" rel="nofollow noreferrer">e</a></p>`
	if got != want {
		t.Errorf("escapes:\n got %s\nwant %s", got, want)
	}
}

func TestRenderDeterministic(t *testing.T) {
	src := "# A\n# A\n\n#1 @x 1a2b3c4d [l](d/e.md)\n\n```go\nfunc f() {}\n```\n"
	c := repoCtx
	c.Resolver = &resolver{}
	first := render(t, src, c)
	for range 20 {
		if got := render(t, src, c); got != first {
			t.Fatalf("output changed:\n%s\n%s", first, got)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	src := []byte(strings.Repeat("## Section\n\nSome *text* with a [link](docs/x.md), #12 and `code`.\n\n```go\nfunc f() int { return 1 }\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n", 170)) // about 20 KB
	c := repoCtx
	c.Resolver = &resolver{}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		markup.Render(context.Background(), src, c)
	}
}

func BenchmarkHighlight(b *testing.B) {
	src := []byte(strings.Repeat("// f returns one.\nfunc f(x int) (int, error) {\n\tif x > 0 {\n\t\treturn x, nil\n\t}\n\treturn 1, nil\n}\n\n", 250))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		markup.Highlight("a.go", src)
	}
}
