package mergerequests_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// GET /projects/:id/milestones/:milestone_id/merge_requests lists the
// milestone's merge requests in every state, newest first and paginated,
// to those who may read the project's merge requests.
func TestMilestoneMergeRequests(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "planned", "private")
	if _, _, err := c.RepositoryFiles.CreateFile(p.ID, "README", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("master"),
		Content: gitlab.Ptr("x"), CommitMessage: gitlab.Ptr("init")}); err != nil {
		t.Fatal(err)
	}
	v1, _, err := c.Milestones.CreateMilestone(p.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1")})
	if err != nil {
		t.Fatal(err)
	}
	v2, _, err := c.Milestones.CreateMilestone(p.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v2")})
	if err != nil {
		t.Fatal(err)
	}
	for i, milestone := range []int64{v1.ID, v2.ID, v1.ID, 0, v1.ID} {
		b := fmt.Sprintf("b%d", i+1)
		if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(b), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
		opts := &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("MR " + b), SourceBranch: gitlab.Ptr(b), TargetBranch: gitlab.Ptr("master")}
		if milestone != 0 {
			opts.MilestoneID = gitlab.Ptr(milestone)
		}
		if _, _, err := c.MergeRequests.CreateMergeRequest(p.ID, opts); err != nil {
			t.Fatal(err)
		}
	}
	// Closed ones are listed too; one moved to another milestone leaves.
	s.Call(t, s.RootToken, http.MethodPut, mrPath(p.ID, 3), map[string]any{"state_event": "close"}).Expect(t, 200, "")
	s.Call(t, s.RootToken, http.MethodPut, mrPath(p.ID, 5), map[string]any{"milestone_id": v2.ID}).Expect(t, 200, "")

	path := func(m int64, q string) string {
		return fmt.Sprintf("/api/v4/projects/%d/milestones/%d/merge_requests%s", p.ID, m, q)
	}
	r := s.Call(t, s.RootToken, http.MethodGet, path(v1.ID, ""), nil).Expect(t, 200, "")
	if got := r.IIDs(t); !slices.Equal(got, []int64{3, 1}) {
		t.Fatalf("v1: %v", got)
	}
	first := r.List(t)[1]
	if first["title"] != "MR b1" || first["milestone"].(map[string]any)["title"] != "v1" || first["state"] != "opened" {
		t.Fatalf("the merge request as the list shows it: %v", first)
	}
	if got := s.Call(t, s.RootToken, http.MethodGet, path(v2.ID, ""), nil).Expect(t, 200, "").IIDs(t); !slices.Equal(got, []int64{5, 2}) {
		t.Fatalf("v2: %v", got)
	}
	r = s.Call(t, s.RootToken, http.MethodGet, path(v2.ID, "?per_page=1&page=2"), nil).Expect(t, 200, "")
	if got := r.IIDs(t); !slices.Equal(got, []int64{2}) {
		t.Fatalf("v2 page 2: %v", got)
	}
	fennectest.CheckPages(t, "milestone merge requests", r.Header, 2, 2, 1, 2, "", "1")

	// No such milestone (or one of another project): GitLab's find 404.
	other := stocktest.NewProject(t, c, "elsewhere", "private")
	elsewhere, _, err := c.Milestones.CreateMilestone(other.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1")})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int64{999, elsewhere.ID} {
		s.Call(t, s.RootToken, http.MethodGet, path(m, ""), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	}
	// A private project: a stranger sees no project; a Reporter reads.
	stranger := s.CreateUser(t, "")
	s.Call(t, stranger.Token, http.MethodGet, path(v1.ID, ""), nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
	stocktest.AddMember(t, c, p.ID, stranger.ID, gitlab.ReporterPermissions)
	if got := s.Call(t, stranger.Token, http.MethodGet, path(v1.ID, ""), nil).Expect(t, 200, "").IIDs(t); !slices.Equal(got, []int64{3, 1}) {
		t.Fatalf("v1 to a Reporter: %v", got)
	}
}
