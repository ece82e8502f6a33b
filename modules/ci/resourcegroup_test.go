package ci_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// resourceGroupCI's deploy job takes a lock directory (mkdir fails when
// another deploy holds it) and keeps it until its pipeline's gate file
// exists: two deploys that overlapped would fail the second.
const resourceGroupCI = `deploy:
  resource_group: production-$CI_COMMIT_REF_SLUG
  script:
    - mkdir %[1]s/held
    - while [ ! -f %[2]s/$CI_PIPELINE_ID ]; do sleep 0.05; done
    - rmdir %[1]s/held
`

func resourceGroupFile(lock, gates string) string {
	return strings.NewReplacer("%[1]s", lock, "%[2]s", gates).Replace(resourceGroupCI)
}

// openPipelineGate lets a pipeline's deploy of resourceGroupCI finish.
func openPipelineGate(t testing.TB, gates string, pipelineID int64) {
	t.Helper()
	openGate(t, gates, strconv.FormatInt(pipelineID, 10))
}

// Two pipelines whose deploy jobs share a resource group (its name
// expanded at creation) never run them at once: the second waits as
// waiting_for_resource, its pipeline too, with a free executor, and runs
// once the first finished; canceling a waiting job frees nothing and a
// third then takes the group after the second.
func TestResourceGroupSerializesPipelines(t *testing.T) {
	t.Parallel()
	s := startWith(t, withShell(map[string]any{"concurrency": 4}))
	c := s.Client
	p := stocktest.NewProject(t, c, "resource-group", "private")
	lock, gates := t.TempDir(), t.TempDir()
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": resourceGroupFile(lock, gates)})
	first := waitPipeline(t, c, p.ID, commit.ID, "running")
	firstDeploy := jobsByName(t, c, p.ID, first.ID)["deploy"]
	waitJob(t, c, p.ID, firstDeploy.ID, "running")

	newPipeline := func() (*gitlab.Pipeline, *gitlab.Job) {
		t.Helper()
		pl, _, err := c.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("master")})
		if err != nil {
			t.Fatal(err)
		}
		return pl, jobsByName(t, c, p.ID, pl.ID)["deploy"]
	}
	second, secondDeploy := newPipeline()
	openPipelineGate(t, gates, second.ID) // it would finish at once if it ran
	if j := waitJob(t, c, p.ID, secondDeploy.ID, "waiting_for_resource", "running", "success", "failed"); j.Status != "waiting_for_resource" || j.StartedAt != nil {
		t.Fatalf("the second deploy while the first holds the group: %s", j.Status)
	}
	if pl, _, err := c.Pipelines.GetPipeline(p.ID, second.ID); err != nil || pl.Status != "waiting_for_resource" {
		t.Fatalf("the second pipeline: %+v %v", pl, err)
	}
	// A waiting job is listed under its status as a scope.
	list, _, err := c.Jobs.ListPipelineJobs(p.ID, second.ID, &gitlab.ListJobsOptions{Scope: &[]gitlab.BuildStateValue{"waiting_for_resource"}})
	if err != nil || len(list) != 1 || list[0].ID != secondDeploy.ID {
		t.Fatalf("jobs waiting_for_resource: %+v %v", list, err)
	}

	// A third waits too; canceled, it lets nobody in.
	third, thirdDeploy := newPipeline()
	waitJob(t, c, p.ID, thirdDeploy.ID, "waiting_for_resource")
	if _, _, err := c.Jobs.CancelJob(p.ID, thirdDeploy.ID); err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, p.ID, thirdDeploy.ID, "canceled")
	if j := waitJob(t, c, p.ID, secondDeploy.ID, "waiting_for_resource"); j.Status != "waiting_for_resource" {
		t.Fatalf("second after a waiter was canceled: %s", j.Status)
	}

	openPipelineGate(t, gates, first.ID)
	firstDone := waitJob(t, c, p.ID, firstDeploy.ID, "success", "failed")
	secondDone := waitJob(t, c, p.ID, secondDeploy.ID, "success", "failed")
	if firstDone.Status != "success" || secondDone.Status != "success" {
		t.Fatalf("first %s, second %s:\n%s", firstDone.Status, secondDone.Status, trace(t, c, p.ID, secondDeploy.ID))
	}
	if secondDone.StartedAt.Before(*firstDone.FinishedAt) {
		t.Errorf("second started %v before the first finished %v", secondDone.StartedAt, firstDone.FinishedAt)
	}
	if pl, _, err := c.Pipelines.GetPipeline(p.ID, third.ID); err != nil || pl.Status != "canceled" {
		t.Fatalf("the third pipeline: %+v %v", pl, err)
	}
}

// A server stopped while one deploy holds the group and another waits:
// at the next start on the same data the waiter is still waiting until
// the holder is failed for the stop, then it takes the group and runs.
func TestResourceGroupSurvivesRestart(t *testing.T) {
	t.Parallel()
	data, password := t.TempDir(), "resource-restart-pw"
	lock, gates := t.TempDir(), t.TempDir()
	var projectID, holderID, waiterID int64
	t.Run("before", func(t *testing.T) {
		s := startWith(t, fennectest.WithDataDir(data, password), withShell(map[string]any{"concurrency": 4}))
		c := s.Client
		p := stocktest.NewProject(t, c, "resource-restart", "private")
		projectID = p.ID
		commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": resourceGroupFile(lock, gates)})
		first := waitPipeline(t, c, p.ID, commit.ID, "running")
		holderID = jobsByName(t, c, p.ID, first.ID)["deploy"].ID
		waitJob(t, c, p.ID, holderID, "running")
		second, _, err := c.Pipelines.CreatePipeline(p.ID, &gitlab.CreatePipelineOptions{Ref: gitlab.Ptr("master")})
		if err != nil {
			t.Fatal(err)
		}
		openPipelineGate(t, gates, second.ID)
		waiterID = jobsByName(t, c, p.ID, second.ID)["deploy"].ID
		waitJob(t, c, p.ID, waiterID, "waiting_for_resource")
	})
	// The holder's shell went with the server (it may have been stopped
	// before its mkdir); its lock goes with it.
	if err := os.Remove(filepath.Join(lock, "held")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	s := startWith(t, fennectest.WithDataDir(data, password), withShell(map[string]any{"concurrency": 4}))
	c := s.Client
	holder := waitJob(t, c, projectID, holderID, "failed", "success", "canceled")
	waiter := waitJob(t, c, projectID, waiterID, "success", "failed")
	if holder.Status != "failed" || waiter.Status != "success" || waiter.StartedAt.Before(*holder.FinishedAt) {
		t.Fatalf("after the restart: holder %s finished %v, waiter %s started %v\n%s", holder.Status, holder.FinishedAt,
			waiter.Status, waiter.StartedAt, trace(t, c, projectID, waiterID))
	}
}
