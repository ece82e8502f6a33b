package ci_test

import (
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const reviewApps = `stages: [deploy, cleanup]
review:
  stage: deploy
  script: echo "deploying $CI_ENVIRONMENT_NAME"
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    on_stop: stop_review
    auto_stop_in: AUTO
stop_review:
  stage: cleanup
  script: echo "stopping $CI_ENVIRONMENT_NAME"
  when: manual
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    action: stop
check:
  stage: deploy
  script: echo checking
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    action: verify
`

// A review environment: deployed by a job, stopped through the API (which
// plays the job its on_stop names, as the caller) or by itself after
// auto_stop_in; verify jobs deploy nothing.
func TestEnvironmentStopsAndAutoStops(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-review-apps")})
	if err != nil {
		t.Fatal(err)
	}
	env := func(name string) *gitlab.Environment {
		t.Helper()
		list, _, err := c.Environments.ListEnvironments(p.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			if e.Name == name {
				return e
			}
		}
		t.Fatalf("no environment %s in %v", name, list)
		return nil
	}

	// By hand: a week before it would stop by itself.
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": strings.Replace(reviewApps, "AUTO", "1 week", 1)})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if jobs["stop_review"].Status != "manual" {
		t.Fatalf("stop_review %s", jobs["stop_review"].Status)
	}
	e := env("review/master")
	if e.State != "available" || e.AutoStopAt == nil || e.AutoStopAt.Before(time.Now().Add(6*24*time.Hour)) {
		t.Fatalf("deployed: %+v", e)
	}
	deps, _, err := c.Deployments.ListProjectDeployments(p.ID, nil)
	if err != nil || len(deps) != 1 || deps[0].Deployable.Name != "review" {
		t.Fatalf("deployments (a verify job makes none): %d %v", len(deps), err)
	}
	stopped, _, err := c.Environments.StopEnvironment(p.ID, e.ID, nil)
	if err != nil || stopped.State != "stopped" || stopped.AutoStopAt != nil {
		t.Fatalf("stop: %+v %v", stopped, err)
	}
	j := waitJob(t, c, p.ID, jobs["stop_review"].ID, "success", "failed")
	if j.Status != "success" || j.User.Username != "root" {
		t.Fatalf("the stop job: %s by %v", j.Status, j.User)
	}
	if tr := trace(t, c, p.ID, j.ID); !strings.Contains(tr, "stopping review/master") {
		t.Errorf("stop job trace:\n%s", tr)
	}

	// By time: a new deployment makes it available again, and it stops
	// itself (playing its stop job) two seconds later.
	commit = stocktest.CommitFiles(t, c, p.ID, "master", "short", map[string]string{".gitlab-ci.yml": strings.Replace(reviewApps, "AUTO", "2 seconds", 1)})
	pl = waitPipeline(t, c, p.ID, commit.ID, "success")
	jobs = jobsByName(t, c, p.ID, pl.ID)
	j = waitJob(t, c, p.ID, jobs["stop_review"].ID, "success", "failed")
	if j.Status != "success" {
		t.Fatalf("the stop job after auto_stop_in: %s", j.Status)
	}
	if e := env("review/master"); e.State != "stopped" || e.AutoStopAt != nil {
		t.Fatalf("after auto_stop_in: %+v", e)
	}
}
