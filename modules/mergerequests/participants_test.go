package mergerequests_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// reviewed is a private project with a merge request opened by alice from
// feature, with alice, bob and carol as Developers.
func reviewed(t *testing.T, s *env, labels ...string) (*gitlab.Project, *gitlab.MergeRequest, map[string]*userT) {
	t.Helper()
	c := s.Client
	p := stocktest.NewProject(t, c, "reviewed", "private")
	if _, _, err := c.RepositoryFiles.CreateFile(p.ID, "README", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("master"),
		Content: gitlab.Ptr("x"), CommitMessage: gitlab.Ptr("init")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	users := map[string]*userT{}
	for _, name := range []string{"alice", "bob", "carol"} {
		u := s.CreateUser(t, name)
		stocktest.AddMember(t, c, p.ID, u.ID, gitlab.DeveloperPermissions)
		users[name] = &userT{ID: u.ID, Token: u.Token, Client: u.Client}
	}
	opts := &gitlab.CreateMergeRequestOptions{Title: gitlab.Ptr("Change"), SourceBranch: gitlab.Ptr("feature"),
		TargetBranch: gitlab.Ptr("master"), Description: gitlab.Ptr("for @carol")}
	if len(labels) > 0 {
		l := gitlab.LabelOptions(labels)
		opts.Labels = &l
	}
	mr, _, err := users["alice"].Client.MergeRequests.CreateMergeRequest(p.ID, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p, mr, users
}

// A merge request's participants: its author, the commenters and the
// mentioned, as an issue's; a label change makes nobody one.
func TestMergeRequestParticipants(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, mr, users := reviewed(t, s)
	s.Call(t, users["bob"].Token, http.MethodPost, mrPath(p.ID, mr.IID, "/notes"), map[string]any{"body": "ok"}).Expect(t, 201, "")
	s.Call(t, s.RootToken, http.MethodPut, mrPath(p.ID, mr.IID), map[string]any{"labels": "ready"}).Expect(t, 200, "")
	var names []string
	for _, u := range s.Call(t, users["bob"].Token, http.MethodGet, mrPath(p.ID, mr.IID, "/participants"), nil).Expect(t, 200, "").List(t) {
		names = append(names, u["username"].(string))
	}
	if !slices.Equal(names, []string{"alice", "bob", "carol"}) {
		t.Fatalf("participants %v", names)
	}
	stranger := s.CreateUser(t, "")
	s.Call(t, stranger.Token, http.MethodGet, mrPath(p.ID, mr.IID, "/participants"), nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
	s.Call(t, users["bob"].Token, http.MethodGet, mrPath(p.ID, 99, "/participants"), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	// Snippets have none (as in GitLab).
	s.Call(t, s.RootToken, http.MethodGet, projectPath(p.ID, "/snippets/1/participants"), nil).Expect(t, 404, `{"error":"404 Not Found"}`)
}
