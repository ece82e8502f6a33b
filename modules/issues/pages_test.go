package issues_test

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
	if p.StatusCode != status {
		t.Errorf("%s: status %d, want %d\n%.3000s", what, p.StatusCode, status, p.Body)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(p.Body, f) {
			t.Errorf("%s lacks %q:\n%.8000s", what, f, p.Body)
		}
	}
}

func wantNot(t *testing.T, what string, p fennectest.Page, fragments ...string) {
	t.Helper()
	for _, f := range fragments {
		if strings.Contains(p.Body, f) {
			t.Errorf("%s shows %q", what, f)
		}
	}
}

// TestIssuePagesFlow: a Developer opens an issue through the new issue
// form, a Reporter previews and posts a comment, the Developer closes and
// reopens it; each step is the API's (the API sees the same issue, the
// same notes and system notes), and the list shows each state's count.
func TestIssuePagesFlow(t *testing.T) {
	t.Parallel()
	s := start(t)
	dev := s.CreateUser(t, "dev")
	rep := s.CreateUser(t, "rep")
	p := stocktest.NewProject(t, s.Client, "tracker", "private")
	stocktest.AddMember(t, s.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, s.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	d := s.SignedIn(t, "dev", dev.Password)

	form := d.Get(t, "/root/tracker/-/issues/new")
	wantPage(t, "new issue form", form, 200, `<form method="post" action="/root/tracker/-/issues" class="issue-form">`, `name="title"`)
	// No title: refused, the form kept, nothing made.
	again := d.Post(t, "/root/tracker/-/issues", url.Values{"authenticity_token": {form.CSRF()}, "title": {"  "}, "description": {"kept <b>text</b>"}})
	wantPage(t, "titleless", again, 422, `The issue was not created: title can&#39;t be blank`, `kept &lt;b&gt;text&lt;/b&gt;</textarea>`)
	made := d.Post(t, "/root/tracker/-/issues", url.Values{"authenticity_token": {form.CSRF()}, "title": {"Crash on <start>"},
		"description": {"It **crashes**.\n\n<script>alert(1)</script>"}, "labels": {"bug, ui"}})
	if made.StatusCode != http.StatusSeeOther || made.Header.Get("Location") != "/root/tracker/-/issues/1" {
		t.Fatalf("create: %d %q\n%.2000s", made.StatusCode, made.Header.Get("Location"), made.Body)
	}
	api, _, err := dev.Client.Issues.GetIssue(p.ID, 1)
	if err != nil || api.Title != "Crash on <start>" || api.Author.Username != "dev" || strings.Join(api.Labels, ",") != "bug,ui" {
		t.Fatalf("the API's issue: %v %+v", err, api)
	}
	page := d.Get(t, "/root/tracker/-/issues/1")
	wantPage(t, "issue", page, 200, `<h1><bdi>Crash on &lt;start&gt;</bdi></h1>`, `<p>It <strong>crashes</strong>.</p>`,
		`<span class="badge state-open">Open</span>`, `<bdi>bug</bdi>`, `<bdi>ui</bdi>`, `>Close issue</button>`)
	wantNot(t, "issue", page, "<script>alert(1)")

	r := s.SignedIn(t, "rep", rep.Password)
	page = r.Get(t, "/root/tracker/-/issues/1")
	token := page.CSRF()
	preview := r.Post(t, "/root/tracker/-/issues/1/notes", url.Values{"authenticity_token": {token}, "note": {"Seen it _too_"}, "preview": {"1"}})
	wantPage(t, "preview", preview, 200, `<header>Preview</header><div class="body markdown"><p>Seen it <em>too</em></p>`, `>Seen it _too_</textarea>`)
	if notes, _, _ := rep.Client.Notes.ListIssueNotes(p.ID, 1, nil); len(notes) != 0 {
		t.Fatalf("a preview posted a note: %+v", notes)
	}
	posted := r.Post(t, "/root/tracker/-/issues/1/notes", url.Values{"authenticity_token": {token}, "note": {"Seen it _too_"}})
	notes, _, err := rep.Client.Notes.ListIssueNotes(p.ID, 1, nil)
	if err != nil || len(notes) != 1 || notes[0].Body != "Seen it _too_" || notes[0].Author.Username != "rep" {
		t.Fatalf("notes after the comment: %v %+v", err, notes)
	}
	anchor := "note_" + strconv.FormatInt(notes[0].ID, 10)
	if posted.StatusCode != http.StatusSeeOther || posted.Header.Get("Location") != "/root/tracker/-/issues/1#"+anchor {
		t.Fatalf("comment: %d %q", posted.StatusCode, posted.Header.Get("Location"))
	}
	empty := r.Post(t, "/root/tracker/-/issues/1/notes", url.Values{"authenticity_token": {token}, "note": {" \n "}})
	wantPage(t, "empty comment", empty, 422, `A comment cannot be empty.`)

	// The Developer closes and reopens; the API and the timeline agree.
	page = d.Get(t, "/root/tracker/-/issues/1")
	wantPage(t, "timeline", page, 200, `<li id="`+anchor+`" class="note box">`, `<p>Seen it <em>too</em></p>`)
	closed := d.Post(t, "/root/tracker/-/issues/1/close", url.Values{"authenticity_token": {page.CSRF()}})
	if closed.StatusCode != http.StatusSeeOther {
		t.Fatalf("close: %d", closed.StatusCode)
	}
	if api, _, _ := dev.Client.Issues.GetIssue(p.ID, 1); api.State != "closed" {
		t.Fatalf("after close: %s", api.State)
	}
	page = d.Get(t, "/root/tracker/-/issues/1")
	wantPage(t, "closed", page, 200, `<span class="badge state-closed">Closed</span>`, `>Reopen issue</button>`, `class="system-note"`)
	list := d.Get(t, "/root/tracker/-/issues?state=closed")
	wantPage(t, "closed list", list, 200, `Open <span class="count">0</span>`, `Closed <span class="count">1</span>`,
		`All <span class="count">1</span>`, `<a href="/root/tracker/-/issues/1"><bdi>Crash on &lt;start&gt;</bdi></a>`)
	d.Post(t, "/root/tracker/-/issues/1/reopen", url.Values{"authenticity_token": {page.CSRF()}})
	if api, _, _ := dev.Client.Issues.GetIssue(p.ID, 1); api.State != "reopened" {
		t.Fatalf("after reopen: %s", api.State)
	}
	// The Reporter commented, so is subscribed; unsubscribe and subscribe
	// through the page, as the API sees it.
	page = r.Get(t, "/root/tracker/-/issues/1")
	wantPage(t, "subscribed", page, 200, `Notifications: subscribed`, `>Unsubscribe</button>`)
	r.Post(t, "/root/tracker/-/issues/1/unsubscribe", url.Values{"authenticity_token": {page.CSRF()}})
	if api, _, _ := rep.Client.Issues.GetIssue(p.ID, 1); api.Subscribed {
		t.Fatal("the page's unsubscribe did not unsubscribe")
	}
	page = r.Get(t, "/root/tracker/-/issues/1")
	wantPage(t, "not subscribed", page, 200, `Notifications: not subscribed`)
	r.Post(t, "/root/tracker/-/issues/1/subscribe", url.Values{"authenticity_token": {page.CSRF()}})
	if api, _, _ := rep.Client.Issues.GetIssue(p.ID, 1); !api.Subscribed {
		t.Fatal("the page's subscribe did not subscribe")
	}
}

// TestIssuePagesPermissions: the pages are the API's: anonymous visitors
// of a private project are sent to sign in, non-members get the 404
// page, a confidential issue is hidden from a Guest; a Guest who is not
// the author may not close (403 page, nothing changed); forms need their
// CSRF token; an anonymous visitor of a public project reads but gets no
// form.
func TestIssuePagesPermissions(t *testing.T) {
	t.Parallel()
	s := start(t)
	guest := s.CreateUser(t, "guest")
	stranger := s.CreateUser(t, "stranger")
	priv := stocktest.NewProject(t, s.Client, "private", "private")
	pub := stocktest.NewProject(t, s.Client, "public", "public")
	stocktest.AddMember(t, s.Client, priv.ID, guest.ID, gitlab.GuestPermissions)
	stocktest.NewIssue(t, s.Client, priv.ID, "Plain")
	if _, _, err := s.Client.Issues.CreateIssue(priv.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Hush"), Confidential: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	stocktest.NewIssue(t, s.Client, pub.ID, "Open to all")

	anon := s.NewBrowser(t)
	for _, path := range []string{"/root/private/-/issues", "/root/private/-/issues/1"} {
		p := anon.Get(t, path)
		if p.StatusCode != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/users/sign_in?return_to=") {
			t.Errorf("anonymous %s: %d %q", path, p.StatusCode, p.Header.Get("Location"))
		}
	}
	wantPage(t, "stranger", s.SignedIn(t, "stranger", stranger.Password).Get(t, "/root/private/-/issues/1"), 404, "Page not found")

	g := s.SignedIn(t, "guest", guest.Password)
	list := g.Get(t, "/root/private/-/issues?state=all")
	wantPage(t, "guest's list", list, 200, `<bdi>Plain</bdi>`, `All <span class="count">1</span>`)
	wantNot(t, "guest's list", list, "Hush")
	wantPage(t, "confidential", g.Get(t, "/root/private/-/issues/2"), 404, "Page not found")
	page := g.Get(t, "/root/private/-/issues/1")
	wantPage(t, "guest's issue", page, 200, `name="note"`)
	wantNot(t, "guest's issue", page, "Close issue")
	wantPage(t, "guest closes", g.Post(t, "/root/private/-/issues/1/close", url.Values{"authenticity_token": {page.CSRF()}}), 403)
	// No token, a forged one: refused before anything happens.
	wantPage(t, "no token", g.Post(t, "/root/private/-/issues/1/notes", url.Values{"note": {"x"}}), 403, "Form expired")
	wantPage(t, "forged token", g.Post(t, "/root/private/-/issues/1/notes", url.Values{"note": {"x"}, "authenticity_token": {strings.Repeat("ab", 32)}}), 403)
	if api, _, _ := s.Client.Issues.GetIssue(priv.ID, 1); api.State != "opened" || api.UserNotesCount != 0 {
		t.Fatalf("refused forms changed the issue: %s, %d notes", api.State, api.UserNotesCount)
	}
	// Anonymous readers of a public project read, and are asked to sign in
	// to comment; their posts are sent to sign in.
	p := anon.Get(t, "/root/public/-/issues/1")
	wantPage(t, "anonymous public", p, 200, `<bdi>Open to all</bdi>`, `to comment.`)
	wantNot(t, "anonymous public", p, `name="note"`, "New issue")
	// Hostile paths are the 404 page.
	for _, path := range []string{"/root/public/-/issues/0", "/root/public/-/issues/-1", "/root/public/-/issues/01", "/root/public/-/issues/1x",
		"/root/public/-/issues/99999999999999999999", "/root/public/-/issues/%3Cscript%3E"} {
		wantPage(t, path, anon.Get(t, path), 404)
	}
	wantPage(t, "bad state", anon.Get(t, "/root/public/-/issues?state=<x>&sort=nope"), 200, `Open <span class="count">1</span>`)
}
