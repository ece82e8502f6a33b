package ci_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A delayed job is scheduled for its start_in, then runs; play runs a
// scheduled job at once; unschedule makes one manual; a job that is not
// scheduled cannot be unscheduled.
func TestDelayedJobs(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-delayed")})
	if err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `soon:
  script: echo soon
  when: delayed
  start_in: 2 seconds
played:
  script: echo played
  when: delayed
  start_in: 1 day
held:
  script: echo held
  rules:
    - when: delayed
      start_in: 1 day
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "scheduled")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	for _, name := range []string{"soon", "played", "held"} {
		if jobs[name] == nil || jobs[name].Status != "scheduled" {
			t.Fatalf("%s: %+v", name, jobs[name])
		}
	}
	scheduledAt := time.Now()
	if _, _, err := c.Jobs.PlayJob(p.ID, jobs["played"].ID, nil); err != nil {
		t.Fatal(err)
	}
	var unscheduled struct{ Status string }
	resp, body := s.JSON(t, http.MethodPost, "/api/v4/projects/"+strconv.FormatInt(p.ID, 10)+"/jobs/"+strconv.FormatInt(jobs["held"].ID, 10)+"/unschedule", nil, &unscheduled, "PRIVATE-TOKEN", s.RootToken)
	if resp.StatusCode != http.StatusCreated || unscheduled.Status != "manual" {
		t.Fatalf("unschedule: %d %s", resp.StatusCode, body)
	}
	waitJob(t, c, p.ID, jobs["played"].ID, "success")
	if j := waitJob(t, c, p.ID, jobs["soon"].ID, "success"); j.StartedAt == nil || j.StartedAt.Sub(scheduledAt) < time.Second {
		t.Errorf("soon started at %v, scheduled about %v", j.StartedAt, scheduledAt)
	}
	// held is manual now, and may not fail (a delayed job's default):
	// it holds the pipeline, as in GitLab.
	if pl = waitPipeline(t, c, p.ID, commit.ID, "success", "manual"); pl.Status != "manual" {
		t.Errorf("pipeline %s", pl.Status)
	}
	resp, body = s.JSON(t, http.MethodPost, "/api/v4/projects/"+strconv.FormatInt(p.ID, 10)+"/jobs/"+strconv.FormatInt(jobs["soon"].ID, 10)+"/unschedule", nil, nil, "PRIVATE-TOKEN", s.RootToken)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("unschedule of a finished job: %d %s", resp.StatusCode, body)
	}
}
