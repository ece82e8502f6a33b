package ci_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A runner receives what current keywords ask for: every cache of a
// cache list with its when and fallback keys, the artifacts' exclude, and
// the job's timeout (under the server's job timeout).
func TestRunnerGetsCurrentKeywords(t *testing.T) {
	t.Parallel()
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerPollTimeout = time.Second }))
	c := s.Client
	p := stocktest.NewProject(t, c, "current-runner", "private")
	r := registerRunner(t, s, sharedToken(t, s), map[string]any{"description": "fake"})
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `
default:
  timeout: 10 minutes
  cache:
    - {key: deps, paths: [vendor/], fallback_keys: [deps-main]}
    - {key: build, paths: [out/], when: always, policy: pull}
build:
  script: make
  artifacts: {paths: [out/], exclude: [out/*.tmp]}
`})
	var job struct {
		RunnerInfo struct {
			Timeout int64 `json:"timeout"`
		} `json:"runner_info"`
		Cache []struct {
			Key          string   `json:"key"`
			Paths        []string `json:"paths"`
			Policy       string   `json:"policy"`
			When         string   `json:"when"`
			FallbackKeys []string `json:"fallback_keys"`
		} `json:"cache"`
		Artifacts []struct {
			Exclude []string `json:"exclude"`
		} `json:"artifacts"`
	}
	body := map[string]any{"token": r.Token, "info": map[string]any{"name": "fake-runner", "version": "17.5.5", "executor": "shell"}}
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, _, raw, err := sendJSON(http.MethodPost, s.URL+"/api/v4/jobs/request", body)
		if err != nil {
			t.Fatal(err)
		}
		if code == http.StatusCreated {
			if err := json.Unmarshal(raw, &job); err != nil {
				t.Fatal(err)
			}
			break
		}
		if code != http.StatusNoContent || time.Now().After(deadline) {
			t.Fatalf("job request: %d %s", code, raw)
		}
	}
	if job.RunnerInfo.Timeout != 600 {
		t.Errorf("timeout = %d", job.RunnerInfo.Timeout)
	}
	if len(job.Cache) != 2 || job.Cache[0].Key != "deps" || !reflect.DeepEqual(job.Cache[0].FallbackKeys, []string{"deps-main"}) ||
		job.Cache[0].When != "on_success" || job.Cache[0].Policy != "pull-push" ||
		job.Cache[1].Key != "build" || job.Cache[1].When != "always" || job.Cache[1].Policy != "pull" {
		t.Errorf("cache = %+v", job.Cache)
	}
	if len(job.Artifacts) != 1 || !reflect.DeepEqual(job.Artifacts[0].Exclude, []string{"out/*.tmp"}) {
		t.Errorf("artifacts = %+v", job.Artifacts)
	}
}
