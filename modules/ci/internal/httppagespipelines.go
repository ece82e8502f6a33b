package internal

// The pipelines' pages: a project's list ("/-/pipelines"), the run
// pipeline form ("/-/pipelines/new") and a pipeline's page
// ("/-/pipelines/12", its tabs "/jobs" and "/test_report") with its
// Retry and Cancel forms. Every read and command is the cicd.Service
// call of the pipelines API.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/cistatus"
	"github.com/fennec-forge/fennec/modules/projects"
)

// pipelinesPerPage is one page of a project's list, as GitLab's.
const pipelinesPerPage = 20

// maxPipelineJobs bounds the jobs one pipeline's page (and a list row's
// stages) reads; a pipeline with more shows the first of them.
const maxPipelineJobs = 1000

// maxRunVariables bounds the variables rows of the run pipeline form.
const maxRunVariables = 50

// registerPipelinePages adds the pipelines' pages to the site.
func registerPipelinePages(site *web.Site, pg *ciPages) {
	pp := &pipelinePages{ciPages: pg, t: site.Templates(pageTemplates, "templates/pipelines/*.html")}
	site.Project("GET pipelines", pp.get)
	site.Project("POST pipelines", pp.post)
}

type pipelinePages struct {
	*ciPages
	t *web.Templates
}

// get serves the list, the form and a pipeline's tabs.
func (pp *pipelinePages) get(w http.ResponseWriter, r *http.Request) {
	rest := r.PathValue("rest")
	switch rest {
	case "":
		pp.list(w, r)
		return
	case "new":
		pp.newForm(w, r, runForm{}, "", 0)
		return
	}
	num, tab, _ := strings.Cut(rest, "/")
	id, ok := parseID(num)
	if !ok || (tab != "" && tab != "jobs" && tab != "test_report") {
		pp.site.NotFound(w, r)
		return
	}
	pp.show(w, r, cicd.PipelineID(id), tab)
}

// post serves the run pipeline form ("/-/pipelines") and a pipeline's
// "/12/retry" and "/12/cancel".
func (pp *pipelinePages) post(w http.ResponseWriter, r *http.Request) {
	if auth.FromContext(r.Context()).User == nil {
		pp.site.RedirectToSignIn(w, r)
		return
	}
	rest := r.PathValue("rest")
	if rest == "" {
		pp.create(w, r)
		return
	}
	num, action, _ := strings.Cut(rest, "/")
	id, ok := parseID(num)
	if !ok {
		pp.site.NotFound(w, r)
		return
	}
	switch action {
	case "retry":
		pp.control(w, r, cicd.PipelineID(id), pp.s.RetryPipeline)
	case "cancel":
		pp.control(w, r, cicd.PipelineID(id), pp.s.CancelPipeline)
	default:
		pp.site.NotFound(w, r)
	}
}

// pipelineRow is a pipeline as the list and the pipeline's header show
// it.
type pipelineRow struct {
	ID                int64
	Href              string
	Status            web.CIStatus
	Ref, RefHref      string
	Tag               bool
	SHA, CommitHref   string
	Title             string
	Source            string
	User              *userLink
	Duration          string
	CreatedAt         time.Time
	Stages            []web.CIStatus
	YAMLErrors        string
	MergeRequestLabel string
	MergeRequestHref  string
	// MergeRequests are the open merge requests from a branch pipeline's
	// branch (the pipeline page only), asked of the merge requests
	// module through the site.
	MergeRequests []web.MergeRequestLink
}

// rowOf is a pipeline's row; users remembers the users read for one page.
func (pp *pipelinePages) rowOf(ctx context.Context, full string, p cicd.Pipeline, users map[int64]*userLink) pipelineRow {
	href := pp.site.URL(pipelinePageURL(full, p.ID))
	row := pipelineRow{ID: int64(p.ID), Href: href, Status: web.CIStatus{Status: p.Status, Href: href},
		Ref: p.Ref, RefHref: pp.site.URL(projectPageURL(full, "/-/tree/"+web.EscapePath(p.Ref))), Tag: p.Tag,
		SHA: p.SHA, CommitHref: pp.site.URL(projectPageURL(full, "/-/commit/"+url.PathEscape(p.SHA))),
		Title: p.Commit.Title, Source: p.Source, CreatedAt: p.CreatedAt, Duration: pipelineDuration(p.Duration)}
	if p.YAMLErrors != nil {
		row.YAMLErrors = *p.YAMLErrors
	}
	if p.MergeRequestIID != 0 && p.MergeRequestProject != "" {
		row.MergeRequestLabel = "!" + strconv.FormatInt(p.MergeRequestIID, 10)
		if p.MergeRequestProject != full {
			row.MergeRequestLabel = p.MergeRequestProject + row.MergeRequestLabel
		}
		row.MergeRequestHref = pp.site.URL(projectPageURL(p.MergeRequestProject, "/-/merge_requests/"+strconv.FormatInt(p.MergeRequestIID, 10)))
	}
	row.User = pp.userLinkOf(ctx, p.UserID, users)
	return row
}

// pipelineDuration is seconds as GitLab shows a pipeline's: "00:01:05".
func pipelineDuration(secs *int64) string {
	if secs == nil {
		return ""
	}
	d := *secs
	return fmt.Sprintf("%02d:%02d:%02d", d/3600, d%3600/60, d%60)
}

// stageColumn is a stage of a pipeline: its status and its jobs.
type stageColumn struct {
	Name   string
	Anchor string // the column's id: "stage-0"...
	Status web.CIStatus
	Jobs   []jobCell
}

// jobCell is a job in its stage's column, or a row of the Jobs tab.
type jobCell struct {
	ID           int64
	Name, Stage  string
	Href         string
	Status       web.CIStatus
	Icon         web.CIStatus // Status without its word (read by screen readers only), for the graph
	AllowFailure bool
	Duration     string
	Coverage     string
	Retried      bool
}

// stagesOf groups the jobs' latest tries by stage, in the pipeline's
// order of stages, each with its composite status (as the pipeline's is
// computed).
func (pp *pipelinePages) stagesOf(full string, p cicd.Pipeline, jobs []cicd.Job) []stageColumn {
	byStage := map[string][]cicd.Job{}
	order := append([]string(nil), p.Stages...)
	for _, j := range jobs {
		if j.Retried {
			continue
		}
		if _, ok := byStage[j.Stage]; !ok && !slices.Contains(order, j.Stage) {
			order = append(order, j.Stage)
		}
		byStage[j.Stage] = append(byStage[j.Stage], j)
	}
	var out []stageColumn
	href := pp.site.URL(pipelinePageURL(full, p.ID))
	for _, name := range order {
		list := byStage[name]
		if len(list) == 0 {
			continue
		}
		states := make([]cistatus.JobState, 0, len(list))
		col := stageColumn{Name: name, Anchor: "stage-" + strconv.Itoa(len(out))}
		// Jobs are listed newest first; a column reads oldest first.
		for i := len(list) - 1; i >= 0; i-- {
			j := list[i]
			states = append(states, cistatus.JobState{Status: cistatus.Status(j.Status), AllowFailure: j.AllowFailure})
			col.Jobs = append(col.Jobs, pp.jobCellOf(full, j))
		}
		col.Status = web.CIStatus{Status: string(cistatus.Composite(states)), Href: href + "#" + col.Anchor,
			IconOnly: true, Title: "Stage " + name}
		out = append(out, col)
	}
	return out
}

func (pp *pipelinePages) jobCellOf(full string, j cicd.Job) jobCell {
	href := pp.site.URL(jobPageURL(full, j.ID))
	c := jobCell{ID: int64(j.ID), Name: j.Name, Stage: j.Stage, Href: href, Status: web.CIStatus{Status: j.Status},
		Icon: web.CIStatus{Status: j.Status, IconOnly: true}, AllowFailure: j.AllowFailure, Retried: j.Retried}
	if j.StartedAt != nil && j.FinishedAt != nil {
		secs := int64(j.FinishedAt.Sub(*j.StartedAt) / time.Second)
		c.Duration = pipelineDuration(&secs)
	}
	if j.Coverage != nil {
		c.Coverage = strconv.FormatFloat(*j.Coverage, 'f', 2, 64) + "%"
	}
	return c
}

// pipelineJobs are a pipeline's jobs, newest first, at most
// maxPipelineJobs.
func (pp *pipelinePages) pipelineJobs(ctx context.Context, full string, id cicd.PipelineID) ([]cicd.Job, error) {
	list, _, err := pp.s.Jobs(ctx, full, cicd.JobQuery{Pipeline: id, Limit: maxPipelineJobs})
	return list, err
}

// scopeTab is a tab of the list (All, Running...) or of a pipeline.
type scopeTab struct {
	Label, Href string
	Current     bool
}

type listData struct {
	Tabs             []scopeTab
	Rows             []pipelineRow
	Action           string
	Scope, Status    string
	Ref              string
	Statuses         []string
	RunHref          string
	PrevHref         string
	NextHref         string
	Page, Pages      int
	Empty            string
	EnvironmentsHref string
}

// pipelineScopes are the list's tabs, as GitLab's: the key of ?scope=.
var pipelineScopes = []struct{ key, label string }{{"", "All"}, {"running", "Running"}, {"pending", "Pending"},
	{"finished", "Finished"}, {"branches", "Branches"}, {"tags", "Tags"}}

// pipelineStatuses are the statuses ?status= may filter by (the API's).
var pipelineStatuses = []string{"created", "pending", "running", "success", "failed", "canceled", "skipped", "manual"}

// list is the project's pipelines, newest first, filtered as the API's
// ?scope=, ?status= and ?ref= filter them.
func (pp *pipelinePages) list(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := pp.s.access.Require(ctx, full, projects.ReadJobs)
	if err != nil {
		pp.fail(w, r, err)
		return
	}
	full = info.PathWithNamespace
	q := r.URL.Query()
	scope, status, ref := q.Get("scope"), q.Get("status"), q.Get("ref")
	if !validScope(scope) || (status != "" && !slices.Contains(pipelineStatuses, status)) || len(ref) > 1024 {
		pp.site.ErrorMessage(w, r, http.StatusBadRequest, "Invalid filter", "The pipelines cannot be filtered so.")
		return
	}
	page := 1
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 && n < 1<<20 {
		page = n
	}
	list, total, err := pp.s.Pipelines(ctx, full, cicd.PipelineQuery{Scope: scope, Status: status, Ref: ref,
		Offset: (page - 1) * pipelinesPerPage, Limit: pipelinesPerPage})
	if err != nil {
		pp.fail(w, r, err)
		return
	}
	base := projectPageURL(full, "/-/pipelines")
	d := listData{Action: pp.site.URL(base), Scope: scope, Status: status, Ref: ref, Statuses: pipelineStatuses, Page: page,
		Pages: max(1, (total+pipelinesPerPage-1)/pipelinesPerPage), EnvironmentsHref: pp.site.URL(projectPageURL(full, "/-/environments"))}
	filter := func(scope string, page int) string {
		v := url.Values{}
		if scope != "" {
			v.Set("scope", scope)
		}
		if status != "" {
			v.Set("status", status)
		}
		if ref != "" {
			v.Set("ref", ref)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return pp.site.URL(base)
		}
		return pp.site.URL(base) + "?" + v.Encode()
	}
	for _, sc := range pipelineScopes {
		d.Tabs = append(d.Tabs, scopeTab{Label: sc.label, Href: filter(sc.key, 1), Current: sc.key == scope})
	}
	if page > 1 {
		d.PrevHref = filter(scope, page-1)
	}
	if page*pipelinesPerPage < total {
		d.NextHref = filter(scope, page+1)
	}
	if pp.mayRun(ctx, info) {
		d.RunHref = pp.site.URL(projectPageURL(full, "/-/pipelines/new"))
	}
	users := map[int64]*userLink{}
	for _, p := range list {
		row := pp.rowOf(ctx, full, p, users)
		jobs, err := pp.pipelineJobs(ctx, full, p.ID)
		if err != nil {
			pp.fail(w, r, err)
			return
		}
		for _, st := range pp.stagesOf(full, p, jobs) {
			row.Stages = append(row.Stages, st.Status)
		}
		d.Rows = append(d.Rows, row)
	}
	if len(d.Rows) == 0 {
		d.Empty = "No pipelines to show."
		if scope == "" && status == "" && ref == "" && page == 1 {
			d.Empty = "This project has no pipelines yet. Push a .gitlab-ci.yml to run one."
		}
	}
	pp.t.Render(w, r, "list", web.Page{Title: "Pipelines · " + info.NameWithNamespace, Project: header(info), Tab: "pipelines",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectPageURL(full, "")}, {Label: "Pipelines"}}, Data: d})
}

func validScope(s string) bool {
	for _, sc := range pipelineScopes {
		if sc.key == s {
			return true
		}
	}
	return false
}

// mayRun says whether the visitor may run pipelines in the project, as
// CreatePipeline decides before it looks at the ref (Developer, builds
// on).
func (pp *pipelinePages) mayRun(ctx context.Context, info projects.ProjectInfo) bool {
	if auth.FromContext(ctx).User == nil || !info.Features.JobsEnabled {
		return false
	}
	ok, err := pp.s.access.Can(ctx, info.PathWithNamespace, projects.PushCode)
	return err == nil && ok
}

// pipelineData is a pipeline's page.
type pipelineData struct {
	Row          pipelineRow
	Tabs         []scopeTab
	Tab          string
	Stages       []stageColumn
	Jobs         []jobCell
	Tests        *testSummary
	TestsMissing bool
	CSRF         string
	RetryAction  string
	CancelAction string
	Notice       string
}

// testSummary is the Tests tab: the totals of the pipeline's JUnit
// reports and each suite's.
type testSummary struct {
	Total, Success, Failed, Skipped, Errors int
	Time                                    string
	Suites                                  []testSuiteRow
}

type testSuiteRow struct {
	Name                                    string
	Total, Success, Failed, Skipped, Errors int
	Time                                    string
}

// show is a pipeline's page: tab "" (the stages and their jobs), "jobs"
// (a flat table) or "test_report" (the JUnit summary).
func (pp *pipelinePages) show(w http.ResponseWriter, r *http.Request, id cicd.PipelineID, tab string) {
	ctx, full := r.Context(), r.PathValue("owner")
	info, err := pp.s.access.Require(ctx, full, projects.ReadJobs)
	if err != nil {
		pp.fail(w, r, err)
		return
	}
	full = info.PathWithNamespace
	p, err := pp.s.Pipeline(ctx, full, id)
	if err != nil {
		pp.fail(w, r, err)
		return
	}
	jobs, err := pp.pipelineJobs(ctx, full, id)
	if err != nil {
		pp.fail(w, r, err)
		return
	}
	d := pipelineData{Row: pp.rowOf(ctx, full, p, map[int64]*userLink{}), Tab: tab}
	if d.Row.MergeRequestHref == "" && !p.Tag {
		d.Row.MergeRequests = pp.site.BranchMergeRequests(ctx, info.ID, p.Ref)
	}
	d.Stages = pp.stagesOf(full, p, jobs)
	base := pipelinePageURL(full, id)
	for _, t := range []struct{ key, label string }{{"", "Pipeline"}, {"jobs", "Jobs"}, {"test_report", "Tests"}} {
		href := base
		if t.key != "" {
			href += "/" + t.key
		}
		d.Tabs = append(d.Tabs, scopeTab{Label: t.label, Href: pp.site.URL(href), Current: t.key == tab})
	}
	switch tab {
	case "jobs":
		for _, j := range jobs {
			d.Jobs = append(d.Jobs, pp.jobCellOf(full, j))
		}
	case "test_report":
		rep, err := pp.s.TestReport(ctx, full, id)
		if err != nil {
			pp.fail(w, r, err)
			return
		}
		if rep.TotalCount == 0 && len(rep.TestSuites) == 0 {
			d.TestsMissing = true
		} else {
			d.Tests = &testSummary{Total: rep.TotalCount, Success: rep.SuccessCount, Failed: rep.FailedCount, Skipped: rep.SkippedCount,
				Errors: rep.ErrorCount, Time: testSeconds(rep.TotalTime)}
			for _, su := range rep.TestSuites {
				d.Tests.Suites = append(d.Tests.Suites, testSuiteRow{Name: su.Name, Total: su.TotalCount, Success: su.SuccessCount,
					Failed: su.FailedCount, Skipped: su.SkippedCount, Errors: su.ErrorCount, Time: testSeconds(su.TotalTime)})
			}
		}
	}
	if pp.mayControl(ctx, info, p) {
		retryable, cancelable := false, false
		for _, j := range jobs {
			st := cistatus.Status(j.Status)
			retryable = retryable || (!j.Retried && (st == cistatus.StatusFailed || st == cistatus.StatusCanceled))
			cancelable = cancelable || st.Cancelable()
		}
		d.CSRF = pp.site.CSRFToken(w, r)
		if retryable {
			d.RetryAction = pp.site.URL(base + "/retry")
		}
		if cancelable {
			d.CancelAction = pp.site.URL(base + "/cancel")
		}
	}
	switch r.URL.Query().Get("done") {
	case "retry":
		d.Notice = "The pipeline's failed and canceled jobs run again."
	case "cancel":
		d.Notice = "The pipeline's unfinished jobs were canceled."
	}
	title := "Pipeline #" + strconv.FormatInt(int64(id), 10)
	pp.t.Render(w, r, "show", web.Page{Title: title + " · " + info.NameWithNamespace, Project: header(info), Tab: "pipelines",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectPageURL(full, "")},
			{Label: "Pipelines", Href: projectPageURL(full, "/-/pipelines")}, {Label: "#" + strconv.FormatInt(int64(id), 10)}},
		Data: d})
}

func testSeconds(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) + " s" }

// mayControl says whether the visitor may retry and cancel the
// pipeline, as RetryPipeline and CancelPipeline decide: Developer, and
// the right to push or merge to its branch when it is protected.
func (pp *pipelinePages) mayControl(ctx context.Context, info projects.ProjectInfo, p cicd.Pipeline) bool {
	if auth.FromContext(ctx).User == nil {
		return false
	}
	ok, err := pp.s.access.Can(ctx, info.PathWithNamespace, projects.PushCode)
	if err != nil || !ok {
		return false
	}
	return pp.s.mayControlRef(ctx, info.ID, p.Ref, p.Tag) == nil
}

// control retries or cancels the pipeline and returns to its page.
func (pp *pipelinePages) control(w http.ResponseWriter, r *http.Request, id cicd.PipelineID,
	op func(context.Context, string, cicd.PipelineID) (cicd.Pipeline, error)) {
	full := r.PathValue("owner")
	p, err := op(r.Context(), full, id)
	if err != nil {
		pp.fail(w, r, err)
		return
	}
	action := "retry"
	if strings.HasSuffix(r.PathValue("rest"), "/cancel") {
		action = "cancel"
	}
	info, err := pp.s.access.Resolve(r.Context(), full)
	if err == nil {
		full = info.PathWithNamespace
	}
	pp.site.Redirect(w, r, pipelinePageURL(full, p.ID)+"?done="+action)
}

// runForm is what the run pipeline form holds.
type runForm struct {
	Ref       string
	Variables []cicd.Variable
}

type newData struct {
	Action    string
	CSRF      string
	Form      runForm
	Rows      []cicd.Variable // the variables' rows: the form's and empty ones
	Branches  []string
	Tags      []string
	Error     string
	CancelURL string
}

// newForm is the run pipeline form, for those who may run one.
func (pp *pipelinePages) newForm(w http.ResponseWriter, r *http.Request, f runForm, problem string, status int) {
	ctx, full := r.Context(), r.PathValue("owner")
	if auth.FromContext(ctx).User == nil {
		pp.site.RedirectToSignIn(w, r)
		return
	}
	info, err := pp.s.access.Require(ctx, full, projects.ReadJobs)
	if err != nil {
		pp.fail(w, r, err)
		return
	}
	if !pp.mayRun(ctx, info) {
		pp.site.NotFound(w, r)
		return
	}
	full = info.PathWithNamespace
	d := newData{Action: pp.site.URL(projectPageURL(full, "/-/pipelines")), CSRF: pp.site.CSRFToken(w, r), Form: f, Error: problem,
		CancelURL: pp.site.URL(projectPageURL(full, "/-/pipelines"))}
	// The visitor reads the code (a Developer): the refs are theirs to see.
	if branches, err := pp.s.git.Branches(readAsCI(ctx), info.ID, 500); err == nil {
		for _, b := range branches {
			d.Branches = append(d.Branches, b.Name)
		}
	}
	if tags, err := pp.s.git.Tags(readAsCI(ctx), info.ID); err == nil {
		for i, t := range tags {
			if i == 500 {
				break
			}
			d.Tags = append(d.Tags, t.Name)
		}
	}
	if d.Form.Ref == "" {
		d.Form.Ref = info.DefaultBranch
	}
	d.Rows = append(append(d.Rows, f.Variables...), cicd.Variable{}, cicd.Variable{}, cicd.Variable{})
	pp.t.Render(w, r, "new", web.Page{Title: "Run pipeline · " + info.NameWithNamespace, Project: header(info), Tab: "pipelines",
		Crumbs: []web.Crumb{{Label: info.Path, Href: projectPageURL(full, "")},
			{Label: "Pipelines", Href: projectPageURL(full, "/-/pipelines")}, {Label: "Run pipeline"}},
		Status: status, Data: d})
}

// create runs a pipeline as POST /projects/:id/pipeline does, with the
// form's variables; a refusal shows the form again with the reason.
func (pp *pipelinePages) create(w http.ResponseWriter, r *http.Request) {
	ctx, full := r.Context(), r.PathValue("owner")
	f := runForm{Ref: strings.TrimSpace(r.PostFormValue("ref"))}
	keys, values := r.PostForm["variables_key[]"], r.PostForm["variables_value[]"]
	if len(keys) > maxRunVariables {
		pp.newForm(w, r, f, "A pipeline takes at most "+strconv.Itoa(maxRunVariables)+" variables here.", http.StatusUnprocessableEntity)
		return
	}
	for i, k := range keys {
		k = strings.TrimSpace(k)
		v := ""
		if i < len(values) {
			v = values[i]
		}
		if k == "" && v == "" {
			continue
		}
		f.Variables = append(f.Variables, cicd.Variable{Key: k, Value: v})
	}
	p, err := pp.s.CreatePipeline(ctx, cicd.CreatePipelineInput{Project: full, Ref: f.Ref, Variables: f.Variables, Web: true})
	var invalid *cicd.ConfigError
	if errors.As(err, &invalid) {
		pp.newForm(w, r, f, "The CI file has errors: "+invalid.Errors, http.StatusUnprocessableEntity)
		return
	}
	if reason := runRefusal(err); reason != "" {
		pp.newForm(w, r, f, reason, http.StatusUnprocessableEntity)
		return
	}
	if err != nil {
		pp.fail(w, r, err)
		return
	}
	if info, err := pp.s.access.Resolve(ctx, full); err == nil {
		full = info.PathWithNamespace
	}
	pp.site.Redirect(w, r, pipelinePageURL(full, p.ID))
}

// runRefusal is why CreatePipeline made no pipeline, in words for the
// form; "" for an error that is no refusal of the input.
func runRefusal(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, cicd.ErrRefRequired):
		return "Choose a branch or tag."
	case errors.Is(err, cicd.ErrRefNotFound):
		return "There is no branch or tag of that name."
	case errors.Is(err, cicd.ErrNoConfig):
		return "Missing .gitlab-ci.yml file at the head of that branch or tag."
	case errors.Is(err, cicd.ErrFilteredByWorkflow):
		return "Pipeline filtered out by workflow rules."
	case errors.Is(err, cicd.ErrNoJobs):
		return "No stages / jobs for this pipeline."
	case errors.Is(err, cicd.ErrInvalidVariableKey):
		return "A variable's key can contain only letters, digits and '_'."
	case errors.Is(err, cicd.ErrPipelinesDisabled):
		return "The project's pipelines are disabled."
	case errors.Is(err, cicd.ErrProtectedRef):
		return "You are not allowed to run a pipeline on this protected branch."
	}
	return ""
}
