package ci_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/gobuild"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

var (
	buildOnce sync.Once
	pluginDir string
	buildErr  error
)

// shellExecutor builds the shipped shell executor once for the package, as
// make build does, into a plugin directory of its own.
func shellExecutor(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fennec-ci-plugins-")
		if err != nil {
			buildErr = err
			return
		}
		pluginDir = dir
		// Built once per source for every package's tests (gobuild).
		buildErr = gobuild.InstallTo("../../plugins/executor-shell", filepath.Join(dir, "executor-shell"))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return pluginDir
}

func TestMain(m *testing.M) {
	code := fennectest.Main(m) // stops the PostgreSQL server of FENNEC_TEST_STORE=postgres
	if pluginDir != "" {
		os.RemoveAll(pluginDir)
	}
	os.Exit(code)
}

// start runs the whole stock app with the real shell executor plugin.
func start(t testing.TB) *fennectest.Server {
	dir := shellExecutor(t)
	return stocktest.Start(t, fennectest.WithConfig(func(c *config.Config) { c.PluginDir = dir }))
}

// waitPipeline waits for the pipeline of sha to reach one of the statuses.
func waitPipeline(t testing.TB, c *gitlab.Client, project int64, sha string, want ...string) *gitlab.Pipeline {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{SHA: gitlab.Ptr(sha)})
		if err != nil {
			t.Fatal(err)
		}
		for _, pi := range list {
			if pi.SHA != sha {
				continue
			}
			p, _, err := c.Pipelines.GetPipeline(project, pi.ID)
			if err != nil {
				t.Fatal(err)
			}
			last = p.Status
			for _, w := range want {
				if p.Status == w {
					return p
				}
			}
		}
	}
	t.Fatalf("pipeline of %s: status %q, want one of %v", sha, last, want)
	return nil
}

// jobsByName lists a pipeline's jobs by name.
func jobsByName(t testing.TB, c *gitlab.Client, project, pipeline int64) map[string]*gitlab.Job {
	t.Helper()
	list, _, err := c.Jobs.ListPipelineJobs(project, pipeline, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*gitlab.Job{}
	for _, j := range list {
		if _, seen := out[j.Name]; !seen { // newest first: keep the latest try
			out[j.Name] = j
		}
	}
	return out
}

func trace(t testing.TB, c *gitlab.Client, project, job int64) string {
	t.Helper()
	r, _, err := c.Jobs.GetTraceFile(project, job)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

// traceSoFar is trace for a job that may not have written a byte yet:
// until it does, the API answers 404 (no trace), read here as "".
func traceSoFar(t testing.TB, c *gitlab.Client, project, job int64) string {
	t.Helper()
	r, resp, err := c.Jobs.GetTraceFile(project, job)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return ""
		}
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

const twoStages = `stages: [build, test]
variables:
  GREETING: hello
build:
  stage: build
  script:
    - mkdir -p out && echo "$GREETING from $CI_JOB_NAME at $CI_COMMIT_SHA" > out/result.txt
    - echo built
  artifacts:
    paths: [out/]
test:
  stage: test
  script:
    - cat out/result.txt
    - echo "coverage 87.5%"
  coverage: '/coverage \d+\.\d+%/'
`

// A pushed .gitlab-ci.yml with two stages runs them one after the other on
// the shell executor: the second sees the first's artifacts, traces and
// artifacts are served, the commit's statuses show the jobs.
func TestPipelineRunsStagesInOrder(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-basic")})
	if err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": twoStages})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" || pl.Ref != "master" || pl.StartedAt == nil || pl.FinishedAt == nil {
		t.Fatalf("pipeline %+v", pl)
	}
	jobs := jobsByName(t, c, p.ID, pl.ID)
	build, test := jobs["build"], jobs["test"]
	if build == nil || test == nil || build.Status != "success" || test.Status != "success" {
		t.Fatalf("jobs %+v", jobs)
	}
	if build.Stage != "build" || test.Stage != "test" || !build.FinishedAt.Before(*test.StartedAt) && !build.FinishedAt.Equal(*test.StartedAt) {
		t.Fatalf("stages out of order: build %v-%v, test %v-%v", build.StartedAt, build.FinishedAt, test.StartedAt, test.FinishedAt)
	}
	if build.Pipeline.ID != pl.ID || build.Commit == nil || build.Commit.ID != commit.ID || build.User == nil || build.User.Username != "root" {
		t.Fatalf("build job view %+v", build)
	}
	if got := trace(t, c, p.ID, test.ID); !strings.Contains(got, "hello from build at "+commit.ID) {
		t.Fatalf("test's trace does not show the build's artifact:\n%s", got)
	}
	if test.Coverage != 87.5 {
		t.Fatalf("coverage %v", test.Coverage)
	}
	// The artifacts archive.
	if build.ArtifactsFile.Filename != "artifacts.zip" || build.ArtifactsFile.Size == 0 {
		t.Fatalf("artifacts_file %+v", build.ArtifactsFile)
	}
	resp := s.Do(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/artifacts", p.ID, build.ID), nil, "PRIVATE-TOKEN", s.RootToken)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Disposition") != "attachment; filename=artifacts.zip" {
		t.Fatalf("artifacts: %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range zr.File {
		found = found || f.Name == "out/result.txt"
	}
	if !found {
		t.Fatalf("archive lacks out/result.txt")
	}
	// By ref and name.
	resp = s.Do(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/master/download?job=build", p.ID), nil, "PRIVATE-TOKEN", s.RootToken)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("artifacts by ref: %d", resp.StatusCode)
	}
	resp = s.Do(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/artifacts", p.ID, test.ID), nil, "PRIVATE-TOKEN", s.RootToken)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("artifacts of a job without: %d", resp.StatusCode)
	}
	// The commit's statuses are the jobs; its status is the pipeline's.
	statuses, _, err := c.Commits.GetCommitStatuses(p.ID, commit.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, st := range statuses {
		names[st.Name] = st.Status
	}
	if names["build"] != "success" || names["test"] != "success" {
		t.Fatalf("commit statuses %v", names)
	}
	got, _, err := c.Commits.GetCommit(p.ID, commit.ID, nil)
	if err != nil || got.Status == nil || string(*got.Status) != "success" {
		t.Fatalf("commit status %v %v", got.Status, err)
	}
}

// Stage gating and when: a failed job skips on_success jobs after it, runs
// on_failure and always jobs, and fails the pipeline; allow_failure does
// not.
func TestFailureGating(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-gating")})
	if err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `stages: [one, two]
flaky:
  stage: one
  script: ["exit 3"]
  allow_failure: true
broken:
  stage: one
  script: ["echo before; exit 1"]
  after_script: ["echo cleaning up"]
next:
  stage: two
  script: ["echo never"]
rescue:
  stage: two
  when: on_failure
  script: ["echo rescued"]
finally:
  stage: two
  when: always
  script: ["echo always"]
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "failed", "success", "canceled")
	if pl.Status != "failed" {
		t.Fatalf("pipeline %s", pl.Status)
	}
	jobs := jobsByName(t, c, p.ID, pl.ID)
	want := map[string]string{"flaky": "failed", "broken": "failed", "next": "skipped", "rescue": "success", "finally": "success"}
	for name, st := range want {
		if jobs[name] == nil || jobs[name].Status != st {
			t.Errorf("%s: %+v, want %s", name, jobs[name], st)
		}
	}
	// GitLab names why a failed job failed, and only on failed jobs.
	if jobs["broken"].FailureReason != "script_failure" || jobs["flaky"].FailureReason != "script_failure" ||
		jobs["rescue"].FailureReason != "" {
		t.Errorf("failure_reason: broken %q, flaky %q, rescue %q; want script_failure, script_failure and none",
			jobs["broken"].FailureReason, jobs["flaky"].FailureReason, jobs["rescue"].FailureReason)
	}
	if tr := trace(t, c, p.ID, jobs["broken"].ID); !strings.Contains(tr, "before") || !strings.Contains(tr, "cleaning up") {
		t.Errorf("broken's trace lacks its script or after_script:\n%s", tr)
	}
	// Scope filters.
	failed, _, err := c.Jobs.ListProjectJobs(p.ID, &gitlab.ListJobsOptions{Scope: &[]gitlab.BuildStateValue{gitlab.Failed}})
	if err != nil || len(failed) != 2 {
		t.Fatalf("failed scope: %d %v", len(failed), err)
	}
	resp := s.Do(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs?scope=bogus", p.ID), nil, "PRIVATE-TOKEN", s.RootToken)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "Scope contains invalid value(s)") {
		t.Fatalf("bad scope: %d %s", resp.StatusCode, b)
	}
	// Retry of the failed job: a new job, pending then run again.
	retried, resp2, err := c.Jobs.RetryJob(p.ID, jobs["broken"].ID)
	if err != nil || resp2.StatusCode != 201 || retried.ID == jobs["broken"].ID || retried.Status != "pending" {
		t.Fatalf("retry: %+v %v", retried, err)
	}
	if _, resp, err := c.Jobs.RetryJob(p.ID, jobs["next"].ID); err == nil || resp.StatusCode != 403 {
		t.Fatalf("retry of a skipped job: %v", err)
	}
}

// A manual deploy job waits for play, then runs and records a deployment
// of its environment.
func TestManualDeployment(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-deploy")})
	if err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `build:
  stage: build
  script: ["true"]
deploy:
  stage: deploy
  when: manual
  environment:
    name: production
    url: https://example.com/$CI_COMMIT_REF_SLUG
  script: ["echo deploying to $CI_ENVIRONMENT_NAME"]
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "manual")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	deploy := jobs["deploy"]
	if deploy == nil || deploy.Status != "manual" {
		t.Fatalf("deploy %+v", deploy)
	}
	resp := s.Do(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/play", p.ID, jobs["build"].ID), nil, "PRIVATE-TOKEN", s.RootToken)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "Unplayable Job") {
		t.Fatalf("play of a non-manual job: %d %s", resp.StatusCode, b)
	}
	played, _, err := c.Jobs.PlayJob(p.ID, deploy.ID, nil)
	if err != nil || played.Status != "started" {
		t.Fatalf("play: %+v %v", played, err)
	}
	var deployments []*gitlab.Deployment
	for deadline := time.Now().Add(60 * time.Second); len(deployments) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		deployments, _, err = c.Deployments.ListProjectDeployments(p.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(deployments) != 1 {
		t.Fatalf("deployments %v", deployments)
	}
	d := deployments[0]
	if d.IID != 1 || d.Ref != "master" || d.SHA != commit.ID || d.Environment.Name != "production" || d.Deployable.ID != deploy.ID || d.User.Username != "root" {
		t.Fatalf("deployment %+v env %+v", d, d.Environment)
	}
	// The spec's deployable is a Job without artifacts_file and pipeline:
	// both keys absent (artifacts_file was null before).
	var raw []struct {
		Deployable map[string]any `json:"deployable"`
	}
	s.JSON(t, http.MethodGet, "/api/v4/projects/"+strconv.FormatInt(p.ID, 10)+"/deployments", nil, &raw, "PRIVATE-TOKEN", s.RootToken)
	if len(raw) != 1 {
		t.Fatalf("deployments %v", raw)
	}
	for _, key := range []string{"artifacts_file", "pipeline"} {
		if v, ok := raw[0].Deployable[key]; ok {
			t.Fatalf("deployable has %s: %v", key, v)
		}
	}
	if raw[0].Deployable["stage"] != "deploy" || raw[0].Deployable["commit"] == nil {
		t.Fatalf("deployable %v", raw[0].Deployable)
	}
	envs, _, err := c.Environments.ListEnvironments(p.ID, nil)
	if err != nil || len(envs) != 1 || envs[0].Name != "production" || envs[0].Slug != "production" || envs[0].ExternalURL != "https://example.com/master" {
		t.Fatalf("environments %+v %v", envs, err)
	}
	if tr := trace(t, c, p.ID, deploy.ID); !strings.Contains(tr, "deploying to production") {
		t.Fatalf("deploy trace:\n%s", tr)
	}
}

// Canceling a running job stops its processes within seconds.
func TestCancelRunningJob(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-cancel")})
	if err != nil {
		t.Fatal(err)
	}
	// A sleep of its own length, so that the process table check below
	// sees this job's sleep and no other test's.
	nap := fmt.Sprintf("300.%d", time.Now().UnixNano()%1000000)
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `sleeper:
  script: ["echo started; sleep ` + nap + `"]
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "running")
	job := jobsByName(t, c, p.ID, pl.ID)["sleeper"]
	// Wait for the script to be under way.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(traceSoFar(t, c, p.ID, job.ID), "started"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job never started")
		}
	}
	canceled, _, err := c.Jobs.CancelJob(p.ID, job.ID)
	if err != nil || canceled.Status != "canceled" || canceled.FinishedAt == nil {
		t.Fatalf("cancel: %+v %v", canceled, err)
	}
	pl = waitPipeline(t, c, p.ID, commit.ID, "canceled")
	// No sleep 300 is left.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _ := exec.Command("pgrep", "-f", "sleep "+nap).Output()
		if len(bytes.TrimSpace(out)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep %s still running: %s", nap, out)
		}
	}
}

// An invalid CI file gives a failed pipeline with yaml_errors and no jobs.
func TestYAMLErrors(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-yaml")})
	if err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "build:\n  stage: build\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "failed")
	if pl.YamlErrors == "" || !strings.Contains(pl.YamlErrors, "script can't be blank") {
		t.Fatalf("yaml_errors %q", pl.YamlErrors)
	}
	if jobs, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, nil); err != nil || len(jobs) != 0 {
		t.Fatalf("jobs of an invalid pipeline: %v %v", jobs, err)
	}
	// The API: a ref that does not exist, and a commit without the file.
	_, resp, err := c.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("nope")})
	if err == nil || resp.StatusCode != 400 || !strings.Contains(err.Error(), "Reference not found") {
		t.Fatalf("pipeline for a missing ref: %v", err)
	}
}

// Jobs of a private project are not shown to outsiders; controls need
// Developer.
func TestJobPermissions(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-private")})
	if err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "quick:\n  script: [\"echo secret output\"]\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success")
	job := jobsByName(t, c, p.ID, pl.ID)["quick"]
	outsider := s.CreateUser(t, "outsider")
	reporter := s.CreateUser(t, "reporter")
	if _, _, err := c.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: reporter.ID, AccessLevel: gitlab.Ptr(gitlab.ReporterPermissions)}); err != nil {
		t.Fatal(err)
	}
	paths := []string{"/jobs", fmt.Sprintf("/jobs/%d", job.ID), fmt.Sprintf("/jobs/%d/trace", job.ID), "/pipelines"}
	for _, path := range paths {
		for _, who := range []struct {
			token string
			want  int
		}{{"", 404}, {outsider.Token, 404}, {reporter.Token, 200}} {
			var headers []string
			if who.token != "" {
				headers = []string{"PRIVATE-TOKEN", who.token}
			}
			resp := s.Do(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d%s", p.ID, path), nil, headers...)
			resp.Body.Close()
			if resp.StatusCode != who.want {
				t.Errorf("GET %s as %q: %d, want %d", path, who.token, resp.StatusCode, who.want)
			}
		}
	}
	resp := s.Do(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/retry", p.ID, job.ID), nil, "PRIVATE-TOKEN", reporter.Token)
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("reporter retry: %d", resp.StatusCode)
	}
}
