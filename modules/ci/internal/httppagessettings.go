package internal

// The CI/CD settings pages (issue 30): a project's "/-/settings/ci_cd"
// (its Masters: variables, runners, the registration token, the shared
// runners switch) and the admin area's "/admin/runners" (every runner,
// the instance's registration token). Every read and command is a call of
// the service with the browser's principal, as the API's. Secrets stay
// out of the pages: a variable's value is never written into any page
// (a blank value on edit keeps the old one), and a registration token is
// shown only on the page a POST "Reveal" answers, which no cache keeps
// (every page is no-store).

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxSettingsVariables bounds the variables one settings page lists.
const maxSettingsVariables = 1000

// maxSettingsRunners bounds the runners a settings page lists.
const maxSettingsRunners = 1000

type settingsPages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// registerSettingsPages adds the project's CI/CD settings and the admin
// area's runners, with their entries in both areas' navigation.
func registerSettingsPages(site *web.Site, s *Service) {
	pg := &settingsPages{site: site, s: s, t: site.Templates(pageTemplates, "templates/settings/*.html")}
	site.AddSection(web.Section{Area: web.AreaProjectSettings, Key: "ci_cd", Label: "CI/CD", Path: "/-/settings/ci_cd",
		Order: 40, Feature: "jobs_enabled", MinLevel: int(projects.Master)})
	site.AddSection(web.Section{Area: web.AreaAdmin, Key: "runners", Label: "Runners", Path: "/admin/runners", Order: 50})
	site.ProjectSettings("GET ci_cd", pg.projectGet)
	site.ProjectSettings("POST ci_cd", pg.projectPost)
	site.AddSection(web.Section{Area: web.AreaGroupSettings, Key: "ci_cd", Label: "CI/CD", Path: "/-/settings/ci_cd",
		Order: 40, MinLevel: int(projects.Master)})
	site.Group("GET settings", pg.groupGet)
	site.Group("POST settings", pg.groupPost)
	site.Admin("GET /admin/runners", func(w http.ResponseWriter, r *http.Request) { pg.adminRunners(w, r, false) })
	site.Admin("POST /admin/runners/token/reveal", func(w http.ResponseWriter, r *http.Request) { pg.adminRunners(w, r, true) })
	site.Admin("GET /admin/runners/token/reset", pg.adminResetForm)
	site.Admin("POST /admin/runners/token/reset", pg.adminReset)
	site.Admin("POST /admin/runners/{id}/{action}", pg.adminRunnerPost)
	site.Admin("GET /admin/runners/{id}/delete", pg.adminDeleteForm)
}

// settingsRefusals sort the settings pages' failed calls. A project's
// settings are not for its Developers: a refusal is the missing page, as
// for a project the visitor may not see.
var settingsRefusals = web.Refusals{Page: "ci settings page", SignIn: []error{auth.ErrUnauthorized},
	Missing: []error{projects.ErrNotFound, projects.ErrForbidden, projects.ErrGroupNotFound, cicd.ErrVariableNotFound, cicd.ErrRunnerNotFound,
		cicd.ErrAdminOnly, cicd.ErrNoRunnerAccess},
	Forbidden: []error{cicd.ErrRunnerIsShared, cicd.ErrRunnerLocked, cicd.ErrRunnerHasProjects}}

func (pg *settingsPages) fail(w http.ResponseWriter, r *http.Request, err error) {
	pg.site.Fail(w, r, err, settingsRefusals)
}

// settingsHeader is the project's header above its settings.
func settingsHeader(info projects.ProjectInfo) *web.Project {
	return &web.Project{FullPath: info.PathWithNamespace, Name: info.NameWithNamespace, Visibility: info.Visibility,
		Archived: info.Archived, Level: info.Level, Features: info.Features.Map(), Stars: info.StarCount, Forks: info.ForksCount}
}

// settingsRunnerID is a positive decimal runner id in its one spelling.
func settingsRunnerID(s string) (cicd.RunnerID, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return cicd.RunnerID(n), err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// --- view models ---

type variableRow struct {
	Key        string
	Protected  bool
	EditHref   string
	DeleteHref string
}

type runnerRow struct {
	ID          int64
	Description string
	Active      bool
	Shared      bool
	Locked      bool
	Online      bool
	Tags        string
	Version     string
	ContactedAt *time.Time
	// Actions are the forms the visitor may post for the runner.
	Actions    []runnerAction
	DeleteHref string
	CSRF       string // the token of the Actions' forms
}

type runnerAction struct{ Action, Label string }

// tokenView is a registration token: masked, or shown after a Reveal.
type tokenView struct {
	Shown        string // "" while masked
	RevealAction string
	ResetHref    string // "" when it cannot be reset here
	Configured   bool   // set in the configuration
}

type cicdData struct {
	Problem        string
	Notice         string
	Variables      []variableRow
	VariableAction string
	NewKey         string
	NewProtected   bool
	Token          tokenView
	Runners        []runnerRow
	Available      []runnerRow
	SharedOn       bool
	SharedCount    int
	SharedAction   string
}

type variableEditData struct {
	Key        string
	Protected  bool
	Problem    string
	Action     string
	CancelHref string
}

type confirmData struct {
	Heading, Text, Action, Button, CancelHref string
}

type adminRunnersData struct {
	Token   tokenView
	Runners []runnerRow
	Total   int
}

func runnerRowOf(r cicd.Runner) runnerRow {
	row := runnerRow{ID: int64(r.ID), Description: r.Description, Active: r.Active, Shared: r.IsShared, Locked: r.Locked,
		Tags: strings.Join(r.Tags, ", "), Version: r.Version, ContactedAt: r.ContactedAt}
	row.Online = r.ContactedAt != nil && time.Since(*r.ContactedAt) < onlineWithin
	return row
}

// --- the project's CI/CD settings ---

func (pg *settingsPages) base(info projects.ProjectInfo) string {
	return "/" + web.EscapePath(info.PathWithNamespace) + "/-/settings/ci_cd"
}

func (pg *settingsPages) projectPage(info projects.ProjectInfo, title string, data any, status int, crumbs ...web.Crumb) web.Page {
	c := append([]web.Crumb{{Label: info.Path, Href: "/" + web.EscapePath(info.PathWithNamespace)},
		{Label: "CI/CD settings", Href: pg.base(info)}}, crumbs...)
	return web.Page{Title: title + " · " + info.NameWithNamespace, Project: settingsHeader(info), Tab: "settings",
		Area: web.AreaProjectSettings, Section: "ci_cd", Crumbs: c, Status: status, Data: data}
}

// projectGet serves the settings page, a variable's edit form and the
// confirmations.
func (pg *settingsPages) projectGet(w http.ResponseWriter, r *http.Request) {
	owner, rest := r.PathValue("owner"), r.PathValue("rest")
	parts := strings.Split(rest, "/")
	switch {
	case rest == "":
		pg.projectSettings(w, r, owner, cicdData{}, http.StatusOK)
	case len(parts) == 3 && parts[0] == "variables":
		sc, err := pg.projectScope(r, owner)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.variableGet(w, r, sc, parts[1], parts[2])
	case rest == "runners_token/reset":
		info, err := pg.s.CISettings(r.Context(), owner)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.t.Render(w, r, "confirm", pg.projectPage(info, "Reset registration token", confirmData{Heading: "Reset the runners registration token",
			Text:   "Make a new registration token for this project? Runners can no longer register with the current one; runners registered already keep working.",
			Action: pg.site.URL(pg.base(info) + "/runners_token/reset"), Button: "Reset registration token",
			CancelHref: pg.site.URL(pg.base(info))}, 0, web.Crumb{Label: "Reset registration token"}))
	default:
		pg.site.NotFound(w, r)
	}
}

// projectSettings renders the settings page over d (a problem, a notice,
// a revealed token, the new variable's form kept).
func (pg *settingsPages) projectSettings(w http.ResponseWriter, r *http.Request, owner string, d cicdData, status int) {
	ctx := r.Context()
	info, err := pg.s.CISettings(ctx, owner)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	base := pg.base(info)
	if err := pg.listVariables(ctx, &d, base, func(ctx context.Context) ([]cicd.SecretVariable, int, error) {
		return pg.s.ProjectVariables(ctx, owner, 0, maxSettingsVariables)
	}); err != nil {
		pg.fail(w, r, err)
		return
	}
	runners, _, err := pg.s.ProjectRunners(ctx, owner, "", 0, maxSettingsRunners)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	for _, rn := range runners {
		if rn.IsShared {
			d.SharedCount++
			continue
		}
		row := runnerRowOf(rn)
		row.CSRF = pg.site.CSRFToken(w, r)
		rb := base + "/runners/" + strconv.FormatInt(row.ID, 10)
		if rn.Active {
			row.Actions = append(row.Actions, runnerAction{Action: pg.site.URL(rb + "/pause"), Label: "Pause"})
		} else {
			row.Actions = append(row.Actions, runnerAction{Action: pg.site.URL(rb + "/resume"), Label: "Resume"})
		}
		row.Actions = append(row.Actions, runnerAction{Action: pg.site.URL(rb + "/disable"), Label: "Disable for this project"})
		d.Runners = append(d.Runners, row)
	}
	avail, err := pg.s.AvailableRunners(ctx, owner)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	for _, rn := range avail {
		row := runnerRowOf(rn)
		row.CSRF = pg.site.CSRFToken(w, r)
		row.Actions = []runnerAction{{Action: pg.site.URL(base + "/runners/" + strconv.FormatInt(row.ID, 10) + "/enable"), Label: "Enable for this project"}}
		d.Available = append(d.Available, row)
	}
	d.SharedOn = info.Features.SharedRunnersEnabled
	d.SharedAction = pg.site.URL(base + "/shared_runners")
	d.Token.RevealAction = pg.site.URL(base + "/runners_token/reveal")
	d.Token.ResetHref = pg.site.URL(base + "/runners_token/reset")
	pg.t.Render(w, r, "cicd", pg.projectPage(info, "CI/CD settings", d, status))
}

// variableProblem is the text of a refused variable, "" for another error.
func variableProblem(err error) string {
	var missing *cicd.MissingError
	switch {
	case errors.Is(err, cicd.ErrInvalidVariableKey):
		return "The key can contain only letters, digits and '_' (at most 255)."
	case errors.Is(err, cicd.ErrVariableKeyTaken):
		return "The project has a variable of that key already."
	case errors.As(err, &missing):
		return "Give " + strings.Join(missing.Fields, " and ") + "."
	}
	return ""
}

// projectPost runs the page's forms.
func (pg *settingsPages) projectPost(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	owner, rest := r.PathValue("owner"), r.PathValue("rest")
	base := "/" + web.EscapePath(owner) + "/-/settings/ci_cd"
	parts := strings.Split(rest, "/")
	form := r.PostForm
	switch {
	case parts[0] == "variables":
		sc, err := pg.projectScope(r, owner)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.variablePost(w, r, sc, parts[1:])
	case rest == "runners_token/reveal":
		token, err := pg.s.ProjectRunnersToken(ctx, owner)
		if err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.projectSettings(w, r, owner, cicdData{Token: tokenView{Shown: token}}, http.StatusOK)
	case rest == "runners_token/reset":
		if _, err := pg.s.ResetProjectRunnersToken(ctx, owner); err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.site.Redirect(w, r, base+"#runners")
	case rest == "shared_runners":
		if err := pg.s.SetSharedRunners(ctx, owner, form.Get("enabled") == "1"); err != nil {
			pg.fail(w, r, err)
			return
		}
		pg.site.Redirect(w, r, base+"#runners")
	case len(parts) == 3 && parts[0] == "runners":
		id, ok := settingsRunnerID(parts[1])
		if !ok {
			pg.site.NotFound(w, r)
			return
		}
		if err := pg.projectRunnerAction(r, owner, id, parts[2]); err != nil {
			pg.runnerFail(w, r, owner, err)
			return
		}
		pg.site.Redirect(w, r, base+"#runners")
	default:
		pg.site.NotFound(w, r)
	}
}

// errNoSuchAction: a runner form's action the page does not offer.
var errNoSuchAction = errors.New("ci settings: no such runner action")

// projectRunnerAction enables, disables, pauses or resumes a runner on
// the project's page; pausing and resuming are for the runners enabled on
// this project (a runner of the visitor's other projects is changed from
// those).
func (pg *settingsPages) projectRunnerAction(r *http.Request, owner string, id cicd.RunnerID, action string) error {
	ctx := r.Context()
	switch action {
	case "enable":
		_, err := pg.s.EnableProjectRunner(ctx, owner, &id)
		return err
	case "disable":
		return pg.s.DisableProjectRunner(ctx, owner, id)
	case "pause", "resume":
		list, _, err := pg.s.ProjectRunners(ctx, owner, "specific", 0, maxSettingsRunners)
		if err != nil {
			return err
		}
		found := false
		for _, rn := range list {
			found = found || rn.ID == id
		}
		if !found {
			return cicd.ErrRunnerNotFound
		}
		_, err = pg.s.UpdateRunner(ctx, id, cicd.RunnerFields{Active: boolPtr(action == "resume")})
		return err
	}
	return errNoSuchAction
}

// runnerFail shows a refused runner action on the settings page with its
// reason, and anything else as the other pages do.
func (pg *settingsPages) runnerFail(w http.ResponseWriter, r *http.Request, owner string, err error) {
	problem := ""
	switch {
	case errors.Is(err, errNoSuchAction):
		pg.site.NotFound(w, r)
		return
	case errors.Is(err, cicd.ErrRunnerLastProject):
		problem = "This is the runner's only project: remove the runner instead of disabling it."
	case errors.Is(err, cicd.ErrRunnerAlreadyEnabled):
		problem = "The runner is enabled for this project already."
	case errors.Is(err, cicd.ErrRunnerLocked):
		problem = "The runner is locked to its projects."
	}
	if problem == "" {
		pg.fail(w, r, err)
		return
	}
	pg.projectSettings(w, r, owner, cicdData{Problem: problem}, http.StatusUnprocessableEntity)
}

func boolPtr(b bool) *bool { return &b }

// --- the admin area's runners ---

func (pg *settingsPages) adminPage(title string, data any, status int, crumbs ...web.Crumb) web.Page {
	c := append([]web.Crumb{{Label: "Admin area", Href: "/admin"}, {Label: "Runners", Href: "/admin/runners"}}, crumbs...)
	return web.Page{Title: title, Area: web.AreaAdmin, Section: "runners", Crumbs: c, Status: status, Data: data}
}

// adminRunners lists every runner with the instance's registration token,
// masked unless reveal (the answer to the Reveal form's POST).
func (pg *settingsPages) adminRunners(w http.ResponseWriter, r *http.Request, reveal bool) {
	ctx := r.Context()
	list, total, err := pg.s.Runners(ctx, cicd.RunnerQuery{All: true, Limit: maxSettingsRunners})
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	d := adminRunnersData{Total: total, Token: tokenView{RevealAction: pg.site.URL("/admin/runners/token/reveal"),
		ResetHref: pg.site.URL("/admin/runners/token/reset"), Configured: pg.s.cfg.RunnersRegistrationToken != ""}}
	if d.Token.Configured {
		d.Token.ResetHref = ""
	}
	if reveal {
		if d.Token.Shown, err = pg.s.RegistrationToken(ctx); err != nil {
			pg.fail(w, r, err)
			return
		}
	}
	for _, rn := range list {
		row := runnerRowOf(rn)
		row.CSRF = pg.site.CSRFToken(w, r)
		rb := "/admin/runners/" + strconv.FormatInt(row.ID, 10)
		if rn.Active {
			row.Actions = append(row.Actions, runnerAction{Action: pg.site.URL(rb + "/pause"), Label: "Pause"})
		} else {
			row.Actions = append(row.Actions, runnerAction{Action: pg.site.URL(rb + "/resume"), Label: "Resume"})
		}
		row.DeleteHref = pg.site.URL(rb + "/delete")
		d.Runners = append(d.Runners, row)
	}
	pg.t.Render(w, r, "admin_runners", pg.adminPage("Runners", d, 0))
}

func (pg *settingsPages) adminResetForm(w http.ResponseWriter, r *http.Request) {
	pg.t.Render(w, r, "confirm", pg.adminPage("Reset registration token", confirmData{Heading: "Reset the shared runners registration token",
		Text:   "Make a new registration token for shared runners? Runners can no longer register with the current one; runners registered already keep working.",
		Action: pg.site.URL("/admin/runners/token/reset"), Button: "Reset registration token", CancelHref: pg.site.URL("/admin/runners")}, 0,
		web.Crumb{Label: "Reset registration token"}))
}

func (pg *settingsPages) adminReset(w http.ResponseWriter, r *http.Request) {
	_, err := pg.s.ResetRegistrationToken(r.Context())
	if errors.Is(err, cicd.ErrRegistrationTokenConfigured) {
		pg.site.ErrorMessage(w, r, http.StatusConflict, "Set in the configuration",
			"The registration token is set in the configuration (ci.runners_registration_token): change it there.")
		return
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, "/admin/runners")
}

func (pg *settingsPages) adminRunnerPost(w http.ResponseWriter, r *http.Request) {
	id, ok := settingsRunnerID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	var err error
	switch r.PathValue("action") {
	case "pause", "resume":
		_, err = pg.s.UpdateRunner(r.Context(), id, cicd.RunnerFields{Active: boolPtr(r.PathValue("action") == "resume")})
	case "delete":
		err = pg.s.DeleteRunner(r.Context(), id)
	default:
		pg.site.NotFound(w, r)
		return
	}
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	pg.site.Redirect(w, r, "/admin/runners")
}

func (pg *settingsPages) adminDeleteForm(w http.ResponseWriter, r *http.Request) {
	id, ok := settingsRunnerID(r.PathValue("id"))
	if !ok {
		pg.site.NotFound(w, r)
		return
	}
	rn, err := pg.s.Runner(r.Context(), id)
	if err != nil {
		pg.fail(w, r, err)
		return
	}
	name := "#" + strconv.FormatInt(int64(rn.ID), 10)
	if rn.Description != "" {
		name += " (" + rn.Description + ")"
	}
	pg.t.Render(w, r, "confirm", pg.adminPage("Remove runner", confirmData{Heading: "Remove runner",
		Text:   "Remove the runner " + name + "? It takes no more jobs and must register again. This cannot be undone.",
		Action: pg.site.URL("/admin/runners/" + strconv.FormatInt(int64(rn.ID), 10) + "/delete"), Button: "Remove runner",
		CancelHref: pg.site.URL("/admin/runners")}, 0, web.Crumb{Label: "Remove runner " + name}))
}
