package internal

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// The admin area's projects and groups (/admin/projects, /admin/groups):
// every project and group, through the same queries as GET /projects and
// GET /groups, which show an administrator everything. Creating and
// deleting a group call the service's commands as the administrator.

// visibilities are the projects list's visibility filters.
var visibilities = []string{"private", "internal", "public"}

// registerAdminPages adds the admin area's projects and groups pages.
func (pg *pages) registerAdminPages(site *web.Site) {
	site.AddSection(web.Section{Area: web.AreaAdmin, Key: "projects", Label: "Projects", Path: "/admin/projects", Order: 30})
	site.AddSection(web.Section{Area: web.AreaAdmin, Key: "groups", Label: "Groups", Path: "/admin/groups", Order: 40})
	site.AddAdminStats(20, pg.adminStats)
	site.Admin("GET /admin/projects", pg.adminProjects)
	site.Admin("GET /admin/groups", pg.adminGroups)
	site.Admin("POST /admin/groups", pg.adminCreateGroup)
	site.Admin("POST /admin/groups/{id}/delete", pg.adminDeleteGroup)
	site.AddSection(web.Section{Area: web.AreaAdmin, Key: "settings", Label: "Settings", Path: "/admin/application_settings", Order: 70})
	site.Admin("GET /admin/application_settings", pg.adminSettings)
	site.Admin("POST /admin/application_settings", pg.adminSaveSettings)
}

// adminStats are the overview's project and group counts.
func (pg *pages) adminStats(ctx context.Context) []web.Stat {
	projectCount := "?"
	_ = pg.svc.db.View(ctx, func(tx *store.Tx) error {
		projectCount = strconv.Itoa(projects.Count(tx))
		return nil
	})
	groupCount := "?"
	if _, n, err := pg.svc.listGroups(ctx, &groupFilter{Limit: 1}); err == nil {
		groupCount = strconv.Itoa(n)
	}
	return []web.Stat{
		{Group: web.StatsCounts, Label: "Projects", Value: projectCount, Href: "/admin/projects"},
		{Group: web.StatsCounts, Label: "Groups", Value: groupCount, Href: "/admin/groups"},
	}
}

type adminFilter struct {
	Label, Href string
	Active      bool
}

type adminProjectRow struct {
	projectRow
	SettingsHref string
	Archived     bool
}

type adminProjectsData struct {
	Query, Visibility  string
	Filters            []adminFilter
	Rows               []adminProjectRow
	Total, Page, Pages int
	PrevHref, NextHref string
}

func (pg *pages) adminProjects(w http.ResponseWriter, r *http.Request) {
	f := &listFilter{}
	_, pageNo := listQuery(r, f)
	vis := r.URL.Query().Get("visibility")
	if vis != "" && !slices.Contains(visibilities, vis) {
		pg.site.ErrorMessage(w, r, http.StatusBadRequest, "Unknown visibility", "Filter by private, internal or public.")
		return
	}
	f.Visibility = vis
	rows, total, err := pg.svc.listProjects(r.Context(), f)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := adminProjectsData{Query: f.Search, Visibility: vis, Total: total, Page: pageNo, Pages: (total + pageSize - 1) / pageSize}
	link := func(v string) string {
		q := url.Values{}
		if f.Search != "" {
			q.Set("name", f.Search)
		}
		if v != "" {
			q.Set("visibility", v)
		}
		if len(q) == 0 {
			return "/admin/projects"
		}
		return "/admin/projects?" + q.Encode()
	}
	d.Filters = append(d.Filters, adminFilter{Label: "All", Href: link(""), Active: vis == ""})
	for _, v := range visibilities {
		d.Filters = append(d.Filters, adminFilter{Label: strings.ToUpper(v[:1]) + v[1:], Href: link(v), Active: vis == v})
	}
	for _, res := range rows {
		full := res.ni.path + "/" + res.p.Path
		row := adminProjectRow{projectRow: projectRow{Name: res.ni.name + " / " + res.p.Name, FullPath: full,
			Href: "/" + web.EscapePath(full), Visibility: res.p.Visibility, Stars: res.p.StarCount, LastActivity: res.p.LastActivityAt},
			SettingsHref: "/" + web.EscapePath(full) + "/-/edit", Archived: res.p.Archived}
		d.Rows = append(d.Rows, row)
	}
	extra := url.Values{}
	if vis != "" {
		extra.Set("visibility", vis)
	}
	d.PrevHref, d.NextHref = pg.pagerLinks("/admin/projects", f.Search, extra, pageNo, d.Pages)
	pg.t.Render(w, r, "admin_projects", web.Page{Title: "Projects · Admin area", Area: web.AreaAdmin, Section: "projects", Data: d})
}

type adminGroupRow struct {
	ID                               int64
	Name, FullPath, Href, Visibility string
	Description                      string
}

type adminGroupsData struct {
	Query              string
	Rows               []adminGroupRow
	Total, Page, Pages int
	PrevHref, NextHref string
	// The create form, filled in again when refused.
	Name, Path, NewVisibility string
	Problems                  []string
	Notice                    string
}

func (pg *pages) adminGroups(w http.ResponseWriter, r *http.Request) {
	d := adminGroupsData{NewVisibility: "private"}
	switch r.URL.Query().Get("done") {
	case "created":
		d.Notice = "The group was created."
	case "deleted":
		d.Notice = "The group was deleted, with its projects."
	}
	pg.renderAdminGroups(w, r, http.StatusOK, d)
}

func (pg *pages) renderAdminGroups(w http.ResponseWriter, r *http.Request, status int, d adminGroupsData) {
	ctx := r.Context()
	q := r.URL.Query()
	d.Query = boundQuery(q.Get("name"))
	pageNo := pageNumber(q.Get("page"))
	rows, total, err := pg.svc.listGroups(ctx, &groupFilter{Search: d.Query, OrderBy: "name", Sort: "asc",
		Offset: (pageNo - 1) * pageSize, Limit: pageSize})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d.Total, d.Page, d.Pages = total, pageNo, (total+pageSize-1)/pageSize
	for _, g := range rows {
		ni, err := pg.svc.namespaceInfo(ctx, g)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		d.Rows = append(d.Rows, adminGroupRow{ID: g.ID, Name: ni.name, FullPath: ni.path, Href: "/groups/" + web.EscapePath(ni.path),
			Visibility: g.Visibility, Description: g.Description})
	}
	d.PrevHref, d.NextHref = pg.pagerLinks("/admin/groups", d.Query, nil, pageNo, d.Pages)
	pg.t.Render(w, r, "admin_groups", web.Page{Title: "Groups · Admin area", Area: web.AreaAdmin, Section: "groups",
		Status: status, Data: d})
}

// adminCreateGroup creates a top-level group; the administrator becomes
// its Owner, as with POST /groups.
func (pg *pages) adminCreateGroup(w http.ResponseWriter, r *http.Request) {
	d := adminGroupsData{Name: strings.TrimSpace(r.PostFormValue("name")), Path: strings.TrimSpace(r.PostFormValue("path")),
		NewVisibility: r.PostFormValue("visibility")}
	_, err := pg.svc.CreateGroup(r.Context(), project.GroupFields{Name: &d.Name, Path: &d.Path, Visibility: &d.NewVisibility})
	var fields project.FieldErrors
	switch {
	case err == nil:
		pg.site.Redirect(w, r, "/admin/groups?done=created")
	case errors.As(err, &fields):
		for field, texts := range fields {
			for _, t := range texts {
				d.Problems = append(d.Problems, field+" "+t)
			}
		}
		slices.Sort(d.Problems)
		r.URL.RawQuery = ""
		pg.renderAdminGroups(w, r, http.StatusBadRequest, d)
	default:
		pg.adminFail(w, r, err)
	}
}

// adminDeleteGroup deletes a group, with its subgroups and projects, once
// its full path is typed again, as the confirmation.
func (pg *pages) adminDeleteGroup(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		pg.site.NotFound(w, r)
		return
	}
	rg, err := pg.svc.resolveGroup(r.Context(), strconv.FormatInt(id, 10))
	if err != nil {
		pg.adminFail(w, r, err)
		return
	}
	ni, err := pg.svc.namespaceInfo(r.Context(), rg.g)
	if err != nil {
		pg.adminFail(w, r, err)
		return
	}
	if r.PostFormValue("confirm_path") != ni.path {
		pg.site.ErrorMessage(w, r, http.StatusBadRequest, "Not deleted",
			"Type the group's full path exactly to confirm that it is to be deleted with its projects.")
		return
	}
	if err := pg.svc.DeleteGroup(r.Context(), strconv.FormatInt(id, 10)); err != nil {
		pg.adminFail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, "/admin/groups?done=deleted")
}

func (pg *pages) adminFail(w http.ResponseWriter, r *http.Request, err error) {
	pg.site.Fail(w, r, err, web.Refusals{Missing: []error{project.ErrGroupNotFound, project.ErrNotFound},
		Forbidden: []error{project.ErrForbidden}, SignIn: []error{auth.ErrUnauthorized}, Page: "admin groups"})
}

type adminSettingsData struct {
	Settings     AppSettings
	Visibilities []string
	Problems     []string
	Saved        bool
}

func (pg *pages) renderSettings(w http.ResponseWriter, r *http.Request, status int, d adminSettingsData) {
	d.Visibilities = visibilities
	pg.t.Render(w, r, "admin_settings", web.Page{Title: "Settings · Admin area", Area: web.AreaAdmin, Section: "settings",
		Status: status, Data: d})
}

// adminSettings is the instance's settings that change at run time.
func (pg *pages) adminSettings(w http.ResponseWriter, r *http.Request) {
	st, err := pg.svc.ApplicationSettings(r.Context())
	if err != nil {
		pg.adminFail(w, r, err)
		return
	}
	pg.renderSettings(w, r, http.StatusOK, adminSettingsData{Settings: st, Saved: r.URL.Query().Get("done") == "saved"})
}

func (pg *pages) adminSaveSettings(w http.ResponseWriter, r *http.Request) {
	projectVis, groupVis := r.PostFormValue("default_project_visibility"), r.PostFormValue("default_group_visibility")
	_, err := pg.svc.UpdateApplicationSettings(r.Context(), AppSettingsFields{DefaultProjectVisibility: &projectVis,
		DefaultGroupVisibility: &groupVis})
	var fields project.FieldErrors
	switch {
	case err == nil:
		pg.site.Redirect(w, r, "/admin/application_settings?done=saved")
	case errors.As(err, &fields):
		d := adminSettingsData{Settings: AppSettings{DefaultProjectVisibility: projectVis, DefaultGroupVisibility: groupVis}}
		for field, texts := range fields {
			for _, t := range texts {
				d.Problems = append(d.Problems, strings.ReplaceAll(field, "_", " ")+" "+t)
			}
		}
		slices.Sort(d.Problems)
		pg.renderSettings(w, r, http.StatusBadRequest, d)
	default:
		pg.adminFail(w, r, err)
	}
}
