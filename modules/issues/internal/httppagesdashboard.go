package internal

// /dashboard/issues (issue 29): the visitor's issues across projects, as
// GET /issues gives them (Service.ListMine with its scopes), so what the
// page lists is exactly what the API lists for the same visitor.

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// dashboardRow is an issue of the dashboard, with its project.
type dashboardRow struct {
	issueRow
	Project, ProjectHref string
}

type dashboardData struct {
	Action         string
	Scopes, States []stateTab
	Scope, State   string
	Search         string
	Rows           []dashboardRow
	Total, Page    int
	Pages          int
	PrevHref       string
	NextHref       string
	Empty          string
}

// registerDashboard serves GET /dashboard/issues.
func registerDashboard(site *web.Site, s *Service) {
	pg := &issuePages{site: site, s: s, t: site.Templates(pageTemplates, "templates/issues/dashboard.html", "templates/issues/_parts.html")}
	site.Handle("GET /dashboard/issues", pg.dashboard)
	site.AddMenu(web.MenuItem{Label: "Issues", Path: "/dashboard/issues", Order: 16, SignedIn: true})
}

// dashboardScopes are GET /issues' scopes, as the dashboard's tabs.
var dashboardScopes = []struct{ key, label string }{
	{"created-by-me", "Created by me"}, {"assigned-to-me", "Assigned to me"}, {"all", "All"},
}

// dashboard lists the visitor's issues: a scope's tab, a state's tab
// (each with its count), a search, 20 a page.
func (pg *issuePages) dashboard(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	q := r.URL.Query()
	scope := dashboardScopes[0].key
	for _, sc := range dashboardScopes {
		if q.Get("scope") == sc.key {
			scope = sc.key
		}
	}
	state := q.Get("state")
	switch state {
	case "opened", "closed", "all":
	default:
		state = "opened"
	}
	// The search is bounded as the list's field is (maxlength 255).
	search := strings.TrimSpace(q.Get("search"))
	if len(search) > 255 {
		search = search[:255]
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	link := func(scope, state string, page int) string {
		v := url.Values{"scope": {scope}, "state": {state}}
		if search != "" {
			v.Set("search", search)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		return pg.site.URL("/dashboard/issues?" + v.Encode())
	}
	d := dashboardData{Action: pg.site.URL("/dashboard/issues"), Scope: scope, State: state, Search: search, Page: page}
	for _, sc := range dashboardScopes {
		d.Scopes = append(d.Scopes, stateTab{Key: sc.key, Label: sc.label, Current: sc.key == scope, Href: link(sc.key, state, 1)})
	}
	for _, st := range []struct{ key, label string }{{"opened", "Open"}, {"closed", "Closed"}, {"all", "All"}} {
		_, n, err := pg.s.ListMine(ctx, issue.ListQuery{Scope: scope, State: st.key, Search: search, Limit: 1})
		if err != nil {
			pg.listFailed(w, r, err)
			return
		}
		d.States = append(d.States, stateTab{Key: st.key, Label: st.label, Count: n, Current: st.key == state, Href: link(scope, st.key, 1)})
	}
	list, total, err := pg.s.ListMine(ctx, issue.ListQuery{Scope: scope, State: state, Search: search,
		Offset: (page - 1) * issuesPerPage, Limit: issuesPerPage})
	if err != nil {
		pg.listFailed(w, r, err)
		return
	}
	d.Total, d.Pages = total, max((total+issuesPerPage-1)/issuesPerPage, 1)
	infos := map[int64]projects.ProjectInfo{}
	for _, i := range list {
		info, seen := infos[i.ProjectID]
		if !seen {
			if info, err = pg.s.access.ResolveID(ctx, i.ProjectID); err != nil {
				pg.fail(w, r, err)
				return
			}
			infos[i.ProjectID] = info
		}
		rows, err := pg.rows(ctx, info, []issue.Issue{i})
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		d.Rows = append(d.Rows, dashboardRow{issueRow: rows[0], Project: info.NameWithNamespace,
			ProjectHref: pg.site.URL("/" + web.EscapePath(info.PathWithNamespace))})
	}
	if page > 1 {
		d.PrevHref = link(scope, state, page-1)
	}
	if page < d.Pages {
		d.NextHref = link(scope, state, page+1)
	}
	if search != "" {
		d.Empty = "No issues match this search."
	} else {
		d.Empty = "There are no issues to show."
	}
	pg.t.Render(w, r, "dashboard", web.Page{Title: "Issues", Data: d})
}
