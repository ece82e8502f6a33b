package mergerequests_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// GET /projects/:id/repository/commits/:sha/merge_requests lists the merge
// requests that hold a commit: open ones by their source's commits not in
// the target, merged ones by their commits and their merge commit, closed
// ones, and ones from a fork.
func TestCommitMergeRequests(t *testing.T) {
	t.Parallel()
	e := start(t)
	root := e.Client
	bob := e.CreateUser(t, "cmrbob")
	p := stocktest.NewProject(t, root, "cmr", "public")
	commit := func(pid int64, branch, start, file string) string {
		t.Helper()
		opts := &gitlab.CreateCommitOptions{Branch: gitlab.Ptr(branch), CommitMessage: gitlab.Ptr("add " + file),
			Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr(file), Content: gitlab.Ptr(file + "\n")}}}
		if start != "" {
			opts.StartBranch = gitlab.Ptr(start)
		}
		c, _, err := root.Commits.CreateCommit(pid, opts)
		if err != nil {
			t.Fatalf("commit %s on %s: %v", file, branch, err)
		}
		return c.ID
	}
	mr := func(c *gitlab.Client, pid int64, source string, target int64) int64 {
		t.Helper()
		opts := &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("from " + source), SourceBranch: gitlab.Ptr(source), TargetBranch: gitlab.Ptr("master")}
		if target != 0 {
			opts.TargetProjectID = gitlab.Ptr(target)
		}
		m, _, err := c.MergeRequests.CreateMergeRequest(pid, opts)
		if err != nil {
			t.Fatalf("merge request from %s: %v", source, err)
		}
		return m.IID
	}
	c0 := commit(p.ID, "master", "", "README")
	c1 := commit(p.ID, "feature", "master", "f1")
	c2 := commit(p.ID, "feature", "", "f2")
	mr1 := mr(root, p.ID, "feature", 0)
	c3 := commit(p.ID, "other", "master", "o1")
	mr2 := mr(root, p.ID, "other", 0)
	e.Drain(t)
	merged, _, err := root.MergeRequests.AcceptMergeRequest(p.ID, mr2, &gitlab.AcceptMergeRequestOptions{})
	if err != nil || merged.MergeCommitSHA == "" {
		t.Fatalf("merge: %v %+v", err, merged)
	}
	m2 := merged.MergeCommitSHA
	c4 := commit(p.ID, "stale", "master", "s1")
	mr3 := mr(root, p.ID, "stale", 0)
	if _, _, err := root.MergeRequests.UpdateMergeRequest(p.ID, mr3, &gitlab.UpdateMergeRequestOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	c6 := commit(p.ID, "feature2", "feature", "f6")
	mr5 := mr(root, p.ID, "feature2", 0)
	// A merge request from a fork: its commits are only in the fork's
	// repository until looked at.
	fork, _, err := bob.Client.Projects.ForkProject(p.ID, &gitlab.ForkProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	fc, _, err := bob.Client.Commits.CreateCommit(fork.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("fx"), StartBranch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("fork work"), Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate),
			FilePath: gitlab.Ptr("fx"), Content: gitlab.Ptr("fx\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	mr4 := mr(bob.Client, fork.ID, "fx", p.ID)
	e.Drain(t)

	for _, c := range []struct {
		name, sha string
		want      []int64
	}{
		{"c0 (in master before everything)", c0, []int64{}},
		{"c1", c1, []int64{mr5, mr1}},
		{"c2", c2, []int64{mr5, mr1}},
		{"feature (a branch names its head)", "feature", []int64{mr5, mr1}},
		{"c6", c6, []int64{mr5}},
		{"c3 (merged)", c3, []int64{mr2}},
		{"the merge commit", m2, []int64{mr2}},
		{"c4 (closed)", c4, []int64{mr3}},
		{"the fork's commit", fc.ID, []int64{mr4}},
	} {
		r := e.Call(t, bob.Token, "GET", fmt.Sprintf("/api/v4/projects/%d/repository/commits/%s/merge_requests", p.ID, c.sha), nil)
		r.Expect(t, 200, "")
		if got := r.IIDs(t); !slices.Equal(got, c.want) {
			t.Errorf("%s: merge requests %v, want %v", c.name, got, c.want)
		}
		if r.Header.Get("X-Total") != fmt.Sprint(len(c.want)) {
			t.Errorf("%s: X-Total %q", c.name, r.Header.Get("X-Total"))
		}
	}
	// The list items are merge requests as the list endpoint renders them.
	r := e.Call(t, bob.Token, "GET", fmt.Sprintf("/api/v4/projects/%d/repository/commits/%s/merge_requests?per_page=1&page=2", p.ID, c1), nil)
	list := r.List(t)
	if len(list) != 1 || list[0]["source_branch"] != "feature" || list[0]["state"] != "opened" || r.Header.Get("X-Total") != "2" {
		t.Errorf("page 2: %s", r.Body)
	}
	e.Call(t, bob.Token, "GET", fmt.Sprintf("/api/v4/projects/%d/repository/commits/0123456789abcdef0123456789abcdef01234567/merge_requests", p.ID), nil).
		Expect(t, 404, `{"message":"404 Commit Not Found"}`)
	// A project the caller cannot see: 404.
	priv := stocktest.NewProject(t, root, "cmrpriv", "private")
	commit(priv.ID, "master", "", "x")
	e.Call(t, bob.Token, "GET", fmt.Sprintf("/api/v4/projects/%d/repository/commits/master/merge_requests", priv.ID), nil).
		Expect(t, 404, `{"message":"404 Project Not Found"}`)
}
