package mergerequests_test

import (
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// wideFile is the path of the k-th file of a wide merge request: the
// numbers are padded so that the diff's order (git's, by path) is k's.
func wideFile(k int) string { return fmt.Sprintf("src/f%04d.go", k) }

// wideMergeRequest pushes to project owner/name (made public) a master of
// n Go files and a branch "wide" that changes three lines in the middle
// of each, in real commits written by git fast-import, and opens merge
// request !1 from it. Each file's diff is one hunk of 12 lines, whose
// changed lines name the file ("changed in f0900 here").
func wideMergeRequest(t testing.TB, s *env, owner *fennectest.User, name string, n int) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	p := stocktest.NewProject(t, owner.Client, name, "public")
	w := s.clone(t, owner.Username, owner.Token, owner.Username+"/"+name)
	w.commit("base", map[string]string{"README": "r\n"})
	root := w.git("rev-parse", "HEAD")
	file := func(k int, changed bool) string {
		var b strings.Builder
		fmt.Fprintf(&b, "package src\n\n// F%04d is the %d-th function of the wide merge request.\nfunc F%04d(x int) int {\n", k, k, k)
		for l := 0; l < 12; l++ {
			switch {
			case changed && l >= 5 && l < 8:
				fmt.Fprintf(&b, "\tx = x*%d + %d // changed in f%04d here\n", k, l, k)
			default:
				fmt.Fprintf(&b, "\tx = x + %d\n", l)
			}
		}
		b.WriteString("\treturn x\n}\n")
		return b.String()
	}
	var stream strings.Builder
	for c, branch := range []string{"master", "wide"} {
		fmt.Fprintf(&stream, "commit refs/heads/%s\nmark :%d\ncommitter T <t@example.com> %d +0000\n", branch, c+1, 1700000000+c)
		msg := fmt.Sprintf("%s: %d files", branch, n)
		fmt.Fprintf(&stream, "data %d\n%s\n", len(msg), msg)
		if c == 0 {
			fmt.Fprintf(&stream, "from %s\n", root)
		} else {
			stream.WriteString("from :1\n")
		}
		for k := 0; k < n; k++ {
			content := file(k, c == 1)
			fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", wideFile(k), len(content), content)
		}
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = w.dir
	cmd.Stdin = strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v %s", err, out)
	}
	w.git("push", "-q", "-f", "origin", "master", "wide")
	s.Drain(t)
	stocktest.OpenMergeRequest(t, owner.Client, p.ID, "wide", "master", fmt.Sprintf("Change %d files", n))
}

// TestChangesTabAtScale: the Changes tab of a merge request of 1,000
// changed files renders the diffs of its budget's files only (the first
// 50), lists all 1,000, and links each other file to the tab showing it
// alone, which holds exactly that file's diff, in either view and with
// the whitespace switch. A hostile ?file= is a 404 page, not an error.
func TestChangesTabAtScale(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	wideMergeRequest(t, s, alice, "wide", 1000)
	const base = "/alice/wide/-/merge_requests/1/diffs"
	b := s.SignedIn(t, "alice", alice.Password)

	page := b.Get(t, base)
	wantPage(t, "changes", page, 200, `1000 changed files`, `950 files past the first ones are collapsed`,
		`<script src="/-/static/diffs-`, `<li><a href="#diff-999"><bdi>`+wideFile(999)+`</bdi></a>`,
		`<details class="box diff" id="diff-49" open>`, `<details class="box diff deferred" id="diff-50">`,
		`<a class="load-diff" href="`+base+`?file=`+url.QueryEscape(wideFile(900))+`#diff-900">`)
	rendered := regexp.MustCompile(`<details class="box diff" id="diff-(\d+)"`).FindAllStringSubmatch(page.Body, -1)
	deferred := regexp.MustCompile(`<details class="box diff deferred" id="diff-(\d+)">`).FindAllStringSubmatch(page.Body, -1)
	if len(rendered) != 50 || rendered[0][1] != "0" || rendered[49][1] != "49" || len(deferred) != 950 {
		t.Fatalf("changes: %d files rendered, %d deferred; want the first 50 and 950", len(rendered), len(deferred))
	}
	// The diffs' lines are those of the 50 files: 12 lines and a hunk
	// header each, the changed lines' text naming the file.
	if rows := strings.Count(page.Body, `<tr id="L`); rows != 50*12 {
		t.Fatalf("changes: %d diff lines, want %d", rows, 50*12)
	}
	wantNot(t, "changes", page, "changed in f0050 ", `id="L50_`, "changed in f0900 ")
	// 50 files' diffs (350 KB), 950 entries and the list of 1,000.
	if len(page.Body) > 800_000 {
		t.Fatalf("changes: %d bytes, over 800 KB", len(page.Body))
	}

	// The link of file 900: that file alone.
	one := b.Get(t, base+"?file="+url.QueryEscape(wideFile(900)))
	wantPage(t, "file 900", one, 200, `One file of 1000 changed files: <a href="`+base+`#diff-900">all changed files</a>`,
		`<details class="box diff" id="diff-900" open>`, `<bdi>`+wideFile(900)+`</bdi>`,
		`<tr id="L900_10_0" class="del">`, `<tr id="L900_0_10" class="add">`, `changed in f0900 `,
		`href="`+base+`?file=`+url.QueryEscape(wideFile(900))+`&amp;line=900_0_10#line-form"`)
	if n := strings.Count(one.Body, `<details class="box diff`); n != 1 {
		t.Fatalf("file 900: %d files on the page, want 1", n)
	}
	if rows := strings.Count(one.Body, `<tr id="L900_`); rows != 12 || strings.Count(one.Body, `<tr id="L`) != 12 {
		t.Fatalf("file 900: %d of its lines, %d in all; want 12", rows, strings.Count(one.Body, `<tr id="L`))
	}
	wantNot(t, "file 900", one, `<nav aria-label="Changed files">`, "changed in f0899 ", "changed in f0901 ", `diffs.js`)
	// Its comment link opens the form under the line, the file alone.
	wantPage(t, "file 900 line form", b.Get(t, base+"?file="+url.QueryEscape(wideFile(900))+"&line=900_0_10"), 200,
		`id="line-form"`, `name="new_path" value="`+wideFile(900)+`"`, `name="new_line" value="10"`)
	wantPage(t, "file 900 side by side", b.Get(t, base+"?view=parallel&file="+url.QueryEscape(wideFile(900))), 200,
		`<table class="code parallel">`, `<td class="num del" id="L900_10_0">10</td>`, `changed in f0900 `,
		`href="`+base+`?file=`+url.QueryEscape(wideFile(900))+`&amp;view=parallel&amp;line=900_0_10#line-form"`,
		`<a href="`+base+`?file=`+url.QueryEscape(wideFile(900))+`">Unified view</a>`)
	wantPage(t, "file 900 without whitespace", b.Get(t, base+"?w=1&file="+url.QueryEscape(wideFile(900))), 200,
		`<details class="box diff" id="diff-900" open>`, `changed in f0900 `, `Line comments are made on the whole diff.`)
	// The whole tab's links keep the switches.
	wantPage(t, "side by side", b.Get(t, base+"?view=parallel"), 200,
		`<a class="load-diff" href="`+base+`?file=`+url.QueryEscape(wideFile(900))+`&amp;view=parallel#diff-900">`)

	// Hostile or unknown paths: the 404 page, nothing echoed.
	for what, file := range map[string]string{
		"traversal": "../../../../etc/passwd", "absolute": "/etc/passwd", "unknown": "src/f1000.go", "empty": "",
		"markup": `<script>alert(1)</script>`, "10 KB": strings.Repeat("src/", 2560), "NUL": "src/f0001.go\x00",
		"directory": "src", "old path of none": "src/../src/f0001.go",
	} {
		p := b.Get(t, base+"?file="+url.QueryEscape(file))
		wantPage(t, what, p, 404, `No such changed file`)
		wantNot(t, what, p, `<script>alert(1)`, "root:", `<details class="box diff`)
	}
	wantPage(t, "anonymous file 900", s.NewBrowser(t).Get(t, base+"?file="+url.QueryEscape(wideFile(900))), 200, `changed in f0900 `)
}

// TestChangesTabLoadsFilesInChromium: in a real browser, opening a
// collapsed file of a wide merge request's Changes tab puts its diff in
// place (the page is not left), and side by side too; axe-core checks
// the tab with collapsed files.
func TestChangesTabLoadsFilesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := start(t)
	alice := s.CreateUser(t, "alice")
	wideMergeRequest(t, s, alice, "wide", 80)
	shots := chrome.Artifacts(t, "changes-at-scale")
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	chrome.SignIn(t, tab, s.URL, "alice", alice.Password)
	const base = "/alice/wide/-/merge_requests/1/diffs"
	for _, view := range []string{"", "?view=parallel"} {
		must("changes", chromedp.Do(tab, chromedp.Navigate(s.URL+base+view), chromedp.WaitVisible(chromedp.CSS("#diff-70 > summary"))))
		before, err := chromedp.Run(tab, chromedp.Location())
		must("location", err)
		must("open file 70", chromedp.Do(tab, chromedp.ScrollIntoView(chromedp.CSS("#diff-70 > summary")),
			chromedp.Click(chromedp.CSS("#diff-70 > summary")), chromedp.WaitVisible(chromedp.CSS(`#diff-70:not(.deferred) table.code`))))
		after, err := chromedp.Run(tab, chromedp.Location())
		must("location", err)
		text, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#diff-70 table.code")))
		must("text", err)
		open, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("diff-70").open && document.querySelectorAll("details.deferred").length === 29`))
		must("open", err)
		if after != before || !strings.Contains(text, "changed in f0070 ") || strings.Contains(text, "changed in f0071 ") || !open {
			t.Fatalf("file 70 loaded %q: at %s (was %s), open and the rest collapsed %v; text %.300q", view, after, before, open, text)
		}
		if view == "" {
			chrome.Screenshot(t, tab, shots, "changes-loaded.png")
			chrome.CheckAccessibility(t, tab, "changes with collapsed files")
		}
	}
}
