package ci_test

import (
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestWithExecutorRunsJobsInProcess: an executor given with
// fennec.WithExecutor (here stocktest's instant one) takes the jobs, with no
// plugin process, and the API shows their traces and statuses as for a
// plugin's.
func TestWithExecutorRunsJobsInProcess(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t,
		fennectest.WithConfig(func(c *config.Config) { c.PluginDir = t.TempDir() }), // no executor plugins
		stocktest.WithInstantExecutor())
	p := stocktest.NewProject(t, s.Client, "inproc", "private")
	_, _, err := s.Client.RepositoryFiles.CreateFile(p.ID, ".gitlab-ci.yml", &gitlab.CreateFileOptions{
		Branch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("ci"),
		Content: gitlab.Ptr("good:\n  script:\n    - echo hello in process\nbroken:\n  script:\n    - exit 1\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	pl := waitRefPipeline(t, s.Client, p.ID, "master", "failed", "success")
	if pl.Status != "failed" {
		t.Fatalf("pipeline %s, want failed (one job breaks)", pl.Status)
	}
	jobs, _, err := s.Client.Jobs.ListPipelineJobs(p.ID, pl.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, j := range jobs {
		got[j.Name] = j.Status
		if j.Name == "good" {
			waitTrace(t, s.Client, p.ID, j.ID, "$ echo hello in process")
		}
	}
	if got["good"] != "success" || got["broken"] != "failed" || len(got) != 2 {
		t.Fatalf("jobs: %v", got)
	}
}
