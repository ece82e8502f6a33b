package ci_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// startPages runs the stock app with the in-process executor: the pages'
// tests need jobs that finish, not a shell.
func startPages(t testing.TB) *fennectest.Server {
	return stocktest.Start(t, fennectest.WithConfig(func(c *config.Config) { c.PluginDir = t.TempDir() }),
		stocktest.WithInstantExecutor())
}

// pagesCI has a build stage, a test stage with a failing job and one
// allowed to fail, and a job that only a run with FOO=bar gets.
const pagesCI = `stages: [build, test]
compile:
  stage: build
  script: [echo compiled]
unit:
  stage: test
  script: ["exit 1"]
lint:
  stage: test
  allow_failure: true
  script: ["exit 2"]
foo-only:
  stage: test
  rules:
    - if: '$FOO == "bar"'
  script: [echo foo]
`

func pipelineCount(t *testing.T, c *gitlab.Client, project int64) int {
	t.Helper()
	list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

func jobCount(t *testing.T, c *gitlab.Client, project, pipeline int64) int {
	t.Helper()
	list, _, err := c.Jobs.ListPipelineJobs(project, pipeline, &gitlab.ListJobsOptions{IncludeRetried: gitlab.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

// TestPipelinePagesFlow: the list with its filters, a pipeline's page
// with stages and jobs, Retry as a Developer, and the same page and form
// refused to a Reporter, a Guest, a stranger and a forged form.
func TestPipelinePagesFlow(t *testing.T) {
	t.Parallel()
	s := startPages(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "app", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "Add <CI>", map[string]string{".gitlab-ci.yml": pagesCI})
	pl := waitRefPipeline(t, alice.Client, p.ID, "master", "failed")
	jobs, _, err := alice.Client.Jobs.ListPipelineJobs(p.ID, pl.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, j := range jobs {
		ids[j.Name] = j.ID
	}
	if len(ids) != 3 {
		t.Fatalf("jobs %v", ids)
	}
	bob, carol, gus, eve := s.CreateUser(t, "bob"), s.CreateUser(t, "carol"), s.CreateUser(t, "gus"), s.CreateUser(t, "eve")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, carol.ID, gitlab.ReporterPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, gus.ID, gitlab.GuestPermissions)
	const base = "/alice/app/-/pipelines"
	plPath := base + "/" + strconv.FormatInt(pl.ID, 10)

	a := s.SignedIn(t, "alice", alice.Password)
	list := a.Get(t, base)
	list.Want(t, "list", 200, `<a href="`+plPath+`">#`+strconv.FormatInt(pl.ID, 10)+`</a>`,
		`<a class="ci-status ci-failed" href="`+plPath+`">`, `<span>failed</span>`,
		`<a href="/alice/app/-/tree/master">master</a>`, `Add &lt;CI&gt;`, `by <a href="/alice">User alice</a>`,
		// The stages at a glance: build passed, test failed.
		`<a class="ci-status ci-success" href="`+plPath+`#stage-0" title="Stage build: passed">`,
		`<a class="ci-status ci-failed" href="`+plPath+`#stage-1" title="Stage test: failed">`,
		`<a class="button primary" href="`+base+`/new">Run pipeline</a>`, `>CI/CD</a>`)
	list.WantNot(t, "list", "Add <CI>")
	a.Get(t, base+"?status=success").Want(t, "no success", 200, `No pipelines to show.`)
	a.Get(t, base+"?scope=finished").Want(t, "finished", 200, `href="`+plPath+`"`, `<a href="`+base+`?scope=finished" aria-current="page">Finished</a>`)
	a.Get(t, base+"?scope=running").Want(t, "running", 200, `No pipelines to show.`)
	a.Get(t, base+"?ref=nope").Want(t, "other ref", 200, `No pipelines to show.`)
	a.Get(t, base+"?ref=master&status=failed").Want(t, "master failed", 200, `href="`+plPath+`"`)
	a.Get(t, base+"?status=%3Cb%3E").Want(t, "unknown status", 400)
	a.Get(t, base+"?scope=everything").Want(t, "unknown scope", 400)

	// The pipeline: its stages as columns, each job linking to its page.
	page := a.Get(t, plPath)
	page.Want(t, "pipeline", 200, `<h1>Pipeline #`+strconv.FormatInt(pl.ID, 10)+`</h1>`,
		`<a class="mono" href="/alice/app/-/commit/`+pl.SHA+`">`+pl.SHA[:8]+`</a>`,
		`<section id="stage-0" aria-labelledby="stage-0-h"><h2 id="stage-0-h">build</h2>`,
		`<a href="/alice/app/-/jobs/`+strconv.FormatInt(ids["compile"], 10)+`">compile</a>`,
		`<a href="/alice/app/-/jobs/`+strconv.FormatInt(ids["unit"], 10)+`">unit</a>`,
		`<a href="/alice/app/-/jobs/`+strconv.FormatInt(ids["lint"], 10)+`">lint</a> <span class="badge">allowed to fail</span>`,
		`Triggered by <a href="/alice">User alice</a>`, `>Retry</button>`)
	page.WantNot(t, "pipeline", `Cancel running`, `foo-only`)
	a.Get(t, plPath+"/jobs").Want(t, "jobs tab", 200, `<td>compile</td>`, `<td>test</td>`)
	a.Get(t, plPath+"/test_report").Want(t, "tests tab", 200, `No test reports`)
	a.Get(t, plPath+"/nope").Want(t, "unknown tab", 404)
	a.Get(t, base+"/0"+strconv.FormatInt(pl.ID, 10)).Want(t, "not its spelling", 404)
	a.Get(t, base+"/999999").Want(t, "no such pipeline", 404)

	// A Reporter reads, without the buttons, and may not retry.
	c := s.SignedIn(t, "carol", carol.Password)
	cp := c.Get(t, plPath)
	cp.Want(t, "reporter", 200, `<h1>Pipeline #`)
	cp.WantNot(t, "reporter", `>Retry</button>`, `action="`+plPath+`/retry"`)
	c.Get(t, base).WantNot(t, "reporter's list", `Run pipeline`)
	token := c.Get(t, base).CSRF()
	c.Post(t, plPath+"/retry", url.Values{"authenticity_token": {token}}).Want(t, "reporter's retry", 403)
	c.Get(t, base+"/new").Want(t, "reporter's form", 404)
	c.Post(t, base, url.Values{"authenticity_token": {token}, "ref": {"master"}}).Want(t, "reporter's run", 403)
	if n := jobCount(t, alice.Client, p.ID, pl.ID); n != 3 {
		t.Fatalf("a Reporter's retry made jobs: %d", n)
	}
	if n := pipelineCount(t, alice.Client, p.ID); n != 1 {
		t.Fatalf("a Reporter's run made a pipeline: %d", n)
	}

	// A Guest gets what the API answers a Guest; a stranger the 404 page;
	// an anonymous visitor is sent to sign in.
	_, resp, _ := gus.Client.Pipelines.GetPipeline(p.ID, pl.ID)
	if got := s.SignedIn(t, "gus", gus.Password).Get(t, plPath); resp == nil || got.StatusCode != resp.StatusCode {
		t.Fatalf("guest: page %d, API %v", got.StatusCode, resp)
	}
	e := s.SignedIn(t, "eve", eve.Password)
	for _, path := range []string{base, plPath, plPath + "/jobs", base + "/new"} {
		e.Get(t, path).Want(t, "stranger "+path, 404)
	}
	e.Post(t, plPath+"/retry", url.Values{"authenticity_token": {e.Get(t, "/").CSRF()}}).Want(t, "stranger's retry", 404)
	s.NewBrowser(t).Get(t, plPath).WantRedirect(t, "anonymous", http.StatusFound, "/users/sign_in?return_to="+url.QueryEscape(plPath))

	// A Developer retries; a forged form first changes nothing.
	b := s.SignedIn(t, "bob", bob.Password)
	bp := b.Get(t, plPath)
	bp.Want(t, "developer", 200, `<form method="post" action="`+plPath+`/retry" class="inline">`)
	b.Post(t, plPath+"/retry", url.Values{"authenticity_token": {"0123456789abcdef"}}).Want(t, "forged", 403, `Form expired`)
	b.Post(t, plPath+"/retry", url.Values{}).Want(t, "no token", 403)
	if n := jobCount(t, alice.Client, p.ID, pl.ID); n != 3 {
		t.Fatalf("a forged retry made jobs: %d", n)
	}
	b.Post(t, plPath+"/retry", url.Values{"authenticity_token": {bp.CSRF()}}).WantRedirect(t, "retry", http.StatusSeeOther, plPath+"?done=retry")
	if n := jobCount(t, alice.Client, p.ID, pl.ID); n != 5 {
		t.Fatalf("after the retry: %d jobs, want 5 (unit and lint again)", n)
	}
	waitRefPipeline(t, alice.Client, p.ID, "master", "failed")
	b.Get(t, plPath+"?done=retry").Want(t, "after retry", 200, `The pipeline&#39;s failed and canceled jobs run again.`)
	b.Get(t, plPath+"/jobs").Want(t, "retried shown", 200, `<span class="badge">retried</span>`)

	// On a protected branch only those who may push or merge to it
	// control its pipelines: the Developer loses the button, and the form
	// he kept is refused.
	if _, _, err := alice.Client.ProtectedBranches.ProtectRepositoryBranches(p.ID, &gitlab.ProtectRepositoryBranchesOptions{
		Name: gitlab.Ptr("master"), PushAccessLevel: gitlab.Ptr(gitlab.MaintainerPermissions), MergeAccessLevel: gitlab.Ptr(gitlab.MaintainerPermissions)}); err != nil {
		t.Fatal(err)
	}
	kept := b.Get(t, plPath).CSRF()
	b.Get(t, plPath).WantNot(t, "protected", `>Retry</button>`)
	b.Post(t, plPath+"/retry", url.Values{"authenticity_token": {kept}}).Want(t, "protected retry", 403)
	if n := jobCount(t, alice.Client, p.ID, pl.ID); n != 5 {
		t.Fatalf("a refused retry on a protected branch made jobs: %d", n)
	}
	a.Get(t, plPath).Want(t, "owner on protected", 200, `>Retry</button>`)
}

// TestPipelinePagesRun: the run pipeline form makes a web pipeline with
// its variables; a CI file with errors, an unknown ref and a bad key show
// the form again with the reason and make nothing.
func TestPipelinePagesRun(t *testing.T) {
	t.Parallel()
	s := startPages(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "run", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": pagesCI})
	waitRefPipeline(t, alice.Client, p.ID, "master", "failed")
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("broken"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	waitRefPipeline(t, alice.Client, p.ID, "broken", "failed")
	stocktest.CommitFiles(t, alice.Client, p.ID, "broken", "break it", map[string]string{".gitlab-ci.yml": "job: [this is not a job\n"})
	s.Drain(t)
	before := pipelineCount(t, alice.Client, p.ID)
	const base = "/alice/run/-/pipelines"

	// The push's pipeline of the broken file failed with its errors,
	// shown plainly on its page and marked in the list.
	broken, _, err := alice.Client.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{Ref: gitlab.Ptr("broken"), YamlErrors: gitlab.Ptr(true)})
	if err != nil || len(broken) != 1 {
		t.Fatalf("the broken file's pipeline: %v %+v", err, broken)
	}
	brokenPath := base + "/" + strconv.FormatInt(broken[0].ID, 10)
	a := s.SignedIn(t, "alice", alice.Password)
	a.Get(t, brokenPath).Want(t, "yaml errors", 200, `<strong>The CI file has errors; no job ran.</strong>`, `<pre class="yaml-errors">`,
		`This pipeline has no jobs.`)
	a.Get(t, base+"?ref=broken").Want(t, "yaml invalid in the list", 200, `<span class="badge bad">yaml invalid</span>`)

	form := a.Get(t, base+"/new")
	form.Want(t, "form", 200, `<option value="master" selected>master</option>`, `<option value="broken">broken</option>`,
		`name="variables_key[]"`, `name="variables_value[]"`)
	token := form.CSRF()
	post := func(ref string, kv ...string) fennectest.Page {
		v := url.Values{"authenticity_token": {token}, "ref": {ref}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add("variables_key[]", kv[i])
			v.Add("variables_value[]", kv[i+1])
		}
		return a.Post(t, base, v)
	}
	post("broken").Want(t, "yaml error", 422, `No pipeline was created.`, `The CI file has errors:`, `<option value="broken" selected>broken</option>`)
	post("nope").Want(t, "unknown ref", 422, `There is no branch or tag of that name.`)
	post("master", "A-B", "x").Want(t, "bad key", 422, `A variable&#39;s key can contain only letters, digits and &#39;_&#39;.`, `value="A-B"`)
	if n := pipelineCount(t, alice.Client, p.ID); n != before {
		t.Fatalf("refused runs made pipelines: %d, before %d", n, before)
	}

	got := post("master", "FOO", "bar", "", "")
	loc := got.Header.Get("Location")
	if got.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, base+"/") {
		t.Fatalf("run: %d %q\n%.2000s", got.StatusCode, loc, got.Body)
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(loc, base+"/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	pl, _, err := alice.Client.Pipelines.GetPipeline(p.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Source != "web" || pl.Ref != "master" {
		t.Fatalf("pipeline %+v", pl)
	}
	// The variable reached the rules: the job only FOO=bar gets is there.
	a.Get(t, loc).Want(t, "run pipeline", 200, `>foo-only</a>`)
}

// TestPipelinePagesPagingAndCancel: the list pages by 20 with its
// filters kept; Cancel is offered while jobs may still run and cancels
// them.
func TestPipelinePagesPagingAndCancel(t *testing.T) {
	t.Parallel()
	s := startPages(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "many", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "deploy:\n  when: manual\n  script: [echo]\n"})
	s.Drain(t)
	for pipelineCount(t, alice.Client, p.ID) < 21 {
		if _, _, err := alice.Client.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := alice.Client.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	newest, oldest := list[0], list[len(list)-1]
	const base = "/alice/many/-/pipelines"
	a := s.SignedIn(t, "alice", alice.Password)
	first := a.Get(t, base+"?ref=master")
	first.Want(t, "first page", 200, `href="`+base+`/`+strconv.FormatInt(newest.ID, 10)+`"`, `Page 1 of 2`,
		`<a href="`+base+`?page=2&amp;ref=master" rel="next">Next</a>`)
	first.WantNot(t, "first page", `href="`+base+`/`+strconv.FormatInt(oldest.ID, 10)+`"`)
	second := a.Get(t, base+"?ref=master&page=2")
	second.Want(t, "second page", 200, `href="`+base+`/`+strconv.FormatInt(oldest.ID, 10)+`"`, `Page 2 of 2`, `rel="prev"`)
	if n := strings.Count(second.Body, `<tr id="pipeline-`); n != 1 {
		t.Fatalf("second page: %d rows", n)
	}

	// The newest pipeline waits for its manual job: Cancel cancels it.
	plPath := base + "/" + strconv.FormatInt(newest.ID, 10)
	page := a.Get(t, plPath)
	page.Want(t, "cancelable", 200, `>Cancel running</button>`)
	a.Post(t, plPath+"/cancel", url.Values{"authenticity_token": {page.CSRF()}}).WantRedirect(t, "cancel", http.StatusSeeOther, plPath+"?done=cancel")
	jobs, _, err := alice.Client.Jobs.ListPipelineJobs(p.ID, newest.ID, nil)
	if err != nil || len(jobs) != 1 || jobs[0].Status != "canceled" {
		t.Fatalf("after cancel: %v %+v", err, jobs)
	}
	after := a.Get(t, plPath+"?done=cancel")
	after.Want(t, "canceled", 200, `The pipeline&#39;s unfinished jobs were canceled.`, `>Retry</button>`)
	after.WantNot(t, "canceled", `Cancel running`)

	// Oversized and hostile input: too many variables, an enormous ref.
	token := after.CSRF()
	v := url.Values{"authenticity_token": {token}, "ref": {"master"}}
	for i := 0; i < 60; i++ {
		v.Add("variables_key[]", "K"+strconv.Itoa(i))
		v.Add("variables_value[]", "v")
	}
	before := pipelineCount(t, alice.Client, p.ID)
	a.Post(t, base, v).Want(t, "too many variables", 422, `at most 50 variables`)
	a.Post(t, base, url.Values{"authenticity_token": {token}, "ref": {strings.Repeat("x", 5000)}}).Want(t, "enormous ref", 422)
	a.Get(t, base+"?ref="+strings.Repeat("x", 2000)).Want(t, "enormous ref filter", 400)
	a.Get(t, base+"/../../../etc/passwd").Want(t, "traversal", 404)
	if n := pipelineCount(t, alice.Client, p.ID); n != before {
		t.Fatalf("refused runs made pipelines: %d, before %d", n, before)
	}
}

// TestCreatePipelineVariablesAPI: POST /pipeline takes variables, as
// later GitLab does, and they reach the rules; a bad key is GitLab's 400.
func TestCreatePipelineVariablesAPI(t *testing.T) {
	t.Parallel()
	s := startPages(t)
	p := stocktest.NewProject(t, s.Client, "vars", "private")
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": pagesCI})
	waitRefPipeline(t, s.Client, p.ID, "master", "failed")
	pl, _, err := s.Client.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("master"),
		Variables: &[]*gitlab.PipelineVariableOptions{{Key: gitlab.Ptr("FOO"), Value: gitlab.Ptr("bar"), VariableType: gitlab.Ptr(gitlab.EnvVariableType)}}})
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, err := s.Client.Jobs.ListPipelineJobs(p.ID, pl.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, j := range jobs {
		found = found || j.Name == "foo-only"
	}
	if !found || pl.Source != "api" {
		t.Fatalf("the pipeline's source %q, jobs %d, foo-only %v", pl.Source, len(jobs), found)
	}
	_, resp, _ := s.Client.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("master"),
		Variables: &[]*gitlab.PipelineVariableOptions{{Key: gitlab.Ptr("A-B"), Value: gitlab.Ptr("x")}}})
	if resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a bad key: %v", resp)
	}
}
