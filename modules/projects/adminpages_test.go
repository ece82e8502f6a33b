package projects_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestAdminProjectsAndGroups: the admin area lists every project (a
// private one of another user included) with search and the visibility
// filter, and every group; it creates a group and deletes one only once
// its path is typed again. A regular user gets 404 on each page and form,
// and nothing changes.
func TestAdminProjectsAndGroups(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "bob")
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "secretproj", "visibility": "private"})
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "openproj", "visibility": "public"})
	gid := pgID(t, s, alice.Token, "/api/v4/groups", map[string]any{"name": "Team", "path": "team", "visibility": "private"})
	root := s.SignedIn(t, "root", s.RootPassword)

	pgHas(t, "all projects", root.Get(t, "/admin/projects"), http.StatusOK,
		[]string{"alice / secretproj", "alice / openproj", `href="/alice/secretproj/-/edit"`, "2 projects"}, nil)
	pgHas(t, "private projects", root.Get(t, "/admin/projects?visibility=private"), http.StatusOK,
		[]string{"alice / secretproj"}, []string{"alice / openproj"})
	pgHas(t, "search", root.Get(t, "/admin/projects?name=open"), http.StatusOK,
		[]string{"alice / openproj"}, []string{"alice / secretproj"})
	pgHas(t, "groups", root.Get(t, "/admin/groups"), http.StatusOK, []string{"Team", `action="/admin/groups/` + itoa(gid) + `/delete"`}, nil)
	pgHas(t, "overview", root.Get(t, "/admin"), http.StatusOK, []string{`href="/admin/projects">2</a>`, `href="/admin/groups">1</a>`}, nil)

	b := s.SignedIn(t, "bob", bob.Password)
	csrf := b.Get(t, "/").CSRF()
	for _, p := range []string{"/admin/projects", "/admin/groups"} {
		pgHas(t, "bob's "+p, b.Get(t, p), http.StatusNotFound, nil, []string{"secretproj", "Team"})
	}
	b.Post(t, "/admin/groups", url.Values{"authenticity_token": {csrf}, "name": {"Bobs"}, "path": {"bobs"}}).Want(t, "bob's create", http.StatusNotFound)
	b.Post(t, "/admin/groups/"+itoa(gid)+"/delete", url.Values{"authenticity_token": {csrf}, "confirm_path": {"team"}}).
		Want(t, "bob's delete", http.StatusNotFound)
	s.Call(t, s.RootToken, http.MethodGet, "/api/v4/groups/team", nil).Expect(t, http.StatusOK, "")
	s.Call(t, s.RootToken, http.MethodGet, "/api/v4/groups/bobs", nil).Expect(t, http.StatusNotFound, "")

	rc := root.Get(t, "/admin/groups").CSRF()
	root.Post(t, "/admin/groups", url.Values{"authenticity_token": {rc}, "name": {"Team"}, "path": {"team"}, "visibility": {"private"}}).
		Want(t, "a taken path", http.StatusBadRequest, "has already been taken", `id="form-problems"`)
	root.Post(t, "/admin/groups", url.Values{"authenticity_token": {rc}, "name": {"Ops"}, "path": {"ops"}, "visibility": {"internal"}}).
		WantRedirect(t, "create", http.StatusSeeOther, "/admin/groups?done=created")
	if g := s.Call(t, s.RootToken, http.MethodGet, "/api/v4/groups/ops", nil).Expect(t, http.StatusOK, "").Object(t); g["visibility"] != "internal" {
		t.Errorf("the API's new group: %v", g)
	}
	root.Post(t, "/admin/groups/"+itoa(gid)+"/delete", url.Values{"authenticity_token": {"forged"}, "confirm_path": {"team"}}).
		Want(t, "a forged delete", http.StatusForbidden)
	root.Post(t, "/admin/groups/"+itoa(gid)+"/delete", url.Values{"authenticity_token": {rc}, "confirm_path": {"Team"}}).
		Want(t, "a wrong confirmation", http.StatusBadRequest, "Not deleted")
	s.Call(t, s.RootToken, http.MethodGet, "/api/v4/groups/team", nil).Expect(t, http.StatusOK, "")
	root.Post(t, "/admin/groups/999999/delete", url.Values{"authenticity_token": {rc}, "confirm_path": {"x"}}).Want(t, "no such group", http.StatusNotFound)
	root.Post(t, "/admin/groups/"+itoa(gid)+"/delete", url.Values{"authenticity_token": {rc}, "confirm_path": {"team"}}).
		WantRedirect(t, "delete", http.StatusSeeOther, "/admin/groups?done=deleted")
	s.Call(t, s.RootToken, http.MethodGet, "/api/v4/groups/team", nil).Expect(t, http.StatusNotFound, "")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestApplicationSettings: the default visibilities of new projects and
// groups are read and changed through GitLab's GET and PUT
// /application/settings and the admin area's settings page, by
// administrators only, and a create that names no visibility follows
// them at once.
func TestApplicationSettings(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	st := s.Call(t, s.RootToken, http.MethodGet, "/api/v4/application/settings", nil).Expect(t, http.StatusOK, "").Object(t)
	if st["default_project_visibility"] != "private" || st["default_group_visibility"] != "private" {
		t.Errorf("the default settings: %v", st)
	}
	s.Call(t, alice.Token, http.MethodGet, "/api/v4/application/settings", nil).Expect(t, http.StatusForbidden, "")
	s.Call(t, alice.Token, http.MethodPut, "/api/v4/application/settings", map[string]any{"default_project_visibility": "public"}).
		Expect(t, http.StatusForbidden, "")
	s.Call(t, s.RootToken, http.MethodPut, "/api/v4/application/settings", map[string]any{"default_project_visibility": "secret"}).
		Expect(t, http.StatusBadRequest, "")

	a := s.SignedIn(t, "alice", alice.Password)
	csrf := a.Get(t, "/").CSRF()
	a.Get(t, "/admin/application_settings").Want(t, "alice's settings page", http.StatusNotFound)
	a.Post(t, "/admin/application_settings", url.Values{"authenticity_token": {csrf}, "default_project_visibility": {"public"},
		"default_group_visibility": {"public"}}).Want(t, "alice's save", http.StatusNotFound)
	root := s.SignedIn(t, "root", s.RootPassword)
	page := root.Get(t, "/admin/application_settings")
	page.Want(t, "the settings page", http.StatusOK, `<option value="private" selected>private</option>`, `aria-current="page">Settings</a>`)
	root.Post(t, "/admin/application_settings", url.Values{"authenticity_token": {"forged"}, "default_project_visibility": {"public"},
		"default_group_visibility": {"public"}}).Want(t, "a forged save", http.StatusForbidden)
	root.Post(t, "/admin/application_settings", url.Values{"authenticity_token": {page.CSRF()}, "default_project_visibility": {"<b>"},
		"default_group_visibility": {"public"}}).Want(t, "a bad value", http.StatusBadRequest, "default project visibility is not included in the list")
	st = s.Call(t, s.RootToken, http.MethodGet, "/api/v4/application/settings", nil).Expect(t, http.StatusOK, "").Object(t)
	if st["default_project_visibility"] != "private" || st["default_group_visibility"] != "private" {
		t.Errorf("refused saves changed the settings: %v", st)
	}
	root.Post(t, "/admin/application_settings", url.Values{"authenticity_token": {page.CSRF()}, "default_project_visibility": {"internal"},
		"default_group_visibility": {"public"}}).WantRedirect(t, "save", http.StatusSeeOther, "/admin/application_settings?done=saved")
	root.Get(t, "/admin/application_settings?done=saved").Want(t, "saved", http.StatusOK, "The settings were saved.",
		`<option value="internal" selected>internal</option>`, `<option value="public" selected>public</option>`)
	p := s.Call(t, alice.Token, http.MethodPost, "/api/v4/projects", map[string]any{"name": "plain"}).Expect(t, http.StatusCreated, "").Object(t)
	if p["visibility"] != "internal" {
		t.Errorf("a new project without a visibility is %v", p["visibility"])
	}
	g := s.Call(t, alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "Plain", "path": "plain-group"}).Expect(t, http.StatusCreated, "").Object(t)
	if g["visibility"] != "public" {
		t.Errorf("a new group without a visibility is %v", g["visibility"])
	}
	sub := s.Call(t, alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "Sub", "path": "sub", "parent_id": g["id"]}).Expect(t, http.StatusCreated, "").Object(t)
	if sub["visibility"] != "public" {
		t.Errorf("a subgroup of a public group: %v", sub["visibility"])
	}
	s.Call(t, s.RootToken, http.MethodPut, "/api/v4/application/settings", map[string]any{"default_project_visibility": "private"}).
		Expect(t, http.StatusOK, "")
	p = s.Call(t, alice.Token, http.MethodPost, "/api/v4/projects", map[string]any{"name": "plain2"}).Expect(t, http.StatusCreated, "").Object(t)
	if p["visibility"] != "private" {
		t.Errorf("after the API's change a new project is %v", p["visibility"])
	}
}
