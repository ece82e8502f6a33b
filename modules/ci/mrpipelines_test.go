package ci_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const mrPipelineCI = `test:
  script: echo "source=$CI_PIPELINE_SOURCE mr=$CI_MERGE_REQUEST_IID target=$CI_MERGE_REQUEST_TARGET_BRANCH_NAME source_branch=$CI_MERGE_REQUEST_SOURCE_BRANCH_NAME ref=$CI_COMMIT_REF_NAME branch=${CI_COMMIT_BRANCH:-none} title=$CI_MERGE_REQUEST_TITLE"
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
      changes: ["src/**/*"]
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
docs:
  script: echo docs
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
      changes: ["docs/**/*"]
legacy:
  script: echo legacy
  only: [merge_requests]
branches:
  script: echo "a branch pipeline"
`

// A merge request whose CI file asks for merge_request_event gets a
// pipeline of its own when it is opened and when its source moves:
// source merge_request_event, the CI_MERGE_REQUEST_* variables, no
// CI_COMMIT_BRANCH, changes against the target branch, only the jobs
// that ask for merge request pipelines; it is the merge request's head
// pipeline. The branch's own pushes keep their branch pipelines.
func TestMergeRequestPipelines(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-mr-pipelines")})
	if err != nil {
		t.Fatal(err)
	}
	base := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": mrPipelineCI})
	pl := waitPipeline(t, c, p.ID, base.ID, "success")
	if got := names(jobsByName(t, c, p.ID, pl.ID)); len(got) != 2 {
		t.Fatalf("master's jobs: %v", got)
	}
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	code := stocktest.CommitFiles(t, c, p.ID, "feature", "code", map[string]string{"src/app.go": "package app"})
	branchPipeline := waitPipeline(t, c, p.ID, code.ID, "success")
	if got := jobsByName(t, c, p.ID, branchPipeline.ID); len(got) != 1 || got["branches"] == nil {
		t.Fatalf("feature's branch pipeline: %v", names(got))
	}

	mr, _, err := c.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr("Add the app"), SourceBranch: gitlab.Ptr("feature"), TargetBranch: gitlab.Ptr("master")})
	if err != nil {
		t.Fatal(err)
	}
	mrPipeline := waitNewPipeline(t, c, p.ID, code.ID, branchPipeline.ID)
	jobs := jobsByName(t, c, p.ID, mrPipeline.ID)
	if len(jobs) != 2 || jobs["test"] == nil || jobs["legacy"] == nil {
		t.Fatalf("the merge request pipeline's jobs: %v", names(jobs))
	}
	if mrPipeline.Ref != "feature" {
		t.Errorf("ref %q", mrPipeline.Ref)
	}
	waitJob(t, c, p.ID, jobs["test"].ID, "success")
	want := "source=merge_request_event mr=" + strconv.FormatInt(mr.IID, 10) + " target=master source_branch=feature ref=feature branch=none title=Add the app"
	if tr := trace(t, c, p.ID, jobs["test"].ID); !strings.Contains(tr, want) {
		t.Errorf("test's trace lacks %q:\n%s", want, tr)
	}
	got, _, err := c.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Pipeline == nil || got.Pipeline.ID != mrPipeline.ID {
		t.Errorf("the merge request's pipeline: %+v, want %d", got.Pipeline, mrPipeline.ID)
	}

	// A push of docs to the source: a branch pipeline, and a merge
	// request pipeline whose changes (against master) hold both src and
	// docs.
	docs := stocktest.CommitFiles(t, c, p.ID, "feature", "docs", map[string]string{"docs/intro.md": "# Intro"})
	first := waitPipeline(t, c, p.ID, docs.ID, "success", "running", "pending")
	second := waitNewPipeline(t, c, p.ID, docs.ID, first.ID)
	branchJobs, mrJobs := jobsByName(t, c, p.ID, first.ID), jobsByName(t, c, p.ID, second.ID)
	if first.ID > second.ID {
		branchJobs, mrJobs = mrJobs, branchJobs
	}
	if len(branchJobs) != 1 || branchJobs["branches"] == nil {
		t.Errorf("branch pipeline of the docs push: %v", names(branchJobs))
	}
	if len(mrJobs) != 3 || mrJobs["test"] == nil || mrJobs["docs"] == nil || mrJobs["legacy"] == nil {
		t.Errorf("merge request pipeline of the docs push: %v", names(mrJobs))
	}
}

// waitNewPipeline waits for a pipeline of sha other than the one known.
func waitNewPipeline(t *testing.T, c *gitlab.Client, project int64, sha string, known int64) *gitlab.Pipeline {
	t.Helper()
	for i := 0; i < 600; i++ {
		list, _, err := c.Pipelines.ListProjectPipelines(project, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, pl := range list {
			if pl.SHA == sha && pl.ID != known {
				full, _, err := c.Pipelines.GetPipeline(project, pl.ID)
				if err != nil {
					t.Fatal(err)
				}
				return full
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no second pipeline of %s", sha)
	return nil
}

// Merge when pipeline succeeds waits for the merge request pipeline even
// when the source branch's pushes get none: a failed one leaves the
// merge request open, a passing one merges it.
func TestMergeWhenMergeRequestPipelineSucceeds(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-mr-mwps")})
	if err != nil {
		t.Fatal(err)
	}
	// The job waits for the test to open its gate, so that the merge is
	// asked for while the pipeline is certainly not finished.
	gates := t.TempDir()
	open := func(sha string) { openGate(t, gates, sha) }
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `check:
  script:
    - while [ ! -f ` + gates + `/$CI_COMMIT_SHA ]; do sleep 0.05; done
    - test -f ok
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
`})
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("topic"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	bad := stocktest.CommitFiles(t, c, p.ID, "topic", "not yet", map[string]string{"work": "1"})
	mr, _, err := c.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr("Topic"), SourceBranch: gitlab.Ptr("topic"), TargetBranch: gitlab.Ptr("master")})
	if err != nil {
		t.Fatal(err)
	}
	accepted, _, err := c.MergeRequests.AcceptMergeRequest(p.ID, mr.IID, &gitlab.AcceptMergeRequestOptions{MergeWhenPipelineSucceeds: gitlab.Ptr(true)})
	if err != nil || accepted.State != "opened" || !accepted.MergeWhenPipelineSucceeds {
		t.Fatalf("accept: %+v %v", accepted, err)
	}
	open(bad.ID)
	waitPipeline(t, c, p.ID, bad.ID, "failed")
	s.Drain(t)
	if got, _, _ := c.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil); got.State != "opened" || got.MergeWhenPipelineSucceeds {
		t.Fatalf("after the failed pipeline: state %s, mwps %v", got.State, got.MergeWhenPipelineSucceeds)
	}

	good := stocktest.CommitFiles(t, c, p.ID, "topic", "ready", map[string]string{"ok": "1"})
	accepted, _, err = c.MergeRequests.AcceptMergeRequest(p.ID, mr.IID, &gitlab.AcceptMergeRequestOptions{MergeWhenPipelineSucceeds: gitlab.Ptr(true)})
	if err != nil || !accepted.MergeWhenPipelineSucceeds {
		t.Fatalf("accept again: %+v %v", accepted, err)
	}
	open(good.ID)
	waitPipeline(t, c, p.ID, good.ID, "success")
	s.Drain(t)
	if got, _, _ := c.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil); got.State != "merged" {
		t.Fatalf("after the passing pipeline: state %s", got.State)
	}
}

// A merge request from a fork gets its pipeline in the fork, with the
// fork's variables and never the target's, and the merge request's
// variables naming both projects.
func TestForkMergeRequestPipelineRunsInTheFork(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	target, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-mr-target"), Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, c, target.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `test:
  script: echo "project=$CI_PROJECT_PATH target=$CI_MERGE_REQUEST_PROJECT_PATH source=$CI_MERGE_REQUEST_SOURCE_PROJECT_PATH secret=${SECRET:-none}"
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
`})
	if _, _, err := c.ProjectVariables.CreateVariable(target.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("SECRET"), Value: gitlab.Ptr("target-secret")}); err != nil {
		t.Fatal(err)
	}
	alice := s.CreateUser(t, "alice")
	fork, _, err := alice.Client.Projects.ForkProject(target.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	work := stocktest.CommitFiles(t, alice.Client, fork.ID, "master", "work", map[string]string{"a.txt": "a"})
	if _, _, err := alice.Client.MergeRequests.CreateMergeRequest(fork.ID, &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr("From a fork"), SourceBranch: gitlab.Ptr("master"), TargetBranch: gitlab.Ptr("master"), TargetProjectID: gitlab.Ptr(target.ID)}); err != nil {
		t.Fatal(err)
	}
	pl := waitPipeline(t, alice.Client, fork.ID, work.ID, "success", "failed")
	jobs := jobsByName(t, alice.Client, fork.ID, pl.ID)
	if pl.Status != "success" || len(jobs) != 1 {
		t.Fatalf("the fork's merge request pipeline: %s %v", pl.Status, names(jobs))
	}
	want := "project=alice/ci-mr-target target=root/ci-mr-target source=alice/ci-mr-target secret=none"
	if tr := trace(t, alice.Client, fork.ID, jobs["test"].ID); !strings.Contains(tr, want) {
		t.Errorf("trace lacks %q:\n%s", want, tr)
	}
	if list, _, err := c.Pipelines.ListProjectPipelines(target.ID, nil); err != nil || len(list) != 0 {
		t.Errorf("the target's pipelines: %d %v (its master gets none, and the fork's runs in the fork)", len(list), err)
	}
}
