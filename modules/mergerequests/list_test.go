package mergerequests_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
)

// TestList: pagination headers, order_by/sort, state and iid filters, and
// bad input refused with GitLab's answers and nothing stored.
func TestList(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, w, alice := setup(t, s, "list")
	for i := 1; i <= 7; i++ {
		b := "b" + store.IDString(int64(i))
		w.git("checkout", "-q", "-B", b, "master")
		w.commit(b, map[string]string{b: b})
		w.git("push", "-q", "origin", b)
		openMR(t, alice.Client, p.ID, b, "master", "MR "+store.IDString(int64(i)))
	}
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 2), map[string]any{"state_event": "close"}).Expect(t, 200, "")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 3, "/merge"), nil).Expect(t, 200, "")
	// Touch 1 so that it is the most recently updated.
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"title": "first, edited"}).Expect(t, 200, "")

	r := s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/merge_requests?per_page=3&page=2"), nil).Expect(t, 200, "")
	if got := r.IIDs(t); !slices.Equal(got, []int64{4, 3, 2}) {
		t.Fatalf("page 2 %v", got)
	}
	fennectest.CheckPages(t, "merge requests", r.Header, 7, 3, 3, 2, "3", "1")
	for q, want := range map[string][]int64{
		"?sort=asc":                       {1, 2, 3, 4, 5, 6, 7},
		"?order_by=updated_at":            {1, 3, 2, 7, 6, 5, 4},
		"?state=opened":                   {7, 6, 5, 4, 1},
		"?state=closed":                   {2},
		"?state=merged":                   {3},
		"?state=all":                      {7, 6, 5, 4, 3, 2, 1},
		"?iid=5":                          {5},
		"?iids[]=2&iids[]=6":              {6, 2},
		"?iids[]=2&iids[]=6&state=opened": {6},
		"?iids[]=99":                      {},
	} {
		got := s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/merge_requests"+q), nil).Expect(t, 200, "").IIDs(t)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/merge_requests?state=bogus"), nil).
		Expect(t, 400, `{"error":"state does not have a valid value"}`)
	s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/merge_requests?order_by=title"), nil).
		Expect(t, 400, `{"error":"order_by does not have a valid value"}`)

	// Bad input: nothing is stored.
	w.git("checkout", "-q", "-B", "bad", "master")
	w.commit("bad", map[string]string{"bad": "bad"})
	w.git("push", "-q", "origin", "bad")
	for name, body := range map[string]map[string]any{
		"empty title":      {"title": "", "source_branch": "bad", "target_branch": "master"},
		"blank title":      {"title": "   ", "source_branch": "bad", "target_branch": "master"},
		"long title":       {"title": strings.Repeat("t", 256), "source_branch": "bad", "target_branch": "master"},
		"huge description": {"title": "t", "description": strings.Repeat("d", 1_000_001), "source_branch": "bad", "target_branch": "master"},
		"invalid utf-8":    {"title": "t\xff", "source_branch": "bad", "target_branch": "master"},
		"hostile branch":   {"title": "t", "source_branch": "../../etc", "target_branch": "master"},
		"empty branch":     {"title": "t", "source_branch": "", "target_branch": "master"},
	} {
		r := s.Call(t, alice.Token, http.MethodPost, projectPath(p.ID, "/merge_requests"), body)
		if r.Status != 400 && r.Status != 422 {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	if got := s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/merge_requests"), nil).Expect(t, 200, "").IIDs(t); len(got) != 7 {
		t.Fatalf("bad input stored something: %v", got)
	}
}
