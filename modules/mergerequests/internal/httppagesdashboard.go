package internal

// /dashboard/merge_requests (issue 29): the visitor's merge requests
// across projects, those they opened, those assigned to them or every
// one they may read (Service.ListMine), so the page lists only projects
// the visitor may read, by the same rule as every other read.

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

// dashboardRow is a merge request of the dashboard, with its project.
type dashboardRow struct {
	mrRow
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

// registerDashboard serves GET /dashboard/merge_requests and puts it in
// the menu beside the issues' dashboard: the same Order, and pages
// register in their modules' name order, so it comes right after Issues.
func registerDashboard(site *web.Site, pg *mrPages) {
	site.Handle("GET /dashboard/merge_requests", pg.dashboard)
	site.AddMenu(web.MenuItem{Label: "Merge requests", Path: "/dashboard/merge_requests", Order: 16, SignedIn: true})
}

// dashboardScopes are ListMine's scopes, as the dashboard's tabs.
var dashboardScopes = []struct {
	scope mergerequest.Scope
	label string
}{
	{mergerequest.CreatedByMe, "Created by me"}, {mergerequest.AssignedToMe, "Assigned to me"}, {mergerequest.AllScope, "All"},
}

// dashboard lists the visitor's merge requests: a scope's tab, a state's
// tab (each with its count), a search, 20 a page.
func (pg *mrPages) dashboard(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	q := r.URL.Query()
	scope := dashboardScopes[0].scope
	for _, sc := range dashboardScopes {
		if q.Get("scope") == string(sc.scope) {
			scope = sc.scope
		}
	}
	state := q.Get("state")
	switch state {
	case "opened", "merged", "closed", "all":
	default:
		state = "opened"
	}
	search := truncate(strings.TrimSpace(q.Get("search")), maxFilterText)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	link := func(scope mergerequest.Scope, state string, page int) string {
		v := url.Values{"scope": {string(scope)}, "state": {state}}
		if search != "" {
			v.Set("search", search)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		return pg.site.URL("/dashboard/merge_requests?" + v.Encode())
	}
	d := dashboardData{Action: pg.site.URL("/dashboard/merge_requests"), Scope: string(scope), State: state, Search: search, Page: page}
	for _, sc := range dashboardScopes {
		d.Scopes = append(d.Scopes, stateTab{Key: string(sc.scope), Label: sc.label, Current: sc.scope == scope, Href: link(sc.scope, state, 1)})
	}
	counts, err := pg.s.MineCounts(ctx, mergerequest.MineQuery{Scope: scope, Search: search})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d.States = stateTabs(counts, state, func(key string) string { return link(scope, key, 1) })
	list, total, err := pg.s.ListMine(ctx, mergerequest.MineQuery{Scope: scope, State: stateOf(state), Search: search,
		Offset: (page - 1) * mrsPerPage, Limit: mrsPerPage})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d.Total, d.Pages = total, max((total+mrsPerPage-1)/mrsPerPage, 1)
	infos := map[int64]projects.ProjectInfo{}
	for _, m := range list {
		info, seen := infos[m.ProjectID]
		if !seen {
			if info, err = pg.s.readProjectID(ctx, m.ProjectID); err != nil {
				pg.fail(w, r, err)
				return
			}
			infos[m.ProjectID] = info
		}
		rows, err := pg.rows(ctx, info, []mergerequest.MergeRequest{m})
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		d.Rows = append(d.Rows, dashboardRow{mrRow: rows[0], Project: info.NameWithNamespace,
			ProjectHref: pg.site.URL("/" + web.EscapePath(info.PathWithNamespace))})
	}
	if page > 1 {
		d.PrevHref = link(scope, state, page-1)
	}
	if page < d.Pages {
		d.NextHref = link(scope, state, page+1)
	}
	if search != "" {
		d.Empty = "No merge requests match this search."
	} else {
		d.Empty = "There are no merge requests to show."
	}
	pg.t.Render(w, r, "dashboard", web.Page{Title: "Merge requests", Data: d})
}
