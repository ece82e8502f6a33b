package internal

// The web pages of the projects module (issue 28): the start page, the
// dashboard of the visitor's projects, explore, the group pages
// (httppagesgroups.go) and user profiles (httppagesusers.go). They call
// the service's own queries, the ones GET /projects, /groups/:id and
// /users/:id/projects answer with, so that a page shows exactly what the
// API would show its visitor.

import (
	"embed"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

//go:embed all:templates
var pageTemplates embed.FS // all: keeps the partials, files named "_*"

const (
	// pageSize is the rows of a page's list (GitLab's dashboard shows 20).
	pageSize = 20
	// maxPageNumber bounds ?page=: past it the page is the last one's
	// neighbour, empty, and costs no more than any other.
	maxPageNumber = 100000
	// maxQueryRunes bounds a search: a longer one is cut, so a huge query
	// string costs no more than a name could be long.
	maxQueryRunes = 255
)

// pages are the module's web pages over its service.
type pages struct {
	site *web.Site
	svc  *Service
	t    *web.Templates
}

// NewPages registers the projects module's pages.
func NewPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "projects", Register: func(site *web.Site) {
		pg := &pages{site: site, svc: s, t: site.Templates(pageTemplates, "templates/pages/*.html")}
		site.AddMenu(web.MenuItem{Label: "Projects", Path: "/dashboard/projects", Order: 10, SignedIn: true})
		site.AddMenu(web.MenuItem{Label: "Explore", Path: "/explore/projects", Order: 20})
		site.Handle("GET /{$}", pg.home)
		site.Handle("GET /dashboard/projects", func(w http.ResponseWriter, r *http.Request) { pg.dashboard(w, r, false) })
		site.Handle("GET /dashboard/projects/starred", func(w http.ResponseWriter, r *http.Request) { pg.dashboard(w, r, true) })
		site.Handle("GET /explore/projects", pg.explore)
		pg.registerGroupPages(site)
		pg.registerAdminPages(site)
		// Project and group settings: httppagessettings.go,
		// httppagesmembers.go, httppagesgroupsettings.go.
		pg.registerSettingsPages(site)
		// Bare paths: a group's ("/grp", "/grp/sub") and a user's
		// ("/alice"); anything else is declined, for the repository
		// module's project overview.
		site.Path(pg.bare)
	}}
}

// home is "/": the dashboard for a signed-in visitor (GitLab shows it at
// the root), explore for anyone else.
func (pg *pages) home(w http.ResponseWriter, r *http.Request) {
	if auth.FromContext(r.Context()).User != nil {
		pg.dashboard(w, r, false)
		return
	}
	pg.explore(w, r)
}

// projectRow is a project as a line of a list.
type projectRow struct {
	Name, FullPath, Href, Description, Visibility string
	Stars                                         int
	LastActivity                                  time.Time
}

// sortOption is one of the list's orders, GitLab's names.
type sortOption struct {
	Key, Label string
	Selected   bool
}

// listView is a page of a project list with its search form, order and
// page links (the partial "projects" renders it).
type listView struct {
	Rows               []projectRow
	Total, Page, Pages int
	PrevHref, NextHref string
	// Action is the search form's target (prefixed), Query its text.
	Action, Query, Sort string
	Sorts               []sortOption
	Empty               string
}

// sorts are the orders the lists offer: GitLab's sort names, mapped to
// the API's order_by and sort.
var sorts = []struct{ key, label, by, dir string }{
	{"latest_activity_desc", "Last updated", "last_activity_at", "desc"},
	{"latest_activity_asc", "Oldest updated", "last_activity_at", "asc"},
	{"name_asc", "Name", "name", "asc"},
	{"name_desc", "Name, descending", "name", "desc"},
	{"created_desc", "Last created", "created_at", "desc"},
	{"created_asc", "Oldest created", "created_at", "asc"},
}

// listQuery reads a list's query: the search (?name=, or ?search= as the
// API names it), the order (an unknown one is the default, GitLab's
// latest_activity_desc) and the page, into f; sort is the order's key.
func listQuery(r *http.Request, f *listFilter) (sort string, pageNo int) {
	q := r.URL.Query()
	search := q.Get("name")
	if search == "" {
		search = q.Get("search")
	}
	f.Search = boundQuery(search)
	sort = sorts[0].key
	f.OrderBy, f.Sort = sorts[0].by, sorts[0].dir
	for _, s := range sorts {
		if s.key == q.Get("sort") {
			sort, f.OrderBy, f.Sort = s.key, s.by, s.dir
		}
	}
	pageNo = pageNumber(q.Get("page"))
	f.Offset, f.Limit = (pageNo-1)*pageSize, pageSize
	return sort, pageNo
}

// boundQuery trims a search and cuts it at maxQueryRunes.
func boundQuery(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxQueryRunes {
		s = string([]rune(s)[:maxQueryRunes])
	}
	return strings.ToValidUTF8(s, "")
}

// pageNumber is ?page=, 1 when absent or not a number.
func pageNumber(raw string) int {
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, maxPageNumber)
}

// pagerLinks are the previous and next pages' links of a list at path
// (escaped, unprefixed) on page pageNo of pages, keeping its search and
// the extra parameters; "" where there is none.
func (pg *pages) pagerLinks(path, search string, extra url.Values, pageNo, pages int) (prev, next string) {
	link := func(n int) string {
		q := url.Values{}
		for k, vs := range extra {
			q[k] = vs
		}
		if search != "" {
			q.Set("name", search)
		}
		if n > 1 {
			q.Set("page", strconv.Itoa(n))
		}
		if len(q) == 0 {
			return pg.site.URL(path)
		}
		return pg.site.URL(path) + "?" + q.Encode()
	}
	if pageNo > 1 {
		prev = link(min(pageNo-1, max(pages, 1)))
	}
	if pageNo < pages {
		next = link(pageNo + 1)
	}
	return prev, next
}

// newListView is the view of a page of rows (namespaces complete) out of
// total, for the list at path (escaped, unprefixed) with the query's
// search and order.
func (pg *pages) newListView(path string, rows []*resolved, total, pageNo int, search, sort string) *listView {
	v := &listView{Total: total, Page: pageNo, Pages: (total + pageSize - 1) / pageSize,
		Action: pg.site.URL(path), Query: search, Sort: sort}
	for _, s := range sorts {
		v.Sorts = append(v.Sorts, sortOption{Key: s.key, Label: s.label, Selected: s.key == sort})
	}
	for _, r := range rows {
		full := r.ni.path + "/" + r.p.Path
		row := projectRow{Name: r.ni.name + " / " + r.p.Name, FullPath: full, Href: pg.site.URL("/" + web.EscapePath(full)),
			Visibility: r.p.Visibility, Stars: r.p.StarCount, LastActivity: r.p.LastActivityAt}
		if r.p.Description != nil {
			row.Description = *r.p.Description
		}
		v.Rows = append(v.Rows, row)
	}
	extra := url.Values{}
	if sort != sorts[0].key {
		extra.Set("sort", sort)
	}
	v.PrevHref, v.NextHref = pg.pagerLinks(path, search, extra, pageNo, v.Pages)
	return v
}

// dashboardData is the dashboard's page.
type dashboardData struct {
	Starred bool
	List    *listView
}

// dashboard is the signed-in visitor's projects: those they are a member
// of (GET /projects?membership=true), or those they starred
// (?starred=true).
func (pg *pages) dashboard(w http.ResponseWriter, r *http.Request, starred bool) {
	if auth.FromContext(r.Context()).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	f := &listFilter{Membership: !starred, Starred: starred}
	sort, pageNo := listQuery(r, f)
	rows, total, err := pg.svc.listProjects(r.Context(), f)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	path, title, empty := "/dashboard/projects", "Your projects", "You are not a member of any project yet."
	if starred {
		path, title, empty = "/dashboard/projects/starred", "Starred projects", "You have not starred any project yet."
	}
	if f.Search != "" {
		empty = "No project matches your search."
	}
	list := pg.newListView(path, rows, total, pageNo, f.Search, sort)
	list.Empty = empty
	pg.t.Render(w, r, "dashboard", web.Page{Title: title, Data: dashboardData{Starred: starred, List: list}})
}

// explore is every public project, and internal ones for signed-in
// visitors (not external users), as GET /projects finds them; private
// projects are never listed here, not even the visitor's own (their
// dashboard lists those).
func (pg *pages) explore(w http.ResponseWriter, r *http.Request) {
	f := &listFilter{NotPrivate: true}
	sort, pageNo := listQuery(r, f)
	rows, total, err := pg.svc.listProjects(r.Context(), f)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	list := pg.newListView("/explore/projects", rows, total, pageNo, f.Search, sort)
	list.Empty = "There are no projects to show."
	if f.Search != "" {
		list.Empty = "No project matches your search."
	}
	pg.t.Render(w, r, "explore", web.Page{Title: "Explore projects", Data: list})
}

// fail answers a page whose service call failed: a group or project that
// is not there (or hidden) as missing, anything else as the 500 page with
// a log line (never the error's text).
func (pg *pages) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, project.ErrGroupNotFound), errors.Is(err, project.ErrNotFound), errors.Is(err, project.ErrUserNotFound):
		pg.site.Missing(w, r)
	default:
		pg.site.Logger().Error("projects page failed", zap.String("path", r.URL.Path), zap.Error(err))
		pg.site.Error(w, r, http.StatusInternalServerError)
	}
}

// bare serves a group's bare path (redirected to /groups/<path>, the
// group's web_url) and a user's profile; it declines anything else,
// having written nothing.
func (pg *pages) bare(w http.ResponseWriter, r *http.Request, path string) bool {
	path = strings.TrimSuffix(path, "/")
	if path == "" || strings.HasSuffix(path, ".git") {
		return false
	}
	if pg.groupRedirect(w, r, path) {
		return true
	}
	if strings.Contains(path, "/") {
		return false
	}
	return pg.profile(w, r, path)
}
