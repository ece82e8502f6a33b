package ci_test

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const cacheKeyCI = `
deps:
  script: [echo deps]
  cache:
    key: {files: [go.sum, missing.lock], prefix: deps}
    paths: [vendor/]
nofiles:
  script: [echo nofiles]
  cache:
    - key: {files: [nope.lock]}
      paths: [x/]
    - key: {files: [nope.lock], prefix: p}
      paths: [y/]
`

// cacheKeys takes every pending job as a runner and returns the cache
// keys of their payloads, by job name.
func cacheKeys(t *testing.T, s *fennectest.Server, token string, jobs int) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for range jobs {
		code, _, raw := rawJSON(t, http.MethodPost, s.URL+"/api/v4/jobs/request", map[string]any{"token": token,
			"info": map[string]any{"name": "fake-runner", "version": "17.5.5", "executor": "shell"}})
		if code != http.StatusCreated {
			t.Fatalf("jobs/request: %d %s", code, raw)
		}
		var j struct {
			JobInfo struct {
				Name string `json:"name"`
			} `json:"job_info"`
			Cache []struct {
				Key string `json:"key"`
			} `json:"cache"`
		}
		if err := json.Unmarshal(raw, &j); err != nil {
			t.Fatal(err)
		}
		for _, c := range j.Cache {
			out[j.JobInfo.Name] = append(out[j.JobInfo.Name], c.Key)
		}
	}
	return out
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// `cache: key: files` is keyed by the last commit that changed the files
// at the pipeline's commit: the same after a commit that changes other
// files, another after one that changes a keyed file; files that do not
// exist give GitLab's default key, with the prefix.
func TestRunnerCacheKeyFiles(t *testing.T) {
	t.Parallel()
	s := startRunners(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "cache-key-files", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)

	first := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": cacheKeyCI, "go.sum": "a v1\n"})
	waitPipeline(t, c, p.ID, first.ID, "pending")
	keys := cacheKeys(t, s, r.Token, 2)
	want := "deps-" + sha1Hex(first.ID)
	if got := strings.Join(keys["deps"], ","); got != want {
		t.Errorf("first key %q, want %q", got, want)
	}
	if got := strings.Join(keys["nofiles"], ","); got != "default,p-default" {
		t.Errorf("keys of missing files %q", got)
	}

	other := stocktest.CommitFiles(t, c, p.ID, "master", "other", map[string]string{"README.md": "hi\n"})
	waitPipeline(t, c, p.ID, other.ID, "pending")
	if got := strings.Join(cacheKeys(t, s, r.Token, 2)["deps"], ","); got != want {
		t.Errorf("key after another file changed %q, want %q", got, want)
	}

	bump := stocktest.CommitFiles(t, c, p.ID, "master", "bump", map[string]string{"go.sum": "a v2\n"})
	waitPipeline(t, c, p.ID, bump.ID, "pending")
	if got, want := strings.Join(cacheKeys(t, s, r.Token, 2)["deps"], ","), "deps-"+sha1Hex(bump.ID); got != want {
		t.Errorf("key after go.sum changed %q, want %q", got, want)
	}
}
