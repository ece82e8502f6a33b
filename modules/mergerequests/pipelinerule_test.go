package mergerequests_test

import (
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestOnlyMergeWhenPipelineSucceeds: a project with
// only_allow_merge_if_pipeline_succeeds refuses a merge (405, nothing
// merged) while the head's pipeline runs or after it failed, through the
// API and from the page, whose merge box says why and offers only Merge
// when pipeline succeeds while the pipeline runs. Merge when pipeline
// succeeds on a failed pipeline is refused too: nothing is left to wait
// for, and merging at once would go round the rule. A head without a
// pipeline merges, as in GitLab; the same failed head merges once the
// project drops the setting.
func TestOnlyMergeWhenPipelineSucceeds(t *testing.T) {
	t.Parallel()
	s := startGated(t)
	owner := s.CreateUser(t, "owner")
	p := stocktest.NewProject(t, owner.Client, "strict", "private")
	s.Call(t, owner.Token, http.MethodPut, projectPath(p.ID, ""), map[string]any{"only_allow_merge_if_pipeline_succeeds": true}).
		Expect(t, 200, "")
	w := s.clone(t, "owner", owner.Token, "owner/strict")
	w.commit("base", map[string]string{"a": "a\n"})
	w.git("push", "-q", "origin", "HEAD:master")
	branch := func(name string, files map[string]string) string {
		w.git("checkout", "-q", "-B", name, "master")
		sha := w.commit(name, files)
		w.git("push", "-q", "origin", name)
		return sha
	}
	merge := func(iid int64, body map[string]any, status int) {
		t.Helper()
		s.Call(t, owner.Token, http.MethodPut, mrPath(p.ID, iid, "/merge"), body).Expect(t, status, "")
		if status != 200 {
			if v := s.mr(t, owner.Token, p.ID, iid); v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != false {
				t.Fatalf("!%d after a refused merge: state %v, merge_when_pipeline_succeeds %v", iid, v["state"], v["merge_when_pipeline_succeeds"])
			}
		}
	}
	page := s.SignedIn(t, "owner", owner.Password)

	// A failed pipeline: refused either way, and the page says why.
	red := branch("red", map[string]string{".gitlab-ci.yml": s.ci, "red": "red\n"})
	writeGate(t, s.gates, "red", "no")
	openMR(t, owner.Client, p.ID, "red", "master", "Red")
	waitPipeline(t, owner.Client, p.ID, red, "failed")
	s.Drain(t)
	merge(1, nil, http.StatusMethodNotAllowed)
	merge(1, map[string]any{"merge_when_pipeline_succeeds": true}, http.StatusMethodNotAllowed)
	box := page.Get(t, "/owner/strict/-/merge_requests/1")
	wantPage(t, "failed pipeline", box, 200,
		"This project merges only when the pipeline succeeds, and the pipeline of the source branch&#39;s head failed.")
	wantNot(t, "failed pipeline", box, `class="merge-form"`)

	// A running pipeline: not now, but when it succeeds.
	amber := branch("amber", map[string]string{".gitlab-ci.yml": s.ci, "amber": "amber\n"})
	openMR(t, owner.Client, p.ID, "amber", "master", "Amber")
	waitPipeline(t, owner.Client, p.ID, amber, "pending", "running")
	s.Drain(t)
	merge(2, nil, http.StatusMethodNotAllowed)
	box = page.Get(t, "/owner/strict/-/merge_requests/2")
	wantPage(t, "running pipeline", box, 200, `class="merge-form"`, `>Merge when pipeline succeeds</button>`)
	wantNot(t, "running pipeline", box, `Merge immediately`)
	s.mwps(t, owner.Token, p.ID, 2)
	s.open(t, "amber")
	waitPipeline(t, owner.Client, p.ID, amber, "success")
	s.Drain(t)
	if v := s.mr(t, owner.Token, p.ID, 2); v["state"] != "merged" {
		t.Fatalf("!2 after its pipeline passed: state %v", v["state"])
	}

	// No pipeline at all: merged.
	branch("plain", map[string]string{"plain": "plain\n"})
	openMR(t, owner.Client, p.ID, "plain", "master", "Plain")
	merge(3, nil, http.StatusOK)

	// The setting dropped, the failed head merges.
	s.Call(t, owner.Token, http.MethodPut, projectPath(p.ID, ""), map[string]any{"only_allow_merge_if_pipeline_succeeds": false}).
		Expect(t, 200, "")
	merge(1, nil, http.StatusOK)
	if v := s.mr(t, owner.Token, p.ID, 1); v["state"] != "merged" {
		t.Fatalf("!1 without the setting: state %v", v["state"])
	}
}
