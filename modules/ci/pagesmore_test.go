package ci_test

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// badge fetches a badge as a visitor and returns its status, headers and
// body.
func badge(t *testing.T, b *fennectest.Browser, path string) (int, http.Header, string) {
	t.Helper()
	p := b.Get(t, path)
	return p.StatusCode, p.Header, p.Body
}

// TestPipelineBadges: the pipeline and coverage badges of a ref as SVG,
// never cached, with the words GitLab's show; a hostile ref escaped; a
// private project's badge a 404 for those who may not read it.
func TestPipelineBadges(t *testing.T) {
	t.Parallel()
	s := startPages(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "lib", "public")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `test:
  coverage: '/Coverage: \d+\.\d+%/'
  script: ["echo Coverage: 87.50%"]
other:
  coverage: '/Coverage: \d+\.\d+%/'
  script: ["echo Coverage: 97.25%"]
`})
	waitRefPipeline(t, alice.Client, p.ID, "master", "success")
	anon := s.NewBrowser(t)

	status, h, body := badge(t, anon, "/alice/lib/badges/master/pipeline.svg")
	if status != 200 || h.Get("Content-Type") != "image/svg+xml" || !strings.Contains(h.Get("Cache-Control"), "no-store") ||
		!strings.Contains(h.Get("Cache-Control"), "no-cache") {
		t.Fatalf("pipeline badge: %d %v", status, h)
	}
	for _, want := range []string{`<text x="`, `>pipeline</text>`, `>passed</text>`, `aria-label="pipeline: passed"`} {
		if !strings.Contains(body, want) {
			t.Fatalf("pipeline badge lacks %q:\n%s", want, body)
		}
	}
	_, _, body = badge(t, anon, "/alice/lib/badges/nope/pipeline.svg")
	if !strings.Contains(body, `>unknown</text>`) {
		t.Fatalf("a ref without pipelines: %s", body)
	}
	_, _, body = badge(t, anon, "/alice/lib/badges/master/coverage.svg")
	if !strings.Contains(body, `>coverage</text>`) || !strings.Contains(body, `>92.38%</text>`) {
		t.Fatalf("coverage badge (the mean of 87.50 and 97.25): %s", body)
	}
	_, _, body = badge(t, anon, "/alice/lib/badges/master/coverage.svg?job=test")
	if !strings.Contains(body, `>87.50%</text>`) {
		t.Fatalf("coverage of job test: %s", body)
	}
	_, _, body = badge(t, anon, "/alice/lib/badges/master/coverage.svg?job=none")
	if !strings.Contains(body, `>unknown</text>`) {
		t.Fatalf("coverage of no such job: %s", body)
	}

	// Anonymous visitors of a public project read its pipelines, with no
	// button and no form.
	list := anon.Get(t, "/alice/lib/-/pipelines")
	list.Want(t, "anonymous list", 200, `<span>passed</span>`)
	list.WantNot(t, "anonymous list", `Run pipeline`)
	plPage := anon.Get(t, "/alice/lib/-/pipelines/1")
	plPage.Want(t, "anonymous pipeline", 200, `<h1>Pipeline #1</h1>`, `>test</a>`)
	plPage.WantNot(t, "anonymous pipeline", `<form method="post"`)
	anon.Get(t, "/alice/lib/-/pipelines/new").WantRedirect(t, "anonymous form", http.StatusFound,
		"/users/sign_in?return_to="+url.QueryEscape("/alice/lib/-/pipelines/new"))
	anon.Get(t, "/alice/lib/-/environments").Want(t, "anonymous environments", 200)

	// A failed pipeline of a branch with slashes in its name.
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("fix/it"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, alice.Client, p.ID, "fix/it", "break", map[string]string{".gitlab-ci.yml": "test:\n  script: [\"exit 1\"]\n"})
	waitRefPipeline(t, alice.Client, p.ID, "fix/it", "failed")
	_, _, body = badge(t, anon, "/alice/lib/badges/fix/it/pipeline.svg")
	if !strings.Contains(body, `>failed</text>`) {
		t.Fatalf("failed badge: %s", body)
	}

	// A hostile ref is text in the image, escaped; nothing of it is
	// markup.
	hostile := "/alice/lib/badges/" + url.PathEscape(`<script>alert(1)</script>`) + "/pipeline.svg"
	status, _, body = badge(t, anon, hostile)
	if status != 200 || strings.Contains(body, "<script>") || !strings.Contains(body, `>unknown</text>`) {
		t.Fatalf("hostile ref: %d %s", status, body)
	}

	// A private project: 404 to anonymous visitors and strangers, the
	// badge to its members.
	priv := stocktest.NewProject(t, alice.Client, "secret", "private")
	stocktest.CommitFiles(t, alice.Client, priv.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "test:\n  script: [echo]\n"})
	waitRefPipeline(t, alice.Client, priv.ID, "master", "success")
	eve := s.CreateUser(t, "eve")
	for who, b := range map[string]*fennectest.Browser{"anonymous": anon, "stranger": s.SignedIn(t, "eve", eve.Password)} {
		for _, path := range []string{"/alice/secret/badges/master/pipeline.svg", "/alice/secret/badges/master/coverage.svg",
			"/nobody/nothing/badges/master/pipeline.svg"} {
			status, h, body := badge(t, b, path)
			if status != 404 || strings.Contains(body, "passed") || h.Get("Content-Type") == "image/svg+xml" {
				t.Fatalf("%s %s: %d %s", who, path, status, h.Get("Content-Type"))
			}
		}
	}
	_, _, body = badge(t, s.SignedIn(t, "alice", alice.Password), "/alice/secret/badges/master/pipeline.svg")
	if !strings.Contains(body, `>passed</text>`) {
		t.Fatalf("the owner's badge: %s", body)
	}
	// Only GET reads a badge.
	resp := s.Do(t, http.MethodPost, "/alice/lib/badges/master/pipeline.svg", strings.NewReader(""))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Fatalf("POST badge: %d", resp.StatusCode)
	}
}

// TestEnvironmentPages: the list with each environment's last
// deployment, an environment's deployments, and Stop after its question,
// offered to Developers and refused to Reporters.
func TestEnvironmentPages(t *testing.T) {
	t.Parallel()
	s := startPages(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "site", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "Deploy <it>", map[string]string{".gitlab-ci.yml": `deploy:
  script: [echo deploy]
  environment:
    name: production
    url: https://example.com/
review:
  script: [echo review]
  environment:
    name: review/app
`})
	pl := waitRefPipeline(t, alice.Client, p.ID, "master", "success", "failed")
	envs, _, err := alice.Client.Environments.ListEnvironments(p.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var prod int64
	for _, e := range envs {
		if e.Name == "production" {
			prod = e.ID
		}
	}
	if prod == 0 {
		t.Fatalf("environments %+v (pipeline %s)", envs, pl.Status)
	}
	carol := s.CreateUser(t, "carol")
	stocktest.AddMember(t, alice.Client, p.ID, carol.ID, gitlab.ReporterPermissions)
	const base = "/alice/site/-/environments"
	envPath := base + "/" + strconv.FormatInt(prod, 10)

	a := s.SignedIn(t, "alice", alice.Password)
	list := a.Get(t, base)
	list.Want(t, "list", 200, `<a href="`+envPath+`">production</a>`, `<a href="https://example.com/" rel="noopener noreferrer">Open</a>`,
		`<span class="badge ok">available</span>`, ` <a href="/alice/site/-/commit/`+pl.SHA+`" class="mono">`, `Deploy &lt;it&gt;`,
		`>deploy (#`, `<a class="button" href="`+envPath+`/stop">Stop</a>`)
	list.Want(t, "list", 200, `>review/app</a>`)
	list.WantNot(t, "list", `Deploy <it>`)
	page := a.Get(t, envPath)
	page.Want(t, "environment", 200, `<h1>Environment production</h1>`, `<h2>Deployments</h2>`, `>deploy (#`)
	page.WantNot(t, "environment", `>review (#`)
	a.Get(t, base+"/999999").Want(t, "no such environment", 404)

	// A Reporter reads, without Stop; the question and the form are
	// refused.
	c := s.SignedIn(t, "carol", carol.Password)
	c.Get(t, base).Want(t, "reporter's list", 200, `>production</a>`)
	c.Get(t, base).WantNot(t, "reporter's list", `/stop"`)
	c.Get(t, envPath+"/stop").Want(t, "reporter's question", 404)
	c.Post(t, envPath+"/stop", url.Values{"authenticity_token": {c.Get(t, base).CSRF()}}).Want(t, "reporter's stop", 403)
	eve := s.CreateUser(t, "eve")
	s.SignedIn(t, "eve", eve.Password).Get(t, envPath).Want(t, "stranger", 404)

	// Stop asks first; a forged form changes nothing; the form stops it.
	q := a.Get(t, envPath+"/stop")
	q.Want(t, "question", 200, `Stop the environment <strong>production</strong>?`, `<form method="post" action="`+envPath+`/stop" class="inline">`)
	a.Post(t, envPath+"/stop", url.Values{"authenticity_token": {"bad"}}).Want(t, "forged stop", 403)
	if st := envState(t, alice.Client, p.ID, prod); st != "available" {
		t.Fatalf("a forged stop stopped it: %s", st)
	}
	a.Post(t, envPath+"/stop", url.Values{"authenticity_token": {q.CSRF()}}).WantRedirect(t, "stop", http.StatusSeeOther, envPath+"?stopped=1")
	if st := envState(t, alice.Client, p.ID, prod); st != "stopped" {
		t.Fatalf("not stopped: %s", st)
	}
	a.Get(t, envPath+"?stopped=1").Want(t, "stopped", 200, `The environment was stopped.`, `<span class="badge">stopped</span>`)
	a.Get(t, envPath+"/stop").Want(t, "a stopped one's question", 404)
}

// TestCommitStatusOnRepositoryPages: the commit page and the branch list
// show the newest pipeline's status, linking to it, to those who may see
// it.
func TestCommitStatusOnRepositoryPages(t *testing.T) {
	t.Parallel()
	s := startPages(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "tool", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "readme", map[string]string{"README.md": "hi"})
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("quiet"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	c := stocktest.CommitFiles(t, alice.Client, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "test:\n  script: [\"exit 1\"]\n"})
	pl := waitRefPipeline(t, alice.Client, p.ID, "master", "failed")
	s.Drain(t)
	plHref := "/alice/tool/-/pipelines/" + strconv.FormatInt(pl.ID, 10)
	icon := `<a class="ci-status ci-failed" href="` + plHref + `">`

	a := s.SignedIn(t, "alice", alice.Password)
	a.Get(t, "/alice/tool/-/commit/"+c.ID).Want(t, "commit page", 200, `Pipeline `+icon, `<span>failed</span>`)
	branches := a.Get(t, "/alice/tool/-/branches")
	branches.Want(t, "branches", 200, icon)
	if n := strings.Count(branches.Body, `class="ci-status`); n != 1 {
		t.Fatalf("branches: %d status icons, want 1 (quiet has no pipeline)", n)
	}

	// A Reporter sees them; with the project's builds off nobody does.
	carol := s.CreateUser(t, "carol")
	stocktest.AddMember(t, alice.Client, p.ID, carol.ID, gitlab.ReporterPermissions)
	s.SignedIn(t, "carol", carol.Password).Get(t, "/alice/tool/-/commit/"+c.ID).Want(t, "reporter", 200, icon)
	if _, _, err := alice.Client.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{JobsEnabled: gitlab.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	off := a.Get(t, "/alice/tool/-/commit/"+c.ID)
	off.Want(t, "builds off", 200)
	off.WantNot(t, "builds off", `class="ci-status`)
}

// envState is an environment's state as the API lists it.
func envState(t *testing.T, c *gitlab.Client, project, id int64) string {
	t.Helper()
	envs, _, err := c.Environments.ListEnvironments(project, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range envs {
		if e.ID == id {
			return e.State
		}
	}
	return ""
}

// TestPipelinePageOfMergeRequest: a merge request pipeline's page names
// its merge request, and the merge request list links the pipeline's
// page.
func TestPipelinePageOfMergeRequest(t *testing.T) {
	t.Parallel()
	s := startPages(t)
	alice := s.CreateUser(t, "alice")
	c := alice.Client
	p := stocktest.NewProject(t, c, "mr", "private")
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "mr:\n  script: [echo]\n  only: [merge_requests]\nbranch:\n  script: [echo]\n"})
	master := waitRefPipeline(t, c, p.ID, "master", "success")
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	code := stocktest.CommitFiles(t, c, p.ID, "feature", "code", map[string]string{"a.txt": "a"})
	branchPipeline := waitPipeline(t, c, p.ID, code.ID, "success")
	stocktest.OpenMergeRequest(t, c, p.ID, "feature", "master", "Add a")
	mrPipeline := waitNewPipeline(t, c, p.ID, code.ID, branchPipeline.ID)
	s.Drain(t)
	plPath := "/alice/mr/-/pipelines/" + strconv.FormatInt(mrPipeline.ID, 10)
	a := s.SignedIn(t, "alice", alice.Password)
	a.Get(t, plPath).Want(t, "merge request pipeline", 200, `merge request <a href="/alice/mr/-/merge_requests/1">!1</a>`)
	// A branch pipeline names the open merge request from its branch,
	// asked of the merge requests module; once it is closed, none.
	branchPath := "/alice/mr/-/pipelines/" + strconv.FormatInt(branchPipeline.ID, 10)
	a.Get(t, branchPath).Want(t, "branch pipeline", 200, `merge request <a href="/alice/mr/-/merge_requests/1" title="Add a">!1</a>`)
	a.Get(t, "/alice/mr/-/pipelines/"+strconv.FormatInt(master.ID, 10)).WantNot(t, "the default branch's pipeline", `merge request <a`)
	a.Get(t, "/alice/mr/-/merge_requests").Want(t, "merge request list", 200, `href="`+plPath+`"`)
	a.Get(t, "/alice/mr/-/merge_requests/1/pipelines").Want(t, "merge request's pipelines", 200, `<a href="`+plPath+`">#`)
	// Merge requests switched off: the branch pipeline names none.
	if _, _, err := c.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{MergeRequestsEnabled: gitlab.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	a.Get(t, branchPath).WantNot(t, "branch pipeline, merge requests off", `merge request <a`)
	if _, _, err := c.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{MergeRequestsEnabled: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.MergeRequests.UpdateMergeRequest(p.ID, 1, &gitlab.UpdateMergeRequestOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	a.Get(t, branchPath).WantNot(t, "branch pipeline of a closed merge request", `merge request <a`)
}
