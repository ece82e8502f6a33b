package ci_test

import (
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// On the real gitlab-runner: rules with changes decide a branch pipeline
// and a merge request pipeline (which the runner fetches and runs with
// the merge request's variables), and a new push cancels the runner's
// interruptible job of the older pipeline.
func TestRunnerRulesMergeRequestAndInterruptible(t *testing.T) {
	t.Parallel() // mostly waiting on runners
	gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "runner-rules", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	startRunSingle(t, s, r.Token, "--wait-timeout", "120")
	gates := t.TempDir()
	open := func(sha string) { openGate(t, gates, sha) }
	ci := `test:
  interruptible: true
  script:
    - echo "source=$CI_PIPELINE_SOURCE mr=${CI_MERGE_REQUEST_IID:-none} target=${CI_MERGE_REQUEST_TARGET_BRANCH_NAME:-none} branch=${CI_COMMIT_BRANCH:-none}"
    - while [ ! -f ` + gates + `/$CI_COMMIT_SHA ]; do sleep 0.1; done
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
      changes: ["src/**/*"]
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
`
	base := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": ci})
	open(base.ID)
	pl := waitPipeline(t, c, p.ID, base.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "success" || len(jobs) != 1 {
		t.Fatalf("master: %s %v", pl.Status, names(jobs))
	}
	if tr := trace(t, c, p.ID, jobs["test"].ID); !strings.Contains(tr, "source=push mr=none target=none branch=master") {
		t.Errorf("master's trace:\n%s", tr)
	}

	// A branch changing src/: no branch pipeline (no rule matches), a
	// merge request pipeline once the merge request is opened.
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	code := stocktest.CommitFiles(t, c, p.ID, "feature", "code", map[string]string{"src/app.go": "package app"})
	open(code.ID)
	mr, _, err := c.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr("App"), SourceBranch: gitlab.Ptr("feature"), TargetBranch: gitlab.Ptr("master")})
	if err != nil {
		t.Fatal(err)
	}
	pl = waitPipeline(t, c, p.ID, code.ID, "success", "failed")
	jobs = jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "success" || len(jobs) != 1 {
		t.Fatalf("merge request pipeline: %s %v", pl.Status, names(jobs))
	}
	want := "source=merge_request_event mr=" + strconv.FormatInt(mr.IID, 10) + " target=master branch=none"
	if tr := trace(t, c, p.ID, jobs["test"].ID); !strings.Contains(tr, want) {
		t.Errorf("the merge request pipeline's trace lacks %q:\n%s", want, tr)
	}
	list, _, err := c.Pipelines.ListProjectPipelines(p.ID, nil)
	if err != nil || len(list) != 2 {
		t.Fatalf("pipelines: %d %v (the branch push makes none)", len(list), err)
	}

	// Two pushes to master: the runner's job of the first is canceled.
	first := stocktest.CommitFiles(t, c, p.ID, "master", "one", map[string]string{"a": "1"})
	firstJob := jobsByName(t, c, p.ID, waitPipeline(t, c, p.ID, first.ID, "running").ID)["test"]
	waitJob(t, c, p.ID, firstJob.ID, "running")
	second := stocktest.CommitFiles(t, c, p.ID, "master", "two", map[string]string{"a": "2"})
	if j := waitJob(t, c, p.ID, firstJob.ID, "canceled", "success", "failed"); j.Status != "canceled" {
		t.Fatalf("the first pipeline's job: %s", j.Status)
	}
	open(second.ID)
	if pl := waitPipeline(t, c, p.ID, second.ID, "success", "failed"); pl.Status != "success" {
		t.Fatalf("the second pipeline: %s", pl.Status)
	}
	if pl := waitPipeline(t, c, p.ID, first.ID, "canceled", "success", "failed"); pl.Status != "canceled" {
		t.Fatalf("the first pipeline: %s", pl.Status)
	}
}
