package snippets_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// wantPage checks a page's status and that it holds each fragment.
func wantPage(t *testing.T, what string, p fennectest.Page, status int, fragments ...string) {
	t.Helper()
	p.Want(t, what, status, fragments...)
}

func wantNot(t *testing.T, what string, p fennectest.Page, fragments ...string) {
	t.Helper()
	p.WantNot(t, what, fragments...)
}

func wantRedirect(t *testing.T, what string, p fennectest.Page, status int, location string) {
	t.Helper()
	p.WantRedirect(t, what, status, location)
}

func wantSignIn(t *testing.T, what string, p fennectest.Page) {
	t.Helper()
	if p.StatusCode != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/users/sign_in?return_to=") {
		t.Errorf("%s: %d %q, want the sign-in redirect", what, p.StatusCode, p.Header.Get("Location"))
	}
}

// TestSnippetPagesProject: a Developer creates a project snippet through
// the form with a hostile title and file name, reads it highlighted and
// raw, a Reporter previews and posts a comment, the author edits and
// deletes it; the API sees each step.
func TestSnippetPagesProject(t *testing.T) {
	t.Parallel()
	s := start(t)
	dev := s.CreateUser(t, "dev")
	rep := s.CreateUser(t, "rep")
	p := stocktest.NewProject(t, s.Client, "box", "private")
	stocktest.AddMember(t, s.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, s.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	d := s.SignedIn(t, "dev", dev.Password)

	list := d.Get(t, "/root/box/-/snippets")
	wantPage(t, "empty list", list, 200, `There are no snippets to show.`, `href="/root/box/-/snippets/new">New snippet</a>`,
		`<a href="/root/box/-/snippets" aria-current="page">Snippets</a>`)
	form := d.Get(t, "/root/box/-/snippets/new")
	wantPage(t, "new form", form, 200, `<form method="post" action="/root/box/-/snippets" class="snippet-form">`, `value="private" checked`)
	// No title: refused with the input kept; nothing made.
	again := d.Post(t, "/root/box/-/snippets", url.Values{"authenticity_token": {form.CSRF()}, "title": {""},
		"file_name": {"a.go"}, "content": {"kept <b>"}, "visibility": {"private"}})
	wantPage(t, "titleless", again, 422, `The snippet was not saved: title`, `kept &lt;b&gt;</textarea>`)
	if got, _, _ := s.Client.ProjectSnippets.ListSnippets(p.ID, nil); len(got) != 0 {
		t.Fatalf("a refused form made %d snippets", len(got))
	}
	// A bidi override in a title is refused as the API refuses it.
	bidi := d.Post(t, "/root/box/-/snippets", url.Values{"authenticity_token": {form.CSRF()}, "title": {"evil\u202etxt"},
		"file_name": {"a.go"}, "content": {"x"}, "visibility": {"private"}})
	wantPage(t, "bidi title", bidi, 422, `The snippet was not saved: title must not contain control characters.`)
	made := d.Post(t, "/root/box/-/snippets", url.Values{"authenticity_token": {form.CSRF()}, "title": {"<script>alert(1)</script> ünï"},
		"file_name": {`<img src=x>".go`}, "content": {"package main\r\n\r\nfunc main() {}\r\n"}, "description": {"Use **it**.\n\n<script>x()</script>"},
		"visibility": {"internal"}})
	api, _, err := s.Client.ProjectSnippets.ListSnippets(p.ID, nil)
	if err != nil || len(api) != 1 {
		t.Fatalf("snippets after the form: %v %+v\n%d %.3000s", err, api, made.StatusCode, made.Body)
	}
	id := strconv.FormatInt(api[0].ID, 10)
	wantRedirect(t, "create", made, http.StatusSeeOther, "/root/box/-/snippets/"+id)
	if api[0].Title != "<script>alert(1)</script> ünï" || api[0].FileName != `<img src=x>".go` || api[0].Author.Username != "dev" {
		t.Fatalf("the API's snippet: %+v", api[0])
	}
	raw := d.Get(t, "/root/box/-/snippets/"+id+"/raw")
	if raw.StatusCode != 200 || raw.Body != "package main\n\nfunc main() {}\n" || raw.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		raw.Header.Get("Content-Security-Policy") != "sandbox" || raw.Header.Get("X-Content-Type-Options") != "nosniff" ||
		raw.Header.Get("Content-Disposition") != `inline; filename="<img src=x>_.go"; filename*=UTF-8''%3Cimg%20src%3Dx%3E%22.go` {
		t.Fatalf("raw: %d %q %v", raw.StatusCode, raw.Body, raw.Header)
	}
	page := d.Get(t, "/root/box/-/snippets/"+id)
	wantPage(t, "snippet", page, 200, `<h1><bdi>&lt;script&gt;alert(1)&lt;/script&gt; ünï</bdi></h1>`,
		`<bdi>&lt;img src=x&gt;&#34;.go</bdi>`, `<p>Use <strong>it</strong>.</p>`, `<tr id="L3">`,
		`href="/root/box/-/snippets/`+id+`/raw">Raw</a>`, `href="/root/box/-/snippets/`+id+`/edit">Edit</a>`)
	wantNot(t, "snippet", page, "<script>", "<img src=x>")

	r := s.SignedIn(t, "rep", rep.Password)
	page = r.Get(t, "/root/box/-/snippets/"+id)
	wantNot(t, "reporter's view", page, `/edit">Edit</a>`, `/delete">Delete</a>`)
	preview := r.Post(t, "/root/box/-/snippets/"+id+"/notes", url.Values{"authenticity_token": {page.CSRF()}, "note": {"Nice _one_"}, "preview": {"1"}})
	wantPage(t, "preview", preview, 200, `<header>Preview</header><div class="body markdown"><p>Nice <em>one</em></p>`, `>Nice _one_</textarea>`)
	posted := r.Post(t, "/root/box/-/snippets/"+id+"/notes", url.Values{"authenticity_token": {page.CSRF()}, "note": {"Nice _one_"}})
	notes, _, err := s.Client.Notes.ListSnippetNotes(p.ID, api[0].ID, nil)
	if err != nil || len(notes) != 1 || notes[0].Body != "Nice _one_" || notes[0].Author.Username != "rep" {
		t.Fatalf("notes: %v %+v", err, notes)
	}
	anchor := "note_" + strconv.FormatInt(notes[0].ID, 10)
	wantRedirect(t, "comment", posted, http.StatusSeeOther, "/root/box/-/snippets/"+id+"#"+anchor)
	wantPage(t, "empty comment", r.Post(t, "/root/box/-/snippets/"+id+"/notes", url.Values{"authenticity_token": {page.CSRF()}, "note": {" "}}),
		422, `A comment cannot be empty.`)
	wantPage(t, "timeline", d.Get(t, "/root/box/-/snippets/"+id), 200, `<li id="`+anchor+`" class="note box">`, `<p>Nice <em>one</em></p>`)
	// A Reporter who is not the author may not edit: the form and its post
	// are the 403 page, and nothing changes.
	wantPage(t, "reporter's edit form", r.Get(t, "/root/box/-/snippets/"+id+"/edit"), 403)
	wantPage(t, "reporter's edit", r.Post(t, "/root/box/-/snippets/"+id, url.Values{"authenticity_token": {page.CSRF()},
		"title": {"taken"}, "file_name": {"a"}, "content": {"b"}, "visibility": {"private"}}), 403)
	wantPage(t, "reporter's delete", r.Post(t, "/root/box/-/snippets/"+id+"/delete", url.Values{"authenticity_token": {page.CSRF()}}), 403)

	edit := d.Get(t, "/root/box/-/snippets/"+id+"/edit")
	wantPage(t, "edit form", edit, 200, `action="/root/box/-/snippets/`+id+`" class="snippet-form">`, `value="internal" checked`,
		`>package main`)
	saved := d.Post(t, "/root/box/-/snippets/"+id, url.Values{"authenticity_token": {edit.CSRF()}, "title": {"Renamed"},
		"file_name": {"main.go"}, "content": {"package x\n"}, "description": {""}, "visibility": {"public"}})
	wantRedirect(t, "update", saved, http.StatusSeeOther, "/root/box/-/snippets/"+id)
	got, _, err := s.Client.ProjectSnippets.GetSnippet(p.ID, api[0].ID)
	if err != nil || got.Title != "Renamed" || got.FileName != "main.go" {
		t.Fatalf("after the edit: %v %+v", err, got)
	}
	wantPage(t, "list", d.Get(t, "/root/box/-/snippets"), 200, `<a href="/root/box/-/snippets/`+id+`"><bdi>Renamed</bdi></a>`)
	confirm := d.Get(t, "/root/box/-/snippets/"+id+"/delete")
	wantPage(t, "delete confirmation", confirm, 200, `action="/root/box/-/snippets/`+id+`/delete"`, `>Delete snippet</button>`)
	wantRedirect(t, "delete", d.Post(t, "/root/box/-/snippets/"+id+"/delete", url.Values{"authenticity_token": {confirm.CSRF()}}),
		http.StatusSeeOther, "/root/box/-/snippets")
	if _, resp, err := s.Client.ProjectSnippets.GetSnippet(p.ID, api[0].ID); err == nil || resp.StatusCode != 404 {
		t.Fatalf("the deleted snippet: %v", err)
	}
	wantPage(t, "deleted", d.Get(t, "/root/box/-/snippets/"+id), 404)
}

// TestSnippetPagesPermissions: the pages show what the API shows: on a
// public project a private snippet is hidden from a signed-in stranger
// and an internal one from anonymous visitors; a private project's
// snippets send anonymous visitors to sign in and are the 404 page for
// strangers; forms need their CSRF token; hostile ids are the 404 page.
func TestSnippetPagesPermissions(t *testing.T) {
	t.Parallel()
	s := start(t)
	stranger := s.CreateUser(t, "stranger")
	pub := stocktest.NewProject(t, s.Client, "open", "public")
	priv := stocktest.NewProject(t, s.Client, "closed", "private")
	mk := func(project int64, title string, vis gitlab.VisibilityValue) string {
		t.Helper()
		sn, _, err := s.Client.ProjectSnippets.CreateSnippet(project, &gitlab.CreateProjectSnippetOptions{Title: gitlab.Ptr(title),
			FileName: gitlab.Ptr("f.txt"), Content: gitlab.Ptr("body of " + title), Visibility: gitlab.Ptr(vis)})
		if err != nil {
			t.Fatal(err)
		}
		return strconv.FormatInt(sn.ID, 10)
	}
	public := mk(pub.ID, "Shown", gitlab.PublicVisibility)
	internal := mk(pub.ID, "Inside", gitlab.InternalVisibility)
	private := mk(pub.ID, "Secret", gitlab.PrivateVisibility)
	hidden := mk(priv.ID, "Walled", gitlab.PublicVisibility)

	anon := s.NewBrowser(t)
	list := anon.Get(t, "/root/open/-/snippets")
	wantPage(t, "anonymous list", list, 200, `<bdi>Shown</bdi>`)
	wantNot(t, "anonymous list", list, "Inside", "Secret", "New snippet")
	wantPage(t, "anonymous public", anon.Get(t, "/root/open/-/snippets/"+public), 200, `<bdi>Shown</bdi>`, `to comment.`)
	wantSignIn(t, "anonymous internal", anon.Get(t, "/root/open/-/snippets/"+internal))
	wantSignIn(t, "anonymous internal raw", anon.Get(t, "/root/open/-/snippets/"+internal+"/raw"))
	wantSignIn(t, "anonymous private project", anon.Get(t, "/root/closed/-/snippets"))
	wantSignIn(t, "anonymous private project's snippet", anon.Get(t, "/root/closed/-/snippets/"+hidden))
	wantSignIn(t, "anonymous new", anon.Get(t, "/root/open/-/snippets/new"))

	st := s.SignedIn(t, "stranger", stranger.Password)
	list = st.Get(t, "/root/open/-/snippets")
	wantPage(t, "stranger's list", list, 200, `<bdi>Shown</bdi>`, `<bdi>Inside</bdi>`)
	wantNot(t, "stranger's list", list, "Secret", "New snippet")
	wantPage(t, "stranger's private", st.Get(t, "/root/open/-/snippets/"+private), 404, "Page not found")
	wantPage(t, "stranger's private raw", st.Get(t, "/root/open/-/snippets/"+private+"/raw"), 404)
	wantPage(t, "stranger's private project", st.Get(t, "/root/closed/-/snippets/"+hidden), 404)
	wantPage(t, "stranger's new form", st.Get(t, "/root/open/-/snippets/new"), 403)
	page := st.Get(t, "/root/open/-/snippets/"+public)
	wantPage(t, "stranger's view", page, 200, `name="note"`)
	wantNot(t, "stranger's view", page, `/edit">Edit</a>`)
	wantPage(t, "stranger's edit", st.Post(t, "/root/open/-/snippets/"+public, url.Values{"authenticity_token": {page.CSRF()},
		"title": {"x"}, "file_name": {"x"}, "content": {"x"}, "visibility": {"public"}}), 403)
	wantPage(t, "stranger's comment on a hidden one", st.Post(t, "/root/open/-/snippets/"+private+"/notes",
		url.Values{"authenticity_token": {page.CSRF()}, "note": {"peek"}}), 404)
	// No token, a forged one: refused before anything happens.
	wantPage(t, "no token", st.Post(t, "/root/open/-/snippets/"+public+"/notes", url.Values{"note": {"x"}}), 403, "Form expired")
	wantPage(t, "forged token", st.Post(t, "/root/open/-/snippets/"+public+"/notes",
		url.Values{"note": {"x"}, "authenticity_token": {strings.Repeat("ab", 32)}}), 403, "Form expired")
	root := s.SignedIn(t, "root", s.RootPassword)
	wantPage(t, "root deletes without a token", root.Post(t, "/root/open/-/snippets/"+public+"/delete", url.Values{}), 403, "Form expired")
	if n, _, _ := s.Client.Notes.ListSnippetNotes(pub.ID, mustAtoi(t, public), nil); len(n) != 0 {
		t.Fatalf("refused forms made notes: %+v", n)
	}
	if _, _, err := s.Client.ProjectSnippets.GetSnippet(pub.ID, mustAtoi(t, public)); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	for _, path := range []string{"/root/open/-/snippets/0", "/root/open/-/snippets/-1", "/root/open/-/snippets/01",
		"/root/open/-/snippets/99999999999999999999", "/root/open/-/snippets/%3Cscript%3E", "/root/open/-/snippets/" + public + "/nope",
		"/snippets/0", "/snippets/x%00"} {
		wantPage(t, path, st.Get(t, path), 404)
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSnippetPagesPersonal: personal snippets through the pages: created
// by their author (internal by default), listed on /snippets for the
// author only, the public ones on /explore/snippets; a private one is the
// 404 page for others and anonymous visitors are sent to sign in, as the
// API wants them signed in.
func TestSnippetPagesPersonal(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	a := s.SignedIn(t, "alice", alice.Password)
	form := a.Get(t, "/snippets/new")
	wantPage(t, "new form", form, 200, `action="/snippets" class="snippet-form"`, `value="internal" checked`)
	post := func(title, vis string) string {
		t.Helper()
		p := a.Post(t, "/snippets", url.Values{"authenticity_token": {form.CSRF()}, "title": {title}, "file_name": {"notes.md"},
			"content": {"# " + title}, "visibility": {vis}})
		loc := p.Header.Get("Location")
		if p.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/snippets/") {
			t.Fatalf("create %s: %d %q\n%.2000s", title, p.StatusCode, loc, p.Body)
		}
		return strings.TrimPrefix(loc, "/snippets/")
	}
	secret := post("Diary <i>", "private")
	open := post("Recipe", "public")
	got, _, err := alice.Client.Snippets.GetSnippet(mustAtoi(t, secret))
	if err != nil || got.Title != "Diary <i>" || got.Visibility != "private" {
		t.Fatalf("the API's personal snippet: %v %+v", err, got)
	}
	wantPage(t, "own list", a.Get(t, "/snippets"), 200, `<a href="/snippets/`+secret+`"><bdi>Diary &lt;i&gt;</bdi></a>`,
		`<a href="/snippets/`+open+`"><bdi>Recipe</bdi></a>`, `aria-current="page">Your snippets</a>`)
	wantPage(t, "own", a.Get(t, "/snippets/"+secret), 200, `<bdi>notes.md</bdi>`, `href="/snippets/`+secret+`/edit">Edit</a>`)
	wantNot(t, "own", a.Get(t, "/snippets/"+secret), `name="note"`)
	raw := a.Get(t, "/snippets/"+secret+"/raw")
	if raw.StatusCode != 200 || raw.Body != "# Diary <i>" || raw.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Fatalf("personal raw: %d %q %v", raw.StatusCode, raw.Body, raw.Header)
	}

	b := s.SignedIn(t, "bob", bob.Password)
	wantPage(t, "bob reads alice's private", b.Get(t, "/snippets/"+secret), 404)
	wantPage(t, "bob reads alice's private raw", b.Get(t, "/snippets/"+secret+"/raw"), 404)
	wantNot(t, "bob's own list", b.Get(t, "/snippets"), "Diary", "Recipe")
	explore := b.Get(t, "/explore/snippets")
	wantPage(t, "explore", explore, 200, `<bdi>Recipe</bdi>`)
	wantNot(t, "explore", explore, "Diary")
	page := b.Get(t, "/snippets/"+open)
	wantNot(t, "bob's view of alice's public", page, `/edit">Edit</a>`)
	wantPage(t, "bob edits", b.Post(t, "/snippets/"+open, url.Values{"authenticity_token": {page.CSRF()}, "title": {"mine"},
		"file_name": {"x"}, "content": {"x"}, "visibility": {"public"}}), 403)
	wantPage(t, "bob deletes", b.Post(t, "/snippets/"+open+"/delete", url.Values{"authenticity_token": {page.CSRF()}}), 403)

	anon := s.NewBrowser(t)
	for _, path := range []string{"/snippets", "/snippets/new", "/snippets/" + open, "/snippets/" + open + "/raw", "/explore/snippets"} {
		wantSignIn(t, "anonymous "+path, anon.Get(t, path))
	}

	edit := a.Get(t, "/snippets/"+open+"/edit")
	bad := a.Post(t, "/snippets/"+open, url.Values{"authenticity_token": {edit.CSRF()}, "title": {"Recipe 2"},
		"file_name": {"r.md"}, "content": {"x"}, "visibility": {"nope"}})
	wantPage(t, "bad visibility", bad, 422, `The snippet was not saved`, `value="Recipe 2"`)
	wantRedirect(t, "delete", a.Post(t, "/snippets/"+open+"/delete", url.Values{"authenticity_token": {edit.CSRF()}}), http.StatusSeeOther, "/snippets")
	if _, resp, err := alice.Client.Snippets.GetSnippet(mustAtoi(t, open)); err == nil || resp.StatusCode != 404 {
		t.Fatalf("the deleted personal snippet: %v", err)
	}
}
