package internal

// A group's settings pages (issue 30), for its Owners (and
// administrators), as the group API allows them: General
// (/groups/<path>/-/edit: name, path, description, visibility, delete
// with the path typed as confirmation) over PUT and DELETE /groups/:id,
// and the forms of the members page (httppagesgroups.go), over the group
// members API. Anyone else gets the 404 page, for the forms too.

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

func (pg *pages) registerGroupSettingsPages(s *web.Site) {
	s.AddSection(web.Section{Area: web.AreaGroupSettings, Key: "general", Label: "General", Path: "/-/edit", Order: 10, MinLevel: project.Owner})
	s.AddSection(web.Section{Area: web.AreaGroupSettings, Key: "members", Label: "Members", Path: "/-/group_members", Order: 20, MinLevel: project.Owner})
	s.Group("GET edit", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("rest") != "" {
			pg.site.NotFound(w, r)
			return
		}
		pg.groupGeneralPage(w, r, "", http.StatusOK)
	})
	s.Group("POST edit", pg.groupGeneralPost)
	s.Group("POST group_members", pg.groupMembersPost)
}

// openGroupSettings resolves the page's group for its settings: anonymous
// visitors are sent to sign in, anyone but its Owners and administrators
// gets the 404 page. ok is false once an answer is written.
func (pg *pages) openGroupSettings(w http.ResponseWriter, r *http.Request) (*resolvedGroup, groupHeader, []web.Crumb, bool) {
	pr := auth.FromContext(r.Context())
	if pr.User == nil {
		pg.site.RedirectToSignIn(w, r)
		return nil, groupHeader{}, nil, false
	}
	rg, h, crumbs, ok := pg.openGroup(w, r, "settings")
	if !ok {
		return nil, groupHeader{}, nil, false
	}
	if !rg.isOwner(pr) {
		pg.site.NotFound(w, r)
		return nil, groupHeader{}, nil, false
	}
	return rg, h, crumbs, true
}

// groupArea is what the layout needs of a group for its settings' side
// navigation: the visitor is an Owner (administrators count as one).
func groupArea(h groupHeader) *web.Group {
	return &web.Group{FullPath: h.FullPath, Name: h.FullName, Level: project.Owner}
}

type groupGeneralData struct {
	Group        groupHeader
	Action       string // the form's base (prefixed)
	Name, Path   string
	Description  string
	Visibilities []option
	Problem      string
}

// groupGeneralPage is /groups/<path>/-/edit.
func (pg *pages) groupGeneralPage(w http.ResponseWriter, r *http.Request, problem string, status int) {
	rg, h, crumbs, ok := pg.openGroupSettings(w, r)
	if !ok {
		return
	}
	d := groupGeneralData{Group: h, Action: pg.site.URL("/groups/" + web.EscapePath(h.FullPath) + "/-/edit"),
		Name: rg.g.Name, Path: rg.g.Path, Description: rg.g.Description, Problem: problem}
	for _, v := range []string{project.Private, project.Internal, project.Public} {
		d.Visibilities = append(d.Visibilities, option{Value: v, Label: v, Selected: v == rg.g.Visibility})
	}
	crumbs[len(crumbs)-1].Href = "/groups/" + web.EscapePath(h.FullPath)
	crumbs = append(crumbs, web.Crumb{Label: "General settings"})
	pg.t.Render(w, r, "group_settings", web.Page{Title: "General settings · " + h.FullName, Crumbs: crumbs, Status: status,
		Area: web.AreaGroupSettings, Section: "general", Group: groupArea(h), Data: d})
}

// groupGeneralPost saves the group's settings (rest "") or deletes the
// group (rest "delete", with its full path typed).
func (pg *pages) groupGeneralPost(w http.ResponseWriter, r *http.Request) {
	rg, h, _, ok := pg.openGroupSettings(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	ref := strconv.FormatInt(rg.g.ID, 10)
	var err error
	next := "/groups/" + web.EscapePath(h.FullPath) + "/-/edit"
	switch r.PathValue("rest") {
	case "":
		name, path := r.PostFormValue("name"), strings.TrimSpace(r.PostFormValue("path"))
		desc, vis := r.PostFormValue("description"), r.PostFormValue("visibility")
		var g project.Group
		g, err = pg.svc.UpdateGroup(ctx, ref, project.GroupFields{Name: &name, Path: &path, Description: &desc, Visibility: &vis})
		if err == nil {
			next = "/groups/" + web.EscapePath(g.FullPath) + "/-/edit"
		}
	case "delete":
		if r.PostFormValue("confirm_path") != h.FullPath {
			pg.groupGeneralPage(w, r, "The group was not deleted: type "+h.FullPath+" to confirm.", http.StatusUnprocessableEntity)
			return
		}
		if err = pg.svc.DeleteGroup(ctx, ref); err == nil {
			next = "/dashboard/groups"
		}
	default:
		pg.site.NotFound(w, r)
		return
	}
	if text, refused := problemText(err); refused {
		pg.groupGeneralPage(w, r, text, http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		pg.site.Fail(w, r, err, settingsRefusals)
		return
	}
	pg.site.Redirect(w, r, next)
}

// groupMembersPost runs a form of the group's members page (memberPost),
// for its Owners.
func (pg *pages) groupMembersPost(w http.ResponseWriter, r *http.Request) {
	rg, h, crumbs, ok := pg.openGroupSettings(w, r)
	if !ok {
		return
	}
	handled, err := pg.memberPost(r.Context(), r, project.GroupMembers, strconv.FormatInt(rg.g.ID, 10))
	if !handled {
		pg.site.NotFound(w, r)
		return
	}
	if text, refused := problemText(err); refused {
		pg.renderGroupMembers(w, r, rg, h, crumbs, text, http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		pg.site.Fail(w, r, err, web.Refusals{Missing: append(settingsRefusals.Missing, project.ErrMemberNotFound),
			Forbidden: settingsRefusals.Forbidden, Page: settingsRefusals.Page})
		return
	}
	pg.site.Redirect(w, r, "/groups/"+web.EscapePath(h.FullPath)+"/-/group_members")
}
