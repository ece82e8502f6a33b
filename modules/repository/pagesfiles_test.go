package repository_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/config"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// wantPage checks a page's status and that its body holds every fragment.
func wantPage(t *testing.T, what string, p fennectest.Page, status int, fragments ...string) {
	t.Helper()
	p.Want(t, what, status, fragments...)
}

// wantRedirect checks a redirect's status and Location.
func wantRedirect(t *testing.T, what string, p fennectest.Page, status int, location string) {
	t.Helper()
	p.WantRedirect(t, what, status, location)
}

const hostileName = "<img src=x onerror=alert(1)>.txt"

// TestFilePagesBrowse: the overview, tree, blob, raw and blame pages of a
// public project, anonymously: escaped hostile names and links, refs with
// slashes resolved by the longest prefix, large and binary files bounded,
// SVG served sandboxed as an attachment, 9.x paths redirected.
func TestFilePagesBrowse(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "web", "public")
	big := strings.Repeat("0123456789abcde\n", 2<<20/16)
	first := stocktest.CommitFiles(t, s.Client, p.ID, "master", "first <commit>", map[string]string{
		"README.md":             "# Hello\n\nSee ![logo](img/logo.png).\n",
		"src/a b#c.go":          "package main\n// <script>alert(1)</script>\n",
		"dir/été.txt":           "unicode\n",
		hostileName:             "hostile\n",
		"bin/data.bin":          "\x00\x01\x02binary",
		"big.txt":               big,
		"evil.svg":              `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
		"img/logo.png":          "\x89PNG\r\n\x1a\n\x00\x00",
		"docs/guide.md":         "# Guide\n",
		"empty/.gitkeep":        "",
		"page.html":             "<script>alert(1)</script>",
		"odd/bidi\u202etxt.exe": "bidi\n",
	})
	if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature/x"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, s.Client, p.ID, "feature/x", "on the feature", map[string]string{"dir/file.txt": "on feature/x\n"})
	// A tag "feature" whose tree has no dir/file.txt: the longest ref
	// that is a prefix of feature/x/dir/file.txt is the branch.
	if _, _, err := s.Client.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Client.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{Description: gitlab.Ptr("A <b>web</b> project")}); err != nil {
		t.Fatal(err)
	}
	c := s.NewBrowser(t)

	// The overview.
	wantPage(t, "overview", c.Get(t, "/root/web"), 200,
		`<h1>web</h1>`, `<p>A &lt;b&gt;web&lt;/b&gt; project</p>`, `<caption class="muted">12 entries</caption>`, `<a href="/root/web" aria-current="page">Overview</a>`, `<a href="/root/web/-/tree">Files</a>`,
		`value="`+s.URL+`/root/web.git"`, `value="git@`, `/root/web/-/commit/`+first.ID+`"`, `first &lt;commit&gt;`,
		`href="/root/web/-/blob/master/README.md"`, `href="/root/web/-/tree/master/src"`, `<h1 id="hello">Hello`,
		`<option value="feature/x">feature/x</option>`, `<option value="master" selected>master</option>`)

	// The tree, its entries escaped and linked escaped.
	hostileHref := `/root/web/-/blob/master/` + web.EscapePath(hostileName)
	page := c.Get(t, "/root/web/-/tree/master")
	wantPage(t, "root tree", page, 200, `<h1>Files</h1>`, `&lt;img src=x onerror=alert(1)&gt;.txt`,
		`href="`+hostileHref+`"`, `href="/root/web/-/tree/master/dir"`, `/root/web/-/commit/`+first.ID)
	if strings.Contains(page.Body, "<img src=x") {
		t.Errorf("a file name is not escaped:\n%s", page.Body)
	}
	wantPage(t, "src tree", c.Get(t, "/root/web/-/tree/master/src"), 200, `href="/root/web/-/blob/master/src/a%20b%23c.go"`, `><bdi>a b#c.go</bdi></a>`,
		`<a href="/root/web/-/tree/master">web</a>`, `<span aria-current="page">src</span>`)
	wantPage(t, "unicode tree", c.Get(t, "/root/web/-/tree/master/dir"), 200, `href="/root/web/-/blob/master/dir/%C3%A9t%C3%A9.txt"`, `><bdi>été.txt</bdi></a>`)
	wantPage(t, "unknown ref", c.Get(t, "/root/web/-/tree/nope/src"), 404, `<h1>Page not found</h1>`)
	wantPage(t, "unknown dir", c.Get(t, "/root/web/-/tree/master/nope"), 404, `<h1>Page not found</h1>`)
	wantPage(t, "odd names", c.Get(t, "/root/web/-/tree/master/odd"), 200, "<bdi>bidi\u202etxt.exe</bdi>")
	wantPage(t, "dot dot", c.Get(t, "/root/web/-/blob/master/%2E%2E/README.md"), 404, `<h1>Page not found</h1>`)
	wantRedirect(t, "tree of a file", c.Get(t, "/root/web/-/tree/master/README.md"), 302, "/root/web/-/blob/master/README.md")

	// The blob: numbered lines, anchors, links; hostile content escaped.
	page = c.Get(t, "/root/web/-/blob/master/src/a%20b%23c.go")
	wantPage(t, "blob", page, 200, `<h1><bdi>a b#c.go</bdi></h1>`, `<tr id="L2"><td class="num"><a href="#L2">2</a></td>`,
		`href="/root/web/-/raw/master/src/a%20b%23c.go"`, `href="/root/web/-/blame/master/src/a%20b%23c.go"`,
		`href="/root/web/-/commits/master/src/a%20b%23c.go"`)
	if strings.Contains(page.Body, "<script>alert") {
		t.Errorf("file content is not escaped:\n%s", page.Body)
	}
	wantPage(t, "markdown blob", c.Get(t, "/root/web/-/blob/master/README.md"), 200, `href="/root/web/-/blob/master/README.md?plain=1">Source</a>`)
	wantPage(t, "markdown source", c.Get(t, "/root/web/-/blob/master/README.md?plain=1"), 200, `<tr id="L1">`,
		`href="/root/web/-/blob/master/README.md">Rendered</a>`)
	wantPage(t, "large blob", c.Get(t, "/root/web/-/blob/master/big.txt"), 200,
		`This file is too large to display (2.0 MiB). <a href="/root/web/-/raw/master/big.txt">View it raw</a>.`)
	wantPage(t, "binary blob", c.Get(t, "/root/web/-/blob/master/bin/data.bin"), 200,
		`This is a binary file. <a href="/root/web/-/raw/master/bin/data.bin">Download it</a>.`)
	wantPage(t, "image blob", c.Get(t, "/root/web/-/blob/master/img/logo.png"), 200, `<img src="/root/web/-/raw/master/img/logo.png" alt="logo.png">`)
	wantPage(t, "empty blob", c.Get(t, "/root/web/-/blob/master/empty/.gitkeep"), 200, `This file is empty.`)
	wantRedirect(t, "blob of a directory", c.Get(t, "/root/web/-/blob/master/src"), 302, "/root/web/-/tree/master/src")

	// A ref with a slash, found as the longest prefix that is a ref (the
	// tag "feature" is shorter).
	page = c.Get(t, "/root/web/-/blob/feature/x/dir/file.txt")
	wantPage(t, "blob on feature/x", page, 200, `<h1><bdi>file.txt</bdi></h1>`, `on feature/x`, `<option value="feature/x" selected>feature/x</option>`,
		`<a href="/root/web/-/tree/feature/x/dir">dir</a>`)
	wantPage(t, "tree of feature/x", c.Get(t, "/root/web/-/tree/feature/x/dir"), 200, `href="/root/web/-/blob/feature/x/dir/file.txt"`)
	wantPage(t, "the tag feature", c.Get(t, "/root/web/-/blob/feature/dir/file.txt"), 404)
	// The ref switcher's form.
	wantRedirect(t, "switch ref", c.Get(t, "/root/web/-/tree?ref=feature%2Fx&path=dir"), 302, "/root/web/-/tree/feature/x/dir")
	wantRedirect(t, "switch ref of a blob", c.Get(t, "/root/web/-/blob?ref=master&path=src%2Fa+b%23c.go"), 302, "/root/web/-/blob/master/src/a%20b%23c.go")

	// Raw: streamed with its type, never sniffed; SVG sandboxed and an
	// attachment.
	page = c.Get(t, "/root/web/-/raw/master/evil.svg")
	if page.StatusCode != 200 || page.Header.Get("Content-Type") != "image/svg+xml" || page.Header.Get("Content-Security-Policy") != "sandbox" ||
		page.Header.Get("Content-Disposition") != "attachment; filename=evil.svg" || page.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(page.Body, "<script>alert(1)</script>") {
		t.Errorf("raw svg: %d %v %q", page.StatusCode, page.Header, page.Body)
	}
	page = c.Get(t, "/root/web/-/raw/master/page.html")
	if page.StatusCode != 200 || page.Header.Get("Content-Type") != "text/plain; charset=utf-8" || page.Header.Get("Content-Security-Policy") != "sandbox" ||
		page.Header.Get("Content-Disposition") != "attachment; filename=page.html" {
		t.Errorf("raw html: %d %v", page.StatusCode, page.Header)
	}
	page = c.Get(t, "/root/web/-/raw/master/src/a%20b%23c.go")
	if page.StatusCode != 200 || page.Header.Get("Content-Type") != "text/plain; charset=utf-8" || page.Header.Get("Content-Disposition") != "" ||
		page.Body != "package main\n// <script>alert(1)</script>\n" {
		t.Errorf("raw text: %d %v %q", page.StatusCode, page.Header, page.Body)
	}
	page = c.Get(t, "/root/web/-/raw/master/big.txt")
	if page.StatusCode != 200 || page.Body != big {
		t.Errorf("raw big: %d, %d bytes", page.StatusCode, len(page.Body))
	}
	page = c.Get(t, "/root/web/-/raw/master/img/logo.png")
	if page.StatusCode != 200 || page.Header.Get("Content-Type") != "image/png" || page.Header.Get("Content-Disposition") != "" {
		t.Errorf("raw png: %d %v", page.StatusCode, page.Header)
	}

	// Blame: runs of lines with their commit.
	wantPage(t, "blame", c.Get(t, "/root/web/-/blame/master/src/a%20b%23c.go"), 200, `<h1>Blame of <bdi>src/a b#c.go</bdi></h1>`,
		`<a class="mono" href="/root/web/-/commit/`+first.ID+`">`+first.ID[:8]+`</a>`, `<td rowspan="2">`, `<tr id="L2">`)

	// GitLab 9.x's paths without "/-/".
	wantRedirect(t, "9.x tree", c.Get(t, "/root/web/tree/master/src?x=1&y=%23"), 301, "/root/web/-/tree/master/src?x=1&y=%23")
	wantRedirect(t, "clone URL", c.Get(t, "/root/web.git"), 301, "/root/web")
	wantRedirect(t, "9.x blob", c.Get(t, "/root/web/blob/feature/x/dir/file.txt"), 301, "/root/web/-/blob/feature/x/dir/file.txt")
}

// TestFilePagesTreeIsPaged: a tree of more entries than a page holds is
// listed 1,000 at a time, with next and previous links; the ref switcher
// lists at most 100 branches.
func TestFilePagesTreeIsPaged(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "wide", "public")
	var actions []*gitlab.CommitActionOptions
	for i := range 1001 {
		actions = append(actions, &gitlab.CommitActionOptions{Action: gitlab.Ptr(gitlab.FileCreate),
			FilePath: gitlab.Ptr(fmt.Sprintf("many/f%04d", i)), Content: gitlab.Ptr("x")})
	}
	if _, _, err := s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("wide"), Actions: actions}); err != nil {
		t.Fatal(err)
	}
	for i := range 101 {
		if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(fmt.Sprintf("b%03d", i)), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
	}
	c := s.NewBrowser(t)
	page := c.Get(t, "/root/wide/-/tree/master/many")
	// The ref switcher lists 100 branches ("b000" to "b099"), says so, and
	// keeps the current ref selected though it is past them.
	wantPage(t, "ref switcher", page, 200, `<option value="b099">b099</option>`, `(only the first 100 branches are listed)`,
		`<select id="ref-switch" name="ref"><option value="master" selected>master</option>`)
	if strings.Contains(page.Body, `"b100"`) {
		t.Error("the ref switcher lists a 101st branch")
	}
	wantPage(t, "page 1", page, 200, `Entries 1–1000 of 1001`, `>f0999</bdi>`, `<a href="/root/wide/-/tree/master/many?page=2" rel="next">Next</a>`)
	if strings.Contains(page.Body, ">f1000<") {
		t.Error("page 1 lists the 1,001st entry")
	}
	page = c.Get(t, "/root/wide/-/tree/master/many?page=2")
	wantPage(t, "page 2", page, 200, `Entries 1001–1001 of 1001`, `>f1000</bdi>`, `<a href="/root/wide/-/tree/master/many?page=1" rel="prev">Previous</a>`)
	if strings.Contains(page.Body, ">f0999<") {
		t.Error("page 2 lists an entry of page 1")
	}
}

// TestFilePagesPermissions: a private project's pages are the API's: an
// anonymous visitor is sent to sign in (as for a project that does not
// exist), a non-member gets the 404 page, a member the page; a guest
// member sees the overview but not the code. An empty repository's
// overview says how to push one.
func TestFilePagesPermissions(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "secret", "private")
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "secret commit", map[string]string{"README": "top secret\n"})
	member, guest, other := s.CreateUser(t, "member"), s.CreateUser(t, "guest"), s.CreateUser(t, "other")
	stocktest.AddMember(t, s.Client, p.ID, member.ID, gitlab.ReporterPermissions)
	stocktest.AddMember(t, s.Client, p.ID, guest.ID, gitlab.GuestPermissions)

	anon := s.NewBrowser(t)
	for _, path := range []string{"/root/secret", "/root/secret/-/tree/master", "/root/secret/-/blob/master/README",
		"/root/secret/-/raw/master/README", "/root/secret/-/blame/master/README", "/root/secret/tree/master", "/root/nothing", "/nobody/nothing"} {
		wantRedirect(t, "anonymous "+path, anon.Get(t, path), 302, "/users/sign_in?return_to="+url.QueryEscape(path))
	}
	o := s.SignedIn(t, other.Username, other.Password)
	for _, path := range []string{"/root/secret", "/root/secret/-/tree/master", "/root/secret/-/raw/master/README", "/root/secret/tree/master", "/root/nothing"} {
		page := o.Get(t, path)
		wantPage(t, "non-member "+path, page, 404, `<h1>Page not found</h1>`)
		if strings.Contains(page.Body, "secret") && strings.Contains(page.Body, "top secret") {
			t.Errorf("non-member sees the content of %s", path)
		}
	}
	m := s.SignedIn(t, member.Username, member.Password)
	wantPage(t, "member overview", m.Get(t, "/root/secret"), 200, `<h1>secret</h1>`, `top secret`)
	wantPage(t, "member tree", m.Get(t, "/root/secret/-/tree/master"), 200, `href="/root/secret/-/blob/master/README"`)
	wantPage(t, "member raw", m.Get(t, "/root/secret/-/raw/master/README"), 200, `top secret`)
	g := s.SignedIn(t, guest.Username, guest.Password)
	page := g.Get(t, "/root/secret")
	wantPage(t, "guest overview", page, 200, `<h1>secret</h1>`)
	if strings.Contains(page.Body, "top secret") || strings.Contains(page.Body, "/-/blob/") || strings.Contains(page.Body, "/root/secret.git") {
		t.Errorf("a guest sees the code on the overview:\n%s", page.Body)
	}
	wantPage(t, "guest tree", g.Get(t, "/root/secret/-/tree/master"), 404, `<h1>Page not found</h1>`)

	stocktest.NewProject(t, s.Client, "blank", "public")
	wantPage(t, "empty overview", anon.Get(t, "/root/blank"), 200, `<h2 id="empty-title">This repository is empty</h2>`,
		`git remote add origin `+s.URL+`/root/blank.git`)
	wantRedirect(t, "empty tree", anon.Get(t, "/root/blank/-/tree"), 302, "/root/blank")
}

// TestFilePagesControlCharacters: a name git took with a control
// character (the API refuses them; a push does not) shows its visible
// picture, linked escaped.
func TestFilePagesControlCharacters(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	var repos repository.Store
	s := stocktest.Start(t, fennectest.WithExtract(&repos))
	p := stocktest.NewProject(t, s.Client, "ctl", "public")
	w := t.TempDir()
	gitCmd(t, w, "init", "-q", "-b", "master")
	if err := os.WriteFile(filepath.Join(w, "bell\x07\x1b[31mred.txt"), []byte("ding\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, w, "add", ".")
	gitCmd(t, w, "commit", "-q", "-m", "control")
	touchRepository(t, s.Client, p.ID)
	gitCmd(t, w, "push", "-q", repos.Path(p.ID), "master")
	c := s.NewBrowser(t)
	wantPage(t, "tree", c.Get(t, "/root/ctl/-/tree/master"), 200, "<bdi>bell\u2407\u241b[31mred.txt</bdi>",
		`href="/root/ctl/-/blob/master/bell%07%1B%5B31mred.txt"`)
	wantPage(t, "blob", c.Get(t, "/root/ctl/-/blob/master/bell%07%1B%5B31mred.txt"), 200, "<h1><bdi>bell\u2407\u241b[31mred.txt</bdi></h1>", "ding")
}

// TestFilePagesUnderAPrefix: mounted under /git of a host's mux (the
// README's embedding example), the pages' links, forms and redirects
// carry the prefix.
func TestFilePagesUnderAPrefix(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	host := httptest.NewServer(mux)
	defer host.Close()
	// The API is taken as the app is assembled: the host serves it under
	// /git before the app starts (which signs root in through the prefix).
	var site *api.API
	mux.Handle("/git/", http.StripPrefix("/git", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { site.Handler().ServeHTTP(w, r) })))
	s := stocktest.Start(t, fennectest.WithExtract(&site),
		fennectest.WithConfig(func(c *config.Config) { c.ExternalURL = host.URL + "/git" }))
	p := stocktest.NewProject(t, s.Client, "pre", "public")
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "first", map[string]string{"src/main.go": "package main\n"})

	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := c.Get(host.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}
	resp, body := get("/git/root/pre")
	for _, want := range []string{`<a href="/git/root/pre/-/tree">Files</a>`, `href="/git/root/pre/-/tree/master/src"`,
		`action="/git/root/pre/-/tree"`, `value="` + host.URL + `/git/root/pre.git"`} {
		if resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("overview under the prefix: %d, lacks %q\n%s", resp.StatusCode, want, body)
		}
	}
	resp, body = get("/git/root/pre/-/blob/master/src/main.go")
	if resp.StatusCode != 200 || !strings.Contains(body, `href="/git/root/pre/-/raw/master/src/main.go"`) ||
		!strings.Contains(body, `<a href="/git/root/pre/-/tree/master/src">src</a>`) {
		t.Errorf("blob under the prefix: %d\n%s", resp.StatusCode, body)
	}
	for path, want := range map[string]string{
		"/git/root/pre/tree/master/src":            "/git/root/pre/-/tree/master/src",
		"/git/root/pre/-/tree?ref=master&path=src": "/git/root/pre/-/tree/master/src",
		"/git/root/pre/-/tree/master/src/main.go":  "/git/root/pre/-/blob/master/src/main.go",
		"/git/root/hidden":                         "/git/users/sign_in?return_to=%2Fgit%2Froot%2Fhidden",
	} {
		if resp, _ := get(path); resp.Header.Get("Location") != want {
			t.Errorf("%s under the prefix: %d %q, want %q", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// TestFilePagesLastCommitsAreBounded: the last commit of a file unchanged
// for 12,000 commits is beyond the tree page's walk: the page answers
// anyway, says the column is incomplete, and still shows the entries
// changed recently; the walk goes on in the background, and a later view
// shows the whole column, from the cache.
func TestFilePagesLastCommitsAreBounded(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	var repos repository.Store
	s := stocktest.Start(t, fennectest.WithExtract(&repos))
	p := stocktest.NewProject(t, s.Client, "long", "public")
	w := t.TempDir()
	gitCmd(t, w, "init", "-q", "-b", "master")
	var stream strings.Builder
	const commits = 12000
	for i := 1; i <= commits; i++ {
		fmt.Fprintf(&stream, "commit refs/heads/master\ncommitter T <t@example.com> %d +0000\ndata 5\nc%03d\n", 1700000000+i, i%1000)
		if i == 1 {
			stream.WriteString("M 100644 inline old.txt\ndata 4\nold\n")
		}
		fmt.Fprintf(&stream, "M 100644 inline counter.txt\ndata %d\n%d\n", len(strconv.Itoa(i))+1, i)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = w, strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	touchRepository(t, s.Client, p.ID)
	gitCmd(t, w, "push", "-q", repos.Path(p.ID), "master")
	head := gitCmd(t, w, "rev-parse", "master")
	first := gitCmd(t, w, "rev-list", "--max-parents=0", "master")

	c := s.NewBrowser(t)
	start := time.Now()
	page := c.Get(t, "/root/long/-/tree/master")
	took := time.Since(start)
	wantPage(t, "tree", page, 200, `the last commit of some entries took too long to find and is left out`,
		`<a href="/root/long/-/commit/`+head+`">c000</a>`)
	if strings.Count(page.Body, "/-/commit/") != 2 { // the ref's commit, and counter.txt's
		t.Errorf("commit links: %d, want 2", strings.Count(page.Body, "/-/commit/"))
	}
	if took > 10*time.Second {
		t.Errorf("the tree page took %v", took)
	}
	// The background walk finishes; the next view has every entry. The
	// walk of 12,000 commits takes a few seconds, but ten times that
	// under -race on a busy machine, past a 30 s wait: allow 3 minutes.
	fennectest.Poll(t, 3*time.Minute, func() (bool, string) {
		page = c.Get(t, "/root/long/-/tree/master")
		return !strings.Contains(page.Body, "took too long to find") && strings.Contains(page.Body, `<a href="/root/long/-/commit/`+first+`">c001</a>`),
			"the whole column, once the walk is done"
	})
	start = time.Now()
	c.Get(t, "/root/long/-/tree/master")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a view from the cache took %v", took)
	}
}

// TestFilePagesLinkCommitIDs: a README's commit ids that name a commit of
// the repository link to its page, titled with its first line; other hex
// words stay text.
func TestFilePagesLinkCommitIDs(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "shas", "public")
	first := stocktest.CommitFiles(t, s.Client, p.ID, "master", "the <first> fix\n\nbody", map[string]string{"a.txt": "a\n"})
	short := first.ID[:10]
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "readme", map[string]string{
		"README.md": "Fixed in " + short + ", not in deadbeefdeadbeef.\n"})
	page := s.NewBrowser(t).Get(t, "/root/shas")
	wantPage(t, "overview", page, 200, `href="`+s.URL+`/root/shas/-/commit/`+short+`"`, `title="the &lt;first&gt; fix"`, `>`+short+`</a>`,
		`, not in deadbeefdeadbeef.`)
	if strings.Contains(page.Body, "/-/commit/deadbeef") {
		t.Errorf("a hex word that is no commit is linked:\n%s", page.Body)
	}
}
