package web_test

import (
	"context"
	"embed"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/stock"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"go.uber.org/zap"
)

//go:embed testdata/*.html
var testTemplates embed.FS

// probe is a module of pages that records what the site handed it.
type probe struct {
	writes int
	owner  string
	rest   string
	path   string
	user   string
}

func (p *probe) module() fennec.Module {
	return fennec.NewModule("webprobe", fennec.ProvidePages(func(fennec.None) fennec.Pages {
		return fennec.Pages{Name: "webprobe", Register: p.register}
	}))
}

func (p *probe) register(s *web.Site) {
	t := s.Templates(testTemplates, "testdata/*.html")
	s.AddMenu(web.MenuItem{Label: "Probe menu", Path: "/probe", Order: 1})
	s.AddMenu(web.MenuItem{Label: "Members only", Path: "/probe/mine", Order: 2, SignedIn: true})
	// The project's Overview and Files (GET tree) are the stock
	// repository module's; the probe's own page is "probe".
	s.AddProjectTab(web.ProjectTab{Key: "probe", Label: "Probe", Suffix: "/-/probe", Order: 2})
	s.AddProjectTab(web.ProjectTab{Key: "issues", Label: "Issues", Suffix: "/-/issues", Order: 3, Feature: "issues_enabled"})
	s.AddProjectTab(web.ProjectTab{Key: "settings", Label: "Settings", Suffix: "/-/settings", Order: 4, MinLevel: 40})
	s.Handle("GET /probe", func(w http.ResponseWriter, r *http.Request) {
		p.user = ""
		if u := auth.FromContext(r.Context()).User; u != nil {
			p.user = u.Username
		}
		t.Render(w, r, "probe", web.Page{Title: "Probe <b>", Data: "hello & <world>"})
	})
	s.Handle("POST /probe", func(w http.ResponseWriter, r *http.Request) {
		p.writes++
		s.Redirect(w, r, "/probe")
	})
	s.Project("GET probe", func(w http.ResponseWriter, r *http.Request) {
		p.owner, p.rest = r.PathValue("owner"), r.PathValue("rest")
		if p.owner == "secret/project" && auth.FromContext(r.Context()).User == nil {
			s.Missing(w, r)
			return
		}
		t.Render(w, r, "probe", web.Page{Title: "Tree", Tab: "probe",
			Project: &web.Project{FullPath: p.owner, Name: "Probe / " + p.owner, Visibility: "public", Level: 30}, Data: p.rest})
	})
	s.Group("GET probe", func(w http.ResponseWriter, r *http.Request) {
		p.owner, p.rest = r.PathValue("owner"), "group"
		t.Render(w, r, "probe", web.Page{Title: "Group", Data: p.owner})
	})
	s.Path(func(w http.ResponseWriter, r *http.Request, path string) bool {
		if path != "someone" && path != "héllo wörld" {
			return false
		}
		p.path = path
		t.Render(w, r, "probe", web.Page{Title: "Path", Data: path})
		return true
	})
}

// TestSitePagesAndErrors: the site routes GitLab's URL shapes to the pages
// modules registered, with the layout, menu and tabs; everything else
// outside /api/v4 is the HTML 404 page, and the API keeps its JSON.
func TestSitePagesAndErrors(t *testing.T) {
	t.Parallel()
	p := &probe{}
	s := stocktest.Start(t, fennectest.WithModules(p.module()))
	c := s.NewBrowser(t)

	resp, body := split(c.Get(t, "/probe"))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /probe: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`<title>Probe &lt;b&gt; · Fennec</title>`, `<p id="data">hello &amp; &lt;world&gt;</p>`,
		`<a href="/probe">Probe menu</a>`, `href="/users/sign_in?return_to=%2Fprobe"`} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /probe lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "Members only") {
		t.Error("an anonymous visitor sees a signed-in menu entry")
	}
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
		"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}

	// A project page: the owner and the rest unescaped, slashes, spaces,
	// unicode and "#" kept; the tabs the project allows, the active one
	// marked.
	resp, body = split(c.Get(t, "/grp/sub/proj/-/probe/feature/x/dir%20a/%C3%A9t%C3%A9%23.md"))
	if resp.StatusCode != 200 || p.owner != "grp/sub/proj" || p.rest != "feature/x/dir a/été#.md" {
		t.Fatalf("project page: %d owner %q rest %q", resp.StatusCode, p.owner, p.rest)
	}
	for _, want := range []string{`<a href="/grp/sub/proj">Overview</a>`, `<a href="/grp/sub/proj/-/probe" aria-current="page">Probe</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("project page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, ">Issues<") || strings.Contains(body, ">Settings<") {
		t.Errorf("tabs of a switched-off feature or a higher level are shown:\n%s", body)
	}
	// A project the visitor may not see: sign in first, then come back.
	resp, _ = split(c.Get(t, "/secret/project/-/probe/main?x=1"))
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/users/sign_in?return_to=%2Fsecret%2Fproject%2F-%2Fprobe%2Fmain%3Fx%3D1" {
		t.Errorf("hidden project, anonymous: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Groups and bare paths.
	if resp, _ = split(c.Get(t, "/groups/a/b/-/probe")); resp.StatusCode != 200 || p.owner != "a/b" {
		t.Errorf("group page: %d %q", resp.StatusCode, p.owner)
	}
	if resp, _ = split(c.Get(t, "/h%C3%A9llo%20w%C3%B6rld")); resp.StatusCode != 200 || p.path != "héllo wörld" {
		t.Errorf("bare path: %d %q", resp.StatusCode, p.path)
	}
	// Not found: the HTML page, for unknown keys, bare paths nobody
	// claims, and a project page with another method.
	for _, path := range []string{"/nothing", "/grp/proj/-/nothing/x", "/grp/proj/-/", "/-/tree/x", "/nobody/at/all"} {
		resp, body = split(c.Get(t, path))
		if resp.StatusCode != 404 || !strings.Contains(body, "<h1>Page not found</h1>") || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("GET %s: %d %.200s", path, resp.StatusCode, body)
		}
	}
	// The API keeps its JSON answers.
	if resp, body = split(c.Get(t, "/api/v4/nothing")); resp.StatusCode != 404 || body != `{"error":"404 Not Found"}` {
		t.Errorf("API 404: %d %s", resp.StatusCode, body)
	}
	// Signed in (the OAuth module's session): the principal reaches the
	// page, the members' menu shows, and the sign-out form has a token.
	root := s.SignedIn(t, "root", s.RootPassword)
	resp, body = split(root.Get(t, "/probe"))
	if resp.StatusCode != 200 || p.user != "root" || !strings.Contains(body, "Members only") || !regexp.MustCompile(`name="authenticity_token" value="[0-9a-f]{64}"`).MatchString(body) {
		t.Errorf("signed in: %d user %q\n%s", resp.StatusCode, p.user, body)
	}
}

// TestSiteFormsNeedTheirCSRFToken: a page's write runs only with the
// browser's own token: none, a forged one, another browser's, or the
// session's token sent without the session are refused with the 403
// page, and the handler never runs.
func TestSiteFormsNeedTheirCSRFToken(t *testing.T) {
	t.Parallel()
	p := &probe{}
	s := stocktest.Start(t, fennectest.WithModules(p.module()))
	anon := s.NewBrowser(t)
	_, body := split(anon.Get(t, "/users/sign_in")) // sets the double-submit cookie
	token := regexp.MustCompile(`name="authenticity_token" value="([0-9a-f]+)"`).FindStringSubmatch(body)[1]
	post := func(c *fennectest.Browser, form url.Values) (int, string) {
		resp, err := c.PostForm(s.URL+"/probe", form)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(raw)
	}
	for name, c := range map[string]struct {
		client *fennectest.Browser
		form   url.Values
	}{
		"no token":               {anon, url.Values{}},
		"a forged token":         {anon, url.Values{"authenticity_token": {strings.Repeat("ab", 32)}}},
		"another browser's":      {s.NewBrowser(t), url.Values{"authenticity_token": {token}}},
		"an empty token":         {anon, url.Values{"authenticity_token": {""}}},
		"the session's, no jar":  {s.NewBrowser(t), url.Values{"authenticity_token": {web.SessionCSRF("x")}}},
		"a token twice the size": {anon, url.Values{"authenticity_token": {token + token}}},
	} {
		status, body := post(c.client, c.form)
		if status != http.StatusForbidden || !strings.Contains(body, "<h1>Form expired</h1>") {
			t.Errorf("%s: %d %.200s", name, status, body)
		}
	}
	if p.writes != 0 {
		t.Fatalf("the handler ran %d times on refused forms", p.writes)
	}
	if status, _ := post(anon, url.Values{"authenticity_token": {token}}); status != http.StatusSeeOther || p.writes != 1 {
		t.Fatalf("the browser's own token: %d, %d writes", status, p.writes)
	}
	// A huge form is refused before the handler.
	resp, err := anon.Client.Post(s.URL+"/probe", "application/x-www-form-urlencoded", strings.NewReader("authenticity_token="+token+"&x="+strings.Repeat("a", web.MaxFormBytes)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || p.writes != 1 {
		t.Fatalf("a form over the limit: %d, %d writes", resp.StatusCode, p.writes)
	}
	// Signed in, the token is the session's.
	root := s.SignedIn(t, "root", s.RootPassword)
	_, body = split(root.Get(t, "/probe"))
	session := regexp.MustCompile(`name="authenticity_token" value="([0-9a-f]+)"`).FindStringSubmatch(body)[1]
	if status, _ := post(root, url.Values{"authenticity_token": {token}}); status != http.StatusForbidden {
		t.Errorf("signed in with the pre-session token: %d", status)
	}
	if status, _ := post(root, url.Values{"authenticity_token": {session}}); status != http.StatusSeeOther || p.writes != 2 {
		t.Errorf("signed in with the session's token: %d, %d writes", status, p.writes)
	}
}

// TestSiteAssetsAreHashedAndCached: the stylesheet's URL names its content,
// it is cached for a year and compressed for browsers that ask; a page
// over a kilobyte is compressed too; unknown assets are 404.
func TestSiteAssetsAreHashedAndCached(t *testing.T) {
	t.Parallel()
	p := &probe{}
	s := stocktest.Start(t, fennectest.WithModules(p.module()))
	c := s.NewBrowser(t)
	_, body := split(c.Get(t, "/probe"))
	m := regexp.MustCompile(`href="(/-/static/fennec-[0-9a-f]{10}\.css)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no hashed stylesheet link:\n%s", body)
	}
	resp, css := split(c.Get(t, m[1], "Accept-Encoding", "gzip"))
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
		resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || !strings.Contains(css, "prefers-color-scheme:dark") {
		t.Errorf("stylesheet: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = split(c.Get(t, "/probe", "Accept-Encoding", "gzip"))
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("page not compressed: %v", resp.Header)
	}
	resp, _ = split(c.Get(t, "/probe", "Accept-Encoding", "gzip;q=0"))
	if resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("page compressed for a browser that refused gzip: %v", resp.Header)
	}
	if resp, _ = split(c.Get(t, "/-/static/fennec-0000000000.css")); resp.StatusCode != 404 {
		t.Errorf("unknown asset: %d", resp.StatusCode)
	}
}

func split(p fennectest.Page) (*http.Response, string) { return p.Response, p.Body }

// TestSiteUnderAPrefix mounts the app under /git of a host's mux, as the
// README's embedding example does: every link, asset, redirect and cookie
// of the site carries the prefix, and the host's other paths stay its own.
func TestSiteUnderAPrefix(t *testing.T) {
	t.Parallel()
	p := &probe{}
	mux := http.NewServeMux()
	host := httptest.NewServer(mux)
	defer host.Close()
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	cfg.NoSync = true
	cfg.ExternalURL = host.URL + "/git"
	cfg.SetModule("identity", "root_password", "password-123")
	cfg.SetModule("identity", "password_cost", 4)
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(append(stock.Modules(), p.module())...), fennec.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer app.Stop(ctx)
	mux.Handle("/git/", http.StripPrefix("/git", app.Handler()))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "the host's own page", http.StatusTeapot) })
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	fetch := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := c.Get(host.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}

	resp, body := fetch("/git/grp/proj/-/probe/main")
	if resp.StatusCode != 200 || p.owner != "grp/proj" {
		t.Fatalf("a project page under the prefix: %d owner %q", resp.StatusCode, p.owner)
	}
	for _, want := range []string{`<a class="brand" href="/git/">`, `<a href="/git/probe">Probe menu</a>`,
		`<a href="/git/grp/proj/-/probe" aria-current="page">Probe</a>`, `href="/git/users/sign_in?return_to=%2Fgit%2Fgrp%2Fproj%2F-%2Fprobe%2Fmain"`} {
		if !strings.Contains(body, want) {
			t.Errorf("under the prefix, the page lacks %q:\n%s", want, body)
		}
	}
	css := regexp.MustCompile(`href="(/git/-/static/fennec-[0-9a-f]{10}\.css)"`).FindStringSubmatch(body)
	if css == nil {
		t.Fatalf("no stylesheet under the prefix:\n%s", body)
	}
	if resp, _ = fetch(css[1]); resp.StatusCode != 200 {
		t.Errorf("stylesheet under the prefix: %d", resp.StatusCode)
	}
	resp, _ = fetch("/git/secret/project/-/probe/main")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/git/users/sign_in?return_to=%2Fgit%2Fsecret%2Fproject%2F-%2Fprobe%2Fmain" {
		t.Errorf("sign-in redirect under the prefix: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body = fetch("/git/no/such/page")
	if resp.StatusCode != 404 || !strings.Contains(body, `<a href="/git/">Go to the start page</a>`) {
		t.Errorf("404 under the prefix: %d\n%s", resp.StatusCode, body)
	}
	// A form's double-submit cookie is the prefix's.
	resp, _ = fetch("/git/users/sign_in")
	for _, ck := range resp.Cookies() {
		if ck.Name == web.CSRFCookie && ck.Path != "/git/" {
			t.Errorf("CSRF cookie path %q, want /git/", ck.Path)
		}
	}
	// Signing in through the form under the prefix: the session cookie is
	// the prefix's, the browser returns where it was sent from, and a
	// return address outside the prefix is not followed.
	signIn := func(returnTo string) *http.Response {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		b := &http.Client{Jar: jar, CheckRedirect: c.CheckRedirect}
		resp, err := b.Get(host.URL + "/git/users/sign_in?return_to=" + url.QueryEscape(returnTo))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(raw), `action="/git/users/sign_in"`) {
			t.Fatalf("sign-in form under the prefix:\n%s", raw)
		}
		form := url.Values{"login": {"root"}, "password": {"password-123"}}
		for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(string(raw), -1) {
			form.Set(m[1], html.UnescapeString(m[2]))
		}
		resp, err = b.PostForm(host.URL+"/git/users/sign_in", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp = signIn("/git/grp/proj/-/tree/main")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/git/grp/proj/-/tree/main" {
		t.Errorf("sign in under the prefix: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == "_fennec_session" && ck.Path != "/git/" {
			t.Errorf("session cookie path %q, want /git/", ck.Path)
		}
	}
	for _, outside := range []string{"/elsewhere", "//evil.example/x", "/git/../elsewhere", "/git/%2e%2e/elsewhere", "/gitx/y"} {
		if resp = signIn(outside); resp.Header.Get("Location") != "/git/users/sign_in" {
			t.Errorf("return_to %q: sent to %q", outside, resp.Header.Get("Location"))
		}
	}
	if resp, _ = fetch("/elsewhere"); resp.StatusCode != http.StatusTeapot {
		t.Errorf("the host's own path: %d", resp.StatusCode)
	}
}

// TestSiteHostilePaths: paths with markup, control and bidi characters,
// NUL, bad escapes and traversal get a safe page (404, escaped), never a
// 500 or their text as markup.
func TestSiteHostilePaths(t *testing.T) {
	t.Parallel()
	p := &probe{}
	s := stocktest.Start(t, fennectest.WithModules(p.module()))
	c := s.NewBrowser(t)
	for _, path := range []string{"/%3Cscript%3Ealert(1)%3C/script%3E", "/a/%3Cimg%20src=x%20onerror=alert(1)%3E/-/nothing/x",
		"/%00", "/a%0d%0aSet-Cookie:%20x=1", "/%E2%80%AEevil", "/a/../../etc/passwd",
		"/" + strings.Repeat("a/", 2000) + "-/nothing"} {
		pg := c.Get(t, path)
		if pg.StatusCode != 404 || strings.Contains(pg.Body, "<script>alert") || strings.Contains(pg.Body, "<img src=x") ||
			pg.Header.Get("Set-Cookie") != "" && strings.Contains(pg.Header.Get("Set-Cookie"), "x=1") {
			t.Errorf("GET %.80s: %d %.300s", path, pg.StatusCode, pg.Body)
		}
	}
	// The project page escapes what the path brings.
	pg := c.Get(t, "/grp/proj/-/probe/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
	if pg.StatusCode != 200 || strings.Contains(pg.Body, "<script>alert(1)") || !strings.Contains(pg.Body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("hostile rest: %d\n%s", pg.StatusCode, pg.Body)
	}
}
