package mergerequests_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// TestLife: branches pushed with git, a merge request opened on them,
// followed through a push, merged by the API, and the merge seen by git
// in a fresh clone; the issue it names is closed, its source branch gone.
func TestLife(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "life", "private")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)
	issue, _, err := alice.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("bug")})
	if err != nil {
		t.Fatal(err)
	}

	w := s.clone(t, "bob", bob.Token, "alice/life")
	w.commit("base", map[string]string{"a.txt": "one\ntwo\nthree\n"})
	w.git("push", "-q", "origin", "HEAD:master")
	w.git("checkout", "-q", "-b", "feature")
	first := w.commit("Add b\n\nFixes #1", map[string]string{"b.txt": "b\n"})
	w.git("push", "-q", "origin", "feature")
	// master moves on without conflict.
	w.git("checkout", "-q", "master")
	w.commit("change a", map[string]string{"a.txt": "ONE\ntwo\nthree\n"})
	w.git("push", "-q", "origin", "master")
	s.Drain(t)

	mr, resp, err := bob.Client.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr("Feature"), SourceBranch: gitlab.Ptr("feature"), TargetBranch: gitlab.Ptr("master"),
		Description: gitlab.Ptr("cc @alice"), AssigneeID: gitlab.Ptr(alice.ID), Labels: &gitlab.LabelOptions{"x", "y"},
		RemoveSourceBranch: gitlab.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || mr.IID != 1 || mr.State != "opened" || mr.SHA != first || mr.SourceProjectID != p.ID ||
		mr.TargetProjectID != p.ID || mr.Assignee == nil || mr.Assignee.ID != alice.ID || len(mr.Labels) != 2 ||
		!mr.ForceRemoveSourceBranch || mr.Author.ID != bob.ID {
		t.Fatalf("created %d %+v", resp.StatusCode, mr)
	}
	// A second open one on the same branches: 409.
	r := s.Call(t, bob.Token, http.MethodPost, projectPath(p.ID, "/merge_requests"),
		map[string]any{"title": "again", "source_branch": "feature", "target_branch": "master"})
	if r.Status != 409 || !strings.Contains(string(r.Body), "This merge request already exists") {
		t.Fatalf("duplicate: %d %s", r.Status, r.Body)
	}
	s.Call(t, bob.Token, http.MethodPost, projectPath(p.ID, "/merge_requests"),
		map[string]any{"title": "same", "source_branch": "master", "target_branch": "master"}).Expect(t, 422, "")
	s.Call(t, bob.Token, http.MethodPost, projectPath(p.ID, "/merge_requests"),
		map[string]any{"title": "none", "source_branch": "nope", "target_branch": "master"}).Expect(t, 422, "")
	s.Call(t, bob.Token, http.MethodPost, projectPath(p.ID, "/merge_requests"),
		map[string]any{"source_branch": "feature"}).Expect(t, 400, `{"error":"target_branch is missing, title is missing"}`)
	s.Call(t, bob.Token, http.MethodPost, projectPath(p.ID, "/merge_requests"),
		map[string]any{"title": nil, "source_branch": "feature", "target_branch": "master"}).Expect(t, 400, `{"error":"title is missing"}`)

	// The background check computes the merge status.
	s.Drain(t)
	raw := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1), nil).Expect(t, 200, "").Object(t)
	if raw["merge_status"] != "can_be_merged" || raw["subscribed"] != true || raw["work_in_progress"] != false {
		t.Fatalf("view %v", raw)
	}

	// A push to the source branch updates it.
	w.git("checkout", "-q", "feature")
	second := w.commit("more", map[string]string{"c.txt": "c\n"})
	w.git("push", "-q", "origin", "feature")
	s.Drain(t)
	got, _, err := alice.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil)
	if err != nil || got.SHA != second {
		t.Fatalf("after push: %v %+v", err, got)
	}
	commits, _, err := alice.Client.MergeRequests.GetMergeRequestCommits(p.ID, 1, nil)
	if err != nil || len(commits) != 2 || commits[0].ID != second || commits[1].ID != first {
		t.Fatalf("commits %v %+v", err, commits)
	}
	ch := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1, "/changes"), nil).Expect(t, 200, "").Object(t)
	list, _ := ch["changes"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["new_path"] != "b.txt" || list[0].(map[string]any)["new_file"] != true {
		t.Fatalf("changes %v", ch)
	}
	closes, _, err := alice.Client.MergeRequests.GetIssuesClosedOnMerge(p.ID, 1, nil)
	if err != nil || len(closes) != 1 || closes[0].IID != issue.IID {
		t.Fatalf("closes_issues %v %+v", err, closes)
	}

	// The sha must be the source's head.
	s.Call(t, bob.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), map[string]any{"sha": first}).
		Expect(t, 409, `{"message":"SHA does not match HEAD of source branch: `+second+`"}`)

	merged, resp, err := bob.Client.MergeRequests.AcceptMergeRequest(p.ID, 1, &gitlab.AcceptMergeRequestOptions{SHA: gitlab.Ptr(second)})
	if err != nil || resp.StatusCode != 200 || merged.State != "merged" || merged.MergeCommitSHA == "" {
		t.Fatalf("merge %v %+v", err, merged)
	}
	s.Drain(t)

	// git sees the merge in a fresh clone.
	fresh := s.clone(t, "alice", alice.Token, "alice/life")
	if head := fresh.git("rev-parse", "HEAD"); head != merged.MergeCommitSHA {
		t.Fatalf("master is %s, merge commit %s", head, merged.MergeCommitSHA)
	}
	parents := strings.Fields(fresh.git("log", "-1", "--format=%P"))
	if len(parents) != 2 || parents[1] != second {
		t.Fatalf("parents %v", parents)
	}
	msg := fresh.git("log", "-1", "--format=%B")
	want := "Merge branch 'feature' into 'master'\n\nFeature\n\nCloses #1\n\nSee merge request alice/life!1"
	if msg != want {
		t.Fatalf("message %q, want %q", msg, want)
	}
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if _, err := gitErr(fresh.home, fresh.dir, "cat-file", "-e", "HEAD:"+f); err != nil {
			t.Errorf("%s missing from the merge", f)
		}
	}
	if out := fresh.git("show", "HEAD:a.txt"); out != "ONE\ntwo\nthree" {
		t.Errorf("a.txt %q", out)
	}
	// The source branch was removed (remove_source_branch at creation).
	if out := fresh.git("ls-remote", "--heads", "origin"); strings.Contains(out, "feature") {
		t.Errorf("feature still there: %s", out)
	}
	// The issue is closed with a note naming the merge request.
	is, _, err := alice.Client.Issues.GetIssue(p.ID, issue.IID)
	if err != nil || is.State != "closed" {
		t.Fatalf("issue %v %+v", err, is)
	}
	// A merged one still lists its own commits and changes.
	commits, _, err = alice.Client.MergeRequests.GetMergeRequestCommits(p.ID, 1, nil)
	if err != nil || len(commits) != 2 || commits[0].ID != second {
		t.Fatalf("commits after the merge %v %+v", err, commits)
	}
	ch = s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1, "/changes"), nil).Expect(t, 200, "").Object(t)
	if list, _ := ch["changes"].([]any); len(list) != 2 {
		t.Fatalf("changes after the merge %v", ch["changes"])
	}
	if ch["merged_by"].(map[string]any)["username"] != "bob" || ch["merged_at"] == nil {
		t.Fatalf("merged_by/merged_at %v %v", ch["merged_by"], ch["merged_at"])
	}
	// A merged one: 406 for a second merge; 405 to cancel MWPS.
	s.Call(t, bob.Token, http.MethodPut, mrPath(p.ID, 1, "/merge"), nil).Expect(t, 406, "")
	s.Call(t, bob.Token, http.MethodPut, mrPath(p.ID, 1, "/cancel_merge_when_pipeline_succeeds"), nil).Expect(t, 405, "")
	// System notes: merged.
	r = s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1, "/notes"), nil).Expect(t, 200, "")
	found := false
	for _, n := range r.List(t) {
		if n["system"] == true && n["body"] == "merged" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no merged note: %s", r.Body)
	}
	// The feed shows the merge.
	r = s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/events"), nil).Expect(t, 200, "")
	if !strings.Contains(string(r.Body), `"action_name":"merged"`) || !strings.Contains(string(r.Body), `"target_type":"MergeRequest"`) {
		t.Fatalf("events %s", r.Body)
	}
}
