package internal

// The environments' pages: a project's list ("/-/environments") with each
// one's state and last deployment, an environment's page
// ("/-/environments/3") with its deployments, and Stop, which asks first
// ("/-/environments/3/stop" is the question, its form the answer). The
// reads and the stop are cicd.Service's calls of the environments API.

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// environmentsPerPage is one page of the list; deploymentsPerPage one
// page of an environment's deployments.
const (
	environmentsPerPage = 20
	deploymentsPerPage  = 20
)

type environmentPages struct {
	*ciPages
	t *web.Templates
}

// registerEnvironmentPages adds the environments' pages to the site.
func registerEnvironmentPages(site *web.Site, pg *ciPages) {
	ep := &environmentPages{ciPages: pg, t: site.Templates(pageTemplates, "templates/environments/*.html")}
	site.Project("GET environments", ep.get)
	site.Project("POST environments", ep.post)
}

func (ep *environmentPages) get(w http.ResponseWriter, r *http.Request) {
	rest := r.PathValue("rest")
	if rest == "" {
		ep.list(w, r)
		return
	}
	num, sub, _ := strings.Cut(rest, "/")
	id, ok := parseID(num)
	if !ok || (sub != "" && sub != "stop") {
		ep.site.NotFound(w, r)
		return
	}
	ep.show(w, r, cicd.EnvironmentID(id), sub == "stop")
}

// post serves "/3/stop".
func (ep *environmentPages) post(w http.ResponseWriter, r *http.Request) {
	num, sub, _ := strings.Cut(r.PathValue("rest"), "/")
	id, ok := parseID(num)
	if !ok || sub != "stop" {
		ep.site.NotFound(w, r)
		return
	}
	if auth.FromContext(r.Context()).User == nil {
		ep.site.RedirectToSignIn(w, r)
		return
	}
	full := r.PathValue("owner")
	if _, err := ep.s.StopEnvironment(r.Context(), full, cicd.EnvironmentID(id)); err != nil {
		ep.fail(w, r, err)
		return
	}
	if info, err := ep.s.access.Resolve(r.Context(), full); err == nil {
		full = info.PathWithNamespace
	}
	ep.site.Redirect(w, r, environmentURL(full, cicd.EnvironmentID(id), "")+"?stopped=1")
}

func environmentURL(full string, id cicd.EnvironmentID, suffix string) string {
	return projectPageURL(full, "/-/environments/"+strconv.FormatInt(int64(id), 10)+suffix)
}

// environmentRow is an environment as the list and its page show it.
type environmentRow struct {
	ID          int64
	Name, Href  string
	State       string
	ExternalURL string // an http(s) URL (the service checks it)
	AutoStopAt  *time.Time
	Last        *deploymentRow
	StopHref    string // the question before a stop, for those who may
}

// deploymentRow is a deployment: its number, its job, its commit.
type deploymentRow struct {
	IID          int64
	Ref, RefHref string
	SHA          string
	CommitHref   string
	Title        string
	Job          *jobCell
	User         *userLink
	CreatedAt    time.Time
}

func (ep *environmentPages) rowOf(full string, e cicd.Environment, mayStop bool) environmentRow {
	row := environmentRow{ID: int64(e.ID), Name: e.Name, Href: ep.site.URL(environmentURL(full, e.ID, "")), State: e.State,
		AutoStopAt: e.AutoStopAt}
	if e.ExternalURL != nil && (strings.HasPrefix(*e.ExternalURL, "http://") || strings.HasPrefix(*e.ExternalURL, "https://")) {
		row.ExternalURL = *e.ExternalURL
	}
	if mayStop && e.State == "available" {
		row.StopHref = ep.site.URL(environmentURL(full, e.ID, "/stop"))
	}
	return row
}

func (ep *environmentPages) deploymentOf(ctx context.Context, full string, d cicd.Deployment, users map[int64]*userLink) deploymentRow {
	row := deploymentRow{IID: d.IID, Ref: d.Ref, RefHref: ep.site.URL(projectPageURL(full, "/-/tree/"+web.EscapePath(d.Ref))),
		SHA: d.SHA, CommitHref: ep.site.URL(projectPageURL(full, "/-/commit/"+url.PathEscape(d.SHA))), CreatedAt: d.CreatedAt}
	if d.Job != nil {
		c := ep.jobCellOfDeploy(full, *d.Job)
		row.Job, row.Title = &c, d.Job.Commit.Title
	}
	row.User = ep.userLinkOf(ctx, d.UserID, users)
	return row
}

func (ep *environmentPages) jobCellOfDeploy(full string, j cicd.Job) jobCell {
	href := ep.site.URL(jobPageURL(full, j.ID))
	return jobCell{ID: int64(j.ID), Name: j.Name, Stage: j.Stage, Href: href, Status: web.CIStatus{Status: j.Status, Href: href}}
}

// mayStop says whether the visitor may stop the project's environments,
// as StopEnvironment decides (Developer).
func (ep *environmentPages) mayStop(ctx context.Context, full string) bool {
	if auth.FromContext(ctx).User == nil {
		return false
	}
	ok, err := ep.s.access.Can(ctx, full, projects.PushCode)
	return err == nil && ok
}

type environmentsData struct {
	Rows               []environmentRow
	Available, Stopped int
	PrevHref, NextHref string
	Page, Pages        int
	PipelinesHref      string
}

// list is the project's environments, each with its last deployment.
func (ep *environmentPages) list(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := ep.s.access.Require(ctx, full, projects.ReadJobs)
	if err != nil {
		ep.fail(w, r, err)
		return
	}
	full = info.PathWithNamespace
	page := 1
	if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 0 && n < 1<<20 {
		page = n
	}
	list, total, err := ep.s.Environments(ctx, full, (page-1)*environmentsPerPage, environmentsPerPage)
	if err != nil {
		ep.fail(w, r, err)
		return
	}
	mayStop := ep.mayStop(ctx, full)
	d := environmentsData{Page: page, Pages: max(1, (total+environmentsPerPage-1)/environmentsPerPage),
		PipelinesHref: ep.site.URL(projectPageURL(full, "/-/pipelines"))}
	base := ep.site.URL(projectPageURL(full, "/-/environments"))
	if page > 1 {
		d.PrevHref = base + "?page=" + strconv.Itoa(page-1)
	}
	if page*environmentsPerPage < total {
		d.NextHref = base + "?page=" + strconv.Itoa(page+1)
	}
	users := map[int64]*userLink{}
	for _, e := range list {
		row := ep.rowOf(full, e, mayStop)
		last, _, err := ep.s.Deployments(ctx, full, cicd.DeploymentQuery{Environment: e.ID, Descending: true, Limit: 1})
		if err != nil {
			ep.fail(w, r, err)
			return
		}
		if len(last) == 1 {
			dr := ep.deploymentOf(ctx, full, last[0], users)
			row.Last = &dr
		}
		if e.State == "available" {
			d.Available++
		} else {
			d.Stopped++
		}
		d.Rows = append(d.Rows, row)
	}
	ep.t.Render(w, r, "list", web.Page{Title: "Environments · " + info.NameWithNamespace, Project: header(info), Tab: "pipelines",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectPageURL(full, "")}, {Label: "Environments"}}, Data: d})
}

type environmentData struct {
	Env                environmentRow
	Deployments        []deploymentRow
	PrevHref, NextHref string
	Confirm            bool // the question before a stop
	CSRF, StopAction   string
	Notice             string
	BackHref           string
}

// show is an environment's page with its deployments, newest first;
// confirm asks whether to stop it.
func (ep *environmentPages) show(w http.ResponseWriter, r *http.Request, id cicd.EnvironmentID, confirm bool) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := ep.s.access.Require(ctx, full, projects.ReadJobs)
	if err != nil {
		ep.fail(w, r, err)
		return
	}
	full = info.PathWithNamespace
	env, err := ep.s.Environment(ctx, full, id)
	if err != nil {
		ep.fail(w, r, err)
		return
	}
	mayStop := ep.mayStop(ctx, full)
	if confirm && (!mayStop || env.State != "available") {
		ep.site.NotFound(w, r)
		return
	}
	page := 1
	if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 0 && n < 1<<20 {
		page = n
	}
	list, total, err := ep.s.Deployments(ctx, full, cicd.DeploymentQuery{Environment: id, Descending: true,
		Offset: (page - 1) * deploymentsPerPage, Limit: deploymentsPerPage})
	if err != nil {
		ep.fail(w, r, err)
		return
	}
	d := environmentData{Env: ep.rowOf(full, env, mayStop), Confirm: confirm, BackHref: ep.site.URL(environmentURL(full, id, ""))}
	users := map[int64]*userLink{}
	for _, dep := range list {
		d.Deployments = append(d.Deployments, ep.deploymentOf(ctx, full, dep, users))
	}
	base := ep.site.URL(environmentURL(full, id, ""))
	if page > 1 {
		d.PrevHref = base + "?page=" + strconv.Itoa(page-1)
	}
	if page*deploymentsPerPage < total {
		d.NextHref = base + "?page=" + strconv.Itoa(page+1)
	}
	if confirm {
		d.CSRF, d.StopAction = ep.site.CSRFToken(w, r), ep.site.URL(environmentURL(full, id, "/stop"))
	}
	if r.URL.Query().Get("stopped") != "" {
		d.Notice = "The environment was stopped."
	}
	ep.t.Render(w, r, "show", web.Page{Title: env.Name + " · Environments · " + info.NameWithNamespace, Project: header(info), Tab: "pipelines",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectPageURL(full, "")},
			{Label: "Environments", Href: projectPageURL(full, "/-/environments")}, {Label: env.Name}}, Data: d})
}
