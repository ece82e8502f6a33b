package projects_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Tests of the settings pages (issue 30): a project's General and Members
// settings and a group's, for Masters and owners only, each form checked
// against what the API then answers.

// form is the browser's next form: its fields and the CSRF token of page.
func form(p fennectest.Page, kv ...string) url.Values {
	v := url.Values{"authenticity_token": {p.CSRF()}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// apiField is one field of GET path's object as text.
func apiField(t *testing.T, s *fennectest.Server, token, path, field string) string {
	t.Helper()
	r := s.Call(t, token, http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	return fmt.Sprint(r.Object(t)[field])
}

// TestSettingsProjectGeneral: the General page and its forms for a
// project's Owner and Master; a Developer or Reporter finds no page and
// changes nothing by posting; a forged token changes nothing; the
// deletion wants the path typed exactly.
func TestSettingsProjectGeneral(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice, mia, dev, rep, other := s.CreateUser(t, "alice"), s.CreateUser(t, "mia"), s.CreateUser(t, "dev"), s.CreateUser(t, "rep"), s.CreateUser(t, "other")
	grp := pgID(t, s, alice.Token, "/api/v4/groups", map[string]any{"name": "Crew", "path": "crew"})
	id := pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "app", "visibility": "private", "description": "old"})
	api := fmt.Sprintf("/api/v4/projects/%d", id)
	for user, level := range map[int64]int{mia.ID: 40, dev.ID: 30, rep.ID: 20} {
		s.Call(t, alice.Token, http.MethodPost, api+"/members", map[string]any{"user_id": user, "access_level": level}).Expect(t, http.StatusCreated, "")
	}
	a, m := s.SignedIn(t, "alice", alice.Password), s.SignedIn(t, "mia", mia.Password)

	// The Owner: every section, the tab and the side navigation.
	p := a.Get(t, "/alice/app/-/edit")
	p.Want(t, "owner's general settings", 200, "<h1>General settings</h1>",
		`<a href="/alice/app/-/edit" aria-current="page">Settings</a>`,
		`<nav class="sidenav" aria-label="Project settings">`, `<a href="/alice/app/-/edit" aria-current="page">General</a>`,
		`<a href="/alice/app/-/project_members">Members</a>`, `<a href="/alice/app/-/settings/repository">Repository</a>`,
		`<textarea id="project-description" name="description" rows="3" maxlength="2000">old</textarea>`,
		`<option value="private" selected>private</option>`, `<input type="checkbox" name="issues_enabled" value="1" checked> Issues`,
		`action="/alice/app/-/edit/archive"`, `action="/alice/app/-/edit/transfer"`, `<option value="`+fmt.Sprint(grp)+`">crew</option>`,
		`<label for="delete-confirm">Type <code>alice/app</code> to confirm</label>`)
	// The Master: the settings, not the Owner's actions.
	p = m.Get(t, "/alice/app/-/edit")
	p.Want(t, "master's general settings", 200, "<h1>General settings</h1>", "only an Owner may change it", `action="/alice/app/-/edit/rename"`)
	p.WantNot(t, "master's general settings", `name="visibility"`, "/-/edit/archive", "/-/edit/delete", "/-/edit/transfer")
	// A Master's post of an Owner's action: refused by the service.
	m.Post(t, "/alice/app/-/edit/archive", form(p)).Want(t, "master archives", 403)
	if got := apiField(t, s, alice.Token, api, "archived"); got != "false" {
		t.Errorf("archived by a Master: %s", got)
	}
	// A Master saves the settings: description, features, an unknown
	// default branch (refused in words, the rest kept).
	m.Post(t, "/alice/app/-/edit", form(p, "name", "app", "description", "from <mia>", "features", "1", "merge_requests_enabled", "1")).
		WantRedirect(t, "master saves", http.StatusSeeOther, "/alice/app/-/edit")
	got := s.Call(t, alice.Token, http.MethodGet, api, nil).Object(t)
	if got["description"] != "from <mia>" || got["issues_enabled"] != false || got["merge_requests_enabled"] != true || got["visibility"] != "private" {
		t.Errorf("after the Master's save: %v", got)
	}
	m.Post(t, "/alice/app/-/edit", form(p, "name", "app", "description", "from <mia>", "default_branch", "nope")).
		Want(t, "unknown default branch", 422, "the repository has no branch named nope")
	// A form past the bound: 413, nothing changes.
	m.Post(t, "/alice/app/-/edit", form(p, "name", "app", "description", strings.Repeat("x", 4<<20))).Want(t, "oversized form", 413)
	m.Get(t, "/alice/app/-/edit").Want(t, "saved page", 200, `>from &lt;mia&gt;</textarea>`, `<input type="checkbox" name="issues_enabled" value="1"> Issues`)

	// Developers, Reporters, non-members: no page; posts change nothing.
	for _, u := range []*fennectest.User{dev, rep, other} {
		b := s.SignedIn(t, u.Username, u.Password)
		for _, path := range []string{"/alice/app/-/edit", "/alice/app/-/project_members", "/alice/app/-/settings/repository"} {
			b.Get(t, path).Want(t, u.Username+" "+path, 404, "Page not found")
		}
		token := b.Get(t, "/").CSRF()
		for _, path := range []string{"/alice/app/-/edit", "/alice/app/-/edit/archive", "/alice/app/-/edit/delete", "/alice/app/-/edit/rename"} {
			b.Post(t, path, url.Values{"authenticity_token": {token}, "description": {"hacked"}, "name": {"x"}, "path": {"x"},
				"confirm_path": {"alice/app"}}).Want(t, u.Username+" posts "+path, 404)
		}
		p := b.Get(t, "/alice/app")
		if u == other {
			p.Want(t, "a non-member's project page", 404)
		} else {
			p.WantNot(t, u.Username+"'s project page", `href="/alice/app/-/edit"`)
		}
	}
	s.NewBrowser(t).Get(t, "/alice/app/-/edit").WantRedirect(t, "anonymous settings", http.StatusFound, "/users/sign_in?return_to=%2Falice%2Fapp%2F-%2Fedit")
	if got := apiField(t, s, alice.Token, api, "description"); got != "from <mia>" {
		t.Errorf("description after refused posts: %q", got)
	}

	// Forged or missing CSRF: 403, nothing changes.
	for _, tok := range []string{"", "00ff"} {
		a.Post(t, "/alice/app/-/edit", url.Values{"authenticity_token": {tok}, "description": {"forged"}}).Want(t, "forged CSRF", 403, "Form expired")
	}
	if got := apiField(t, s, alice.Token, api, "description"); got != "from <mia>" {
		t.Errorf("description after forged posts: %q", got)
	}

	// The Owner: visibility (seen by the API), archive and unarchive.
	p = a.Get(t, "/alice/app/-/edit")
	a.Post(t, "/alice/app/-/edit", form(p, "name", "app", "description", "d", "visibility", "internal")).
		WantRedirect(t, "owner saves", http.StatusSeeOther, "/alice/app/-/edit")
	if got := apiField(t, s, alice.Token, api, "visibility"); got != "internal" {
		t.Errorf("visibility: %s", got)
	}
	a.Post(t, "/alice/app/-/edit", form(p, "name", "", "visibility", "secret")).Want(t, "bad visibility", 422, "Invalid value: visibility.")
	a.Post(t, "/alice/app/-/edit/archive", form(p)).WantRedirect(t, "archive", http.StatusSeeOther, "/alice/app/-/edit")
	a.Get(t, "/alice/app/-/edit").Want(t, "archived page", 200, `<span class="badge warn">archived</span>`, `action="/alice/app/-/edit/unarchive"`)
	if got := apiField(t, s, alice.Token, api, "archived"); got != "true" {
		t.Errorf("archived: %s", got)
	}
	a.Post(t, "/alice/app/-/edit/unarchive", form(p)).WantRedirect(t, "unarchive", http.StatusSeeOther, "/alice/app/-/edit")
	if got := apiField(t, s, alice.Token, api, "archived"); got != "false" {
		t.Errorf("unarchived: %s", got)
	}

	// Rename: a path taken or invalid is said; a good one moves the page.
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "taken"})
	a.Post(t, "/alice/app/-/edit/rename", form(p, "name", "App", "path", "taken")).Want(t, "path taken", 422, "has already been taken")
	a.Post(t, "/alice/app/-/edit/rename", form(p, "name", "App", "path", "../etc")).Want(t, "path invalid", 422, `class="alert"`)
	a.Post(t, "/alice/app/-/edit/rename", form(p, "name", "App 2", "path", "app2")).
		WantRedirect(t, "rename", http.StatusSeeOther, "/alice/app2/-/edit")
	if got := apiField(t, s, alice.Token, api, "path_with_namespace"); got != "alice/app2" {
		t.Errorf("renamed: %s", got)
	}
	a.Get(t, "/alice/app/-/edit").Want(t, "old path", 404)

	// Transfer into the group: the new address.
	a.Post(t, "/alice/app2/-/edit/transfer", form(p, "namespace_id", "999999")).Want(t, "transfer nowhere", 422, `class="alert"`)
	a.Post(t, "/alice/app2/-/edit/transfer", form(p, "namespace_id", fmt.Sprint(grp))).
		WantRedirect(t, "transfer", http.StatusSeeOther, "/crew/app2/-/edit")
	if got := apiField(t, s, alice.Token, api, "path_with_namespace"); got != "crew/app2" {
		t.Errorf("transferred: %s", got)
	}

	// Delete: the exact path, else nothing is deleted.
	for _, typed := range []string{"", "app2", "crew/app", "CREW/APP2", "crew/app2 "} {
		a.Post(t, "/crew/app2/-/edit/delete", form(p, "confirm_path", typed)).Want(t, "delete typed "+typed, 422, "The project was not deleted: type crew/app2 to confirm.")
	}
	s.Call(t, alice.Token, http.MethodGet, api, nil).Expect(t, http.StatusOK, "")
	a.Post(t, "/crew/app2/-/edit/delete", form(p, "confirm_path", "crew/app2")).WantRedirect(t, "delete", http.StatusSeeOther, "/dashboard/projects")
	s.Call(t, alice.Token, http.MethodGet, api, nil).Expect(t, http.StatusNotFound, `{"message":"404 Project Not Found"}`)
	a.Get(t, "/crew/app2/-/edit").Want(t, "deleted project's settings", 404)
	a.Get(t, "/crew/app2/-/edit/nothing").Want(t, "unknown settings page", 404)
}

// TestSettingsProjectMembers: a Master adds, changes and removes members
// and shares the project with a group, each seen by the API; bad input
// is said; a Developer can do none of it.
func TestSettingsProjectMembers(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice, mia, bob, dev := s.CreateUser(t, "alice"), s.CreateUser(t, "mia"), s.CreateUser(t, "bob"), s.CreateUser(t, "dev")
	id := pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "app"})
	grp := pgID(t, s, mia.Token, "/api/v4/groups", map[string]any{"name": "Friends", "path": "friends"})
	api := fmt.Sprintf("/api/v4/projects/%d", id)
	s.Call(t, alice.Token, http.MethodPost, api+"/members", map[string]any{"user_id": mia.ID, "access_level": 40}).Expect(t, http.StatusCreated, "")
	s.Call(t, alice.Token, http.MethodPost, api+"/members", map[string]any{"user_id": dev.ID, "access_level": 30}).Expect(t, http.StatusCreated, "")
	m := s.SignedIn(t, "mia", mia.Password)

	p := m.Get(t, "/alice/app/-/project_members")
	p.Want(t, "members page", 200, "<h1>Members</h1>", `<a href="/alice/app/-/project_members" aria-current="page">Members</a>`,
		`<caption class="muted">2 members</caption>`, `<a href="/dev"><bdi>User dev</bdi></a>`,
		fmt.Sprintf(`<form method="post" action="/alice/app/-/project_members/%d/remove">`, dev.ID),
		`<option value="`+fmt.Sprint(grp)+`">friends</option>`)
	p.WantNot(t, "members page", `<option value="50"`)

	// Add: unknown user, bad level, past expiry, then bob as Reporter.
	m.Post(t, "/alice/app/-/project_members", form(p, "username", "nobody", "access_level", "30")).Want(t, "unknown user", 422, "There is no such user.")
	m.Post(t, "/alice/app/-/project_members", form(p, "username", "bob", "access_level", "50")).Want(t, "owner level", 422, "Invalid value: access_level.")
	m.Post(t, "/alice/app/-/project_members", form(p, "username", "bob", "access_level", "20", "expires_at", "2001-01-01")).Want(t, "past expiry", 422, `class="alert"`)
	m.Post(t, "/alice/app/-/project_members", form(p, "username", "@bob", "access_level", "20", "expires_at", "2099-05-01")).
		WantRedirect(t, "add bob", http.StatusSeeOther, "/alice/app/-/project_members")
	m.Post(t, "/alice/app/-/project_members", form(p, "username", "bob", "access_level", "20")).Want(t, "bob again", 422, "That user is a member already.")
	member := s.Call(t, alice.Token, http.MethodGet, fmt.Sprintf("%s/members/%d", api, bob.ID), nil).Object(t)
	if fmt.Sprint(member["access_level"]) != "20" || member["expires_at"] != "2099-05-01" {
		t.Errorf("bob added: %v", member)
	}
	// Change: Developer, no expiry.
	m.Post(t, fmt.Sprintf("/alice/app/-/project_members/%d", bob.ID), form(p, "access_level", "30", "expires_at", "")).
		WantRedirect(t, "change bob", http.StatusSeeOther, "/alice/app/-/project_members")
	member = s.Call(t, alice.Token, http.MethodGet, fmt.Sprintf("%s/members/%d", api, bob.ID), nil).Object(t)
	if fmt.Sprint(member["access_level"]) != "30" || member["expires_at"] != nil {
		t.Errorf("bob changed: %v", member)
	}
	// A Developer may not manage members: 404, nothing changes.
	d := s.SignedIn(t, "dev", dev.Password)
	tok := d.Get(t, "/").CSRF()
	d.Post(t, fmt.Sprintf("/alice/app/-/project_members/%d/remove", bob.ID), url.Values{"authenticity_token": {tok}}).Want(t, "developer removes", 404)
	d.Post(t, "/alice/app/-/project_members", url.Values{"authenticity_token": {tok}, "username": {"dev"}, "access_level": {"40"}}).Want(t, "developer adds", 404)
	s.Call(t, alice.Token, http.MethodGet, fmt.Sprintf("%s/members/%d", api, bob.ID), nil).Expect(t, http.StatusOK, "")
	// Mia's token replayed from another session: refused.
	d.Post(t, fmt.Sprintf("/alice/app/-/project_members/%d/remove", bob.ID), form(p)).Want(t, "replayed token", 403, "Form expired")
	// Forged CSRF: nothing removed.
	m.Post(t, fmt.Sprintf("/alice/app/-/project_members/%d/remove", bob.ID), url.Values{"authenticity_token": {"bad"}}).Want(t, "forged remove", 403)
	s.Call(t, alice.Token, http.MethodGet, fmt.Sprintf("%s/members/%d", api, bob.ID), nil).Expect(t, http.StatusOK, "")
	// Remove bob; removing him again, or a number that is no one, is 404.
	m.Post(t, fmt.Sprintf("/alice/app/-/project_members/%d/remove", bob.ID), form(p)).
		WantRedirect(t, "remove bob", http.StatusSeeOther, "/alice/app/-/project_members")
	s.Call(t, alice.Token, http.MethodGet, fmt.Sprintf("%s/members/%d", api, bob.ID), nil).Expect(t, http.StatusNotFound, "")
	m.Post(t, fmt.Sprintf("/alice/app/-/project_members/%d/remove", bob.ID), form(p)).Want(t, "remove again", 404)
	for _, path := range []string{"/alice/app/-/project_members/x", "/alice/app/-/project_members/1/explode", "/alice/app/-/project_members/..%2F..%2Fedit"} {
		m.Post(t, path, form(p)).Want(t, "post "+path, 404)
	}

	// Share with mia's group, then unshare.
	m.Post(t, "/alice/app/-/project_members/share", form(p, "group_id", "", "group_access", "30")).Want(t, "share without group", 422, "Please fill in: group.")
	m.Post(t, "/alice/app/-/project_members/share", form(p, "group_id", fmt.Sprint(grp), "group_access", "30")).
		WantRedirect(t, "share", http.StatusSeeOther, "/alice/app/-/project_members")
	shared := s.Call(t, alice.Token, http.MethodGet, api, nil).Object(t)["shared_with_groups"]
	if !strings.Contains(fmt.Sprint(shared), "group_name:Friends") {
		t.Errorf("shared with: %v", shared)
	}
	m.Get(t, "/alice/app/-/project_members").Want(t, "shared page", 200, `<a href="/groups/friends"><bdi>Friends</bdi></a></td><td>Developer</td>`)
	m.Post(t, fmt.Sprintf("/alice/app/-/project_members/share/%d/remove", grp), form(p)).
		WantRedirect(t, "unshare", http.StatusSeeOther, "/alice/app/-/project_members")
	if shared := s.Call(t, alice.Token, http.MethodGet, api, nil).Object(t)["shared_with_groups"]; fmt.Sprint(shared) != "[]" {
		t.Errorf("after unshare: %v", shared)
	}
	m.Post(t, fmt.Sprintf("/alice/app/-/project_members/share/%d/remove", grp), form(p)).Want(t, "unshare again", 404)
}

// TestSettingsGroup: a group's Owner edits it (a new path moves its
// pages), manages its members and deletes it with its path typed; a
// Master member of the group has no settings and changes nothing.
func TestSettingsGroup(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice, mia, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "mia"), s.CreateUser(t, "bob")
	gid := pgID(t, s, alice.Token, "/api/v4/groups", map[string]any{"name": "Team", "path": "team", "description": "old"})
	api := fmt.Sprintf("/api/v4/groups/%d", gid)
	s.Call(t, alice.Token, http.MethodPost, api+"/members", map[string]any{"user_id": mia.ID, "access_level": 40}).Expect(t, http.StatusCreated, "")
	a, m := s.SignedIn(t, "alice", alice.Password), s.SignedIn(t, "mia", mia.Password)

	p := a.Get(t, "/groups/team/-/edit")
	p.Want(t, "group settings", 200, "<h2>General settings</h2>", `<nav class="sidenav" aria-label="Group settings">`,
		`<a href="/groups/team/-/edit" aria-current="page">General</a>`, `<a href="/groups/team/-/edit" aria-current="page">Settings</a>`,
		`<textarea id="group-description" name="description" rows="3" maxlength="2000">old</textarea>`)
	a.Get(t, "/groups/team/-/group_members").Want(t, "owner's members page", 200, `id="add-member"`,
		`<a href="/groups/team/-/group_members" aria-current="page">Members</a>`, `<option value="50">Owner</option>`)

	// A Master of the group: no settings, no forms, posts refused.
	m.Get(t, "/groups/team/-/edit").Want(t, "master's group settings", 404)
	mp := m.Get(t, "/groups/team/-/group_members")
	mp.Want(t, "master's members page", 200, "<td>Owner</td>")
	mp.WantNot(t, "master's members page", `id="add-member"`, "/remove", `aria-label="Group settings"`, "/-/edit")
	tok := mp.CSRF()
	m.Post(t, "/groups/team/-/edit", url.Values{"authenticity_token": {tok}, "name": {"x"}, "path": {"x"}, "description": {"x"}, "visibility": {"public"}}).Want(t, "master edits", 404)
	m.Post(t, "/groups/team/-/edit/delete", url.Values{"authenticity_token": {tok}, "confirm_path": {"team"}}).Want(t, "master deletes", 404)
	m.Post(t, "/groups/team/-/group_members", url.Values{"authenticity_token": {tok}, "username": {"bob"}, "access_level": {"50"}}).Want(t, "master adds", 404)
	m.Post(t, fmt.Sprintf("/groups/team/-/group_members/%d/remove", alice.ID), url.Values{"authenticity_token": {tok}}).Want(t, "master removes", 404)
	if got := apiField(t, s, alice.Token, api, "description"); got != "old" {
		t.Errorf("after the Master's posts: %q", got)
	}
	s.Call(t, alice.Token, http.MethodGet, fmt.Sprintf("%s/members/%d", api, bob.ID), nil).Expect(t, http.StatusNotFound, "")

	// Members: add bob, make him Owner, remove him; the last Owner stays.
	a.Post(t, "/groups/team/-/group_members", form(p, "username", "bob", "access_level", "30")).
		WantRedirect(t, "add bob", http.StatusSeeOther, "/groups/team/-/group_members")
	a.Post(t, fmt.Sprintf("/groups/team/-/group_members/%d", bob.ID), form(p, "access_level", "50")).
		WantRedirect(t, "bob owner", http.StatusSeeOther, "/groups/team/-/group_members")
	if got := apiField(t, s, alice.Token, fmt.Sprintf("%s/members/%d", api, bob.ID), "access_level"); got != "50" {
		t.Errorf("bob's level: %s", got)
	}
	a.Post(t, fmt.Sprintf("/groups/team/-/group_members/%d/remove", bob.ID), form(p)).
		WantRedirect(t, "remove bob", http.StatusSeeOther, "/groups/team/-/group_members")
	s.Call(t, alice.Token, http.MethodGet, fmt.Sprintf("%s/members/%d", api, bob.ID), nil).Expect(t, http.StatusNotFound, "")
	a.Post(t, fmt.Sprintf("/groups/team/-/group_members/%d", alice.ID), form(p, "access_level", "30")).
		Want(t, "last owner demoted", 422, "A group must keep at least one Owner.")

	// Edit: visibility and a new path, seen by the API.
	a.Post(t, "/groups/team/-/edit", form(p, "name", "Team 2", "path", "team2", "description", "new", "visibility", "public")).
		WantRedirect(t, "edit group", http.StatusSeeOther, "/groups/team2/-/edit")
	g := s.Call(t, alice.Token, http.MethodGet, api, nil).Object(t)
	if g["full_path"] != "team2" || g["visibility"] != "public" || g["description"] != "new" || g["name"] != "Team 2" {
		t.Errorf("group after edit: %v", g)
	}
	a.Post(t, "/groups/team2/-/edit", form(p, "name", "", "path", "team2", "visibility", "public")).Want(t, "blank name", 422, `class="alert"`)
	// Delete: the exact path.
	a.Post(t, "/groups/team2/-/edit/delete", form(p, "confirm_path", "team")).Want(t, "delete typed wrong", 422, "The group was not deleted")
	s.Call(t, alice.Token, http.MethodGet, api, nil).Expect(t, http.StatusOK, "")
	a.Post(t, "/groups/team2/-/edit/delete", url.Values{"authenticity_token": {"x"}, "confirm_path": {"team2"}}).Want(t, "forged delete", 403)
	a.Post(t, "/groups/team2/-/edit/delete", form(p, "confirm_path", "team2")).WantRedirect(t, "delete", http.StatusSeeOther, "/dashboard/groups")
	fennectest.Poll(t, 10e9, func() (bool, string) {
		r := s.Call(t, alice.Token, http.MethodGet, api, nil)
		return r.Status == http.StatusNotFound, fmt.Sprint(r.Status)
	})
}

// TestSettingsDefaultBranchChoices: a repository's branches are the
// default branch's choices (the repository module names them through the
// projects module's seam), and the one chosen is the API's default_branch.
func TestSettingsDefaultBranchChoices(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "branchy", "private")
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "base", map[string]string{"a": "a\n"})
	s.Call(t, s.RootToken, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/repository/branches?branch=next&ref=master", p.ID), nil).
		Expect(t, http.StatusCreated, "")
	root := s.SignedIn(t, "root", s.RootPassword)
	page := root.Get(t, "/root/branchy/-/edit")
	page.Want(t, "general settings", 200, `<select id="project-default-branch" name="default_branch"><option value="master" selected>master</option><option value="next">next</option></select>`)
	root.Post(t, "/root/branchy/-/edit", form(page, "name", "branchy", "default_branch", "next")).
		WantRedirect(t, "choose next", http.StatusSeeOther, "/root/branchy/-/edit")
	if got := apiField(t, s, s.RootToken, fmt.Sprintf("/api/v4/projects/%d", p.ID), "default_branch"); got != "next" {
		t.Errorf("default branch: %s", got)
	}
}
