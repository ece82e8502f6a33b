package web_test

import (
	"net/http"
	"strings"
	"testing"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// areaProbe registers pages of every area, with entries that only some
// visitors may see.
func areaProbe(s *web.Site) {
	t := s.Templates(testTemplates, "testdata/*.html")
	s.AddMenu(web.MenuItem{Label: "Admin probe", Path: "/admin/probe", Order: 9, Admin: true})
	// The profile's own pages are the modules' (identity's "Profile" at
	// order 10 follows the probe's entry).
	s.AddSection(web.Section{Area: web.AreaProfile, Key: "probe", Label: "Probe keys", Path: "/profile/probe_keys", Order: 1})
	s.AddSection(web.Section{Area: web.AreaAdmin, Key: "users", Label: "Users", Path: "/admin/users", Order: 1})
	s.AddSection(web.Section{Area: web.AreaProjectSettings, Key: "general", Label: "General", Path: "/-/probe_edit", Order: 1, MinLevel: 40})
	s.AddSection(web.Section{Area: web.AreaProjectSettings, Key: "ci", Label: "CI/CD", Path: "/-/settings/ci_cd", Order: 2, MinLevel: 40, Feature: "builds_enabled"})
	s.AddSection(web.Section{Area: web.AreaProjectSettings, Key: "owners", Label: "Owners only", Path: "/-/owners", Order: 3, MinLevel: 50})
	s.AddSection(web.Section{Area: web.AreaGroupSettings, Key: "members", Label: "Members", Path: "/-/probe_members", Order: 1})
	s.Profile("GET /profile/probe_keys", func(w http.ResponseWriter, r *http.Request) {
		t.Render(w, r, "probe", web.Page{Title: "Keys", Area: web.AreaProfile, Section: "probe"})
	})
	s.Admin("GET /admin/probe", func(w http.ResponseWriter, r *http.Request) {
		t.Render(w, r, "probe", web.Page{Title: "Admin", Area: web.AreaAdmin, Section: "users"})
	})
	s.Project("GET probe_edit", func(w http.ResponseWriter, r *http.Request) {
		t.Render(w, r, "probe", web.Page{Title: "Settings", Area: web.AreaProjectSettings, Section: "general",
			Project: &web.Project{FullPath: r.PathValue("owner"), Name: "P", Level: 40, Features: map[string]bool{"builds_enabled": false}}})
	})
	for _, name := range []string{"probe_a", "probe_b"} {
		s.ProjectSettings("GET "+name, func(w http.ResponseWriter, r *http.Request) {
			t.Render(w, r, "probe", web.Page{Title: name, Data: r.PathValue("owner") + " rest=" + r.PathValue("rest")})
		})
	}
	s.Group("GET probe_members", func(w http.ResponseWriter, r *http.Request) {
		t.Render(w, r, "probe", web.Page{Title: "Members", Area: web.AreaGroupSettings, Section: "members",
			Group: &web.Group{FullPath: r.PathValue("owner"), Name: "G", Level: 50}})
	})
}

// TestSiteAreasHaveTheirNavigationAndDoors: an area's pages carry the
// side navigation of every module's entries, in order, filtered by the
// visitor's level and the project's switches; profile pages send an
// anonymous visitor to sign in; the admin area and its menu entry exist
// for administrators only.
func TestSiteAreasHaveTheirNavigationAndDoors(t *testing.T) {
	t.Parallel()
	mod := fennec.NewModule("webareas", fennec.ProvidePages(func(fennec.None) fennec.Pages {
		return fennec.Pages{Name: "webareas", Register: areaProbe}
	}))
	s := stocktest.Start(t, fennectest.WithModules(mod))
	anon := s.NewBrowser(t)
	anon.Get(t, "/profile/probe_keys").WantRedirect(t, "anonymous profile", http.StatusFound, "/users/sign_in?return_to=%2Fprofile%2Fprobe_keys")
	anon.Get(t, "/admin/probe").WantRedirect(t, "anonymous admin", http.StatusFound, "/users/sign_in?return_to=%2Fadmin%2Fprobe")

	u := s.CreateUser(t, "plain")
	plain := s.SignedIn(t, "plain", u.Password)
	p := plain.Get(t, "/profile/probe_keys")
	p.Want(t, "profile", 200, `<nav class="sidenav" aria-label="User settings">`,
		`<li><a href="/profile/probe_keys" aria-current="page">Probe keys</a></li><li><a href="/profile">Profile</a></li>`)
	p.WantNot(t, "profile", "Admin probe")
	plain.Get(t, "/admin/probe").Want(t, "admin page, not an admin", 404, "Page not found")
	if got := plain.Post(t, "/admin/probe", nil); got.Response.StatusCode == 200 {
		t.Errorf("POST to an admin page: %d", got.Response.StatusCode)
	}

	root := s.SignedIn(t, "root", s.RootPassword)
	p = root.Get(t, "/admin/probe")
	p.Want(t, "admin page", 200, `<a href="/admin/probe">Admin probe</a>`, `<nav class="sidenav" aria-label="Admin area">`,
		`<a href="/admin/users" aria-current="page">Users</a>`)

	p = root.Get(t, "/grp/proj/-/probe_edit")
	p.Want(t, "project settings", 200, `<nav class="sidenav" aria-label="Project settings">`,
		`<a href="/grp/proj/-/probe_edit" aria-current="page">General</a>`)
	p.WantNot(t, "project settings", "CI/CD</a>", "Owners only")
	root.Get(t, "/groups/top/sub/-/probe_members").Want(t, "group settings", 200,
		`<nav class="sidenav" aria-label="Group settings">`, `<a href="/groups/top/sub/-/probe_members" aria-current="page">Members</a>`)
	if strings.Contains(p.Body, `aria-label="User settings"`) {
		t.Error("a project settings page shows the profile's navigation")
	}

	// Pages under "/-/settings/" of several modules share the key.
	root.Get(t, "/grp/proj/-/settings/probe_a").Want(t, "settings page a", 200, "<h1>probe_a</h1>", `<p id="data">grp/proj rest=</p>`)
	root.Get(t, "/grp/proj/-/settings/probe_b/x%2Fy/z").Want(t, "settings page b", 200, "<h1>probe_b</h1>", `<p id="data">grp/proj rest=x/y/z</p>`)
	root.Get(t, "/grp/proj/-/settings/nothing").Want(t, "unknown settings page", 404, "Page not found")
	root.Get(t, "/grp/proj/-/settings").Want(t, "settings without a name", 404, "Page not found")
}

// TestSiteAreaHelpersRefuseOtherPaths: a profile or admin page registered
// outside its root would skip nothing and check nothing: a bug caught at
// registration.
func TestSiteAreaHelpersRefuseOtherPaths(t *testing.T) {
	for _, reg := range []func(*web.Site){
		func(s *web.Site) { s.Admin("GET /administrator", nil) },
		func(s *web.Site) { s.Profile("GET /profiles", nil) },
		func(s *web.Site) { s.AddSection(web.Section{Area: "nowhere"}) },
		func(s *web.Site) { s.ProjectSettings("GET a/b", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("registration did not panic")
				}
			}()
			reg(&web.Site{})
		}()
	}
}
