package mergerequests_test

import (
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// A merge request's title refuses control characters (NUL, other C0
// characters inside it, DEL, C1) as GitLab's "is invalid", on create and
// on edit, and nothing is stored (issue 27).
func TestTitleRefusesControlCharacters(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "ctl", "private")
	if _, _, err := alice.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("base"), Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate),
			FilePath: gitlab.Ptr("a.txt"), Content: gitlab.Ptr("a\n")}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("feature"), StartBranch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("more"), Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate),
			FilePath: gitlab.Ptr("b.txt"), Content: gitlab.Ptr("b\n")}}}); err != nil {
		t.Fatal(err)
	}
	list := projectPath(p.ID, "/merge_requests")
	bad := []string{"nul\x00here", "bell\x07", "line\nbreak", "tab\there", "del\x7f", "c1\u0085next"}
	for _, title := range bad {
		s.Call(t, alice.Token, http.MethodPost, list, map[string]any{"title": title, "source_branch": "feature", "target_branch": "master"}).
			Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	}
	if n := len(s.Call(t, alice.Token, http.MethodGet, list, nil).Expect(t, 200, "").List(t)); n != 0 {
		t.Fatalf("%d merge requests stored by refused creates", n)
	}
	s.Call(t, alice.Token, http.MethodPost, list, map[string]any{"title": " Feature ✓ ", "source_branch": "feature", "target_branch": "master"}).
		Expect(t, 201, "")
	for _, title := range bad {
		s.Call(t, alice.Token, http.MethodPut, mrPath(p.ID, 1), map[string]any{"title": title}).Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	}
	if got := s.Call(t, alice.Token, http.MethodGet, mrPath(p.ID, 1), nil).Expect(t, 200, "").Object(t)["title"]; got != "Feature ✓" {
		t.Fatalf("title after refused edits %q", got)
	}
}
