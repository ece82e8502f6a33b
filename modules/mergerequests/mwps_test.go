package mergerequests_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// gated is a stock app on the shell executor whose CI file's one job waits
// for a gate file named after its branch and passes when it says ok.
type gated struct {
	*env
	gates string
	ci    string
}

func startGated(t *testing.T) *gated {
	t.Helper()
	dir := shellExecutor(t)
	g := &gated{env: start(t, fennectest.WithConfig(func(c *config.Config) { c.PluginDir = dir })), gates: t.TempDir()}
	g.ci = fmt.Sprintf("gate:\n  script:\n    - 'while [ ! -f %s/$CI_COMMIT_REF_NAME ]; do sleep 0.05; done; test \"$(cat %s/$CI_COMMIT_REF_NAME)\" = ok'\n",
		g.gates, g.gates)
	return g
}

func (g *gated) open(t *testing.T, branch string) {
	t.Helper()
	writeGate(t, g.gates, branch, "ok")
}

// writeGate answers a gate job: its file in dir, holding value. It is
// written aside and renamed, because the job polls for the file and
// could otherwise read it created but still empty, and fail.
func writeGate(t *testing.T, dir, name, value string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// stopBus holds the outbox: events are committed but nobody handles them
// until startBus, as when the subscribers are busy or slow.
func (e *env) stopBus(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.bus.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func (e *env) startBus() { e.bus.Start() }

// mr reads a merge request as token.
func (e *env) mr(t *testing.T, token string, project, iid int64) map[string]any {
	t.Helper()
	return e.Call(t, token, http.MethodGet, mrPath(project, iid), nil).Expect(t, 200, "").Object(t)
}

// notes are the bodies of a merge request's notes.
func (e *env) notes(t *testing.T, token string, project, iid int64) []string {
	t.Helper()
	var out []string
	for _, n := range e.Call(t, token, http.MethodGet, mrPath(project, iid, "/notes"), nil).Expect(t, 200, "").List(t) {
		out = append(out, fmt.Sprint(n["body"]))
	}
	return out
}

func hasNote(notes []string, body string) bool {
	for _, n := range notes {
		if n == body {
			return true
		}
	}
	return false
}

// branchHead is a branch's commit, read through the API.
func (e *env) branchHead(t *testing.T, token string, project int64, branch string) string {
	t.Helper()
	b := e.Call(t, token, http.MethodGet, projectPath(project, "/repository/branches/"+branch), nil).Expect(t, 200, "").Object(t)
	c, _ := b["commit"].(map[string]any)
	return fmt.Sprint(c["id"])
}

// mwps asks for merge when pipeline succeeds as token and expects it
// recorded, not merged.
func (e *env) mwps(t *testing.T, token string, project, iid int64) {
	t.Helper()
	v := e.Call(t, token, http.MethodPut, mrPath(project, iid, "/merge"), map[string]any{"merge_when_pipeline_succeeds": true}).
		Expect(t, 200, "").Object(t)
	if v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != true {
		t.Fatalf("merge when pipeline succeeds of !%d: state %v, merge_when_pipeline_succeeds %v", iid, v["state"],
			v["merge_when_pipeline_succeeds"])
	}
}

// TestMWPSIntentDroppedWhenTargetChanges is issue 27, finding 2: a Master
// sets merge when pipeline succeeds on a merge request into an open
// branch; its Developer author then points it at the protected master.
// The change drops the intent with a system note, and the passing
// pipeline merges nothing into master.
func TestMWPSIntentDroppedWhenTargetChanges(t *testing.T) {
	t.Parallel()
	s := startGated(t)
	owner := s.CreateUser(t, "owner")
	dev := s.CreateUser(t, "dev")
	boss := s.CreateUser(t, "boss")
	p := stocktest.NewProject(t, owner.Client, "retarget", "private")
	stocktest.AddMember(t, owner.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, owner.Client, p.ID, boss.ID, gitlab.MaintainerPermissions)
	w := s.clone(t, "dev", dev.Token, "owner/retarget")
	w.commit("base", map[string]string{"a": "a\n"})
	w.git("push", "-q", "origin", "HEAD:master", "HEAD:develop")
	s.Call(t, owner.Token, http.MethodPut, projectPath(p.ID, "/repository/branches/master/protect"), nil).Expect(t, 200, "")
	w.git("checkout", "-q", "-b", "sneaky")
	sha := w.commit("sneaky", map[string]string{".gitlab-ci.yml": s.ci, "payload": "x"})
	w.git("push", "-q", "origin", "sneaky")
	openMR(t, dev.Client, p.ID, "sneaky", "develop", "Into develop")
	waitPipeline(t, dev.Client, p.ID, sha, "pending", "running")
	s.Drain(t)
	masterBefore := s.branchHead(t, owner.Token, p.ID, "master")

	s.mwps(t, boss.Token, p.ID, 1)
	v := s.Call(t, dev.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"target_branch": "master"}).Expect(t, 200, "").Object(t)
	if v["target_branch"] != "master" || v["merge_when_pipeline_succeeds"] != false {
		t.Fatalf("after the new target: target_branch %v, merge_when_pipeline_succeeds %v", v["target_branch"], v["merge_when_pipeline_succeeds"])
	}
	if n := s.notes(t, dev.Token, p.ID, 1); !hasNote(n, "canceled the automatic merge: the target branch was changed") {
		t.Fatalf("notes %q", n)
	}
	s.open(t, "sneaky")
	waitPipeline(t, dev.Client, p.ID, sha, "success")
	s.Drain(t)
	if v := s.mr(t, dev.Token, p.ID, 1); v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != false {
		t.Fatalf("after the pipeline: state %v, merge_when_pipeline_succeeds %v", v["state"], v["merge_when_pipeline_succeeds"])
	}
	if head := s.branchHead(t, owner.Token, p.ID, "master"); head != masterBefore {
		t.Fatalf("master moved to %s", head)
	}
}

// TestMWPSRecheckedAtMergeTime is issue 27, finding 2: what the pipeline's
// success finds must still be what the Master approved, and the Master
// must still be allowed to merge it: a push to the source whose event is
// behind the pipeline's, or the Master demoted to Developer while the
// pipeline runs, drops the intent with a system note and merges nothing.
func TestMWPSRecheckedAtMergeTime(t *testing.T) {
	t.Parallel()
	s := startGated(t)
	owner := s.CreateUser(t, "owner")
	dev := s.CreateUser(t, "dev")
	boss := s.CreateUser(t, "boss")
	p := stocktest.NewProject(t, owner.Client, "recheck", "private")
	stocktest.AddMember(t, owner.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, owner.Client, p.ID, boss.ID, gitlab.MaintainerPermissions)
	w := s.clone(t, "dev", dev.Token, "owner/recheck")
	w.commit("base", map[string]string{"a": "a\n"})
	w.git("push", "-q", "origin", "HEAD:master")
	s.Call(t, owner.Token, http.MethodPut, projectPath(p.ID, "/repository/branches/master/protect"), nil).Expect(t, 200, "")
	push := func(branch string) string {
		w.git("checkout", "-q", "-B", branch, "master")
		sha := w.commit(branch, map[string]string{".gitlab-ci.yml": s.ci, branch: branch})
		w.git("push", "-q", "origin", branch)
		return sha
	}
	pushedSHA := push("pushed")
	demotedSHA := push("demoted")
	openMR(t, dev.Client, p.ID, "pushed", "master", "Pushed to after approval")
	openMR(t, dev.Client, p.ID, "demoted", "master", "Approver demoted")
	waitPipeline(t, dev.Client, p.ID, pushedSHA, "pending", "running")
	waitPipeline(t, dev.Client, p.ID, demotedSHA, "pending", "running")
	s.Drain(t)
	masterBefore := s.branchHead(t, owner.Token, p.ID, "master")
	s.mwps(t, boss.Token, p.ID, 1)
	s.mwps(t, boss.Token, p.ID, 2)

	// The pipeline of the approved commit passes, then the Developer
	// pushes more; the merge request module hears of both in that order.
	s.stopBus(t)
	s.open(t, "pushed")
	waitPipeline(t, dev.Client, p.ID, pushedSHA, "success")
	w.git("checkout", "-q", "pushed")
	w.commit("unreviewed", map[string]string{"evil": "evil"})
	w.git("push", "-q", "origin", "pushed")
	s.startBus()
	s.Drain(t)
	if v := s.mr(t, dev.Token, p.ID, 1); v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != false {
		t.Fatalf("pushed: state %v, merge_when_pipeline_succeeds %v", v["state"], v["merge_when_pipeline_succeeds"])
	}
	if n := s.notes(t, dev.Token, p.ID, 1); !hasNote(n, "canceled the automatic merge: new commits were pushed") {
		t.Fatalf("pushed: notes %q", n)
	}

	// The Master who set it is a Developer by the time it passes.
	s.Call(t, owner.Token, http.MethodPut, projectPath(p.ID, "/members/"+store.IDString(boss.ID)), map[string]any{"access_level": 30}).Expect(t, 200, "")
	s.open(t, "demoted")
	waitPipeline(t, dev.Client, p.ID, demotedSHA, "success")
	s.Drain(t)
	if v := s.mr(t, dev.Token, p.ID, 2); v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != false {
		t.Fatalf("demoted: state %v, merge_when_pipeline_succeeds %v", v["state"], v["merge_when_pipeline_succeeds"])
	}
	if n := s.notes(t, dev.Token, p.ID, 2); !hasNote(n, "canceled the automatic merge: not allowed to merge into `master`") {
		t.Fatalf("demoted: notes %q", n)
	}
	if head := s.branchHead(t, owner.Token, p.ID, "master"); head != masterBefore {
		t.Fatalf("master moved to %s", head)
	}
}

// TestMWPSWaitsForAPipelineNotMadeYet is issue 27, finding 3: right after
// a push, CI has not made the commit's pipeline yet (its subscriber has
// not had the push). Merge when pipeline succeeds must wait for that
// pipeline, not merge at once; the outbox is held so that the moment is
// not left to chance. A commit CI will not build (no CI file; jobs off
// when it was pushed) has no pipeline to wait for and merges at once.
func TestMWPSWaitsForAPipelineNotMadeYet(t *testing.T) {
	t.Parallel()
	s := startGated(t)
	p, w, alice := setup(t, s.env, "early")
	s.Drain(t)

	s.stopBus(t)
	w.git("checkout", "-q", "-B", "early", "master")
	sha := w.commit("early", map[string]string{".gitlab-ci.yml": s.ci, "early": "early"})
	w.git("push", "-q", "origin", "early")
	openMR(t, alice.Client, p.ID, "early", "master", "Early")
	s.mwps(t, alice.Token, p.ID, 1)
	if v := s.mr(t, alice.Token, p.ID, 1); v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != true {
		t.Fatalf("before CI had the push: state %v, merge_when_pipeline_succeeds %v", v["state"], v["merge_when_pipeline_succeeds"])
	}
	s.startBus()
	waitPipeline(t, alice.Client, p.ID, sha, "pending", "running")
	s.Drain(t)
	if v := s.mr(t, alice.Token, p.ID, 1); v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != true {
		t.Fatalf("while the pipeline runs: state %v, merge_when_pipeline_succeeds %v", v["state"], v["merge_when_pipeline_succeeds"])
	}
	s.open(t, "early")
	waitPipeline(t, alice.Client, p.ID, sha, "success")
	s.Drain(t)
	if v := s.mr(t, alice.Token, p.ID, 1); v["state"] != "merged" {
		t.Fatalf("after the pipeline: state %v", v["state"])
	}

	// No CI file: nothing to wait for, even before CI had the push.
	s.stopBus(t)
	w.git("checkout", "-q", "-B", "plain", "master")
	w.git("rm", "-q", "--ignore-unmatch", ".gitlab-ci.yml")
	w.commit("plain", map[string]string{"plain": "plain"})
	w.git("push", "-q", "origin", "plain")
	openMR(t, alice.Client, p.ID, "plain", "master", "Plain")
	v := s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 2, "/merge"), map[string]any{"merge_when_pipeline_succeeds": true}).
		Expect(t, 200, "").Object(t)
	if v["state"] != "merged" {
		t.Fatalf("without a CI file: state %v", v["state"])
	}
	s.startBus()
	s.Drain(t)

	// Pushed while jobs were off: CI made no pipeline and will make none.
	s.Call(t, alice.Token, http.MethodPut, projectPath(p.ID, ""), map[string]any{"jobs_enabled": false}).Expect(t, 200, "")
	w.git("checkout", "-q", "-B", "unbuilt", "master")
	w.commit("unbuilt", map[string]string{".gitlab-ci.yml": s.ci, "unbuilt": "unbuilt"})
	w.git("push", "-q", "origin", "unbuilt")
	s.Drain(t)
	s.Call(t, alice.Token, http.MethodPut, projectPath(p.ID, ""), map[string]any{"jobs_enabled": true}).Expect(t, 200, "")
	openMR(t, alice.Client, p.ID, "unbuilt", "master", "Unbuilt")
	v = s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 3, "/merge"), map[string]any{"merge_when_pipeline_succeeds": true}).
		Expect(t, 200, "").Object(t)
	if v["state"] != "merged" || strings.Contains(fmt.Sprint(v["pipeline"]), "status") {
		t.Fatalf("a commit CI never built: state %v, pipeline %v", v["state"], v["pipeline"])
	}
}

// TestViewPipelineIsCIs: a merge request's pipeline is CI's newest
// pipeline of its head as CI has it now, not a copy that follows CI's
// events: with the outbox held, a pipeline that has just succeeded shows
// as succeeded.
func TestViewPipelineIsCIs(t *testing.T) {
	t.Parallel()
	s := startGated(t)
	p, w, alice := setup(t, s.env, "view")
	s.Drain(t)

	w.git("checkout", "-q", "-B", "view", "master")
	sha := w.commit("view", map[string]string{".gitlab-ci.yml": s.ci, "view": "view"})
	w.git("push", "-q", "origin", "view")
	openMR(t, alice.Client, p.ID, "view", "master", "View")
	waitPipeline(t, alice.Client, p.ID, sha, "pending", "running")
	s.Drain(t)

	s.stopBus(t)
	s.open(t, "view")
	waitPipeline(t, alice.Client, p.ID, sha, "success")
	pipes, _, err := alice.Client.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{SHA: gitlab.Ptr(sha)})
	if err != nil || len(pipes) != 1 {
		t.Fatalf("pipelines of %s: %v, %v", sha, pipes, err)
	}
	v := s.mr(t, alice.Token, p.ID, 1)
	pipe, _ := v["pipeline"].(map[string]any)
	if pipe["status"] != "success" || fmt.Sprint(pipe["id"]) != fmt.Sprint(pipes[0].ID) || pipe["sha"] != sha || pipe["ref"] != "view" {
		t.Fatalf("pipeline of the view with the outbox held: %v (CI's: id %d)", v["pipeline"], pipes[0].ID)
	}
	s.startBus()
	s.Drain(t)
}
