package activity_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
)

func wantPage(t *testing.T, what string, p fennectest.Page, status int, fragments ...string) {
	t.Helper()
	p.Want(t, what, status, fragments...)
}

// TestActivityPages: the feeds as pages show what the events API shows
// the same visitor, in GitLab's words and with links to their targets:
// alice's pushes, issue and comment in a private project are on her
// dashboard and on the project's activity (both paths), but not on her
// profile's activity as a stranger or an anonymous visitor sees it;
// anonymous visitors of the dashboard are sent to sign in; titles are
// escaped; pages of 20.
func TestActivityPages(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.CreateUser(t, "alice")
	bob := e.CreateUser(t, "bob")
	priv := project(t, alice.Client, "secret", "private")
	pub := project(t, alice.Client, "open", "public")
	commit(t, alice.Client, priv.ID, "a.txt")
	is, _, err := alice.Client.Issues.CreateIssue(priv.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr(`Fix <b>"it"</b>`)})
	if err != nil {
		t.Fatal(err)
	}
	note, _, err := alice.Client.Notes.CreateIssueNote(priv.ID, is.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("On it\nsecond line")})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 21; i++ {
		commit(t, alice.Client, pub.ID, "f"+strconv.Itoa(i)+".txt")
	}
	e.Drain(t)

	a := e.SignedIn(t, "alice", alice.Password)
	dash := a.Get(t, "/dashboard/activity")
	wantPage(t, "alice's dashboard", dash, 200, `<h1><bdi>Your projects&#39; activity</bdi></h1>`, `pushed to branch <a href="/alice/open/-/tree/master"><bdi>master</bdi></a>`,
		`rel="next">Older</a>`)
	dash2 := a.Get(t, "/dashboard/activity?page=2")
	wantPage(t, "page 2", dash2, 200, `opened issue <a href="/alice/secret/-/issues/1"><bdi>#1</bdi></a> at <a href="/alice/secret"><bdi>User alice / secret</bdi></a>`,
		`<bdi>Fix &lt;b&gt;&#34;it&#34;&lt;/b&gt;</bdi>`,
		`commented on issue <a href="/alice/secret/-/issues/1#note_`+strconv.FormatInt(note.ID, 10)+`"><bdi>#1</bdi></a>`,
		`<q><bdi>On it</bdi></q>`, `pushed new branch <a href="/alice/secret/-/tree/master"><bdi>master</bdi></a>`, `rel="prev">Newer</a>`)
	if strings.Contains(dash2.Body, "<b>") {
		t.Error("a title is not escaped")
	}
	wantPage(t, "project activity", a.Get(t, "/alice/secret/activity"), 200, `<a href="/alice/secret/-/activity" aria-current="page">Activity</a>`,
		`opened issue <a href="/alice/secret/-/issues/1">`)
	wantPage(t, "project /-/activity", a.Get(t, "/alice/secret/-/activity"), 200, `opened issue`)

	// Bob, who is no member, and anonymous visitors see only the public
	// project's entries.
	for who, b := range map[string]*fennectest.Browser{"bob": e.SignedIn(t, "bob", bob.Password), "anonymous": e.NewBrowser(t)} {
		p := b.Get(t, "/users/alice/activity?page=1")
		wantPage(t, who+"'s view of alice", p, 200, `<bdi>User alice&#39;s activity</bdi>`, `/alice/open/-/tree/master`)
		for _, leak := range []string{"secret", "Fix", "On it"} {
			if strings.Contains(p.Body, leak) {
				t.Errorf("%s sees %q in alice's activity", who, leak)
			}
		}
	}
	wantPage(t, "bob's view of the private project", e.SignedIn(t, "bob", bob.Password).Get(t, "/alice/secret/-/activity"), 404)
	anon := e.NewBrowser(t).Get(t, "/dashboard/activity")
	if anon.StatusCode != http.StatusFound || !strings.HasPrefix(anon.Header.Get("Location"), "/users/sign_in?return_to=") {
		t.Errorf("anonymous dashboard: %d %q", anon.StatusCode, anon.Header.Get("Location"))
	}
	wantPage(t, "unknown user", e.SignedIn(t, "bob", bob.Password).Get(t, "/users/nobody/activity"), 404)
}

// TestActivityLinkedFromDashboardAndProfile: the dashboard's tabs and a
// profile lead to the feeds.
func TestActivityLinkedFromDashboardAndProfile(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.CreateUser(t, "alice")
	a := e.SignedIn(t, "alice", alice.Password)
	wantPage(t, "dashboard", a.Get(t, "/dashboard/projects"), 200, `<li><a href="/dashboard/activity">Activity</a></li><li><a href="/explore/projects">Explore projects</a>`, `<li><a href="/dashboard/activity">Activity</a></li>`)
	wantPage(t, "profile", a.Get(t, "/alice"), 200, `<a href="/users/alice/activity">Activity</a>`)
}

// TestActivityPagesEscapeAndEmpty: a hostile commit title is shown as
// text on every feed, and a feed with nothing to show says so, with no
// pager.
func TestActivityPagesEscapeAndEmpty(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.CreateUser(t, "alice")
	bob := e.CreateUser(t, "bob")
	pub := project(t, alice.Client, "open", "public")
	commit(t, alice.Client, pub.ID, `<script>alert(1)</script>.txt`)
	e.Drain(t)

	const escaped = `<bdi>add &lt;script&gt;alert(1)&lt;/script&gt;.txt</bdi>`
	a := e.SignedIn(t, "alice", alice.Password)
	for _, path := range []string{"/dashboard/activity", "/users/alice/activity", "/alice/open/activity"} {
		p := a.Get(t, path)
		wantPage(t, path, p, 200, escaped)
		if strings.Contains(p.Body, "<script>") {
			t.Errorf("%s: a commit title is not escaped", path)
		}
	}
	b := e.SignedIn(t, "bob", bob.Password)
	for path, empty := range map[string]string{
		"/dashboard/activity":       `<p class="muted">Nothing has happened in your projects yet: push, open an issue or comment, and it shows here.</p>`,
		"/users/bob/activity":       `<p class="muted">No activity to show.</p>`,
		"/users/bob/activity?page=": `<p class="muted">No activity to show.</p>`,
	} {
		p := b.Get(t, path)
		wantPage(t, "bob's "+path, p, 200, empty)
		if strings.Contains(p.Body, `class="pager"`) {
			t.Errorf("%s: a pager on an empty feed", path)
		}
	}
	wantPage(t, "anonymous, bob's", e.NewBrowser(t).Get(t, "/users/bob/activity"), 200, `<p class="muted">No activity to show.</p>`)
}

// TestDashboardActivityIsYourProjects: the dashboard's feed is the
// activity of the projects the visitor is a member of, anyone's (GitLab's
// "Your projects"): bob, a member of alice's private project, sees her
// issue there, but not her public project he is no member of; carol, no
// member, sees none of it.
func TestDashboardActivityIsYourProjects(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.CreateUser(t, "alice")
	bob := e.CreateUser(t, "bob")
	carol := e.CreateUser(t, "carol")
	priv := project(t, alice.Client, "secret", "private")
	pub := project(t, alice.Client, "open", "public")
	commit(t, alice.Client, pub.ID, "a.txt")
	if _, _, err := alice.Client.ProjectMembers.AddProjectMember(priv.ID, &gitlab.AddProjectMemberOptions{
		UserID: gitlab.Ptr(int(bob.ID)), AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Issues.CreateIssue(priv.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Plan")}); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)

	p := e.SignedIn(t, "bob", bob.Password).Get(t, "/dashboard/activity")
	wantPage(t, "bob's dashboard", p, 200, `<a href="/alice"><bdi>User alice</bdi></a>
opened issue <a href="/alice/secret/-/issues/1"><bdi>#1</bdi></a> at <a href="/alice/secret"><bdi>User alice / secret</bdi></a>`)
	if strings.Contains(p.Body, "/alice/open") {
		t.Error("bob's dashboard shows a project he is no member of")
	}
	p = e.SignedIn(t, "carol", carol.Password).Get(t, "/dashboard/activity")
	wantPage(t, "carol's dashboard", p, 200, `Nothing has happened in your projects yet`)
	if strings.Contains(p.Body, "secret") || strings.Contains(p.Body, "Plan") {
		t.Error("carol's dashboard shows a private project's activity")
	}
	wantPage(t, "alice's dashboard", e.SignedIn(t, "alice", alice.Password).Get(t, "/dashboard/activity"), 200,
		`opened issue <a href="/alice/secret/-/issues/1">`, `pushed new branch <a href="/alice/open/-/tree/master">`)
}
