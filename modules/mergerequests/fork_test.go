package mergerequests_test

import (
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// TestFork: bob forks alice's project, pushes a branch to his fork and
// opens a merge request into the upstream; it lives there, follows pushes
// to the fork, and alice merges it: the fork's commits land upstream.
func TestFork(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, w, alice := setup(t, s, "up")
	_ = w
	s.Call(t, alice.Token, http.MethodPut, projectPath(p.ID, ""), map[string]any{"name": "up", "visibility": "public"}).Expect(t, 200, "")
	bob := s.CreateUser(t, "bob")
	fork, _, err := bob.Client.Projects.ForkProject(p.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	bw := s.clone(t, "bob", bob.Token, "bob/up")
	bw.git("checkout", "-q", "-b", "fix")
	first := bw.commit("fork work", map[string]string{"fork.txt": "from the fork\n"})
	bw.git("push", "-q", "origin", "fix")
	s.Drain(t)
	// Only into the project it was forked from.
	other := stocktest.NewProject(t, alice.Client, "other", "public")
	s.Call(t, bob.Token, http.MethodPost, projectPath(fork.ID, "/merge_requests"), map[string]any{"title": "t",
		"source_branch": "fix", "target_branch": "master", "target_project_id": other.ID}).Expect(t, 422, "")
	mr, resp, err := bob.Client.MergeRequests.CreateMergeRequest(fork.ID, &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("From a fork"),
		SourceBranch: gitlab.Ptr("fix"), TargetBranch: gitlab.Ptr("master"), TargetProjectID: gitlab.Ptr(p.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || mr.ProjectID != p.ID || mr.SourceProjectID != fork.ID || mr.TargetProjectID != p.ID || mr.SHA != first {
		t.Fatalf("fork MR %+v", mr)
	}
	// A push to the fork's branch moves it.
	second := bw.commit("more fork work", map[string]string{"fork2.txt": "again\n"})
	bw.git("push", "-q", "origin", "fix")
	s.Drain(t)
	v := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, mr.IID), nil).Expect(t, 200, "").Object(t)
	if v["sha"] != second || v["merge_status"] != "can_be_merged" {
		t.Fatalf("after the fork's push: %v", v)
	}
	commits := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, mr.IID, "/commits"), nil).Expect(t, 200, "").List(t)
	if len(commits) != 2 || commits[0]["id"] != second {
		t.Fatalf("commits %v", commits)
	}
	// bob cannot merge upstream; alice can.
	s.Call(t, bob.Token, http.MethodPut, mrPath(p.ID, mr.IID, "/merge"), nil).Expect(t, 401, "")
	s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, mr.IID, "/merge"), nil).Expect(t, 200, "")
	fresh := s.clone(t, "alice", alice.Token, "alice/up")
	if out := fresh.git("show", "HEAD:fork2.txt"); out != "again" {
		t.Fatalf("fork2.txt %q", out)
	}
	if _, err := gitErr(fresh.home, fresh.dir, "merge-base", "--is-ancestor", first, "HEAD"); err != nil {
		t.Fatal("the fork's commit is not upstream")
	}
}
