package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
)

// Area names a set of pages that share a side navigation: a user's own
// settings, a project's or a group's settings, the admin area. Their
// pages belong to several modules (the identity module's SSH keys beside
// the notifications module's settings), so each module adds its entries
// with AddSection and the layout draws the area's navigation from all of
// them, as it draws a project's tabs.
type Area string

const (
	// AreaProfile is the signed-in user's settings, under /profile.
	AreaProfile Area = "profile"
	// AreaProjectSettings is a project's settings, for its Masters and
	// owners; a Section's Path follows the project's page.
	AreaProjectSettings Area = "project-settings"
	// AreaGroupSettings is a group's settings; a Section's Path follows
	// the group's page ("/groups/<full path>").
	AreaGroupSettings Area = "group-settings"
	// AreaAdmin is the administrators' area, under /admin.
	AreaAdmin Area = "admin"
)

// areaLabels name each area's navigation for assistive technology.
var areaLabels = map[Area]string{
	AreaProfile:         "User settings",
	AreaProjectSettings: "Project settings",
	AreaGroupSettings:   "Group settings",
	AreaAdmin:           "Admin area",
}

// Section is one entry of an area's side navigation.
type Section struct {
	Area  Area
	Key   string // the page's Section, to mark it active
	Label string
	// Path is, for the profile and the admin area, a path under the site's
	// root ("/profile/keys"); for project and group settings it follows
	// the project's or group's page ("/-/settings/ci_cd").
	Path  string
	Order int
	// Feature names a project switch that must be on ("builds_enabled");
	// "" for none. Only for AreaProjectSettings.
	Feature string
	// MinLevel is the least access level to the project or group that
	// sees the entry (0: anyone the area's pages admit).
	MinLevel int
}

// Group is what a group's settings pages tell the layout: where its pages
// are and the visitor's access level to it.
type Group struct {
	FullPath string // "parent/group"
	Name     string
	// Level is the visitor's access level (10 guest ... 50 owner).
	Level int
}

// Href is the group's page under the site's root, escaped.
func (g *Group) Href() string { return "/groups/" + EscapePath(g.FullPath) }

// AddSection adds an entry to an area's side navigation.
func (s *Site) AddSection(sec Section) {
	if _, ok := areaLabels[sec.Area]; !ok {
		panic("web: unknown area " + string(sec.Area))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sections = append(s.sections, sec)
	slices.SortStableFunc(s.sections, func(a, b Section) int { return a.Order - b.Order })
}

// sideNav is the navigation the layout draws beside a page of an area.
type sideNav struct {
	Label   string
	Entries []tabView
}

// sideNavOf builds the navigation of pg's area, nil when it has none. The
// caller holds s.mu for reading.
func (s *Site) sideNavOf(pg Page, prefix string) *sideNav {
	if pg.Area == "" {
		return nil
	}
	base, level := "", 0
	var features map[string]bool
	switch pg.Area {
	case AreaProjectSettings:
		if pg.Project == nil {
			return nil
		}
		base, level, features = pg.Project.Href(), pg.Project.Level, pg.Project.Features
	case AreaGroupSettings:
		if pg.Group == nil {
			return nil
		}
		base, level = pg.Group.Href(), pg.Group.Level
	}
	nav := &sideNav{Label: areaLabels[pg.Area]}
	for _, sec := range s.sections {
		if sec.Area != pg.Area || level < sec.MinLevel || (sec.Feature != "" && features != nil && !features[sec.Feature]) {
			continue
		}
		nav.Entries = append(nav.Entries, tabView{Label: sec.Label, Href: prefix + base + sec.Path, Active: sec.Key == pg.Section})
	}
	return nav
}

// Profile serves a page of the signed-in user's own settings at pattern
// ("GET /profile/keys"): an anonymous visitor is sent to sign in, and
// the handler always has a user.
func (s *Site) Profile(pattern string, h http.HandlerFunc) {
	mustUnder(pattern, "/profile")
	s.Handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		if auth.FromContext(r.Context()).User == nil {
			s.Missing(w, r)
			return
		}
		h(w, r)
	})
}

// Admin serves a page of the admin area at pattern ("GET /admin/users"):
// an anonymous visitor is sent to sign in, any other visitor who is not
// an administrator gets the 404 page, so the area's existence tells a
// non-administrator nothing. A handler still asks its services as the
// administrator, whose own checks stay the rule.
func (s *Site) Admin(pattern string, h http.HandlerFunc) {
	mustUnder(pattern, "/admin")
	s.Handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		if u := auth.FromContext(r.Context()).User; u == nil || !u.Admin {
			s.Missing(w, r)
			return
		}
		h(w, r)
	})
}

// mustUnder panics unless pattern ("METHOD /path") serves a path under
// root: a page registered with the wrong helper would skip its check.
func mustUnder(pattern, root string) {
	_, p, _ := strings.Cut(pattern, " ")
	if p != root && !strings.HasPrefix(p, root+"/") {
		panic("web: " + pattern + " is not under " + root)
	}
}

// ProjectSettings serves a page of a project's settings at
// "/<full path>/-/settings/<name>/<rest>" for pattern "METHOD name"
// ("GET repository", "POST ci_cd"). Such pages belong to several modules
// (the repository module's protected branches, the CI module's
// variables) under one key of Project, "settings", which the site
// therefore keeps for itself and hands on by name. The handler reads the
// project's full path with r.PathValue("owner") and what follows the
// name with r.PathValue("rest"), as a Project page does.
func (s *Site) ProjectSettings(pattern string, h http.HandlerFunc) {
	method, name, ok := strings.Cut(pattern, " ")
	if !ok || method == "" || name == "" || strings.Contains(name, "/") {
		panic("web: a settings page's pattern is \"METHOD name\": " + pattern)
	}
	s.mu.Lock()
	if s.settings == nil {
		s.settings = map[string]http.HandlerFunc{}
	}
	if _, dup := s.settings[pattern]; dup {
		s.mu.Unlock()
		panic("web: two settings pages for " + pattern)
	}
	s.settings[pattern] = h
	_, served := s.scoped[scopeProject][method+" settings"]
	s.mu.Unlock()
	if !served {
		s.Project(method+" settings", s.serveSettings)
	}
}

// serveSettings hands a request under "/-/settings/" to the page of its
// name (ProjectSettings), with rest what follows the name; the 404 page
// for a name no module serves.
func (s *Site) serveSettings(w http.ResponseWriter, r *http.Request) {
	name, rest, _ := strings.Cut(r.PathValue("rest"), "/")
	s.mu.RLock()
	h := s.settings[r.Method+" "+name]
	if h == nil && r.Method == http.MethodHead {
		h = s.settings[http.MethodGet+" "+name]
	}
	s.mu.RUnlock()
	if h == nil {
		s.NotFound(w, r)
		return
	}
	r.SetPathValue("rest", rest)
	h(w, r)
}
