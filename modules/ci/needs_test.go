package ci_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/ci/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// dagFile is a pipeline whose jobs with needs run out of stage order: slow
// (stage build) only finishes once `early` (stage test, which needs only
// fast) and `first` (stage deploy, needs: []) have both run, which they
// can do only while it still runs. `late` has no needs and waits for every
// earlier stage, slow included, as GitLab's staged jobs do. Artifacts come
// only from needed jobs, and not with artifacts: false.
const dagFile = `stages: [build, test, deploy]
variables:
  HANDSHAKE: %s
slow:
  stage: build
  script:
    - for i in $(seq 1 1200); do [ -f "$HANDSHAKE/early" ] && [ -f "$HANDSHAKE/first" ] && exit 0; sleep 0.05; done; exit 1
fast:
  stage: build
  script: [mkdir -p out, echo "fast was here" > out/fast.txt]
  artifacts: {paths: [out/]}
other:
  stage: build
  script: [mkdir -p other, echo other > other/o.txt]
  artifacts: {paths: [other/]}
early:
  stage: test
  needs: [fast]
  script:
    - cat out/fast.txt
    - if [ -e other/o.txt ]; then echo "unexpected artifacts of other"; exit 1; fi
    - touch "$HANDSHAKE/early"
bare:
  stage: test
  needs: [{job: fast, artifacts: false}]
  script:
    - if [ -e out/fast.txt ]; then echo "artifacts despite artifacts false"; exit 1; fi
    - echo "no artifacts, as asked"
first:
  stage: deploy
  needs: []
  script: [touch "$HANDSHAKE/first"]
late:
  stage: deploy
  script: [cat out/fast.txt other/o.txt]
`

// Jobs with needs start as soon as what they need is done, across
// stages; needs: [] starts at once; a staged job after them still waits
// for its earlier stages; artifacts pass from needed jobs only.
func TestNeedsRunOutOfStageOrder(t *testing.T) {
	t.Parallel()
	s := startWith(t, withShell(map[string]any{"concurrency": 6}))
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-needs-dag")})
	if err != nil {
		t.Fatal(err)
	}
	handshake := t.TempDir()
	file := strings.Replace(dagFile, "%s", handshake, 1)
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	for name, j := range jobs {
		if j.Status != "success" {
			t.Errorf("%s: %s\n%s", name, j.Status, trace(t, c, p.ID, j.ID))
		}
	}
	if pl.Status != "success" || len(jobs) != 7 {
		t.Fatalf("pipeline %s with %d jobs", pl.Status, len(jobs))
	}
	slow, early, first, late := jobs["slow"], jobs["early"], jobs["first"], jobs["late"]
	// The handshake proves it; the times say it too.
	if !early.StartedAt.Before(*slow.FinishedAt) || !first.StartedAt.Before(*slow.FinishedAt) {
		t.Errorf("early started %v and first %v, slow finished %v", early.StartedAt, first.StartedAt, slow.FinishedAt)
	}
	if late.StartedAt.Before(*slow.FinishedAt) || late.StartedAt.Before(*early.FinishedAt) {
		t.Errorf("late started %v before its earlier stages finished (slow %v, early %v)", late.StartedAt, slow.FinishedAt, early.FinishedAt)
	}
	if got := trace(t, c, p.ID, early.ID); !strings.Contains(got, "fast was here") {
		t.Errorf("early's trace:\n%s", got)
	}
	if got := trace(t, c, p.ID, jobs["bare"].ID); !strings.Contains(got, "no artifacts, as asked") {
		t.Errorf("bare's trace:\n%s", got)
	}
	if got := trace(t, c, p.ID, late.ID); !strings.Contains(got, "fast was here") || !strings.Contains(got, "other") {
		t.Errorf("late's trace:\n%s", got)
	}
}

// An optional need of a job only/except leaves out counts as met; a
// failed need skips the jobs that need it (and theirs), and a retry of it
// lets them run after all.
func TestNeedsOptionalFailedAndRetried(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-needs-fail")})
	if err != nil {
		t.Fatal(err)
	}
	// flaky fails until its marker exists: the retry succeeds.
	marker := filepath.Join(t.TempDir(), "fixed")
	file := `stages: [build, test, deploy]
tagged:
  stage: build
  only: [tags]
  script: [echo tag]
flaky:
  stage: build
  script: ['if [ -f "` + marker + `" ]; then echo fixed; else touch "` + marker + `"; exit 3; fi']
uses:
  stage: test
  needs: [{job: tagged, optional: true}]
  script: [echo optional need met]
after:
  stage: test
  needs: [flaky]
  script: [echo after flaky]
chain:
  stage: deploy
  needs: [after]
  script: [echo chain]
rescue:
  stage: deploy
  needs: [flaky]
  when: on_failure
  script: [echo rescue]
`
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	want := map[string]string{"flaky": "failed", "uses": "success", "after": "skipped", "chain": "skipped", "rescue": "success"}
	got := map[string]string{}
	for name, j := range jobs {
		got[name] = j.Status
	}
	if pl.Status != "failed" || !maps.Equal(got, want) {
		t.Fatalf("pipeline %s, jobs %v, want %v", pl.Status, got, want)
	}
	if _, _, err := c.Jobs.RetryJob(p.ID, jobs["flaky"].ID); err != nil {
		t.Fatal(err)
	}
	pl = waitPipeline(t, c, p.ID, commit.ID, "success")
	jobs = jobsByName(t, c, p.ID, pl.ID)
	got = map[string]string{}
	for name, j := range jobs {
		got[name] = j.Status
	}
	// rescue ran when flaky had failed; it stays as it was.
	want = map[string]string{"flaky": "success", "uses": "success", "after": "success", "chain": "success", "rescue": "success"}
	if !maps.Equal(got, want) {
		t.Fatalf("after the retry: jobs %v, want %v", got, want)
	}
}

// A need of a job the pipeline leaves out, unless optional, fails the
// pipeline with GitLab's words and no jobs.
func TestNeedsOfAJobLeftOut(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-needs-missing")})
	if err != nil {
		t.Fatal(err)
	}
	file := "tagged: {stage: build, only: [tags], script: [echo]}\nuses: {stage: test, needs: [tagged], script: [echo]}\n"
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file})
	pl := waitPipeline(t, c, p.ID, commit.ID, "failed")
	want := "'uses' job needs 'tagged' job, but 'tagged' does not exist in the pipeline. This might be because of the only, except, or rules keywords. To need a job that sometimes does not exist in the pipeline, use needs:optional."
	if pl.YamlErrors != want {
		t.Fatalf("yaml_errors %q", pl.YamlErrors)
	}
	if jobs := jobsByName(t, c, p.ID, pl.ID); len(jobs) != 0 {
		t.Fatalf("jobs %v", jobs)
	}
}

// A real gitlab-runner runs a pipeline with needs: a job of the last
// stage that needs one job of the first gets that job's artifacts and no
// other's, through the dependencies of its job payload.
func TestRunnerRunsNeeds(t *testing.T) {
	t.Parallel() // mostly waiting on the runner
	gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "runner-needs", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	startRunSingle(t, s, r.Token, "--max-builds", "4", "--wait-timeout", "60")
	file := `stages: [build, test, deploy]
build:
  stage: build
  script: [mkdir -p out, echo built-by-the-runner > out/b.txt]
  artifacts: {paths: [out/]}
other:
  stage: build
  script: [mkdir -p o, echo other > o/o.txt]
  artifacts: {paths: [o/]}
solo:
  stage: test
  needs: []
  script: [echo solo]
use:
  stage: deploy
  needs: [build, {job: solo, artifacts: false}]
  script:
    - cat out/b.txt
    - if [ -e o/o.txt ]; then echo "unexpected artifacts of other"; exit 1; fi
`
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "success" || len(jobs) != 4 {
		for name, j := range jobs {
			t.Logf("%s: %s\n%s", name, j.Status, trace(t, c, p.ID, j.ID))
		}
		t.Fatalf("pipeline %s with %d jobs", pl.Status, len(jobs))
	}
	use := jobs["use"]
	if got := trace(t, c, p.ID, use.ID); !strings.Contains(got, "built-by-the-runner") || !strings.Contains(got, "Downloading artifacts for build") ||
		strings.Contains(got, "Downloading artifacts for other") {
		t.Fatalf("use's trace:\n%s", got)
	}
	if use.Runner.ID != r.ID {
		t.Fatalf("use ran on %+v", use.Runner)
	}
}

// Jobs with needs are decided in bounded chunks like stage jobs: 250
// that start at once, then 250 held by one job, then a staged job after
// them all; every one runs once.
func TestNeedsDecidedInChunks(t *testing.T) {
	t.Parallel()
	const wide = 250
	exec := &clockedExecutors{}
	var steps, partial atomic.Int64
	s := stocktest.Start(t, fennectest.WithModules(fennec.NewModule("needs-instant-executor",
		fennec.Supply[ci.Executors](exec))), withStepObserver(func(st internal.Step) {
		steps.Add(1)
		if st.Deciding {
			partial.Add(1)
		}
	}))
	c := s.Client
	p := stocktest.NewProject(t, c, "needs-chunks", "private")
	var y strings.Builder
	y.WriteString("stages: [build, test, deploy]\nroot: {stage: build, script: [x], needs: []}\n")
	for i := range wide {
		fmt.Fprintf(&y, "a%d: {stage: test, script: [x], needs: []}\n", i)
		fmt.Fprintf(&y, "d%d: {stage: test, script: [x], needs: [root]}\n", i)
	}
	y.WriteString("last: {stage: deploy, script: [x]}\n")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": y.String()})
	pl := waitPipelineFor(t, c, p.ID, commit.ID, 2*time.Minute, "success", "failed")
	if pl.Status != "success" || exec.ran.Load() != 2*wide+2 {
		t.Fatalf("pipeline %s after %d jobs run", pl.Status, exec.ran.Load())
	}
	if partial.Load() == 0 {
		t.Errorf("no step left jobs to decide (of %d steps): the chunks were not bounded", steps.Load())
	}
}

// A job that needs an optional manual job is skipped until someone plays
// it, then runs; one that needs a blocking manual job waits for it.
func TestNeedsOfManualJobs(t *testing.T) {
	t.Parallel()
	exec := &clockedExecutors{}
	s := stocktest.Start(t, fennectest.WithModules(fennec.NewModule("needs-manual-executor",
		fennec.Supply[ci.Executors](exec))))
	c := s.Client
	p := stocktest.NewProject(t, c, "needs-manual", "private")
	file := `gate: {stage: build, script: [x], when: manual, needs: []}
after: {stage: test, script: [x], needs: [gate]}
hold: {stage: build, script: [x], when: manual, allow_failure: false, needs: []}
held: {stage: test, script: [x], needs: [hold]}
`
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file})
	pl := waitPipeline(t, c, p.ID, commit.ID, "manual")
	statuses := func() map[string]string {
		out := map[string]string{}
		for name, j := range jobsByName(t, c, p.ID, pl.ID) {
			out[name] = j.Status
		}
		return out
	}
	if got, want := statuses(), map[string]string{"gate": "manual", "after": "skipped", "hold": "manual", "held": "created"}; !maps.Equal(got, want) {
		t.Fatalf("jobs %v, want %v", got, want)
	}
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if _, _, err := c.Jobs.PlayJob(p.ID, jobs["gate"].ID, nil); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, p.ID, jobs["after"].ID, "success")
	if got := statuses()["held"]; got != "created" {
		t.Fatalf("held is %s while hold waits to be played", got)
	}
	if _, _, err := c.Jobs.PlayJob(p.ID, jobs["hold"].ID, nil); err != nil {
		t.Fatal(err)
	}
	pl = waitPipeline(t, c, p.ID, commit.ID, "success")
	if got, want := statuses(), map[string]string{"gate": "success", "after": "success", "hold": "success", "held": "success"}; !maps.Equal(got, want) {
		t.Fatalf("jobs %v, want %v", got, want)
	}
}

// Retrying a pipeline's failed jobs lets the jobs their failure skipped
// run, those of their own stage that need them included.
func TestNeedsRetryFailedPipeline(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-needs-retry-all")})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "fixed")
	file := `flaky:
  script: ['if [ -f "` + marker + `" ]; then echo fixed; else touch "` + marker + `"; exit 3; fi']
same:
  needs: [flaky]
  script: [echo same stage]
`
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": file})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "failed" || jobs["flaky"].Status != "failed" || jobs["same"].Status != "skipped" {
		t.Fatalf("pipeline %s: flaky %s, same %s", pl.Status, jobs["flaky"].Status, jobs["same"].Status)
	}
	if _, _, err := c.Pipelines.RetryPipelineBuild(p.ID, pl.ID); err != nil {
		t.Fatal(err)
	}
	pl = waitPipeline(t, c, p.ID, commit.ID, "success")
	jobs = jobsByName(t, c, p.ID, pl.ID)
	if jobs["flaky"].Status != "success" || jobs["same"].Status != "success" {
		t.Fatalf("after the retry: flaky %s, same %s", jobs["flaky"].Status, jobs["same"].Status)
	}
}
