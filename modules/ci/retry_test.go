package ci_test

import (
	"path/filepath"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// retry: retries a failed job automatically up to max times, and with
// `when` only for the failure reasons it lists.
func TestAutomaticRetryWhen(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-retry-when")})
	if err != nil {
		t.Fatal(err)
	}
	// Each try appends a line to a file outside the job's directory, so a
	// job can count its own tries.
	dir := t.TempDir()
	count := func(name string) string {
		f := filepath.Join(dir, name)
		return "echo try >> " + f + "; test $(wc -l < " + f + ") -ge 3"
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `flaky:
  script: ` + count("flaky") + `
  retry: {max: 2, when: [script_failure]}
other_reason:
  script: exit 1
  retry: {max: 2, when: runner_system_failure}
plain:
  script: exit 1
  retry: 1
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "failed")
	all, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, &gitlab.ListJobsOptions{IncludeRetried: gitlab.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	tries := map[string][]string{}
	for _, j := range all {
		tries[j.Name] = append(tries[j.Name], j.Status)
	}
	if got := tries["flaky"]; len(got) != 3 || got[0] != "success" {
		t.Errorf("flaky: %v, want three tries, the last a success", got)
	}
	if got := tries["other_reason"]; len(got) != 1 || got[0] != "failed" {
		t.Errorf("other_reason: %v, want one failed try (a script failure is not retried)", got)
	}
	if got := tries["plain"]; len(got) != 2 || got[0] != "failed" || got[1] != "failed" {
		t.Errorf("plain: %v, want two failed tries", got)
	}
}
