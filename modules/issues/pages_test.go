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
	p.Want(t, what, status, fragments...)
}

func wantNot(t *testing.T, what string, p fennectest.Page, fragments ...string) {
	t.Helper()
	p.WantNot(t, what, fragments...)
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

// TestIssuePagesEdit: the edit form changes what PUT /issues/:iid
// changes, as the same visitor: a Reporter sets the title, description,
// assignee, milestone, labels and due date; the author, a Guest, edits
// the title and description only (the form offers no more, and a forged
// post of the other fields is ignored, as the API ignores them); an
// invalid due date is refused with the input kept; a stranger's edit of
// a private project's issue is the 404 page. Add a to-do adds one, once.
func TestIssuePagesEdit(t *testing.T) {
	t.Parallel()
	s := start(t)
	rep := s.CreateUser(t, "rep")
	guest := s.CreateUser(t, "guest")
	p := stocktest.NewProject(t, s.Client, "edits", "private")
	stocktest.AddMember(t, s.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	stocktest.AddMember(t, s.Client, p.ID, guest.ID, gitlab.GuestPermissions)
	ms, _, err := s.Client.Milestones.CreateMilestone(p.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1")})
	if err != nil {
		t.Fatal(err)
	}
	stocktest.NewIssue(t, guest.Client, p.ID, "By the guest")

	r := s.SignedIn(t, "rep", rep.Password)
	form := r.Get(t, "/root/edits/-/issues/1/edit")
	wantPage(t, "reporter's form", form, 200, `name="assignee_id"`, `<option value="`+strconv.FormatInt(guest.ID, 10)+`">User guest (@guest)</option>`,
		`<option value="`+strconv.FormatInt(ms.ID, 10)+`">v1</option>`, `name="due_date"`)
	bad := r.Post(t, "/root/edits/-/issues/1", url.Values{"authenticity_token": {form.CSRF()}, "title": {"Renamed"}, "description": {"d"},
		"labels": {"x"}, "due_date": {"not a date"}, "milestone_id": {"0"}, "assignee_id": {"0"}})
	wantPage(t, "bad date", bad, 422, `The issue was not saved: `, `value="Renamed"`)
	if api, _, _ := s.Client.Issues.GetIssue(p.ID, 1); api.Title != "By the guest" {
		t.Fatalf("a refused edit changed the title: %q", api.Title)
	}
	saved := r.Post(t, "/root/edits/-/issues/1", url.Values{"authenticity_token": {form.CSRF()}, "title": {"Renamed"}, "description": {"New *text*"},
		"labels": {"a, b"}, "due_date": {"2030-01-02"}, "milestone_id": {strconv.FormatInt(ms.ID, 10)}, "assignee_id": {strconv.FormatInt(guest.ID, 10)}})
	if saved.StatusCode != http.StatusSeeOther || saved.Header.Get("Location") != "/root/edits/-/issues/1" {
		t.Fatalf("save: %d %q\n%.2000s", saved.StatusCode, saved.Header.Get("Location"), saved.Body)
	}
	api, _, _ := s.Client.Issues.GetIssue(p.ID, 1)
	if api.Title != "Renamed" || api.Description != "New *text*" || strings.Join(api.Labels, ",") != "a,b" || api.DueDate == nil ||
		api.DueDate.String() != "2030-01-02" || api.Milestone == nil || api.Milestone.ID != ms.ID || api.Assignee == nil || api.Assignee.ID != guest.ID {
		t.Fatalf("after the reporter's edit: %+v", api)
	}
	wantPage(t, "issue after edit", r.Get(t, "/root/edits/-/issues/1"), 200, `<bdi>Renamed</bdi>`, `<p>New <em>text</em></p>`, `2030-01-02`, `<bdi>v1</bdi>`)
	// The labels the edit made are boxes of the form now, checked; one
	// unchecked and a new one typed replace them.
	form = r.Get(t, "/root/edits/-/issues/1/edit")
	wantPage(t, "form after edit", form, 200, `<input type="checkbox" name="label" value="a" checked>`,
		`<input type="checkbox" name="label" value="b" checked>`, `<label for="issue-labels">Other labels`, `name="labels" value=""`)
	if p := r.Post(t, "/root/edits/-/issues/1", url.Values{"authenticity_token": {form.CSRF()}, "title": {"Renamed"}, "description": {"New *text*"},
		"label": {"b"}, "labels": {" c ,b"}, "milestone_id": {"0"}, "assignee_id": {"0"}}); p.StatusCode != http.StatusSeeOther {
		t.Fatalf("labels from the boxes: %d", p.StatusCode)
	}
	if api, _, _ := s.Client.Issues.GetIssue(p.ID, 1); strings.Join(api.Labels, ",") != "b,c" {
		t.Fatalf("labels from the boxes: %v", api.Labels)
	}

	g := s.SignedIn(t, "guest", guest.Password)
	form = g.Get(t, "/root/edits/-/issues/1/edit")
	wantPage(t, "author's form", form, 200, `name="title"`)
	wantNot(t, "author's form", form, `name="assignee_id"`, `name="milestone_id"`, `name="labels"`)
	g.Post(t, "/root/edits/-/issues/1", url.Values{"authenticity_token": {form.CSRF()}, "title": {"Guest's title"}, "description": {"g"}, "labels": {"sneaky"}})
	api, _, _ = s.Client.Issues.GetIssue(p.ID, 1)
	if api.Title != "Guest's title" || strings.Join(api.Labels, ",") != "b,c" {
		t.Fatalf("after the guest's edit: %q %v", api.Title, api.Labels)
	}
	stranger := s.CreateUser(t, "stranger")
	wantPage(t, "stranger's edit", s.SignedIn(t, "stranger", stranger.Password).Get(t, "/root/edits/-/issues/1/edit"), 404)

	// A to-do, once.
	page := r.Get(t, "/root/edits/-/issues/1")
	for range 2 {
		if p := r.Post(t, "/root/edits/-/issues/1/todo", url.Values{"authenticity_token": {page.CSRF()}}); p.StatusCode != http.StatusSeeOther {
			t.Fatalf("todo: %d", p.StatusCode)
		}
	}
	todos, _, err := rep.Client.Todos.ListTodos(nil)
	if err != nil || len(todos) != 1 || todos[0].Target.Title != "Guest's title" || todos[0].ActionName != "marked" {
		t.Fatalf("todos: %v %+v", err, todos)
	}
}

// TestIssuePagesLabelsAndMilestones: Reporters create, edit and delete
// labels through the pages, Masters create, edit, close and reopen
// milestones; each change is what the API then shows; a Guest gets no
// forms and a 403 page for a forged one; a duplicate label name and a
// milestone without a title are refused with the input kept.
func TestIssuePagesLabelsAndMilestones(t *testing.T) {
	t.Parallel()
	s := start(t)
	rep := s.CreateUser(t, "rep")
	guest := s.CreateUser(t, "guest")
	p := stocktest.NewProject(t, s.Client, "tags", "private")
	stocktest.AddMember(t, s.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	stocktest.AddMember(t, s.Client, p.ID, guest.ID, gitlab.GuestPermissions)

	r := s.SignedIn(t, "rep", rep.Password)
	form := r.Get(t, "/root/tags/-/labels/new")
	wantPage(t, "label form", form, 200, `name="color" value="#428BCA"`)
	made := r.Post(t, "/root/tags/-/labels", url.Values{"authenticity_token": {form.CSRF()}, "name": {"bug <1>"}, "color": {"#ff0000"}, "description": {"Broken"}})
	if made.StatusCode != http.StatusSeeOther || made.Header.Get("Location") != "/root/tags/-/labels" {
		t.Fatalf("create label: %d %q\n%.1500s", made.StatusCode, made.Header.Get("Location"), made.Body)
	}
	dup := r.Post(t, "/root/tags/-/labels", url.Values{"authenticity_token": {form.CSRF()}, "name": {"bug <1>"}, "color": {"#00ff00"}})
	wantPage(t, "duplicate label", dup, 422, `A label of that name exists already.`, `value="bug &lt;1&gt;"`)
	bad := r.Post(t, "/root/tags/-/labels", url.Values{"authenticity_token": {form.CSRF()}, "name": {"x"}, "color": {"red; background:url(x)"}})
	wantPage(t, "bad colour", bad, 422, `The label was not saved: `)
	labels, _, _ := s.Client.Labels.ListLabels(p.ID, nil)
	if len(labels) != 1 || labels[0].Name != "bug <1>" || labels[0].Color != "#ff0000" {
		t.Fatalf("labels: %+v", labels)
	}
	id := strconv.FormatInt(labels[0].ID, 10)
	list := r.Get(t, "/root/tags/-/labels")
	wantPage(t, "labels", list, 200, `<circle cx="5" cy="5" r="5" fill="#ff0000"/></svg><bdi>bug &lt;1&gt;</bdi>`,
		`href="/root/tags/-/labels/`+id+`/edit"`, `0 open issues`)
	r.Post(t, "/root/tags/-/labels/"+id, url.Values{"authenticity_token": {list.CSRF()}, "name": {"defect"}, "color": {"#0000ff"}, "description": {""}})
	if l, _, _ := s.Client.Labels.GetLabel(p.ID, id); l == nil || l.Name != "defect" || l.Color != "#0000ff" {
		t.Fatalf("after edit: %+v", l)
	}
	g := s.SignedIn(t, "guest", guest.Password)
	gl := g.Get(t, "/root/tags/-/labels")
	wantPage(t, "guest's labels", gl, 200, `<bdi>defect</bdi>`)
	wantNot(t, "guest's labels", gl, "New label", "/edit")
	wantPage(t, "guest's label form", g.Get(t, "/root/tags/-/labels/new"), 403)
	wantPage(t, "guest deletes", g.Post(t, "/root/tags/-/labels/"+id+"/delete", url.Values{"authenticity_token": {gl.CSRF()}}), 403)
	r.Post(t, "/root/tags/-/labels/"+id+"/delete", url.Values{"authenticity_token": {list.CSRF()}})
	if labels, _, _ := s.Client.Labels.ListLabels(p.ID, nil); len(labels) != 0 {
		t.Fatalf("after delete: %+v", labels)
	}

	// Milestones: Masters only.
	wantPage(t, "reporter's milestone form", r.Get(t, "/root/tags/-/milestones/new"), 403)
	root := s.SignedIn(t, "root", s.RootPassword)
	mf := root.Get(t, "/root/tags/-/milestones/new")
	wantPage(t, "titleless milestone", root.Post(t, "/root/tags/-/milestones", url.Values{"authenticity_token": {mf.CSRF()}, "title": {""}, "description": {"kept"}}),
		422, `>kept</textarea>`)
	made = root.Post(t, "/root/tags/-/milestones", url.Values{"authenticity_token": {mf.CSRF()}, "title": {"v1.0"}, "due_date": {"2031-05-06"}})
	if made.StatusCode != http.StatusSeeOther || made.Header.Get("Location") != "/root/tags/-/milestones/1" {
		t.Fatalf("create milestone: %d %q\n%.1500s", made.StatusCode, made.Header.Get("Location"), made.Body)
	}
	stocktest.NewIssue(t, s.Client, p.ID, "In v1")
	ms, _, _ := s.Client.Milestones.ListMilestones(p.ID, nil)
	if len(ms) != 1 || ms[0].Title != "v1.0" || ms[0].DueDate == nil || ms[0].DueDate.String() != "2031-05-06" {
		t.Fatalf("milestones: %+v", ms)
	}
	if _, _, err := s.Client.Issues.UpdateIssue(p.ID, 1, &gitlab.UpdateIssueOptions{MilestoneID: gitlab.Ptr(ms[0].ID)}); err != nil {
		t.Fatal(err)
	}
	page := root.Get(t, "/root/tags/-/milestones/1")
	wantPage(t, "milestone", page, 200, `<h1><bdi>v1.0</bdi></h1>`, `due 2031-05-06`, `<bdi>In v1</bdi>`, `>Close milestone</button>`)
	root.Post(t, "/root/tags/-/milestones/1/close", url.Values{"authenticity_token": {page.CSRF()}})
	if m, _, _ := s.Client.Milestones.GetMilestone(p.ID, ms[0].ID); m.State != "closed" {
		t.Fatalf("after close: %s", m.State)
	}
	wantPage(t, "closed tab", root.Get(t, "/root/tags/-/milestones?state=closed"), 200, `Closed <span class="count">1</span>`, `<bdi>v1.0</bdi>`)
	wantPage(t, "guest's milestone", g.Get(t, "/root/tags/-/milestones/1"), 200, `<bdi>v1.0</bdi>`)
	wantNot(t, "guest's milestone", g.Get(t, "/root/tags/-/milestones/1"), "Reopen milestone")
	wantPage(t, "no such milestone", g.Get(t, "/root/tags/-/milestones/9"), 404)
}

// TestIssuePagesHostileInput: what issue 29 lists as bad input, through
// the pages: raw HTML, scripts and javascript: links in a comment are
// rendered inert; a body over the form's bound is a 413 page and saves
// nothing; thousands of @mentions render without a lookup each; bidi and
// zero-width characters in a title stay isolated in <bdi>; a member who
// lost access meanwhile posts a comment with a form they still hold and
// nothing is saved.
func TestIssuePagesHostileInput(t *testing.T) {
	t.Parallel()
	s := start(t)
	dev := s.CreateUser(t, "dev")
	p := stocktest.NewProject(t, s.Client, "hostile", "private")
	stocktest.AddMember(t, s.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.NewIssue(t, s.Client, p.ID, "Title \u202eevil\u202c and \u200bzero")
	d := s.SignedIn(t, "dev", dev.Password)
	page := d.Get(t, "/root/hostile/-/issues/1")
	wantPage(t, "bidi title", page, 200, "<h1><bdi>Title \u202eevil\u202c and \u200bzero</bdi></h1>")
	token := page.CSRF()

	hostile := "<img src=x onerror=alert(1)> <a href=\"javascript:alert(2)\">click</a> [md](javascript:alert(3)) <script>alert(4)</script> <iframe src=//evil></iframe>"
	d.Post(t, "/root/hostile/-/issues/1/notes", url.Values{"authenticity_token": {token}, "note": {hostile}})
	page = d.Get(t, "/root/hostile/-/issues/1")
	wantPage(t, "hostile comment", page, 200, `<li id="note_`)
	wantNot(t, "hostile comment", page, "onerror", "javascript:", "<script>alert", "<iframe")

	mentions := strings.Repeat("@nobody ", 3000) + strings.Repeat("#1 ", 3000)
	posted := d.Post(t, "/root/hostile/-/issues/1/notes", url.Values{"authenticity_token": {token}, "note": {mentions}})
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("mentions: %d", posted.StatusCode)
	}
	wantPage(t, "mentions", d.Get(t, "/root/hostile/-/issues/1"), 200, "@nobody @nobody")

	huge := d.Post(t, "/root/hostile/-/issues/1/notes", url.Values{"authenticity_token": {token}, "note": {strings.Repeat("x", 4<<20)}})
	wantPage(t, "huge", huge, 413)
	if notes, _, _ := s.Client.Notes.ListIssueNotes(p.ID, 1, nil); len(notes) != 2 {
		t.Fatalf("notes after the hostile posts: %d, want 2", len(notes))
	}

	// Access lost meanwhile: the form held is refused, nothing saved.
	if _, err := s.Client.ProjectMembers.DeleteProjectMember(p.ID, dev.ID); err != nil {
		t.Fatal(err)
	}
	lost := d.Post(t, "/root/hostile/-/issues/1/notes", url.Values{"authenticity_token": {token}, "note": {"after removal"}})
	wantPage(t, "lost access", lost, 404, "Page not found")
	closed := d.Post(t, "/root/hostile/-/issues/1/close", url.Values{"authenticity_token": {token}})
	wantPage(t, "lost access close", closed, 404)
	if notes, _, _ := s.Client.Notes.ListIssueNotes(p.ID, 1, nil); len(notes) != 2 {
		t.Fatalf("notes after losing access: %d, want 2", len(notes))
	}
	if api, _, _ := s.Client.Issues.GetIssue(p.ID, 1); api.State != "opened" {
		t.Fatalf("state after losing access: %s", api.State)
	}
}
