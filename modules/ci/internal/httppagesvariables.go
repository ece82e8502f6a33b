package internal

// The variables of the CI/CD settings pages, a project's or a group's:
// one scope (where its pages are and which service calls it makes) and
// the handlers over it. A variable's value is never written into a page:
// the list shows its key and protection, the edit form an empty value
// that, left blank, keeps the old one, and a refused form is shown again
// without the value typed.

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// variableScope is whose variables a page manages.
type variableScope struct {
	// base is the settings page, escaped, under the site's root.
	base string
	// page frames a page of the scope's settings.
	page func(title string, data any, status int, crumbs ...web.Crumb) web.Page
	// settings renders the scope's settings page with d (a refused add).
	settings func(w http.ResponseWriter, r *http.Request, d cicdData, status int)
	get      func(ctx context.Context, key string) (cicd.SecretVariable, error)
	create   func(ctx context.Context, in cicd.VariableFields) (cicd.SecretVariable, error)
	update   func(ctx context.Context, key string, in cicd.VariableFields) (cicd.SecretVariable, error)
	remove   func(ctx context.Context, key string) (cicd.SecretVariable, error)
}

// projectScope is the project's variables, for its Masters.
func (pg *settingsPages) projectScope(r *http.Request, owner string) (variableScope, error) {
	info, err := pg.s.CISettings(r.Context(), owner)
	if err != nil {
		return variableScope{}, err
	}
	return variableScope{base: pg.base(info),
		page: func(title string, data any, status int, crumbs ...web.Crumb) web.Page {
			return pg.projectPage(info, title, data, status, crumbs...)
		},
		settings: func(w http.ResponseWriter, r *http.Request, d cicdData, status int) {
			pg.projectSettings(w, r, owner, d, status)
		},
		get: func(ctx context.Context, key string) (cicd.SecretVariable, error) {
			return pg.s.ProjectVariable(ctx, owner, key)
		},
		create: func(ctx context.Context, in cicd.VariableFields) (cicd.SecretVariable, error) {
			return pg.s.CreateProjectVariable(ctx, owner, in)
		},
		update: func(ctx context.Context, key string, in cicd.VariableFields) (cicd.SecretVariable, error) {
			return pg.s.UpdateProjectVariable(ctx, owner, key, in)
		},
		remove: func(ctx context.Context, key string) (cicd.SecretVariable, error) {
			return pg.s.DeleteProjectVariable(ctx, owner, key)
		},
	}, nil
}

// groupScope is the group's variables, for its Masters and Owners.
func (pg *settingsPages) groupScope(r *http.Request, ref string) (variableScope, projects.GroupInfo, error) {
	g, err := pg.s.GroupCISettings(r.Context(), ref)
	if err != nil {
		return variableScope{}, g, err
	}
	base := "/groups/" + web.EscapePath(g.FullPath) + "/-/settings/ci_cd"
	page := func(title string, data any, status int, crumbs ...web.Crumb) web.Page {
		c := append([]web.Crumb{{Label: g.Name, Href: "/groups/" + web.EscapePath(g.FullPath)}, {Label: "CI/CD settings", Href: base}}, crumbs...)
		return web.Page{Title: title + " · " + g.Name, Area: web.AreaGroupSettings, Section: "ci_cd",
			Group: &web.Group{FullPath: g.FullPath, Name: g.Name, Level: g.Level}, Crumbs: c, Status: status, Data: data}
	}
	return variableScope{base: base, page: page,
		settings: func(w http.ResponseWriter, r *http.Request, d cicdData, status int) {
			if err := pg.listVariables(r.Context(), &d, base, func(ctx context.Context) ([]cicd.SecretVariable, int, error) {
				return pg.s.GroupVariables(ctx, ref, 0, maxSettingsVariables)
			}); err != nil {
				pg.fail(w, r, err)
				return
			}
			pg.t.Render(w, r, "group_cicd", page("CI/CD settings", d, status))
		},
		get: func(ctx context.Context, key string) (cicd.SecretVariable, error) {
			return pg.s.GroupVariable(ctx, ref, key)
		},
		create: func(ctx context.Context, in cicd.VariableFields) (cicd.SecretVariable, error) {
			return pg.s.CreateGroupVariable(ctx, ref, in)
		},
		update: func(ctx context.Context, key string, in cicd.VariableFields) (cicd.SecretVariable, error) {
			return pg.s.UpdateGroupVariable(ctx, ref, key, in)
		},
		remove: func(ctx context.Context, key string) (cicd.SecretVariable, error) {
			return pg.s.DeleteGroupVariable(ctx, ref, key)
		},
	}, g, nil
}

// listVariables fills d's variables from list, dropping their values.
func (pg *settingsPages) listVariables(ctx context.Context, d *cicdData, base string,
	list func(ctx context.Context) ([]cicd.SecretVariable, int, error)) error {
	vars, _, err := list(ctx)
	if err != nil {
		return err
	}
	for _, v := range vars {
		href := base + "/variables/" + web.EscapePath(v.Key)
		// v.Value is dropped here: no page shows a variable's value.
		d.Variables = append(d.Variables, variableRow{Key: v.Key, Protected: v.Protected,
			EditHref: pg.site.URL(href + "/edit"), DeleteHref: pg.site.URL(href + "/delete")})
	}
	d.VariableAction = pg.site.URL(base + "/variables")
	return nil
}

// variableGet serves a variable's edit form ("edit") and its removal's
// confirmation ("delete").
func (pg *settingsPages) variableGet(w http.ResponseWriter, r *http.Request, sc variableScope, key, what string) {
	if what != "edit" && what != "delete" {
		pg.site.NotFound(w, r)
		return
	}
	v, err := sc.get(r.Context(), key)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	href := sc.base + "/variables/" + web.EscapePath(v.Key)
	if what == "edit" {
		pg.t.Render(w, r, "variable", sc.page("Edit variable "+v.Key, variableEditData{Key: v.Key, Protected: v.Protected,
			Action: pg.site.URL(href), CancelHref: pg.site.URL(sc.base)}, 0, web.Crumb{Label: "Edit " + v.Key}))
		return
	}
	pg.t.Render(w, r, "confirm", sc.page("Remove variable", confirmData{Heading: "Remove variable",
		Text:   "Remove the variable " + v.Key + "? Jobs will no longer get it. This cannot be undone.",
		Action: pg.site.URL(href + "/delete"), Button: "Remove variable", CancelHref: pg.site.URL(sc.base)}, 0,
		web.Crumb{Label: "Remove " + v.Key}))
}

// variablePost adds (parts []), saves ([key]) or removes ([key,
// "delete"]) a variable.
func (pg *settingsPages) variablePost(w http.ResponseWriter, r *http.Request, sc variableScope, parts []string) {
	ctx, form := r.Context(), r.PostForm
	in := cicd.VariableFields{Protected: boolPtr(form.Get("protected") != "")}
	if v := form.Get("value"); v != "" {
		in.Value = &v // on an edit, blank keeps the value, which the form cannot show
	}
	var err error
	switch {
	case len(parts) == 0:
		if k := strings.TrimSpace(form.Get("key")); k != "" {
			in.Key = &k
		}
		_, err = sc.create(ctx, in)
		if p := variableProblem(err); p != "" {
			// The value typed is not written back: no page holds one.
			sc.settings(w, r, cicdData{Problem: "The variable was not added: " + p, NewKey: form.Get("key"),
				NewProtected: *in.Protected}, http.StatusUnprocessableEntity)
			return
		}
	case len(parts) == 1:
		_, err = sc.update(ctx, parts[0], in)
	case len(parts) == 2 && parts[1] == "delete":
		_, err = sc.remove(ctx, parts[0])
	default:
		err = errNoSuchPage
	}
	if errors.Is(err, errNoSuchPage) {
		pg.site.NotFound(w, r)
		return
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, sc.base+"#variables")
}

// errNoSuchPage: a settings form's path that no form posts to.
var errNoSuchPage = errors.New("ci settings: no such page")

// --- a group's CI/CD settings ---

func (pg *settingsPages) groupGet(w http.ResponseWriter, r *http.Request) {
	sc, _, err := pg.groupScope(r, r.PathValue("owner"))
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	parts := strings.Split(r.PathValue("rest"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "ci_cd":
		sc.settings(w, r, cicdData{}, http.StatusOK)
	case len(parts) == 4 && parts[0] == "ci_cd" && parts[1] == "variables":
		pg.variableGet(w, r, sc, parts[2], parts[3])
	default:
		pg.site.NotFound(w, r)
	}
}

func (pg *settingsPages) groupPost(w http.ResponseWriter, r *http.Request) {
	sc, _, err := pg.groupScope(r, r.PathValue("owner"))
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	parts := strings.Split(r.PathValue("rest"), "/")
	if len(parts) < 2 || parts[0] != "ci_cd" || parts[1] != "variables" {
		pg.site.NotFound(w, r)
		return
	}
	pg.variablePost(w, r, sc, parts[2:])
}
