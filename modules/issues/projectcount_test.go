package issues_test

import (
	"encoding/json"
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// openIssuesCount reads open_issues_count from GET /projects/:id as token,
// failing when the field is missing or not an integer.
func openIssuesCount(t *testing.T, s *env, token string, project int64) int64 {
	t.Helper()
	one := s.Call(t, token, http.MethodGet, projectPath(project, ""), nil).Expect(t, 200, "").Object(t)
	return countField(t, one)
}

func countField(t *testing.T, project map[string]any) int64 {
	t.Helper()
	raw, ok := project["open_issues_count"]
	if !ok {
		t.Fatalf("project %v has no open_issues_count", project["id"])
	}
	num, ok := raw.(json.Number)
	if !ok {
		t.Fatalf("open_issues_count = %#v, want an integer", raw)
	}
	n, err := num.Int64()
	if err != nil {
		t.Fatalf("open_issues_count = %s: %v", num, err)
	}
	return n
}

// countsByID maps project id to open_issues_count for a list of projects.
func countsByID(t *testing.T, list []map[string]any) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	for _, p := range list {
		id, err := p["id"].(json.Number).Int64()
		if err != nil {
			t.Fatal(err)
		}
		out[id] = countField(t, p)
	}
	return out
}

func setState(t *testing.T, c *gitlab.Client, project, iid int64, event string) {
	t.Helper()
	if _, _, err := c.Issues.UpdateIssue(project, iid, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr(event)}); err != nil {
		t.Fatalf("%s issue %d: %v", event, iid, err)
	}
}

func TestOpenIssuesCountFollowsIssues(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "Counted", "public")

	if p.OpenIssuesCount != 0 {
		t.Fatalf("new project: open_issues_count %d", p.OpenIssuesCount)
	}
	if n := openIssuesCount(t, s, alice.Token, p.ID); n != 0 {
		t.Fatalf("no issues: %d", n)
	}

	a := newIssue(t, alice.Client, p.ID, "A")
	b := newIssue(t, alice.Client, p.ID, "B")
	secret := newIssue(t, alice.Client, p.ID, "Secret", func(o *gitlab.CreateIssueOptions) { o.Confidential = gitlab.Ptr(true) })
	steps := []struct {
		name string
		do   func()
		want int64
	}{
		{"three created, one confidential", func() {}, 3},
		{"one closed", func() { setState(t, alice.Client, p.ID, a.IID, "close") }, 2},
		{"closed again (no change)", func() { setState(t, alice.Client, p.ID, a.IID, "close") }, 2},
		{"reopened", func() { setState(t, alice.Client, p.ID, a.IID, "reopen") }, 3},
		{"confidential one made public", func() {
			if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, secret.IID, &gitlab.UpdateIssueOptions{Confidential: gitlab.Ptr(false)}); err != nil {
				t.Fatal(err)
			}
		}, 3},
		{"and confidential again, then closed", func() {
			if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, secret.IID, &gitlab.UpdateIssueOptions{Confidential: gitlab.Ptr(true)}); err != nil {
				t.Fatal(err)
			}
			setState(t, alice.Client, p.ID, secret.IID, "close")
		}, 2},
		{"confidential reopened", func() { setState(t, alice.Client, p.ID, secret.IID, "reopen") }, 3},
		{"an open one deleted", func() {
			if _, err := alice.Client.Issues.DeleteIssue(p.ID, b.IID); err != nil {
				t.Fatal(err)
			}
		}, 2},
		{"a closed one deleted", func() {
			setState(t, alice.Client, p.ID, a.IID, "close")
			if _, err := alice.Client.Issues.DeleteIssue(p.ID, a.IID); err != nil {
				t.Fatal(err)
			}
		}, 1},
	}
	for _, st := range steps {
		st.do()
		if n := openIssuesCount(t, s, alice.Token, p.ID); n != st.want {
			t.Fatalf("%s: open_issues_count %d, want %d", st.name, n, st.want)
		}
	}

	// The count is of every open issue, confidential ones too, whoever
	// asks (GitLab's was): a non-member and an anonymous caller see 1 though
	// the only open issue is confidential and hidden from them.
	if n := openIssuesCount(t, s, bob.Token, p.ID); n != 1 {
		t.Fatalf("non-member: %d", n)
	}
	if n := openIssuesCount(t, s, "", p.ID); n != 1 {
		t.Fatalf("anonymous: %d", n)
	}
	if got, _, err := bob.Client.Projects.GetProject(p.ID, nil); err != nil || got.OpenIssuesCount != 1 {
		t.Fatalf("client-go: %+v %v", got, err)
	}
	s.Call(t, bob.Token, http.MethodGet, issuePath(p.ID, secret.IID), nil).Expect(t, 404, "")

	// A rejected create stores nothing and counts nothing.
	s.Call(t, alice.Token, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": ""}).Expect(t, 400, "")
	s.Call(t, bob.Token, http.MethodDelete, issuePath(p.ID, secret.IID), nil).Expect(t, 404, "")
	if n := openIssuesCount(t, s, alice.Token, p.ID); n != 1 {
		t.Fatalf("after rejected writes: %d", n)
	}
}

// The spec gives open_issues_count as an integer of every Project, with no
// condition: with the issues feature off it stays in the view, as 0 (the
// project's issues cannot be read then, so their number is not told), and
// the real count comes back when the feature is switched on again.
func TestOpenIssuesCountIssuesDisabled(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "Switched", "public")
	newIssue(t, alice.Client, p.ID, "one")
	newIssue(t, alice.Client, p.ID, "two", func(o *gitlab.CreateIssueOptions) { o.Confidential = gitlab.Ptr(true) })
	if n := openIssuesCount(t, s, alice.Token, p.ID); n != 2 {
		t.Fatalf("enabled: %d", n)
	}

	edited := s.Call(t, alice.Token, http.MethodPut, projectPath(p.ID, ""), map[string]any{"name": "Switched", "issues_enabled": false}).Expect(t, 200, "").Object(t)
	if edited["issues_enabled"] != false || countField(t, edited) != 0 {
		t.Fatalf("edit answer: issues_enabled %v, open_issues_count %v", edited["issues_enabled"], edited["open_issues_count"])
	}
	if n := openIssuesCount(t, s, alice.Token, p.ID); n != 0 {
		t.Fatalf("disabled: %d", n)
	}
	list := s.Call(t, alice.Token, http.MethodGet, "/api/v4/projects?owned=true", nil).Expect(t, 200, "").List(t)
	if got := countsByID(t, list); len(got) != 1 || got[p.ID] != 0 {
		t.Fatalf("disabled, in a list: %v", got)
	}
	s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/issues"), nil).Expect(t, 403, "")

	if _, _, err := alice.Client.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{Name: gitlab.Ptr("Switched"), IssuesEnabled: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if n := openIssuesCount(t, s, alice.Token, p.ID); n != 2 {
		t.Fatalf("enabled again: %d", n)
	}
}

// Every list of projects shows each project's own count.
func TestOpenIssuesCountInProjectLists(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	g, _, err := alice.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Team"), Path: gitlab.Ptr("team"),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	empty := stocktest.NewProject(t, alice.Client, "Empty", "public")
	two := stocktest.NewProject(t, alice.Client, "Two", "private")
	closed := stocktest.NewProject(t, alice.Client, "Closed", "internal")
	grouped, _, err := alice.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("Grouped"),
		NamespaceID: gitlab.Ptr(g.ID), Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	newIssue(t, alice.Client, two.ID, "x")
	newIssue(t, alice.Client, two.ID, "y", func(o *gitlab.CreateIssueOptions) { o.Confidential = gitlab.Ptr(true) })
	c := newIssue(t, alice.Client, closed.ID, "done")
	setState(t, alice.Client, closed.ID, c.IID, "close")
	for n := range 4 {
		newIssue(t, alice.Client, grouped.ID, "g"+store.IDString(int64(n)))
	}
	want := map[int64]int64{empty.ID: 0, two.ID: 2, closed.ID: 0, grouped.ID: 4}

	check := func(name, path string, ids ...int64) {
		t.Helper()
		got := countsByID(t, s.Call(t, alice.Token, http.MethodGet, path, nil).Expect(t, 200, "").List(t))
		if len(got) != len(ids) {
			t.Fatalf("%s: %v, want projects %v", name, got, ids)
		}
		for _, id := range ids {
			if n, ok := got[id]; !ok || n != want[id] {
				t.Fatalf("%s: project %d has %d (listed %v), want %d", name, id, n, ok, want[id])
			}
		}
	}
	check("GET /projects", "/api/v4/projects?membership=true", empty.ID, two.ID, closed.ID, grouped.ID)
	check("GET /projects, a page of 2", "/api/v4/projects?membership=true&order_by=id&sort=asc&per_page=2&page=2", closed.ID, grouped.ID)
	// GET /users/:id/projects is 10.x; a user's own list is owned=true.
	check("GET /projects?owned=true", "/api/v4/projects?owned=true", empty.ID, two.ID, closed.ID)
	check("GET /groups/:id/projects", "/api/v4/groups/"+store.IDString(g.ID)+"/projects", grouped.ID)

	detail := s.Call(t, alice.Token, http.MethodGet, "/api/v4/groups/"+store.IDString(g.ID), nil).Expect(t, 200, "").Object(t)
	projects, _ := detail["projects"].([]any)
	if len(projects) != 1 || countField(t, projects[0].(map[string]any)) != 4 {
		t.Fatalf("GET /groups/:id projects %v", detail["projects"])
	}

	// client-go reads the same numbers.
	list, _, err := alice.Client.Projects.ListProjects(&gitlab.ListProjectsOptions{Membership: gitlab.Ptr(true)})
	if err != nil || len(list) != len(want) {
		t.Fatalf("client-go list: %d projects, %v", len(list), err)
	}
	for _, p := range list {
		if int64(p.OpenIssuesCount) != want[p.ID] {
			t.Fatalf("client-go: project %d has %d, want %d", p.ID, p.OpenIssuesCount, want[p.ID])
		}
	}
	// simple=true lists carry no count (BasicProjectDetails).
	for _, p := range s.Call(t, alice.Token, http.MethodGet, "/api/v4/projects?membership=true&simple=true", nil).Expect(t, 200, "").List(t) {
		if _, ok := p["open_issues_count"]; ok {
			t.Fatalf("simple view with open_issues_count: %v", p)
		}
	}
}
