package ci_test

import (
	"path/filepath"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A new push cancels the redundant pipeline of the branch as GitLab's
// auto-cancel does: all of it while only interruptible jobs have
// started; nothing once a job that is not interruptible has started;
// only the interruptible jobs under `auto_cancel: on_new_commit:
// interruptible`.
func TestInterruptiblePipelinesCanceledByANewPush(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	gates := t.TempDir()
	open := func(sha string) { openGate(t, gates, sha) }
	wait := `while [ ! -f ` + gates + `/$CI_COMMIT_SHA ]; do sleep 0.05; done`
	tests := []struct {
		name, ci string
		// the first pipeline's status and its jobs' after the second push
		first string
		jobs  map[string]string
	}{
		{"interruptible", "test:\n  interruptible: true\n  script: " + wait + "\n",
			"canceled", map[string]string{"test": "canceled"}},
		{"started not interruptible", "test:\n  interruptible: true\n  script: " + wait + "\ndeploy:\n  script: " + wait + "\n",
			"success", map[string]string{"test": "success", "deploy": "success"}},
		{"interruptible mode", "workflow:\n  auto_cancel:\n    on_new_commit: interruptible\ntest:\n  interruptible: true\n  script: " + wait + "\ndeploy:\n  script: " + wait + "\n",
			"canceled", map[string]string{"test": "canceled", "deploy": "success"}},
		{"none asked", "test:\n  script: " + wait + "\n",
			"success", map[string]string{"test": "success"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-autocancel-" + filepath.Base(t.Name()))})
			if err != nil {
				t.Fatal(err)
			}
			first := stocktest.CommitFiles(t, c, p.ID, "master", "one", map[string]string{".gitlab-ci.yml": tt.ci})
			pl := waitPipeline(t, c, p.ID, first.ID, "running")
			for name := range tt.jobs {
				waitJob(t, c, p.ID, jobsByName(t, c, p.ID, pl.ID)[name].ID, "running")
			}
			// The second pipeline's creation decides the first one's fate;
			// then both may go on (the executor's places are few).
			second := stocktest.CommitFiles(t, c, p.ID, "master", "two", map[string]string{"b": "b"})
			waitPipeline(t, c, p.ID, second.ID, "running", "pending")
			open(second.ID)
			open(first.ID)
			waitPipeline(t, c, p.ID, second.ID, "success")
			got := waitPipeline(t, c, p.ID, first.ID, tt.first)
			jobs := jobsByName(t, c, p.ID, got.ID)
			for name, want := range tt.jobs {
				if j := waitJob(t, c, p.ID, jobs[name].ID, want); j.Status != want {
					t.Errorf("%s: %s, want %s", name, j.Status, want)
				}
			}
		})
	}
}
