package ci_test

import (
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// With two idle gitlab-runners polling, a deploy whose resource group
// another pipeline's deploy holds is handed to neither: it waits as
// waiting_for_resource with no runner, and a runner takes it only once
// the first deploy finished (the lock directory would fail an overlap).
func TestRunnerResourceGroup(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	gitlabRunner(t)
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "runner-resource-group", "private")
	for range 2 {
		r := registerRunner(t, s, sharedToken(t, s), nil)
		startRunSingle(t, s, r.Token, "--max-builds", "1", "--wait-timeout", "60")
	}
	lock, gates := t.TempDir(), t.TempDir()
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": resourceGroupFile(lock, gates)})
	first := waitPipeline(t, c, p.ID, commit.ID, "running")
	firstDeploy := waitJob(t, c, p.ID, jobsByName(t, c, p.ID, first.ID)["deploy"].ID, "running")
	if firstDeploy.Runner.ID == 0 {
		t.Fatalf("first deploy runs without a runner: %+v", firstDeploy)
	}

	second, _, err := c.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("master")})
	if err != nil {
		t.Fatal(err)
	}
	openPipelineGate(t, gates, second.ID)
	secondDeploy := jobsByName(t, c, p.ID, second.ID)["deploy"]
	// The idle runner keeps polling while the first deploy runs its
	// script: the second job is waiting, with no runner.
	waitTrace(t, c, p.ID, firstDeploy.ID, "mkdir")
	if j := waitJob(t, c, p.ID, secondDeploy.ID, "waiting_for_resource", "running", "success", "failed"); j.Status != "waiting_for_resource" || j.Runner.ID != 0 {
		t.Fatalf("the second deploy while the first holds the group: %s on runner %d", j.Status, j.Runner.ID)
	}

	openPipelineGate(t, gates, first.ID)
	firstDone := waitJob(t, c, p.ID, firstDeploy.ID, "success", "failed")
	secondDone := waitJob(t, c, p.ID, secondDeploy.ID, "success", "failed")
	if firstDone.Status != "success" || secondDone.Status != "success" {
		t.Fatalf("first %s, second %s:\n%s", firstDone.Status, secondDone.Status, trace(t, c, p.ID, secondDeploy.ID))
	}
	if secondDone.Runner.ID == 0 || secondDone.StartedAt.Before(*firstDone.FinishedAt) {
		t.Errorf("second on runner %d started %v, the first finished %v", secondDone.Runner.ID, secondDone.StartedAt, firstDone.FinishedAt)
	}
}
