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
	"slices"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A shared runner registered with the instance's token takes a job with
// run-single and runs its script with the shell executor.
func TestRunnerRunSingle(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "single", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	startRunSingle(t, s, r.Token, "--max-builds", "1", "--wait-timeout", "30")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "hello:\n  script:\n    - echo hello-from-$CI_JOB_NAME-$CI_RUNNER_ID\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline %s", pl.Status)
	}
	j := jobsByName(t, c, p.ID, pl.ID)["hello"]
	if got := trace(t, c, p.ID, j.ID); !strings.Contains(got, "hello-from-hello-"+store.IDString(r.ID)) {
		t.Fatalf("trace:\n%s", got)
	}
	if j.Runner.ID != r.ID || j.Runner.Description != "test runner" || !j.Runner.IsShared || !j.Runner.Active {
		t.Fatalf("runner of the job: %+v", j.Runner)
	}
	_ = http.StatusOK
	_ = time.Second
	_ = gitlab.Ptr(1)
}

// A project's runner registered with `gitlab-runner register` and its
// runners_token runs a pipeline pushed with git end to end: the clone with
// the job token, variables, before/after_script, a failing job, artifacts
// uploaded by one job and downloaded by the next, the live trace, a cancel
// that stops the script, and a retry.
func TestRunnerPipelineEndToEnd(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	bin := gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "e2e", "private")
	full, _, err := c.Projects.GetProject(p.ID, nil)
	if err != nil || full.RunnersToken == "" {
		t.Fatalf("runners_token: %v %q", err, full.RunnersToken)
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "config.toml")
	reg := exec.Command(bin, "register", "--non-interactive", "--url", s.URL+"/", "--registration-token", full.RunnersToken,
		"--executor", "shell", "--description", "e2e runner", "--tag-list", "e2e,linux", "--run-untagged", "--config", config)
	reg.Env = runnerEnv()
	if out, err := reg.CombinedOutput(); err != nil {
		t.Fatalf("register: %v\n%s", err, out)
	}
	runnersList, _, err := c.Runners.ListProjectRunners(p.ID, nil)
	if err != nil || len(runnersList) != 1 || runnersList[0].Description != "e2e runner" || runnersList[0].IsShared {
		t.Fatalf("project runners: %v %+v", err, runnersList)
	}
	runnerID := runnersList[0].ID
	details, _, err := c.Runners.GetRunnerDetails(runnerID)
	if err != nil || !slices.Equal(details.TagList, []string{"e2e", "linux"}) || len(details.Projects) != 1 || details.Projects[0].ID != p.ID {
		t.Fatalf("runner details: %v %+v", err, details)
	}
	verify := exec.Command(bin, "verify", "--config", config)
	verify.Env = runnerEnv()
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), "is alive") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	// The runner asks for its next job a check interval after the last
	// one (3 s by default): 1 s keeps the test short.
	raw, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	tuned := strings.Replace(string(raw), "check_interval = 0", "check_interval = 1", 1)
	if tuned == string(raw) {
		t.Fatalf("no check_interval in the registered config:\n%s", raw)
	}
	if err := os.WriteFile(config, []byte(tuned), 0o600); err != nil {
		t.Fatal(err)
	}
	startRunnerProc(t, dir, "run", "--config", config, "--working-directory", dir)

	stopFile := filepath.Join(t.TempDir(), "stop")
	// The secret is long enough to be masked (8 characters and more).
	for k, v := range map[string]string{"SECRET_VAR": "s3cret-value", "STOP_FILE": stopFile} {
		if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr(k), Value: gitlab.Ptr(v)}); err != nil {
			t.Fatal(err)
		}
	}
	work := newGitWork(t, s, p)
	sha := work.commit(t, "pipeline", map[string]string{".gitlab-ci.yml": `
variables:
  GREETING: hello-from-yaml
before_script:
  - echo before-$CI_JOB_NAME
after_script:
  - echo after-script-ran-$CI_JOB_NAME
stages: [build, test]
build:
  stage: build
  script:
    - mkdir -p out && echo built-$CI_COMMIT_SHA > out/result.txt
    - echo "greeting=$GREETING project=$CI_PROJECT_PATH"
    - test "$SECRET_VAR" = s3cret-value && echo secret-ok
    - test -f README.md && echo cloned-ok
  artifacts:
    paths: [out/]
    expire_in: 1 day
use:
  stage: test
  script:
    - cat out/result.txt
broken:
  stage: test
  allow_failure: true
  script:
    - echo going-to-fail
    - exit 3
`, "README.md": "e2e\n"})
	work.push(t, "master")
	pl := waitPipeline(t, c, p.ID, sha, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "success" || jobs["build"].Status != "success" || jobs["use"].Status != "success" || jobs["broken"].Status != "failed" {
		t.Fatalf("pipeline %s: build %s, use %s, broken %s", pl.Status, jobs["build"].Status, jobs["use"].Status, jobs["broken"].Status)
	}
	build := trace(t, c, p.ID, jobs["build"].ID)
	for _, want := range []string{"before-build", "greeting=hello-from-yaml project=" + p.PathWithNamespace, "secret-ok", "cloned-ok", "after-script-ran-build", "Uploading artifacts"} {
		if !strings.Contains(build, want) {
			t.Errorf("build trace lacks %q:\n%s", want, build)
		}
	}
	if strings.Contains(build, "s3cret-value") {
		t.Errorf("a secret variable's value is in the trace")
	}
	if use := trace(t, c, p.ID, jobs["use"].ID); !strings.Contains(use, "built-"+sha) {
		t.Errorf("the later job did not get the artifacts:\n%s", use)
	}
	if broken := trace(t, c, p.ID, jobs["broken"].ID); !strings.Contains(broken, "going-to-fail") || !strings.Contains(broken, "exit status 3") {
		t.Errorf("failing job's trace:\n%s", broken)
	}
	if a := jobs["build"].ArtifactsFile; a.Filename != "artifacts.zip" || a.Size == 0 {
		t.Errorf("artifacts_file %+v", a)
	}
	if jobs["build"].Runner.ID != runnerID || jobs["broken"].Runner.ID != runnerID {
		t.Errorf("runner fields: %+v %+v", jobs["build"].Runner, jobs["broken"].Runner)
	}
	zipped, _, err := c.Jobs.GetJobArtifacts(p.ID, jobs["build"].ID)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(zipped)
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range zr.File {
		found = found || f.Name == "out/result.txt"
	}
	if !found {
		t.Errorf("archive lacks out/result.txt")
	}

	// A long job: its trace is read live, a cancel stops its script, a
	// retry runs it again.
	sha = work.commit(t, "long", map[string]string{".gitlab-ci.yml": `
long:
  script:
    - while [ ! -f "$STOP_FILE" ]; do echo tick; sleep 0.213; done
    - echo stopped-by-file
`})
	work.push(t, "master")
	pl = waitPipeline(t, c, p.ID, sha, "running")
	long := jobsByName(t, c, p.ID, pl.ID)["long"]
	waitTrace(t, c, p.ID, long.ID, "tick\ntick\n")
	// A snapshot may fall between two sleeps: look until one is seen.
	if !waitProcess("sleep 0.213", 20*time.Second) {
		t.Fatal("the script is not running")
	}
	if _, _, err := c.Jobs.CancelJob(p.ID, long.ID); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "sleep 0.213", 20*time.Second)
	if j := waitJob(t, c, p.ID, long.ID, "canceled"); j.Status != "canceled" {
		t.Fatal(j.Status)
	}
	if err := os.WriteFile(stopFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	retried, _, err := c.Jobs.RetryJob(p.ID, long.ID)
	if err != nil {
		t.Fatal(err)
	}
	if j := waitJob(t, c, p.ID, retried.ID, "success", "failed"); j.Status != "success" || j.Runner.ID != runnerID {
		t.Fatalf("retried job: %s %+v", j.Status, j.Runner)
	}
	if got := trace(t, c, p.ID, retried.ID); !strings.Contains(got, "stopped-by-file") {
		t.Fatalf("retry trace:\n%s", got)
	}

	// gitlab-runner unregister removes it.
	unregister := exec.Command(bin, "unregister", "--all-runners", "--config", config)
	unregister.Env = runnerEnv()
	if out, err := unregister.CombinedOutput(); err != nil || !strings.Contains(string(out), "Unregistering runner from GitLab succeeded") {
		t.Fatalf("unregister: %v\n%s", err, out)
	}
	if list, _, err := c.Runners.ListAllRunners(nil); err != nil || len(list) != 0 {
		t.Fatalf("runners after unregister: %v %+v", err, list)
	}
}

// Three runners poll at once for a pipeline of 30 quick jobs: each job
// runs exactly once.
func TestRunnersThirtyJobsRunOnce(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "thirty", "private")
	logFile := filepath.Join(t.TempDir(), "runs.log")
	if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("LOG_FILE"), Value: gitlab.Ptr(logFile)}); err != nil {
		t.Fatal(err)
	}
	shared := sharedToken(t, s)
	var ids []int64
	for i := range 3 {
		r := registerRunner(t, s, shared, map[string]any{"description": "runner-" + store.IDString(int64(i))})
		ids = append(ids, r.ID)
		startRunSingle(t, s, r.Token)
	}
	var yml strings.Builder
	for i := range 30 {
		fmt.Fprintf(&yml, "job%02d:\n  script:\n    - echo \"$CI_JOB_ID $CI_RUNNER_ID\" >> \"$LOG_FILE\"\n", i)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": yml.String()})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline %s", pl.Status)
	}
	jobs, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, &gitlab.ListJobsOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil || len(jobs) != 30 {
		t.Fatalf("jobs: %v %d", err, len(jobs))
	}
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	ran := map[string]string{}
	for _, l := range lines {
		job, runner, _ := strings.Cut(l, " ")
		if prev, twice := ran[job]; twice {
			t.Errorf("job %s ran twice (runners %s and %s)", job, prev, runner)
		}
		ran[job] = runner
	}
	perRunner := map[int64]int{}
	for _, j := range jobs {
		if ran[store.IDString(j.ID)] != store.IDString(j.Runner.ID) || !slices.Contains(ids, j.Runner.ID) {
			t.Errorf("job %d: ran on %q, runner field %d", j.ID, ran[store.IDString(j.ID)], j.Runner.ID)
		}
		perRunner[j.Runner.ID]++
	}
	if len(lines) != 30 {
		t.Errorf("%d runs for 30 jobs", len(lines))
	}
	total := 0
	for _, id := range ids {
		list, _, err := c.Runners.ListRunnerJobs(id, &gitlab.ListRunnerJobsOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
		if err != nil || len(list) != perRunner[id] {
			t.Errorf("runner %d jobs: %v %d, want %d", id, err, len(list), perRunner[id])
		}
		total += len(list)
	}
	t.Logf("jobs per runner: %v", perRunner)
	if total != 30 {
		t.Errorf("runners' jobs lists hold %d jobs", total)
	}
}

// A runner killed with SIGKILL in the middle of a job stops reporting: the
// job fails as stuck (runner_system_failure) once it has been silent past
// the timeout.
func TestRunnerKilledJobFailsAsStuck(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	gitlabRunner(t)
	const silence = 3 * time.Second
	s := startRunners(t, fennectest.Durable(), runnerConfig(func(c *ci.Config) { c.RunnerSilenceTimeout = silence }))
	c := s.Client
	p := stocktest.NewProject(t, c, "killed", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	proc := startRunSingle(t, s, r.Token)
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "forever:\n  script:\n    - while true; do echo alive; sleep 0.219; done\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "running")
	job := jobsByName(t, c, p.ID, pl.ID)["forever"]
	waitTrace(t, c, p.ID, job.ID, "alive\nalive\n")
	killed := time.Now()
	proc.kill()
	got := waitJobStatus(t, s, p.ID, job.ID, silence+5*time.Second, "failed")
	took := time.Since(killed)
	t.Logf("failed %v after the kill (silence timeout %v)", took.Round(time.Millisecond), silence)
	// The silence counts from the runner's last report, which came up to a
	// trace interval (1 s) before the kill, and later still when the
	// runner lags under load: two seconds less leaves room for both and
	// still shows the job was not failed at once.
	if took < silence-2*time.Second {
		t.Errorf("failed after %v, before the runner was silent for %v", took, silence)
	}
	if tr := trace(t, c, p.ID, job.ID); !strings.Contains(tr, "the runner sent no trace nor keep-alive") {
		t.Errorf("trace:\n%s", tr)
	}
	if got["runner"] == nil {
		t.Errorf("job lost its runner: %v", got)
	}
	if pl := waitPipeline(t, c, p.ID, commit.ID, "failed"); pl.Status != "failed" {
		t.Fatal(pl.Status)
	}
}

// Executor plugins and runners take jobs from the same queue: an untagged
// job goes to the shell executor plugin, a job tagged for the runner to
// the runner.
func TestRunnersBesideExecutors(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	gitlabRunner(t)
	s := startWith(t, runnerConfig(nil))
	c := s.Client
	p := stocktest.NewProject(t, c, "beside", "private")
	r := registerRunner(t, s, sharedToken(t, s), map[string]any{"tag_list": []string{"remote"}, "run_untagged": false})
	startRunSingle(t, s, r.Token)
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "local:\n  script: [echo on-$CI_RUNNER_ID-executor]\nremote:\n  tags: [remote]\n  script: [echo on-runner-$CI_RUNNER_ID]\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "success" {
		t.Fatalf("pipeline %s", pl.Status)
	}
	if jobs["local"].Runner.ID != 0 || jobs["remote"].Runner.ID != r.ID {
		t.Errorf("runners: local %+v, remote %+v", jobs["local"].Runner, jobs["remote"].Runner)
	}
	if tr := trace(t, c, p.ID, jobs["remote"].ID); !strings.Contains(tr, "on-runner-"+store.IDString(r.ID)) {
		t.Errorf("remote trace:\n%s", tr)
	}
	if tr := trace(t, c, p.ID, jobs["local"].ID); !strings.Contains(tr, "on--executor") {
		t.Errorf("local trace:\n%s", tr)
	}
}
