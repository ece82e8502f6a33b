package mergerequests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// A merge request takes a milestone of its project's group or of a group
// above it, as an issue does; another group's is ignored.
func TestGroupMilestoneOnMergeRequest(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	top, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Top"), Path: gitlab.Ptr("top")})
	if err != nil {
		t.Fatal(err)
	}
	sub, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Sub"), Path: gitlab.Ptr("sub"), ParentID: gitlab.Ptr(top.ID)})
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Other"), Path: gitlab.Ptr("other")})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Path: gitlab.Ptr("app"), NamespaceID: gitlab.Ptr(sub.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.RepositoryFiles.CreateFile(p.ID, "README", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("master"),
		Content: gitlab.Ptr("x"), CommitMessage: gitlab.Ptr("init")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	groupMilestone := func(g int64, title string) int64 {
		r := s.Call(t, s.RootToken, http.MethodPost, fmt.Sprintf("/api/v4/groups/%d/milestones", g), map[string]any{"title": title}).Expect(t, 201, "")
		id, err := r.Object(t)["id"].(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	q1, foreign := groupMilestone(top.ID, "Q1"), groupMilestone(other.ID, "elsewhere")

	r := s.Call(t, s.RootToken, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/merge_requests", p.ID),
		map[string]any{"title": "feature", "source_branch": "feature", "target_branch": "master", "milestone_id": q1}).Expect(t, 201, "")
	ms, _ := r.Object(t)["milestone"].(map[string]any)
	if ms == nil || fmt.Sprint(ms["id"]) != fmt.Sprint(q1) || ms["title"] != "Q1" || fmt.Sprint(ms["group_id"]) != fmt.Sprint(top.ID) {
		t.Fatalf("milestone of a new merge request: %v", r.Object(t)["milestone"])
	}
	// Another group's milestone is ignored, as an unknown one is.
	r = s.Call(t, s.RootToken, http.MethodPut, mrPath(p.ID, 1), map[string]any{"milestone_id": foreign}).Expect(t, 200, "")
	if ms, _ := r.Object(t)["milestone"].(map[string]any); ms == nil || fmt.Sprint(ms["id"]) != fmt.Sprint(q1) {
		t.Fatalf("a foreign group's milestone replaced it: %v", r.Object(t)["milestone"])
	}
	r = s.Call(t, s.RootToken, http.MethodPut, mrPath(p.ID, 1), map[string]any{"milestone_id": 0}).Expect(t, 200, "")
	if r.Object(t)["milestone"] != nil {
		t.Fatalf("milestone not removed: %v", r.Object(t)["milestone"])
	}
}
