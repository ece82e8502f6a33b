package mergerequests_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// setup is a project alice owns with master and a feature branch pushed
// by git, and the clone they were pushed from.
func setup(t *testing.T, s *env, name string) (*gitlab.Project, *clone, *userT) {
	t.Helper()
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, name, "private")
	w := s.clone(t, "alice", alice.Token, "alice/"+name)
	w.commit("base", map[string]string{"a.txt": "one\ntwo\nthree\n"})
	w.git("push", "-q", "origin", "HEAD:master")
	w.git("checkout", "-q", "-b", "feature")
	return p, w, &userT{ID: alice.ID, Token: alice.Token, Client: alice.Client}
}

type userT struct {
	ID     int64
	Token  string
	Client *gitlab.Client
}

func openMR(t *testing.T, c *gitlab.Client, project int64, source, target, title string) *gitlab.MergeRequest {
	t.Helper()
	mr, _, err := c.MergeRequests.CreateMergeRequest(project, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr(title),
		SourceBranch: gitlab.Ptr(source), TargetBranch: gitlab.Ptr(target)})
	if err != nil {
		t.Fatalf("create merge request: %v", err)
	}
	return mr
}

// TestConflict: branches that change the same line conflict: the merge
// status says so and the merge is refused with 405, nothing written.
func TestConflict(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, w, alice := setup(t, s, "conflict")
	w.commit("feature edits", map[string]string{"a.txt": "one\nFEATURE\nthree\n"})
	w.git("push", "-q", "origin", "feature")
	w.git("checkout", "-q", "master")
	masterHead := w.commit("master edits", map[string]string{"a.txt": "one\nMASTER\nthree\n"})
	w.git("push", "-q", "origin", "master")
	s.Drain(t)
	openMR(t, alice.Client, p.ID, "feature", "master", "Conflicting")
	s.Drain(t)
	v := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1), nil).Expect(t, 200, "").Object(t)
	if v["merge_status"] != "cannot_be_merged" {
		t.Fatalf("merge_status %v", v["merge_status"])
	}
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), nil).Expect(t, 405, `{"message":"Branch cannot be merged"}`)
	if head := strings.Fields(w.git("ls-remote", "origin", "refs/heads/master"))[0]; head != masterHead {
		t.Fatalf("master moved to %s", head)
	}
	v = s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1), nil).Expect(t, 200, "").Object(t)
	if v["state"] != "opened" {
		t.Fatalf("state %v", v["state"])
	}
	// Resolving on the feature branch makes it mergeable again.
	w.git("checkout", "-q", "feature")
	w.commit("resolve", map[string]string{"a.txt": "one\nMASTER\nthree\n"})
	w.git("merge", "-q", "-s", "ours", "master", "-m", "take master")
	w.git("push", "-q", "origin", "feature")
	s.Drain(t)
	v = s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1), nil).Expect(t, 200, "").Object(t)
	if v["merge_status"] != "can_be_merged" {
		t.Fatalf("after resolving: %v", v["merge_status"])
	}
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), nil).Expect(t, 200, "")
}

// TestStates: close, reopen (reopened), WIP refuses (405), closed refuses
// (406), cancel MWPS when not set (406), subscribe/unsubscribe/todo 304s,
// delete by owners only.
func TestStates(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, w, alice := setup(t, s, "states")
	bob := s.CreateUser(t, "bob")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.MaintainerPermissions)
	w.commit("f", map[string]string{"f.txt": "f\n"})
	w.git("push", "-q", "origin", "feature")
	openMR(t, alice.Client, p.ID, "feature", "master", "WIP: not yet")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), nil).Expect(t, 405, "")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{}).Expect(t, 400, "")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"state_event": "merge"}).
		Expect(t, 400, `{"error":"state_event does not have a valid value"}`)
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/cancel_merge_when_pipeline_succeeds"), nil).Expect(t, 406, "")
	v := s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"state_event": "close", "title": "Ready"}).
		Expect(t, 200, "").Object(t)
	if v["state"] != "closed" || v["title"] != "Ready" || v["work_in_progress"] != false {
		t.Fatalf("closed %v", v)
	}
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), nil).Expect(t, 406, "")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1, "/cancel_merge_when_pipeline_succeeds"), nil).Expect(t, 405, "")
	v = s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"state_event": "reopen"}).Expect(t, 200, "").Object(t)
	if v["state"] != "reopened" {
		t.Fatalf("reopened %v", v["state"])
	}
	// opened filter matches reopened.
	if got := s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/merge_requests?state=opened"), nil).Expect(t, 200, "").IIDs(t); len(got) != 1 {
		t.Fatalf("opened filter %v", got)
	}
	var notes []string
	for _, n := range s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1, "/notes?sort=asc"), nil).Expect(t, 200, "").List(t) {
		if n["system"] == true {
			notes = append(notes, n["body"].(string))
		}
	}
	if strings.Join(notes, "|") != "changed title from **WIP: not yet** to **Ready**|closed|reopened" {
		t.Fatalf("system notes %q", notes)
	}
	// Subscriptions and todos.
	s.Call(t, bob.Token, http.MethodPost, mrPath(p.ID, 1, "/subscribe"), nil).Expect(t, 201, "")
	s.Call(t, bob.Token, http.MethodPost, mrPath(p.ID, 1, "/subscribe"), nil).Expect(t, 304, "")
	s.Call(t, bob.Token, http.MethodPost, mrPath(p.ID, 1, "/unsubscribe"), nil).Expect(t, 201, "")
	s.Call(t, bob.Token, http.MethodPost, mrPath(p.ID, 1, "/unsubscribe"), nil).Expect(t, 304, "")
	todo := s.Call(t, bob.Token, http.MethodPost, mrPath(p.ID, 1, "/todo"), nil).Expect(t, 201, "").Object(t)
	if todo["target_type"] != "MergeRequest" || todo["action_name"] != "marked" {
		t.Fatalf("todo %v", todo)
	}
	s.Call(t, bob.Token, http.MethodPost, mrPath(p.ID, 1, "/todo"), nil).Expect(t, 304, "")
	// Delete: a master may not, the owner may; then 404.
	s.Call(t, bob.Token, http.MethodDelete, mrPath(p.ID, 1), nil).Expect(t, 403, "")
	s.Call(t, alice.Token, http.MethodDelete, mrPath(p.ID, 1), nil).Expect(t, 204, "")
	s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	if got := s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/merge_requests"), nil).Expect(t, 200, "").IIDs(t); len(got) != 0 {
		t.Fatalf("deleted one listed: %v", got)
	}
	// The next one gets a new iid.
	if mr := openMR(t, alice.Client, p.ID, "feature", "master", "again"); mr.IID != 2 {
		t.Fatalf("iid %d", mr.IID)
	}
}

// TestConcurrentMergeAndPush: pushes to the target while merges land are
// all kept: the merge is made again over a moved branch.
func TestConcurrentMergeAndPush(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, w, alice := setup(t, s, "race")
	const n = 4
	for i := 0; i < n; i++ {
		w.git("checkout", "-q", "-B", "f"+store.IDString(int64(i)), "master")
		w.commit("f", map[string]string{"f" + store.IDString(int64(i)) + ".txt": "x\n"})
		w.git("push", "-q", "origin", "f"+store.IDString(int64(i)))
		openMR(t, alice.Client, p.ID, "f"+store.IDString(int64(i)), "master", "F"+store.IDString(int64(i)))
	}
	// A second clone pushes commits to master meanwhile.
	other := s.clone(t, "alice", alice.Token, "alice/race")
	var wg sync.WaitGroup
	var pushed []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 3; i++ {
			sha := other.commit("direct "+store.IDString(int64(i)), map[string]string{"d" + store.IDString(int64(i)) + ".txt": "d\n"})
			for k := 0; k < 10; k++ {
				if _, err := gitErr(other.home, other.dir, "push", "-q", "origin", "HEAD:master"); err == nil {
					pushed = append(pushed, sha)
					break
				}
				// Rejected (the target moved): rebase on it and retry.
				if _, err := gitErr(other.home, other.dir, "pull", "-q", "--rebase", "origin", "master"); err != nil {
					return
				}
				sha, _ = gitErr(other.home, other.dir, "rev-parse", "HEAD")
			}
		}
	}()
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(iid int64) {
			defer wg.Done()
			r := s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, iid, "/merge"), nil)
			if r.Status != 200 {
				errs <- fmt.Errorf("!%d: %d %s", iid, r.Status, r.Body)
				return
			}
			errs <- nil
		}(int64(i + 1))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("merge: %v", err)
		}
	}
	fresh := s.clone(t, "alice", alice.Token, "alice/race")
	for i := 0; i < n; i++ {
		if _, err := gitErr(fresh.home, fresh.dir, "cat-file", "-e", "HEAD:f"+store.IDString(int64(i))+".txt"); err != nil {
			t.Errorf("merge %d lost", i)
		}
	}
	for _, sha := range pushed {
		if _, err := gitErr(fresh.home, fresh.dir, "merge-base", "--is-ancestor", sha, "HEAD"); err != nil {
			t.Errorf("pushed commit %s lost", sha)
		}
	}
	if len(pushed) == 0 {
		t.Fatal("no direct push landed")
	}
}
