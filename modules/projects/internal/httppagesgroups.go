package internal

// The group pages: /groups/<full path> (its projects and subgroups) and
// /groups/<full path>/-/group_members, with the permissions of GET
// /groups/:id, /groups/:id/projects, /subgroups and /members (anyone who
// may see the group sees all three lists, each project only when they may
// see it).

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// maxSubgroupsShown bounds the subgroups a group's page lists; past it the
// page says how many more there are.
const maxSubgroupsShown = 100

func (pg *pages) registerGroupPages(s *web.Site) {
	s.Group("GET ", pg.group)
	s.Group("GET group_members", pg.groupMembers)
	s.Handle("GET /dashboard/groups", pg.dashboardGroups)
	s.AddMenu(web.MenuItem{Label: "Groups", Path: "/dashboard/groups", Order: 15, SignedIn: true})
}

// groupHeader is what every page of a group shows above its own part.
type groupHeader struct {
	Name, FullName, FullPath, Visibility string
	Description                          string
	OverviewHref, MembersHref            string
	// SettingsHref is the group's settings, for its Owners ("" for
	// anyone else).
	SettingsHref string
	Tab          string
}

// subgroupRow is a subgroup as a line of the group's page.
type subgroupRow struct {
	Name, FullPath, Href, Description, Visibility string
}

type groupData struct {
	Group     groupHeader
	Subgroups []subgroupRow
	More      int // subgroups not listed
	List      *listView
}

// openGroup resolves the page's group (r.PathValue("owner")) as GET
// /groups/:id does; a group the visitor may not see is answered as
// missing. ok is false once an answer is written.
func (pg *pages) openGroup(w http.ResponseWriter, r *http.Request, tab string) (*resolvedGroup, groupHeader, []web.Crumb, bool) {
	ctx := r.Context()
	rg, err := pg.svc.resolveGroupPath(ctx, r.PathValue("owner"))
	if err != nil {
		pg.fail(w, r, err)
		return nil, groupHeader{}, nil, false
	}
	ni, err := pg.svc.namespaceInfo(ctx, rg.g)
	if err != nil {
		pg.fail(w, r, err)
		return nil, groupHeader{}, nil, false
	}
	base := "/groups/" + web.EscapePath(ni.path)
	h := groupHeader{Name: rg.g.Name, FullName: ni.name, FullPath: ni.path, Visibility: rg.g.Visibility,
		Description: rg.g.Description, OverviewHref: pg.site.URL(base), MembersHref: pg.site.URL(base + "/-/group_members"), Tab: tab}
	if pr := auth.FromContext(ctx); pr.User != nil && rg.isOwner(pr) {
		h.SettingsHref = pg.site.URL(base + "/-/edit")
	}
	// Crumbs: the ancestors, each linked, then the group.
	var crumbs []web.Crumb
	path := ""
	for i, g := range ni.chain {
		if path != "" {
			path += "/"
		}
		path += g.Path
		if i == len(ni.chain)-1 {
			crumbs = append(crumbs, web.Crumb{Label: g.Name})
		} else {
			crumbs = append(crumbs, web.Crumb{Label: g.Name, Href: "/groups/" + web.EscapePath(path)})
		}
	}
	return rg, h, crumbs, true
}

// group is a group's page: its subgroups and a page of its projects
// (GET /groups/:id/projects, with its search and order).
func (pg *pages) group(w http.ResponseWriter, r *http.Request) {
	rg, h, crumbs, ok := pg.openGroup(w, r, "overview")
	if !ok {
		return
	}
	ctx := r.Context()
	ref := strconv.FormatInt(rg.g.ID, 10)
	subs, subTotal, err := pg.svc.listBelow(ctx, ref, &groupFilter{OrderBy: "name", Sort: "asc", Limit: maxSubgroupsShown}, false)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := groupData{Group: h, More: max(subTotal-len(subs), 0)}
	for _, g := range subs {
		full := h.FullPath + "/" + g.Path
		d.Subgroups = append(d.Subgroups, subgroupRow{Name: g.Name, FullPath: full, Href: pg.site.URL("/groups/" + web.EscapePath(full)),
			Description: g.Description, Visibility: g.Visibility})
	}
	f := &listFilter{}
	sort, pageNo := listQuery(r, f)
	rows, total, err := pg.svc.groupProjects(ctx, ref, f, false)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d.List = pg.newListView("/groups/"+web.EscapePath(h.FullPath), rows, total, pageNo, f.Search, sort)
	d.List.Empty = "This group has no projects you may see."
	if f.Search != "" {
		d.List.Empty = "No project matches your search."
	}
	pg.t.Render(w, r, "group", web.Page{Title: h.FullName, Crumbs: crumbs, Data: d})
}

type membersData struct {
	Group              groupHeader
	Members            []managedMember
	Total, Page, Pages int
	More               int // never set: the page has a pager
	PrevHref, NextHref string
	// Action is the add form's target (prefixed), "" for a visitor who
	// may not manage the members; Levels are the levels it offers.
	Action, MinExpiry, Problem string
	Levels                     []option
}

// roles are the access levels' names, as GitLab 9.x shows them.
var roles = map[int]string{project.Guest: "Guest", project.Reporter: "Reporter", project.Developer: "Developer",
	project.Master: "Master", project.Owner: "Owner"}

// groupMembers lists a group's direct members with their roles (GET
// /groups/:id/members); its Owners get the forms to add, change and
// remove members (httppagesgroupsettings.go).
func (pg *pages) groupMembers(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("rest") != "" {
		pg.site.NotFound(w, r)
		return
	}
	rg, h, crumbs, ok := pg.openGroup(w, r, "members")
	if !ok {
		return
	}
	pg.renderGroupMembers(w, r, rg, h, crumbs, "", http.StatusOK)
}

// renderGroupMembers draws the members page of group rg, with problem (a
// refused form's reason) above it.
func (pg *pages) renderGroupMembers(w http.ResponseWriter, r *http.Request, rg *resolvedGroup, h groupHeader, crumbs []web.Crumb, problem string, status int) {
	ctx := r.Context()
	pageNo := pageNumber(r.URL.Query().Get("page"))
	ref := strconv.FormatInt(rg.g.ID, 10)
	base := "/groups/" + web.EscapePath(h.FullPath) + "/-/group_members"
	rows, total, err := pg.svc.listMembers(ctx, KindGroup, ref, "", (pageNo-1)*pageSize, pageSize)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := membersData{Group: h, Total: total, Page: pageNo, Pages: (total + pageSize - 1) / pageSize, Problem: problem}
	pr := auth.FromContext(ctx)
	manage := pr.User != nil && rg.isOwner(pr)
	if manage {
		d.Action = pg.site.URL(base)
		d.Levels = levelOptions(project.Owner, project.Developer)
		d.MinExpiry = pg.svc.now().UTC().AddDate(0, 0, 1).Format("2006-01-02")
	}
	for _, m := range rows {
		line := managedMember{ID: m.u.ID, Name: m.u.Name, Username: m.u.Username, Href: pg.site.URL("/" + web.EscapePath(m.u.Username)), Role: roles[m.m.AccessLevel]}
		if line.Role == "" {
			line.Role = strconv.Itoa(m.m.AccessLevel)
		}
		if m.m.ExpiresAt != nil {
			line.Expires = m.m.ExpiresAt.UTC().Format("2006-01-02")
		}
		if manage {
			line.Levels = levelOptions(project.Owner, m.m.AccessLevel)
			line.Action = pg.site.URL(base + "/" + strconv.FormatInt(m.u.ID, 10))
		}
		d.Members = append(d.Members, line)
	}
	if pageNo > 1 {
		d.PrevHref = pg.site.URL(base)
		if pageNo > 2 {
			d.PrevHref += "?page=" + strconv.Itoa(min(pageNo-1, max(d.Pages, 1)))
		}
	}
	if pageNo < d.Pages {
		d.NextHref = pg.site.URL(base) + "?page=" + strconv.Itoa(pageNo+1)
	}
	crumbs[len(crumbs)-1].Href = "/groups/" + web.EscapePath(h.FullPath)
	crumbs = append(crumbs, web.Crumb{Label: "Members"})
	page := web.Page{Title: "Members · " + h.FullName, Crumbs: crumbs, Status: status, Data: d}
	if manage {
		page.Area, page.Section, page.Group = web.AreaGroupSettings, "members", groupArea(h)
	}
	pg.t.Render(w, r, "group_members", page)
}

// groupRedirect sends a group's bare path ("/grp", "/grp/sub") to its page
// under /groups/, when the visitor may see the group and no project they
// may see has the same path (the projects module does not keep the two
// apart: the project's overview wins). ok is false, nothing written,
// otherwise.
func (pg *pages) groupRedirect(w http.ResponseWriter, r *http.Request, path string) bool {
	ctx := r.Context()
	rg, err := pg.svc.resolveGroupPath(ctx, path)
	if err != nil {
		return false
	}
	if strings.Contains(path, "/") {
		if _, err := pg.svc.Resolve(ctx, path); err == nil {
			return false
		}
	}
	ni, err := pg.svc.namespaceInfo(ctx, rg.g)
	if err != nil {
		return false
	}
	pg.site.Redirect(w, r, "/groups/"+web.EscapePath(ni.path))
	return true
}

// groupsData is the visitor's groups page.
type groupsData struct {
	Action, Query      string
	Groups             []subgroupRow
	Total, Page, Pages int
	PrevHref, NextHref string
}

// dashboardGroups lists the signed-in visitor's groups, by name: those
// GET /groups?all_available=false lists (memberships, and the groups of
// projects they are members of).
func (pg *pages) dashboardGroups(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	q := r.URL.Query()
	search := q.Get("name")
	if search == "" {
		search = q.Get("search")
	}
	search = boundQuery(search)
	pageNo := pageNumber(q.Get("page"))
	rows, total, err := pg.svc.listGroups(ctx, &groupFilter{AllAvailable: "false", Search: search, OrderBy: "name", Sort: "asc",
		Offset: (pageNo - 1) * pageSize, Limit: pageSize})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	const path = "/dashboard/groups"
	d := groupsData{Action: pg.site.URL(path), Query: search, Total: total, Page: pageNo, Pages: (total + pageSize - 1) / pageSize}
	for _, g := range rows {
		ni, err := pg.svc.namespaceInfo(ctx, g)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		d.Groups = append(d.Groups, subgroupRow{Name: ni.name, FullPath: ni.path, Href: pg.site.URL("/groups/" + web.EscapePath(ni.path)),
			Description: g.Description, Visibility: g.Visibility})
	}
	d.PrevHref, d.NextHref = pg.pagerLinks(path, search, nil, pageNo, d.Pages)
	pg.t.Render(w, r, "dashboard_groups", web.Page{Title: "Your groups", Data: d})
}
