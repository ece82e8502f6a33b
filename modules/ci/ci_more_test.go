package ci_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A server stopped with one job running and another waiting for the
// executor's only place: at the next start on the same data, the running
// one is failed with a line saying why, and the waiting one runs.
func TestRestartWithJobsRunningAndQueued(t *testing.T) {
	t.Parallel()
	data, password := t.TempDir(), "restart-root-pw"
	oneAtATime := withShell(map[string]any{"concurrency": 1})
	var projectID, sleeperID, waiterID int64
	t.Run("before", func(t *testing.T) {
		s := startWith(t, fennectest.WithDataDir(data, password), oneAtATime)
		c := s.Client
		p := stocktest.NewProject(t, c, "ci-restart", "private")
		projectID = p.ID
		first := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "sleeper:\n  script: [\"echo sleeping; sleep 297\"]\n"})
		pl := waitPipeline(t, c, p.ID, first.ID, "running")
		sleeperID = jobsByName(t, c, p.ID, pl.ID)["sleeper"].ID
		waitTrace(t, c, p.ID, sleeperID, "sleeping")
		second := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "waiter:\n  script: [\"echo waited\"]\n"})
		pl2 := waitPipeline(t, c, p.ID, second.ID, "pending")
		waiterID = jobsByName(t, c, p.ID, pl2.ID)["waiter"].ID
		// It stays pending: the executor's one place is taken.
		time.Sleep(300 * time.Millisecond)
		if j := waitJob(t, c, p.ID, waiterID, "pending", "running", "success"); j.Status != "pending" {
			t.Fatalf("the second job %s with concurrency 1", j.Status)
		}
	})
	// The job's processes went with the server's executor.
	waitGone(t, "sleep 297", 10*time.Second)

	s := startWith(t, fennectest.WithDataDir(data, password), oneAtATime)
	c := s.Client
	sleeper := waitJob(t, c, projectID, sleeperID, "failed", "success", "canceled")
	if sleeper.Status != "failed" || sleeper.FinishedAt == nil {
		t.Fatalf("the job running at the stop: %+v", sleeper)
	}
	if tr := trace(t, c, projectID, sleeperID); !strings.Contains(tr, "sleeping") || !strings.Contains(tr, "the server stopped while the job was running") {
		t.Fatalf("trace of the interrupted job:\n%s", tr)
	}
	// Its trace counts as one: the job can be erased.
	if resp, raw := s.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/erase", projectID, sleeperID), nil, nil, "PRIVATE-TOKEN", s.RootToken); resp.StatusCode != 201 {
		t.Fatalf("erase of the interrupted job: %d %s", resp.StatusCode, raw)
	}
	if waiter := waitJob(t, c, projectID, waiterID, "success", "failed"); waiter.Status != "success" {
		t.Fatalf("the queued job: %+v\n%s", waiter, trace(t, c, projectID, waiterID))
	}
	if tr := trace(t, c, projectID, waiterID); !strings.Contains(tr, "waited") {
		t.Fatalf("trace of the queued job:\n%s", tr)
	}
}

// An executor killed mid-job fails that job with a clear line, comes back,
// and runs the next pipeline; the server keeps serving meanwhile.
func TestExecutorKilledMidJob(t *testing.T) {
	s := startWith(t, fennectest.Durable()) // a kill -9 test keeps production's fsync
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-kill", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "victim:\n  script: [\"echo started; sleep 296\"]\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "running")
	job := jobsByName(t, c, p.ID, pl.ID)["victim"]
	waitTrace(t, c, p.ID, job.ID, "started")
	pids := executorPIDs(t)
	if len(pids) != 1 {
		t.Fatalf("executor processes %v, want one", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	failed := waitJob(t, c, p.ID, job.ID, "failed", "success", "canceled")
	if failed.Status != "failed" {
		t.Fatalf("job after its executor died: %s", failed.Status)
	}
	tr := trace(t, c, p.ID, job.ID)
	if !strings.Contains(tr, "ERROR: Job failed (system failure)") || !strings.Contains(tr, "exited while running job") {
		t.Fatalf("trace after the executor died:\n%s", tr)
	}
	// A new process, and it takes the next pipeline.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if now := executorPIDs(t); len(now) == 1 && now[0] != pids[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the executor was not restarted: %v", executorPIDs(t))
		}
	}
	next := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "after:\n  script: [\"echo back again\"]\n"})
	if pl := waitPipeline(t, c, p.ID, next.ID, "success", "failed"); pl.Status != "success" {
		t.Fatalf("pipeline after the restart: %s", pl.Status)
	}
	// Known gap, in sdk/executor/local: bash dies with its executor
	// (Pdeathsig) but its children are orphaned and keep running; the
	// restarted executor removes the old job directories and not their
	// processes. Reported, and swept here so later tests see no strays.
	if left := processesMatching("sleep 296"); len(left) > 0 {
		t.Logf("processes of the killed job left running (executor gap): %v", left)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// Erase, keep, retry of a successful job, pipeline retry and cancel.
func TestJobAndPipelineControls(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-controls", "private")
	marker := filepath.Join(t.TempDir(), "second-try")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": fmt.Sprintf(`stages: [build, test, deploy]
build:
  stage: build
  script: ["mkdir -p out && echo data > out/f.txt && echo building"]
  artifacts:
    paths: [out/]
flaky:
  stage: test
  script: ["if [ -f %[1]s ]; then echo second try; else touch %[1]s; echo first try; exit 1; fi"]
deploy:
  stage: deploy
  script: ["echo deployed"]
`, marker)})
	pl := waitPipeline(t, c, p.ID, commit.ID, "failed", "success")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "failed" || jobs["build"].Status != "success" || jobs["flaky"].Status != "failed" || jobs["deploy"].Status != "skipped" {
		t.Fatalf("pipeline %s, jobs build %s flaky %s deploy %s", pl.Status, jobs["build"].Status, jobs["flaky"].Status, jobs["deploy"].Status)
	}
	jobURL := func(id int64, rest string) string {
		return fmt.Sprintf("/api/v4/projects/%d/jobs/%d%s", p.ID, id, rest)
	}
	root := []string{"PRIVATE-TOKEN", s.RootToken}

	// Nothing to erase: a skipped job has neither trace nor artifacts.
	resp, body := s.JSON(t, http.MethodPost, jobURL(jobs["deploy"].ID, "/erase"), nil, nil, root...)
	if resp.StatusCode != 403 || strings.TrimSpace(string(body)) != `{"message":"403 Forbidden - Job is not erasable!"}` {
		t.Fatalf("erase of a skipped job: %d %s", resp.StatusCode, body)
	}

	// Pipeline retry: the failed job runs again, the skipped one after it
	// is decided again.
	retried, resp2, err := c.Pipelines.RetryPipelineBuild(p.ID, pl.ID)
	if err != nil || resp2.StatusCode != 201 || retried.ID != pl.ID {
		t.Fatalf("pipeline retry: %+v %v", retried, err)
	}
	pl = waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	after := jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "success" || after["flaky"].ID == jobs["flaky"].ID || after["flaky"].Status != "success" || after["deploy"].Status != "success" {
		t.Fatalf("after the pipeline retry: %s, flaky %+v, deploy %s", pl.Status, after["flaky"], after["deploy"].Status)
	}
	if after["build"].ID != jobs["build"].ID {
		t.Fatalf("the successful build ran again on a pipeline retry")
	}
	if tr := trace(t, c, p.ID, after["flaky"].ID); !strings.Contains(tr, "second try") {
		t.Fatalf("retried flaky's trace:\n%s", tr)
	}
	all, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, nil)
	if err != nil || len(all) != 4 { // build, flaky twice, deploy
		t.Fatalf("pipeline jobs after retry: %d %v", len(all), err)
	}

	// Retry of a successful job: a new pending job that runs.
	again, resp2, err := c.Jobs.RetryJob(p.ID, jobs["build"].ID)
	if err != nil || resp2.StatusCode != 201 || again.ID == jobs["build"].ID || again.Status != "pending" || again.FinishedAt != nil {
		t.Fatalf("retry of a successful job: %+v %v", again, err)
	}
	if j := waitJob(t, c, p.ID, again.ID, "success", "failed"); j.Status != "success" {
		t.Fatalf("the retried build: %s", j.Status)
	}
	// Retrying the same (now replaced) job again is refused.
	if _, resp, err := c.Jobs.RetryJob(p.ID, jobs["build"].ID); err == nil || resp.StatusCode != 403 {
		t.Fatalf("second retry of a replaced job: %v", err)
	}

	// Keep: 200, the job as the control answers show it.
	var kept map[string]any
	resp, body = s.JSON(t, http.MethodPost, jobURL(again.ID, "/artifacts/keep"), nil, &kept, root...)
	if resp.StatusCode != 200 || kept["artifacts_file"] == nil || kept["download_url"] != nil {
		t.Fatalf("keep: %d %s", resp.StatusCode, body)
	}
	if _, hasPipeline := kept["pipeline"]; hasPipeline {
		t.Fatalf("keep answers the pipeline: %s", body)
	}
	resp, _ = s.JSON(t, http.MethodPost, jobURL(jobs["deploy"].ID, "/artifacts/keep"), nil, nil, root...)
	if resp.StatusCode != 404 {
		t.Fatalf("keep of a job without artifacts: %d", resp.StatusCode)
	}

	// Erase: trace and artifacts gone, the job answered without them.
	var erased map[string]any
	resp, body = s.JSON(t, http.MethodPost, jobURL(again.ID, "/erase"), nil, &erased, root...)
	if resp.StatusCode != 201 || erased["artifacts_file"] != nil || erased["status"] != "success" {
		t.Fatalf("erase: %d %s", resp.StatusCode, body)
	}
	if _, ok := erased["download_url"]; !ok {
		t.Fatalf("erase answer lacks download_url: %s", body)
	}
	for _, rest := range []string{"/trace", "/artifacts"} {
		if resp, _ := s.JSON(t, http.MethodGet, jobURL(again.ID, rest), nil, nil, root...); resp.StatusCode != 404 {
			t.Fatalf("GET %s of an erased job: %d", rest, resp.StatusCode)
		}
	}
	if j, _, err := c.Jobs.GetJob(p.ID, again.ID); err != nil || j.ArtifactsFile.Filename != "" {
		t.Fatalf("erased job still shows artifacts: %+v %v", j.ArtifactsFile, err)
	}
	resp, body = s.JSON(t, http.MethodPost, jobURL(again.ID, "/erase"), nil, nil, root...)
	if resp.StatusCode != 403 || !strings.Contains(string(body), "Job is not erasable!") {
		t.Fatalf("second erase: %d %s", resp.StatusCode, body)
	}
	// By ref: the latest successful build was erased; GitLab answers 404.
	if resp, _ := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/master/download?job=build", p.ID), nil, nil, root...); resp.StatusCode != 404 {
		t.Fatalf("artifacts by ref of an erased job: %d", resp.StatusCode)
	}

	// Pipeline cancel: 200, its running and created jobs canceled.
	slow := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `stages: [one, two]
slow:
  stage: one
  script: ["echo slow; sleep 295"]
later:
  stage: two
  script: ["echo never"]
`})
	spl := waitPipeline(t, c, p.ID, slow.ID, "running")
	waitTrace(t, c, p.ID, jobsByName(t, c, p.ID, spl.ID)["slow"].ID, "slow")
	canceled, resp2, err := c.Pipelines.CancelPipelineBuild(p.ID, spl.ID)
	if err != nil || resp2.StatusCode != 200 || canceled.Status != "canceled" {
		t.Fatalf("pipeline cancel: %+v %v", canceled, err)
	}
	for name, j := range jobsByName(t, c, p.ID, spl.ID) {
		if j.Status != "canceled" {
			t.Errorf("%s after the pipeline's cancel: %s", name, j.Status)
		}
	}
	waitGone(t, "sleep 295", 10*time.Second)
}

// Artifacts with expire_in go when it passes, unless kept.
func TestArtifactsExpire(t *testing.T) {
	t.Parallel()
	s := startWith(t, withReapInterval(100*time.Millisecond))
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-expire", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `keeper:
  script: ["echo a > a.txt"]
  artifacts: {paths: [a.txt], expire_in: 4 sec}
dropped:
  script: ["echo b > b.txt"]
  artifacts: {paths: [b.txt], expire_in: 4 sec}
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if _, resp, err := c.Jobs.KeepArtifacts(p.ID, jobs["keeper"].ID); err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep: %v", err)
	}
	artifacts := func(id int64) int {
		resp, _ := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/artifacts", p.ID, id), nil, nil, "PRIVATE-TOKEN", s.RootToken)
		return resp.StatusCode
	}
	if artifacts(jobs["dropped"].ID) != 200 {
		t.Fatal("the artifacts are gone before expire_in passed")
	}
	for deadline := time.Now().Add(15 * time.Second); artifacts(jobs["dropped"].ID) != 404; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("expired artifacts still served")
		}
	}
	if j, _, err := c.Jobs.GetJob(p.ID, jobs["dropped"].ID); err != nil || j.ArtifactsFile.Filename != "" {
		t.Fatalf("expired job still shows artifacts_file: %+v %v", j.ArtifactsFile, err)
	}
	if resp, _ := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/master/download?job=dropped", p.ID), nil, nil, "PRIVATE-TOKEN", s.RootToken); resp.StatusCode != 404 {
		t.Fatalf("expired artifacts by ref: %d", resp.StatusCode)
	}
	time.Sleep(300 * time.Millisecond) // a few more passes
	if artifacts(jobs["keeper"].ID) != 200 {
		t.Fatal("kept artifacts were removed")
	}
	// The file is gone from the data dir too.
	left, _ := filepath.Glob(filepath.Join(s.DataDir, "ci", "artifacts", "*", fmt.Sprintf("%d.zip", jobs["dropped"].ID)))
	if len(left) != 0 {
		t.Fatalf("expired archive left on disk: %v", left)
	}
}

// Project variables: Master only, GitLab's 400s, protected ones only on
// protected branches, and every one in the job's environment.
func TestProjectVariables(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-vars", "private")
	dev := s.CreateUser(t, "vardev")
	if _, _, err := c.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: dev.ID, AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/api/v4/projects/%d/variables", p.ID)
	post := func(token, body string) (int, string) {
		resp, raw := s.JSON(t, http.MethodPost, path, strings.NewReader(body), nil, "PRIVATE-TOKEN", token, "Content-Type", "application/json")
		return resp.StatusCode, strings.TrimSpace(string(raw))
	}
	if resp, raw := s.JSON(t, http.MethodGet, path, nil, nil, "PRIVATE-TOKEN", dev.Token); resp.StatusCode != 403 {
		t.Fatalf("developer lists variables: %d %s", resp.StatusCode, raw)
	}
	if code, raw := post(dev.Token, `{"key":"DEV","value":"x"}`); code != 403 {
		t.Fatalf("developer creates a variable: %d %s", code, raw)
	}
	if code, raw := post(s.RootToken, `{"key":"bad-key!","value":"x"}`); code != 400 || raw != `{"message":{"key":["can contain only letters, digits and '_'."]}}` {
		t.Fatalf("bad key: %d %s", code, raw)
	}
	if code, raw := post(s.RootToken, `{"key":"PLAIN_SECRET","value":"plain-value"}`); code != 201 || raw != `{"key":"PLAIN_SECRET","value":"plain-value","protected":false}` {
		t.Fatalf("create: %d %s", code, raw)
	}
	if code, raw := post(s.RootToken, `{"key":"PLAIN_SECRET","value":"again"}`); code != 400 || raw != `{"message":{"key":["has already been taken"]}}` {
		t.Fatalf("taken key: %d %s", code, raw)
	}
	if code, raw := post(s.RootToken, `{"key":"PROTECTED_SECRET","value":"protected-value","protected":true}`); code != 201 {
		t.Fatalf("create protected: %d %s", code, raw)
	}
	if _, _, err := c.ProjectVariables.UpdateVariable(p.ID, "PLAIN_SECRET", &gitlab.UpdateProjectVariableOptions{Value: gitlab.Ptr("plain value 2")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{"README": "vars\n"}) // master exists, to be protected
	if resp, raw := s.JSON(t, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d/repository/branches/master/protect", p.ID), nil, nil, "PRIVATE-TOKEN", s.RootToken); resp.StatusCode != 200 {
		t.Fatalf("protect master: %d %s", resp.StatusCode, raw)
	}
	// The values are masked in the trace (8 characters and more): the
	// script compares them itself.
	ciFile := map[string]string{".gitlab-ci.yml": "show:\n  script:\n" +
		"    - 'echo \"plain=$PLAIN_SECRET protected=${PROTECTED_SECRET:-none}\"'\n" +
		"    - '[ \"$PLAIN_SECRET\" = \"plain value 2\" ] && echo plain-matches'\n" +
		"    - '[ \"${PROTECTED_SECRET:-}\" = protected-value ] && echo protected-matches || true'\n"}
	onMaster := stocktest.CommitFiles(t, c, p.ID, "master", "ci", ciFile)
	pl := waitPipeline(t, c, p.ID, onMaster.ID, "success", "failed")
	if tr := trace(t, c, p.ID, jobsByName(t, c, p.ID, pl.ID)["show"].ID); !strings.Contains(tr, "plain=[MASKED] protected=[MASKED]\n") ||
		!strings.Contains(tr, "\nplain-matches\n") || !strings.Contains(tr, "\nprotected-matches\n") {
		t.Fatalf("job on the protected branch:\n%s", tr)
	}
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	onFeature := stocktest.CommitFiles(t, c, p.ID, "feature", "ci", map[string]string{"README": "feature\n"})
	pl = waitPipeline(t, c, p.ID, onFeature.ID, "success", "failed")
	if tr := trace(t, c, p.ID, jobsByName(t, c, p.ID, pl.ID)["show"].ID); !strings.Contains(tr, "plain=[MASKED] protected=none\n") ||
		!strings.Contains(tr, "\nplain-matches\n") || strings.Contains(tr, "\nprotected-matches\n") {
		t.Fatalf("job on an unprotected branch:\n%s", tr)
	}
	if resp, raw := s.JSON(t, http.MethodDelete, path+"/PLAIN_SECRET", nil, nil, "PRIVATE-TOKEN", s.RootToken); resp.StatusCode != 200 || !strings.Contains(string(raw), `"key":"PLAIN_SECRET"`) {
		t.Fatalf("delete: %d %s", resp.StatusCode, raw)
	}
	if resp, _ := s.JSON(t, http.MethodGet, path+"/PLAIN_SECRET", nil, nil, "PRIVATE-TOKEN", s.RootToken); resp.StatusCode != 404 {
		t.Fatalf("deleted variable: %d", resp.StatusCode)
	}
}

// CI_JOB_TOKEN reads the repository while its job runs, never the API,
// and nothing once the job has ended.
func TestJobTokenLifetime(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-token", "private")
	release := filepath.Join(t.TempDir(), "release")
	// The job hands its token over in a file: the trace masks it.
	tokenFile := filepath.Join(t.TempDir(), "token")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": fmt.Sprintf(`holder:
  script:
    - echo "$CI_JOB_TOKEN" > %s
    - git ls-remote "$CI_REPOSITORY_URL" >/dev/null && echo ls-remote ok
    - for i in $(seq 1 300); do [ -f %s ] && break; sleep 0.1; done
`, tokenFile, release)})
	pl := waitPipeline(t, c, p.ID, commit.ID, "running")
	job := jobsByName(t, c, p.ID, pl.ID)["holder"]
	waitTrace(t, c, p.ID, job.ID, "ls-remote ok")
	token := waitFile(t, tokenFile)
	if len(token) < 20 {
		t.Fatalf("no token in %s: %q", tokenFile, token)
	}
	remote := projectGitURL(s, p, "gitlab-ci-token", token)
	if out, err := tryGit("", "ls-remote", remote); err != nil {
		t.Fatalf("ls-remote with the token of a running job: %v\n%s", err, out)
	}
	for _, h := range [][]string{{"PRIVATE-TOKEN", token}, {"Authorization", "Bearer " + token}} {
		if resp, raw := s.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, h...); resp.StatusCode != 401 {
			t.Errorf("GET /user with the job token in %s: %d %s", h[0], resp.StatusCode, raw)
		}
		if resp, _ := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", p.ID), nil, nil, h...); resp.StatusCode != 401 {
			t.Errorf("GET the project with the job token in %s: %d", h[0], resp.StatusCode)
		}
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, p.ID, job.ID, "success")
	if out, err := tryGit("", "ls-remote", remote); err == nil {
		t.Fatalf("ls-remote with the token of a finished job worked:\n%s", out)
	}
}

// GET trace while the job runs answers a growing prefix of the final log.
func TestLiveTrace(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-live", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "talker:\n  script: ['for i in $(seq 1 50); do echo line $i; sleep 0.1; done']\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "running", "success")
	job := jobsByName(t, c, p.ID, pl.ID)["talker"]
	var seen []string
	for {
		j, _, err := c.Jobs.GetJob(p.ID, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		r, resp, err := c.Jobs.GetTraceFile(p.ID, job.ID)
		if err == nil {
			b := make([]byte, r.Len())
			_, _ = r.Read(b)
			if j.Status == "running" && strings.Contains(string(b), "line ") && (len(seen) == 0 || string(b) != seen[len(seen)-1]) {
				seen = append(seen, string(b))
			}
		} else if resp == nil || resp.StatusCode != 404 {
			t.Fatal(err)
		}
		if j.Status != "running" && j.Status != "pending" {
			if j.Status != "success" {
				t.Fatalf("talker %s", j.Status)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	final := trace(t, c, p.ID, job.ID)
	if !strings.Contains(final, "line 50") {
		t.Fatalf("final trace:\n%s", final)
	}
	if len(seen) < 3 {
		t.Fatalf("only %d distinct traces seen while the job ran", len(seen))
	}
	for i, snap := range seen {
		if !strings.HasPrefix(final, snap) {
			t.Fatalf("trace %d seen while running is not a prefix of the final one:\n%q", i, snap)
		}
		if i > 0 && len(snap) <= len(seen[i-1]) {
			t.Fatalf("trace shrank: %d then %d bytes", len(seen[i-1]), len(snap))
		}
	}
}

// A job printing more than ci.max_trace_bytes fails with a line saying so.
func TestTraceCap(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s := startWith(t, fennectest.WithModuleConfig[ci.Config]("ci", func(c *ci.Config) { c.MaxTraceBytes = limit }))
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-cap", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "chatty:\n  script: ['yes 0123456789abcdef | head -c 1000000', 'echo survived']\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "failed", "success")
	job := jobsByName(t, c, p.ID, pl.ID)["chatty"]
	if pl.Status != "failed" || job.Status != "failed" {
		t.Fatalf("pipeline %s, job %s", pl.Status, job.Status)
	}
	tr := trace(t, c, p.ID, job.ID)
	if strings.Contains(tr, "survived") || !strings.Contains(tr, fmt.Sprintf("ERROR: the job's log passed its limit of %d bytes", limit)) {
		t.Fatalf("trace of %d bytes ends:\n%s", len(tr), tr[max(0, len(tr)-500):])
	}
	if len(tr) > limit+4096 {
		t.Fatalf("trace of %d bytes past a limit of %d", len(tr), limit)
	}
}

// git push over HTTP makes pipelines: a branch push, and a tag push with
// tag=true, only/except deciding which jobs each gets.
func TestGitPushPipelines(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-push", "private")
	g := newGitWork(t, s, p)
	sha := g.commit(t, "ci", map[string]string{".gitlab-ci.yml": `branch-build:
  script: ["echo building $CI_COMMIT_REF_NAME"]
  except: [tags]
release:
  script: ["echo releasing $CI_COMMIT_TAG"]
  only: [tags]
feature-only:
  script: ["echo feature"]
  only: [/^feature-.*$/]
`})
	g.push(t, "master")
	pl := waitRefPipeline(t, c, p.ID, "master", "success", "failed")
	if pl.Status != "success" || pl.SHA != sha || pl.Tag || pl.BeforeSHA != strings.Repeat("0", 40) {
		t.Fatalf("branch pipeline %+v", pl)
	}
	if jobs := jobsByName(t, c, p.ID, pl.ID); len(jobs) != 1 || jobs["branch-build"] == nil {
		t.Fatalf("branch pipeline jobs %v", jobs)
	}
	runGit(t, g.dir, "tag", "-a", "v1.0", "-m", "release 1.0")
	g.push(t, "v1.0")
	tpl := waitRefPipeline(t, c, p.ID, "v1.0", "success", "failed")
	if tpl.Status != "success" || !tpl.Tag || tpl.SHA != sha {
		t.Fatalf("tag pipeline %+v", tpl)
	}
	jobs := jobsByName(t, c, p.ID, tpl.ID)
	if len(jobs) != 1 || jobs["release"] == nil || !jobs["release"].Tag {
		t.Fatalf("tag pipeline jobs %v", jobs)
	}
	if tr := trace(t, c, p.ID, jobs["release"].ID); !strings.Contains(tr, "releasing v1.0") {
		t.Fatalf("release trace:\n%s", tr)
	}
	// A lightweight tag too.
	runGit(t, g.dir, "tag", "v1.1")
	g.push(t, "v1.1")
	if lpl := waitRefPipeline(t, c, p.ID, "v1.1", "success", "failed"); lpl.Status != "success" || !lpl.Tag {
		t.Fatalf("lightweight tag pipeline %+v", lpl)
	}
	// A second push of a branch: before is the previous head.
	sha2 := g.commit(t, "more", map[string]string{"README": "more\n"})
	runGit(t, g.dir, "branch", "feature-x")
	g.push(t, "master", "feature-x")
	// master's new pipeline (feature-x's has the same sha).
	var pl2 *gitlab.PipelineInfo
	for deadline := time.Now().Add(30 * time.Second); pl2 == nil; time.Sleep(50 * time.Millisecond) {
		list, _, err := c.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{Ref: gitlab.Ptr("master")})
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("no master pipeline for %s: %v", sha2, err)
		}
		if len(list) > 0 && list[0].SHA == sha2 {
			pl2 = list[0]
		}
	}
	if full, _, err := c.Pipelines.GetPipeline(p.ID, pl2.ID); err != nil || full.BeforeSHA != sha {
		t.Fatalf("second master pipeline %+v %v", full, err)
	}
	fpl := waitRefPipeline(t, c, p.ID, "feature-x", "success", "failed")
	if jobs := jobsByName(t, c, p.ID, fpl.ID); len(jobs) != 2 || jobs["feature-only"] == nil || jobs["branch-build"] == nil {
		t.Fatalf("feature branch jobs %v", jobs)
	}
}

// Editing an environment and a variable reaches the right record (their
// inputs embed the path parameters; a lost :id answered 404).
func TestEditEnvironment(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-envs", "private")
	env, resp, err := c.Environments.CreateEnvironment(p.ID, &gitlab.CreateEnvironmentOptions{Name: gitlab.Ptr("staging"), ExternalURL: gitlab.Ptr("https://staging.example.com")})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create environment: %v", err)
	}
	edited, resp, err := c.Environments.EditEnvironment(p.ID, env.ID, &gitlab.EditEnvironmentOptions{ExternalURL: gitlab.Ptr("https://stage.example.com")})
	if err != nil || resp.StatusCode != 200 || edited.ExternalURL != "https://stage.example.com" || edited.Name != "staging" {
		t.Fatalf("edit environment: %+v %v", edited, err)
	}
}
