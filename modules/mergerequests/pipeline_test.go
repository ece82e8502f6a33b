package mergerequests_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/gobuild"
)

var (
	buildOnce sync.Once
	pluginDir string
	buildErr  error
)

// shellExecutor builds the shipped shell executor once for the package.
func shellExecutor(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fennec-mr-plugins-")
		if err != nil {
			buildErr = err
			return
		}
		pluginDir = dir
		// Built once per source for every package's tests (gobuild).
		buildErr = gobuild.InstallTo("../../plugins/executor-shell", filepath.Join(dir, "executor-shell"))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return pluginDir
}

// waitPipeline polls until the pipeline of sha has one of the statuses.
func waitPipeline(t testing.TB, c *gitlab.Client, project int64, sha string, want ...string) {
	t.Helper()
	last := ""
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{SHA: gitlab.Ptr(sha)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if p.SHA == sha {
				last = p.Status
				for _, w := range want {
					if p.Status == w {
						return
					}
				}
			}
		}
	}
	t.Fatalf("pipeline of %s is %q, want %v", sha, last, want)
}

// TestMergeWhenPipelineSucceeds with real pipelines on the shell
// executor: a job waits for a gate file named after its branch; the merge
// waits for the pipeline, happens when it passes, and is dropped with a
// system note when it fails.
func TestMergeWhenPipelineSucceeds(t *testing.T) {
	t.Parallel()
	dir := shellExecutor(t)
	s := start(t, fennectest.WithConfig(func(c *config.Config) { c.PluginDir = dir }))
	gates := t.TempDir()
	p, w, alice := setup(t, s, "mwps")
	ci := fmt.Sprintf("gate:\n  script:\n    - 'while [ ! -f %s/$CI_COMMIT_REF_NAME ]; do sleep 0.05; done; test \"$(cat %s/$CI_COMMIT_REF_NAME)\" = ok'\n", gates, gates)
	open := func(name string) string {
		w.git("checkout", "-q", "-B", name, "master")
		sha := w.commit(name, map[string]string{".gitlab-ci.yml": ci, name: name})
		w.git("push", "-q", "origin", name)
		return sha
	}
	gate := func(name, v string) { writeGate(t, gates, name, v) }
	passSHA := open("pass")
	failSHA := open("fail")
	resetSHA := open("reset")
	openMR(t, alice.Client, p.ID, "pass", "master", "Pass")
	openMR(t, alice.Client, p.ID, "fail", "master", "Fail")
	openMR(t, alice.Client, p.ID, "reset", "master", "Reset")
	waitPipeline(t, alice.Client, p.ID, passSHA, "running", "pending")
	waitPipeline(t, alice.Client, p.ID, failSHA, "running", "pending")
	waitPipeline(t, alice.Client, p.ID, resetSHA, "running", "pending")
	s.Drain(t)
	for iid := int64(1); iid <= 3; iid++ {
		v := s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, iid, "/merge"), map[string]any{"merge_when_pipeline_succeeds": true}).
			Expect(t, 200, "").Object(t)
		if v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != true {
			t.Fatalf("!%d: %v", iid, v)
		}
	}
	// A new push to the source resets the intent.
	w.git("checkout", "-q", "reset")
	w.commit("one more", map[string]string{"more": "more"})
	w.git("push", "-q", "origin", "reset")
	s.Drain(t)
	v := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 3), nil).Expect(t, 200, "").Object(t)
	if v["merge_when_pipeline_succeeds"] != false || v["state"] != "opened" {
		t.Fatalf("after a push: %v", v)
	}
	if notes := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 3, "/notes"), nil).Expect(t, 200, ""); !strings.Contains(string(notes.Body), "canceled the automatic merge: new commits were pushed") {
		t.Fatalf("notes %s", notes.Body)
	}
	gate("reset", "ok")
	gate("pass", "ok")
	gate("fail", "no")
	waitPipeline(t, alice.Client, p.ID, passSHA, "success")
	waitPipeline(t, alice.Client, p.ID, failSHA, "failed")
	waitPipeline(t, alice.Client, p.ID, resetSHA, "success")
	s.Drain(t)
	v = s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1), nil).Expect(t, 200, "").Object(t)
	if v["state"] != "merged" || v["merge_commit_sha"] == nil {
		t.Fatalf("the passing one: %v", v)
	}
	v = s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 2), nil).Expect(t, 200, "").Object(t)
	if v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != false {
		t.Fatalf("the failing one: %v", v)
	}
	pipe, _ := v["pipeline"].(map[string]any)
	if pipe == nil || pipe["status"] != "failed" || pipe["sha"] != failSHA {
		t.Fatalf("pipeline of the view: %v", v["pipeline"])
	}
	notes := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 2, "/notes"), nil).Expect(t, 200, "")
	if !strings.Contains(string(notes.Body), "canceled the automatic merge: the pipeline failed") {
		t.Fatalf("notes %s", notes.Body)
	}
	if v := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 3), nil).Expect(t, 200, "").Object(t); v["state"] != "opened" {
		t.Fatalf("the reset one merged on its old pipeline: %v", v["state"])
	}
	fresh := s.clone(t, "alice", alice.Token, "alice/mwps")
	if _, err := gitErr(fresh.home, fresh.dir, "merge-base", "--is-ancestor", passSHA, "HEAD"); err != nil {
		t.Fatal("the passing branch is not in master")
	}
}

func TestMain(m *testing.M) {
	code := fennectest.Main(m) // stops the PostgreSQL server of FENNEC_TEST_STORE=postgres
	if pluginDir != "" {
		os.RemoveAll(pluginDir)
	}
	os.Exit(code)
}
