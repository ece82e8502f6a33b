package ci_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// A shared runner registered with the instance's token takes a job with
// run-single and runs its script with the shell executor.
func TestRunnerRunSingle(t *testing.T) {
	gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := newProject(t, c, "single")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	startRunSingle(t, s, r.Token, "--max-builds", "1", "--wait-timeout", "30")
	commit := commitFiles(t, c, p.ID, "master", map[string]string{".gitlab-ci.yml": "hello:\n  script:\n    - echo hello-from-$CI_JOB_NAME-$CI_RUNNER_ID\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline %s", pl.Status)
	}
	j := jobsByName(t, c, p.ID, pl.ID)["hello"]
	if got := trace(t, c, p.ID, j.ID); !strings.Contains(got, "hello-from-hello-"+itoa(r.ID)) {
		t.Fatalf("trace:\n%s", got)
	}
	if j.Runner.ID != r.ID || j.Runner.Description != "test runner" || !j.Runner.IsShared || !j.Runner.Active {
		t.Fatalf("runner of the job: %+v", j.Runner)
	}
	_ = http.StatusOK
	_ = time.Second
	_ = gitlab.Ptr(1)
}
