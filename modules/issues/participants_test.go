package issues_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// usernames lists the username of each user of a list answer, in order.
func usernames(t testing.TB, r fennectest.Reply) []string {
	t.Helper()
	out := []string{}
	for _, u := range r.List(t) {
		out = append(out, u["username"].(string))
	}
	return out
}

// GET .../issues/:iid/participants: the author, the assignees, the
// commenters and the mentioned, each once and only if they may see the
// issue, as basic users; a system note makes nobody a participant.
func TestIssueParticipants(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "talked", "private")
	alice, bob, carol, dave, erin := s.CreateUser(t, "alice"), s.CreateUser(t, "bob"), s.CreateUser(t, "carol"),
		s.CreateUser(t, "dave"), s.CreateUser(t, "erin")
	stocktest.AddMember(t, c, p.ID, alice.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, c, p.ID, bob.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, c, p.ID, carol.ID, gitlab.ReporterPermissions)
	stocktest.AddMember(t, c, p.ID, dave.ID, gitlab.GuestPermissions)
	// erin is no member: the private issue is not hers to see.

	i := newIssue(t, alice.Client, p.ID, "Talk", func(o *gitlab.CreateIssueOptions) {
		o.Description = gitlab.Ptr("cc @erin")
		o.AssigneeIDs = &[]int64{bob.ID}
	})
	s.Call(t, carol.Token, http.MethodPost, issuePath(p.ID, i.IID, "/notes"), map[string]any{"body": "looks good, @dave?"}).Expect(t, 201, "")
	s.Call(t, alice.Token, http.MethodPost, issuePath(p.ID, i.IID, "/notes"), map[string]any{"body": "thanks"}).Expect(t, 201, "")
	// root only relabels (a system note).
	s.Call(t, s.RootToken, http.MethodPut, issuePath(p.ID, i.IID), map[string]any{"labels": "bug"}).Expect(t, 200, "")

	r := s.Call(t, carol.Token, http.MethodGet, issuePath(p.ID, i.IID, "/participants"), nil).Expect(t, 200, "")
	if got := usernames(t, r); !slices.Equal(got, []string{"alice", "bob", "carol", "dave"}) {
		t.Fatalf("participants %v", got)
	}
	first := r.List(t)[0]
	if !slices.Equal(keysOf(first), []string{"avatar_url", "id", "name", "state", "username", "web_url"}) || first["state"] != "active" ||
		first["web_url"] != s.URL+"/alice" {
		t.Fatalf("a participant %v", first)
	}
	if r.Header.Get("X-Total") != "4" {
		t.Fatalf("X-Total %q", r.Header.Get("X-Total"))
	}
	if got := usernames(t, s.Call(t, carol.Token, http.MethodGet, issuePath(p.ID, i.IID, "/participants?per_page=2&page=2"), nil).Expect(t, 200, "")); !slices.Equal(got, []string{"carol", "dave"}) {
		t.Fatalf("page 2 %v", got)
	}

	// A confidential issue: a Guest mentioned in it is no participant and
	// cannot ask; the issue is hidden from him.
	conf := newIssue(t, alice.Client, p.ID, "Secret", func(o *gitlab.CreateIssueOptions) {
		o.Description = gitlab.Ptr("cc @dave @carol")
		o.Confidential = gitlab.Ptr(true)
	})
	if got := usernames(t, s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, conf.IID, "/participants"), nil).Expect(t, 200, "")); !slices.Equal(got, []string{"alice", "carol"}) {
		t.Fatalf("confidential issue's participants %v", got)
	}
	s.Call(t, dave.Token, http.MethodGet, issuePath(p.ID, conf.IID, "/participants"), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	s.Call(t, erin.Token, http.MethodGet, issuePath(p.ID, i.IID, "/participants"), nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
	s.Call(t, carol.Token, http.MethodGet, issuePath(p.ID, 99, "/participants"), nil).Expect(t, 404, `{"message":"404 Not found"}`)
}
