package internal

// Managing members from the pages (issue 30): a project's Members
// settings (/-/project_members, with the groups the project is shared
// with) and a group's members page (/groups/<path>/-/group_members),
// whose forms are for the group's Owners. Both post to the service calls
// of the members API (POST, PUT and DELETE /:kind/:id/members) and of
// POST/DELETE /projects/:id/share.

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// maxMembersShown bounds the members a settings page lists; past it the
// page says how many more there are (the API pages through them all).
const maxMembersShown = 200

// levelOptions are the access levels a member may get, up to highest,
// selected: the current one.
func levelOptions(highest, selected int) []option {
	var out []option
	for _, l := range []int{project.Guest, project.Reporter, project.Developer, project.Master, project.Owner} {
		if l <= highest {
			out = append(out, option{Value: strconv.Itoa(l), Label: roles[l], Selected: l == selected})
		}
	}
	return out
}

// managedMember is a member as a line of a page where they may be managed.
type managedMember struct {
	ID                   int64
	Name, Username, Href string
	Role, Expires        string
	Levels               []option
	// Action is the line's form's target (prefixed): the member's
	// URL under the members page.
	Action string
}

// memberLines are the first maxMembersShown members of a project or
// group (kind), each with its forms' target under base (escaped,
// unprefixed), and how many there are.
func (pg *pages) memberLines(ctx context.Context, kind, ref, base string) ([]managedMember, int, error) {
	rows, total, err := pg.svc.listMembers(ctx, kind, ref, "", 0, maxMembersShown)
	if err != nil {
		return nil, 0, err
	}
	out := make([]managedMember, 0, len(rows))
	for _, m := range rows {
		line := managedMember{ID: m.u.ID, Name: m.u.Name, Username: m.u.Username, Href: pg.site.URL("/" + web.EscapePath(m.u.Username)),
			Role: roles[m.m.AccessLevel], Levels: levelOptions(maxLevel(kind), m.m.AccessLevel),
			Action: pg.site.URL(base + "/" + strconv.FormatInt(m.u.ID, 10))}
		if line.Role == "" {
			line.Role = strconv.Itoa(m.m.AccessLevel)
		}
		if m.m.ExpiresAt != nil {
			line.Expires = m.m.ExpiresAt.UTC().Format("2006-01-02")
		}
		out = append(out, line)
	}
	return out, total, nil
}

// memberPost runs a members form of a project or group (kind, ref: its
// id), by rest: "" adds a member, "<user id>" changes one's level and
// expiry, "<user id>/remove" removes them. handled is false for any other
// rest, nothing done.
func (pg *pages) memberPost(ctx context.Context, r *http.Request, kind project.MemberKind, ref string) (handled bool, err error) {
	rest := r.PathValue("rest")
	if rest == "" {
		username := strings.TrimPrefix(strings.TrimSpace(r.PostFormValue("username")), "@")
		if username == "" {
			return true, project.Params(project.ErrMissing, "username")
		}
		u, err := pg.svc.users.UserByUsername(ctx, username)
		if err != nil {
			// Whether the source may be managed is the service's to say
			// first: ask it with no user, so a visitor who may not add
			// members learns nothing of the user's existence.
			if _, err := pg.svc.memberSource(ctx, string(kind), ref); err != nil {
				return true, err
			}
			return true, project.ErrUserNotFound
		}
		f, err := memberForm(r)
		if err != nil {
			return true, err
		}
		f.UserID = &u.ID
		_, err = pg.svc.AddMember(ctx, kind, ref, f)
		return true, err
	}
	idText, action, _ := strings.Cut(rest, "/")
	id, perr := strconv.ParseInt(idText, 10, 64)
	if perr != nil || id <= 0 {
		return false, nil
	}
	switch action {
	case "":
		f, err := memberForm(r)
		if err != nil {
			return true, err
		}
		_, err = pg.svc.UpdateMember(ctx, kind, ref, id, f)
		return true, err
	case "remove":
		return true, pg.svc.RemoveMember(ctx, kind, ref, id)
	}
	return false, nil
}

// memberForm reads a member's level and expiry ("" none) from a form.
func memberForm(r *http.Request) (project.MemberFields, error) {
	level, err := strconv.Atoi(r.PostFormValue("access_level"))
	if err != nil {
		return project.MemberFields{}, project.Params(project.ErrInvalidValue, "access_level")
	}
	expires := strings.TrimSpace(r.PostFormValue("expires_at"))
	return project.MemberFields{AccessLevel: &level, ExpiresAt: &expires}, nil
}

// shareLine is a group the project is shared with.
type shareLine struct {
	Name, Href, Role, Expires string
	Action                    string // the unshare form's target (prefixed)
}

type projectMembersData struct {
	Action      string // the add form's target (prefixed)
	Members     []managedMember
	Total, More int
	Levels      []option
	Shares      []shareLine
	ShareAction string
	Groups      []option
	ShareLevels []option
	Problem     string
	MinExpiry   string
}

// membersPage is /-/project_members.
func (pg *pages) membersPage(w http.ResponseWriter, r *http.Request, problem string, status int) {
	res, info, ok := pg.openSettings(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	ref := strconv.FormatInt(res.p.ID, 10)
	base := settingsURL(info.PathWithNamespace, "project_members", "")
	lines, total, err := pg.memberLines(ctx, sourceProject, ref, base)
	if err != nil {
		pg.site.Fail(w, r, err, settingsRefusals)
		return
	}
	d := projectMembersData{Action: pg.site.URL(base), Members: lines, Total: total, More: max(total-len(lines), 0),
		Levels: levelOptions(project.Master, project.Developer), ShareAction: pg.site.URL(base + "/share"),
		ShareLevels: levelOptions(project.Master, project.Developer), Problem: problem,
		MinExpiry: pg.svc.now().UTC().AddDate(0, 0, 1).Format("2006-01-02")}
	names := pg.svc.sharedGroupNames(ctx, res.p)
	shared := map[int64]bool{}
	for _, sh := range res.p.SharedWith {
		shared[sh.GroupID] = true
		name := names[sh.GroupID]
		if name == "" {
			continue // a group gone meanwhile
		}
		line := shareLine{Name: name, Role: roles[sh.Access],
			Action: pg.site.URL(base + "/share/" + strconv.FormatInt(sh.GroupID, 10) + "/remove")}
		if g, err := pg.svc.resolveGroup(ctx, strconv.FormatInt(sh.GroupID, 10)); err == nil {
			if ni, err := pg.svc.namespaceInfo(ctx, g.g); err == nil {
				line.Name, line.Href = ni.name, pg.site.URL("/groups/"+web.EscapePath(ni.path))
			}
		}
		if sh.ExpiresAt != nil {
			line.Expires = sh.ExpiresAt.UTC().Format("2006-01-02")
		}
		d.Shares = append(d.Shares, line)
	}
	groups, _, err := pg.svc.listGroups(ctx, &groupFilter{AllAvailable: "false", OrderBy: "name", Sort: "asc", Limit: maxGroupChoices})
	if err != nil {
		pg.site.Fail(w, r, err, settingsRefusals)
		return
	}
	own := map[int64]bool{}
	for _, id := range res.ni.groupIDs() {
		own[id] = true
	}
	for _, g := range groups {
		if shared[g.ID] || own[g.ID] {
			continue
		}
		ni, err := pg.svc.namespaceInfo(ctx, g)
		if err != nil {
			pg.site.Fail(w, r, err, settingsRefusals)
			return
		}
		d.Groups = append(d.Groups, option{Value: strconv.FormatInt(g.ID, 10), Label: ni.path})
	}
	pg.t.Render(w, r, "settings_members", web.Page{Title: "Members · " + info.NameWithNamespace, Project: settingsHeader(info),
		Tab: "settings", Area: web.AreaProjectSettings, Section: "members", Status: status,
		Crumbs: []web.Crumb{{Label: res.p.Name, Href: "/" + web.EscapePath(info.PathWithNamespace)}, {Label: "Members"}}, Data: d})
}

// membersPost runs a form of /-/project_members: the members' (memberPost)
// and the shares': "share" shares the project with a group,
// "share/<group id>/remove" ends a share.
func (pg *pages) membersPost(w http.ResponseWriter, r *http.Request) {
	res, info, ok := pg.openSettings(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	ref := strconv.FormatInt(res.p.ID, 10)
	var err error
	rest := r.PathValue("rest")
	switch {
	case rest == "share":
		gid, perr := strconv.ParseInt(r.PostFormValue("group_id"), 10, 64)
		level, lerr := strconv.Atoi(r.PostFormValue("group_access"))
		switch {
		case perr != nil || gid <= 0:
			err = project.Params(project.ErrMissing, "group")
		case lerr != nil:
			err = project.Params(project.ErrInvalidValue, "group_access")
		default:
			expires := strings.TrimSpace(r.PostFormValue("expires_at"))
			_, err = pg.svc.ShareProject(ctx, ref, project.ShareFields{GroupID: gid, GroupAccess: level, ExpiresAt: &expires})
		}
	case strings.HasPrefix(rest, "share/"):
		idText, ok := strings.CutSuffix(strings.TrimPrefix(rest, "share/"), "/remove")
		gid, perr := strconv.ParseInt(idText, 10, 64)
		if !ok || perr != nil || gid <= 0 {
			pg.site.NotFound(w, r)
			return
		}
		err = pg.svc.UnshareProject(ctx, ref, gid)
	default:
		var handled bool
		if handled, err = pg.memberPost(ctx, r, project.ProjectMembers, ref); !handled {
			pg.site.NotFound(w, r)
			return
		}
	}
	if text, refused := problemText(err); refused {
		pg.membersPage(w, r, text, http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		pg.site.Fail(w, r, err, web.Refusals{Missing: append(settingsRefusals.Missing, project.ErrMemberNotFound, project.ErrShareNotFound),
			Forbidden: settingsRefusals.Forbidden, Page: settingsRefusals.Page})
		return
	}
	pg.site.Redirect(w, r, settingsURL(info.PathWithNamespace, "project_members", ""))
}
