package issues_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// notesOf lists an issue's notes (bodies, system flag) as alice sees them.
func notesOf(t *testing.T, c *gitlab.Client, project, iid int64) (system, user []string) {
	t.Helper()
	list, _, err := c.Notes.ListIssueNotes(project, iid, &gitlab.ListIssueNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range list {
		if n.System {
			system = append(system, n.Body)
		} else {
			user = append(user, n.Body)
		}
	}
	return system, user
}

func TestNotesTodosSubscriptions(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	p := stocktest.NewProject(t, alice.Client, "collab", "public")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)

	i := newIssue(t, alice.Client, p.ID, "Needs eyes", func(o *gitlab.CreateIssueOptions) {
		o.Description = gitlab.Ptr("cc @carol")
		o.AssigneeIDs = &[]int64{bob.ID}
	})

	t.Run("mention and assignment todos", func(t *testing.T) {
		todos, _, err := carol.Client.Todos.ListTodos(nil)
		if err != nil || len(todos) != 1 || todos[0].ActionName != "mentioned" || todos[0].TargetType != "Issue" ||
			todos[0].Target.IID != i.IID || todos[0].TargetURL != i.WebURL {
			t.Fatalf("carol's todos %+v %v", todos, err)
		}
		todos, _, err = bob.Client.Todos.ListTodos(nil)
		if err != nil || len(todos) != 1 || todos[0].ActionName != "assigned" {
			t.Fatalf("bob's todos %+v %v", todos, err)
		}
	})

	t.Run("notes on a real issue through client-go; user_notes_count", func(t *testing.T) {
		n, _, err := carol.Client.Notes.CreateIssueNote(p.ID, i.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("me too")})
		if err != nil || n.NoteableType != "Issue" || n.NoteableID != i.ID || n.Author.Username != "carol" || n.System {
			t.Fatalf("note %+v %v", n, err)
		}
		got, _, err := alice.Client.Issues.GetIssue(p.ID, i.IID)
		if err != nil || got.UserNotesCount != 1 {
			t.Fatalf("user_notes_count %d %v", got.UserNotesCount, err)
		}
		_, user := notesOf(t, alice.Client, p.ID, i.IID)
		if !slices.Equal(user, []string{"me too"}) {
			t.Fatalf("notes %v", user)
		}
		s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, 99, "/notes"), nil).Expect(t, 404, `{"message":"404 Not found"}`)
		s.Call(t, alice.Token, http.MethodPost, issuePath(p.ID, 99, "/notes"), map[string]any{"body": "x"}).Expect(t, 404, `{"message":"404 Not found"}`)
	})

	t.Run("system notes on changes", func(t *testing.T) {
		if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, i.IID, &gitlab.UpdateIssueOptions{AssigneeIDs: &[]int64{carol.ID}}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, i.IID, &gitlab.UpdateIssueOptions{AssigneeIDs: &[]int64{}, Labels: &gitlab.LabelOptions{"x", "y"}}); err != nil {
			t.Fatal(err)
		}
		m, _, err := alice.Client.Milestones.CreateMilestone(p.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1 beta")})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, i.IID, &gitlab.UpdateIssueOptions{MilestoneID: gitlab.Ptr(m.ID)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, i.IID, &gitlab.UpdateIssueOptions{MilestoneID: gitlab.Ptr(int64(0))}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := bob.Client.Issues.UpdateIssue(p.ID, i.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := bob.Client.Issues.UpdateIssue(p.ID, i.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("reopen")}); err != nil {
			t.Fatal(err)
		}
		system, _ := notesOf(t, alice.Client, p.ID, i.IID)
		if len(system) != 7 || system[0] != "assigned to @carol" || system[1] != "removed assignee" ||
			!strings.HasPrefix(system[2], "added ~") || !strings.HasSuffix(system[2], " labels") ||
			system[3] != `changed milestone to %"v1 beta"` || system[4] != "removed milestone" || system[5] != "closed" || system[6] != "reopened" {
			t.Fatalf("system notes %q", system)
		}
		// Closing marked the closer's (bob's) todo done.
		todos, _, _ := bob.Client.Todos.ListTodos(nil)
		if len(todos) != 0 {
			t.Fatalf("bob still has %+v", todos)
		}
		// The assignment gave carol an assigned todo (her mention was done
		// when she commented, as in GitLab).
		todos, _, _ = carol.Client.Todos.ListTodos(nil)
		if len(todos) != 1 || todos[0].ActionName != "assigned" {
			t.Fatalf("carol's todos %+v", todos)
		}
	})

	t.Run("subscribe, unsubscribe: 201 with the issue, 304 when already so", func(t *testing.T) {
		path := issuePath(p.ID, i.IID)
		// carol participates (mentioned, commented), so she is subscribed.
		s.Call(t, carol.Token, http.MethodPost, path+"/subscribe", nil).Expect(t, 304, "")
		r := s.Call(t, carol.Token, http.MethodPost, path+"/unsubscribe", nil).Expect(t, 201, "")
		if r.Object(t)["subscribed"] != false || r.Object(t)["iid"].(json.Number).String() != "1" {
			t.Fatalf("unsubscribe %s", r.Body)
		}
		s.Call(t, carol.Token, http.MethodPost, path+"/unsubscribe", nil).Expect(t, 304, "")
		dave := s.CreateUser(t, "dave")
		got, _, err := dave.Client.Issues.SubscribeToIssue(p.ID, i.IID)
		if err != nil || !got.Subscribed {
			t.Fatalf("subscribe %+v %v", got, err)
		}
		s.Call(t, "", http.MethodPost, path+"/subscribe", nil).Expect(t, 401, "")
		s.Call(t, dave.Token, http.MethodPost, issuePath(p.ID, 77, "/subscribe"), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	})

	t.Run("todo: 201 Todo, 304 when one is pending", func(t *testing.T) {
		r := s.Call(t, alice.Token, http.MethodPost, issuePath(p.ID, i.IID, "/todo"), nil).Expect(t, 201, "")
		todo := r.Object(t)
		if todo["action_name"] != "marked" || todo["target_type"] != "Issue" || todo["target"].(map[string]any)["title"] != "Needs eyes" {
			t.Fatalf("todo %s", r.Body)
		}
		s.Call(t, alice.Token, http.MethodPost, issuePath(p.ID, i.IID, "/todo"), nil).Expect(t, 304, "")
	})

	t.Run("feed: opened, closed, reopened; confidential hidden", func(t *testing.T) {
		newIssue(t, alice.Client, p.ID, "hush", func(o *gitlab.CreateIssueOptions) { o.Confidential = gitlab.Ptr(true) })
		s.Drain(t)
		titles := func(token string) []string {
			var out []string
			for _, e := range s.Call(t, token, http.MethodGet, projectPath(p.ID, "/events?per_page=100"), nil).Expect(t, 200, "").List(t) {
				if e["target_type"] == "Issue" {
					out = append(out, e["action_name"].(string)+" "+e["target_title"].(string))
				}
			}
			return out
		}
		want := []string{"opened hush", "reopened Needs eyes", "closed Needs eyes", "opened Needs eyes"}
		if got := titles(alice.Token); !slices.Equal(got, want) {
			t.Fatalf("owner's feed %v, want %v", got, want)
		}
		if got := titles(""); !slices.Equal(got, want[1:]) {
			t.Fatalf("anonymous feed %v, want %v", got, want[1:])
		}
	})
}

func TestProjectDeletionRemovesIssues(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "doomed", "public")
	keep := stocktest.NewProject(t, alice.Client, "kept", "public")
	for _, pid := range []int64{p.ID, keep.ID} {
		newIssue(t, alice.Client, pid, "one", func(o *gitlab.CreateIssueOptions) {
			o.Labels = &gitlab.LabelOptions{"l"}
			o.AssigneeIDs = &[]int64{alice.ID}
		})
		if _, _, err := alice.Client.Milestones.CreateMilestone(pid, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("m")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := bob.Client.Issues.CreateTodo(p.ID, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Client.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	if got := s.Call(t, alice.Token, http.MethodGet, "/api/v4/issues?scope=all", nil).IIDs(t); len(got) != 1 {
		t.Fatalf("issues left %v", got)
	}
	if todos, _, _ := bob.Client.Todos.ListTodos(nil); len(todos) != 0 {
		t.Fatalf("bob's todos %+v", todos)
	}
	r := s.Call(t, alice.Token, http.MethodGet, "/api/v4/issues?scope=assigned-to-me", nil)
	fennectest.CheckPages(t, "assigned", r.Header, 1, 1, 20, 1, "", "")
	if l := s.Call(t, alice.Token, http.MethodGet, projectPath(keep.ID, "/labels"), nil).List(t); len(l) != 1 {
		t.Fatalf("the other project's labels %v", l)
	}
}

// A confidential issue is hidden everywhere from those who may not see it:
// its notes, mentions' todos, the lists, the feed (above).
func TestConfidentialEverywhere(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	rep := s.CreateUser(t, "rep")
	guest := s.CreateUser(t, "guest")
	outsider := s.CreateUser(t, "outsider")
	p := stocktest.NewProject(t, alice.Client, "conf", "public")
	stocktest.AddMember(t, alice.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, guest.ID, gitlab.GuestPermissions)
	i := newIssue(t, alice.Client, p.ID, "secret", func(o *gitlab.CreateIssueOptions) {
		o.Confidential = gitlab.Ptr(true)
		o.Description = gitlab.Ptr("@rep @guest @outsider look")
	})
	for _, c := range []struct {
		who   *fennectest.User
		sees  bool
		todos int
	}{{rep, true, 1}, {guest, false, 0}, {outsider, false, 0}} {
		notes := s.Call(t, c.who.Token, http.MethodGet, issuePath(p.ID, i.IID, "/notes"), nil)
		list := s.Call(t, c.who.Token, http.MethodGet, projectPath(p.ID, "/issues"), nil).IIDs(t)
		todos, _, _ := c.who.Client.Todos.ListTodos(nil)
		if (notes.Status == 200) != c.sees || (len(list) == 1) != c.sees || len(todos) != c.todos {
			t.Errorf("%s: notes %d, list %v, todos %d", c.who.Username, notes.Status, list, len(todos))
		}
		if !c.sees {
			notes.Expect(t, 404, `{"message":"404 Not found"}`)
			s.Call(t, c.who.Token, http.MethodPost, issuePath(p.ID, i.IID, "/todo"), nil).Expect(t, 404, "")
		}
	}
	// The author of a confidential issue keeps seeing it, a guest too.
	gi := newIssue(t, guest.Client, p.ID, "mine", func(o *gitlab.CreateIssueOptions) { o.Confidential = gitlab.Ptr(true) })
	s.Call(t, guest.Token, http.MethodGet, issuePath(p.ID, gi.IID), nil).Expect(t, 200, "")
	s.Call(t, outsider.Token, http.MethodGet, issuePath(p.ID, gi.IID), nil).Expect(t, 404, "")
	// An assignee sees it too.
	if _, _, err := rep.Client.Issues.UpdateIssue(p.ID, gi.IID, &gitlab.UpdateIssueOptions{AssigneeIDs: &[]int64{outsider.ID}}); err != nil {
		t.Fatal(err)
	}
	s.Call(t, outsider.Token, http.MethodGet, issuePath(p.ID, gi.IID), nil).Expect(t, 200, "")
}
