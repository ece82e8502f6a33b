package internal

// The Repository settings of a project (issue 30): /-/settings/repository,
// its protected branches for the project's Masters and owners. The page
// lists them (Writer.Protections, as GET /protected_branches), protects a
// branch or a wildcard with push and merge levels (CreateProtection, as
// POST) and unprotects one (DeleteProtection, as DELETE). GitLab 9.x's
// API cannot change a protection's levels in place, so neither does the
// page: unprotect, then protect again. Anyone below Master gets the 404
// page, for the forms too.

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxBranchSuggestions bounds the branch names the protect form suggests.
const maxBranchSuggestions = 500

func (pg *pages) registerSettingsPages(s *web.Site) {
	t := s.Templates(pageTemplates, "templates/settings/*.html", "templates/_shared.html")
	s.AddSection(web.Section{Area: web.AreaProjectSettings, Key: "repository", Label: "Repository", Path: "/-/settings/repository",
		Order: 30, MinLevel: projects.Master})
	s.ProjectSettings("GET repository", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("rest") != "" {
			pg.site.NotFound(w, r)
			return
		}
		pg.repositorySettings(w, r, t, "", http.StatusOK)
	})
	s.ProjectSettings("POST repository", func(w http.ResponseWriter, r *http.Request) { pg.repositorySettingsPost(w, r, t) })
}

// levelChoice is an access level of the protect form.
type levelChoice struct {
	Value    int
	Label    string
	Selected bool
}

// levelChoices are a protection's levels, selected the default (Masters).
func levelChoices() []levelChoice {
	return []levelChoice{{levelMaster, levelDescription(levelMaster), true}, {levelDeveloper, levelDescription(levelDeveloper), false},
		{levelNoOne, levelDescription(levelNoOne), false}}
}

type protectionRow struct {
	Name, Push, Merge string
	Wildcard          bool
}

type repositorySettingsData struct {
	Action             string // the forms' base (prefixed)
	Protected          []protectionRow
	Branches           []string
	PushLevels, Merges []levelChoice
	Problem, Name      string
}

// repositorySettings is /-/settings/repository, with problem (a refused
// form's reason) and the form's name kept.
func (pg *pages) repositorySettings(w http.ResponseWriter, r *http.Request, t *web.Templates, problem string, status int) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	all, info, err := pg.rd.writer.Protections(ctx, r.PathValue("owner"))
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	full := info.PathWithNamespace
	d := repositorySettingsData{Action: pg.site.URL(projectURL(full, "settings", "repository", "")), Problem: problem,
		PushLevels: levelChoices(), Merges: levelChoices()}
	if problem != "" {
		d.Name = r.PostFormValue("name")
	}
	for _, p := range all {
		d.Protected = append(d.Protected, protectionRow{Name: p.Name, Push: levelDescription(p.PushLevel()),
			Merge: levelDescription(p.MergeLevel()), Wildcard: strings.Contains(p.Name, "*")})
	}
	// The branches are suggestions only (a wildcard or a branch not
	// pushed yet may be protected too): an empty repository has none.
	if repo, err := pg.rd.store.Open(ctx, info.ID); err == nil {
		if refs, err := sortedBranches(repo); err == nil {
			for i, ref := range refs {
				if i == maxBranchSuggestions {
					break
				}
				d.Branches = append(d.Branches, ref.Name().Short())
			}
		}
	}
	t.Render(w, r, "repository", web.Page{Title: "Repository settings · " + info.NameWithNamespace, Project: projectHeader(info),
		Tab: "settings", Area: web.AreaProjectSettings, Section: "repository", Status: status,
		Crumbs: []web.Crumb{{Label: info.Name, Href: projectURL(full, "", "", "")}, {Label: "Repository settings"}}, Data: d})
}

// repositorySettingsPost protects a branch (rest "protect") or
// unprotects one (rest "unprotect"; the name in the form, as branch
// names hold slashes).
func (pg *pages) repositorySettingsPost(w http.ResponseWriter, r *http.Request, t *web.Templates) {
	ctx := r.Context()
	if auth.FromContext(ctx).User == nil {
		pg.site.RedirectToSignIn(w, r)
		return
	}
	full := r.PathValue("owner")
	// Whoever may not administer the project learns nothing more from a
	// form than from the page: the 404 page before the form is read.
	info, err := pg.rd.access.Require(ctx, full, projects.AdminProject)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	name := r.PostFormValue("name")
	switch r.PathValue("rest") {
	case "protect":
		push, perr := strconv.Atoi(r.PostFormValue("push_access_level"))
		merge, merr := strconv.Atoi(r.PostFormValue("merge_access_level"))
		if perr != nil || merr != nil {
			err = notValidValue("access_level")
			break
		}
		_, err = pg.rd.writer.CreateProtection(ctx, full, name, &push, &merge)
	case "unprotect":
		err = pg.rd.writer.DeleteProtection(ctx, full, name)
	default:
		pg.site.NotFound(w, r)
		return
	}
	var invalid *notValidValueError
	switch {
	case err == nil:
		pg.site.Redirect(w, r, projectURL(info.PathWithNamespace, "settings", "repository", ""))
	case errors.Is(err, errProtectionNameBlank):
		pg.repositorySettings(w, r, t, "Please name a branch or a wildcard (release-*).", http.StatusUnprocessableEntity)
	case errors.Is(err, errProtectionExists):
		pg.repositorySettings(w, r, t, "The branch "+name+" is protected already: unprotect it first to change its levels.", http.StatusUnprocessableEntity)
	case errors.As(err, &invalid):
		pg.repositorySettings(w, r, t, "Please choose who may push and who may merge.", http.StatusUnprocessableEntity)
	case errors.Is(err, errProtectionNotFound):
		pg.site.NotFound(w, r)
	default:
		pg.fail(w, r, err)
	}
}
