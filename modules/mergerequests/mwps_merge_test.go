package mergerequests_test

import (
	"net/http"
	"testing"
)

// TestMWPSIsTheButtonsMerge: merge when pipeline succeeds merges through
// the same Merge as the button (issue 36), so what makes the button
// refuse makes the automatic merge refuse too: a merge request whose
// title says work in progress by the time its pipeline passes is not
// merged; the intent is dropped with a note and the target stays.
func TestMWPSIsTheButtonsMerge(t *testing.T) {
	t.Parallel()
	s := startGated(t)
	p, w, alice := setup(t, s.env, "wip")
	sha := w.commit("wip", map[string]string{".gitlab-ci.yml": s.ci, "wip": "wip"})
	w.git("push", "-q", "origin", "feature")
	openMR(t, alice.Client, p.ID, "feature", "master", "Not yet")
	waitPipeline(t, alice.Client, p.ID, sha, "pending", "running")
	s.Drain(t)
	masterBefore := s.branchHead(t, alice.Token, p.ID, "master")
	s.mwps(t, alice.Token, p.ID, 1)
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"title": "WIP: Not yet"}).Expect(t, 200, "")
	// The button refuses it.
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), nil).Expect(t, 405, `{"message":"Branch cannot be merged"}`)

	s.open(t, "feature")
	waitPipeline(t, alice.Client, p.ID, sha, "success")
	s.Drain(t)
	if v := s.mr(t, alice.Token, p.ID, 1); v["state"] != "opened" || v["merge_when_pipeline_succeeds"] != false {
		t.Fatalf("after the pipeline: state %v, merge_when_pipeline_succeeds %v", v["state"], v["merge_when_pipeline_succeeds"])
	}
	if n := s.notes(t, alice.Token, p.ID, 1); !hasNote(n, "canceled the automatic merge: the merge failed") {
		t.Fatalf("notes %q", n)
	}
	if head := s.branchHead(t, alice.Token, p.ID, "master"); head != masterBefore {
		t.Fatalf("master moved to %s", head)
	}
}
