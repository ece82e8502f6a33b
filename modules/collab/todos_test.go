package collab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// bodies lists a user's todos (GET /todos with query) as their bodies.
func (e *wenv) bodies(t *testing.T, u *fennectest.User, query string) []string {
	t.Helper()
	status, _, raw := e.call(t, u.Token, http.MethodGet, "/api/v4/todos"+query)
	if status != 200 {
		t.Fatalf("GET /todos%s: %d %s", query, status, raw)
	}
	var list []struct{ Body string }
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, td := range list {
		out = append(out, td.Body)
	}
	return out
}

func TestAddSkipsAndDedupes(t *testing.T) {
	t.Parallel()
	e := startWidgets(t)
	alice, bob, outsider, blocked := e.CreateUser(t, "alice"), e.CreateUser(t, "bob"), e.CreateUser(t, "outsider"), e.CreateUser(t, "blocked")
	p := e.project(t, alice.Client, "box", "private")
	e.member(t, p, bob, gitlab.DeveloperPermissions)
	e.member(t, p, blocked, gitlab.DeveloperPermissions)
	if err := e.Client.Users.BlockUser(blocked.ID); err != nil {
		t.Fatal(err)
	}
	w := e.widgets.add(p.ID, "Widget one")
	hidden := e.widgets.add(p.ID, "Hidden widget")
	e.widgets.hide(hidden.ID, bob.ID)
	ctx := context.Background()
	add := func(user *fennectest.User, tg target.Target, action target.Action, body string) {
		t.Helper()
		if err := e.collab.AddTodos(ctx, target.NewTodo{UserID: user.ID, AuthorID: alice.ID, Target: tg, Action: action, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	add(bob, w, target.Mentioned, "one")
	add(bob, w, target.Mentioned, "repeat while pending")    // nothing
	add(bob, w, target.Assigned, "another action")           // added
	add(bob, hidden, target.Mentioned, "hidden by the kind") // skipped
	add(outsider, w, target.Mentioned, "no access")          // skipped
	add(blocked, w, target.Mentioned, "blocked")             // skipped
	add(alice, w, target.Mentioned, "own action")            // skipped
	add(bob, target.Target{Type: "Nobody", ID: 1, ProjectID: p.ID}, target.Mentioned, "unknown kind")
	e.Drain(t)
	if got := e.bodies(t, bob, ""); !slices.Equal(got, []string{"another action", "one"}) {
		t.Fatalf("bob's todos %v", got)
	}
	if got := e.bodies(t, outsider, ""); len(got) != 0 {
		t.Fatalf("outsider's todos %v", got)
	}
	if got := e.bodies(t, alice, ""); len(got) != 0 {
		t.Fatalf("alice's todos %v", got)
	}
	// Done closes bob's pending todos on the target; a new mention then
	// adds again.
	if err := e.collab.TodosDone(ctx, w, bob.ID); err != nil {
		t.Fatal(err)
	}
	add(bob, w, target.Mentioned, "again")
	if got := e.bodies(t, bob, ""); !slices.Equal(got, []string{"again"}) {
		t.Fatalf("after Done: %v", got)
	}
	if got := e.bodies(t, bob, "?state=done"); !slices.Equal(got, []string{"another action", "one"}) {
		t.Fatalf("done: %v", got)
	}
	// Done for everyone, then Remove deletes them all.
	if err := e.collab.TodosDone(ctx, w, 0); err != nil {
		t.Fatal(err)
	}
	if got := e.bodies(t, bob, ""); len(got) != 0 {
		t.Fatalf("after Done for all: %v", got)
	}
	if err := e.collab.Remove(ctx, w); err != nil {
		t.Fatal(err)
	}
	if got := e.bodies(t, bob, "?state=done"); len(got) != 0 {
		t.Fatalf("after Remove: %v", got)
	}
}

func TestListFiltersAndMarkDone(t *testing.T) {
	t.Parallel()
	e := startWidgets(t)
	alice, bob, carol := e.CreateUser(t, "alice"), e.CreateUser(t, "bob"), e.CreateUser(t, "carol")
	p := e.project(t, alice.Client, "box", "private")
	q := e.project(t, alice.Client, "other", "private")
	for _, pr := range []*gitlab.Project{p, q} {
		e.member(t, pr, bob, gitlab.DeveloperPermissions)
		e.member(t, pr, carol, gitlab.DeveloperPermissions)
	}
	ctx := context.Background()
	var ids []int64
	for i, c := range []struct {
		author  *fennectest.User
		project *gitlab.Project
		action  target.Action
	}{{alice, p, target.Mentioned}, {carol, p, target.Assigned}, {alice, q, target.Assigned}, {carol, q, target.Mentioned}, {alice, p, target.Assigned}} {
		w := e.widgets.add(c.project.ID, "w"+store.IDString(int64(i)))
		if err := e.collab.AddTodos(ctx, target.NewTodo{UserID: bob.ID, AuthorID: c.author.ID, Target: w, Action: c.action, Body: "t" + store.IDString(int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := bob.Client.Todos.ListTodos(nil)
	if err != nil || len(list) != 5 {
		t.Fatalf("list %v %v", list, err)
	}
	for _, td := range list {
		ids = append(ids, td.ID)
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{"t4", "t3", "t2", "t1", "t0"}},
		{"?action=assigned", []string{"t4", "t2", "t1"}},
		{"?author_id=" + store.IDString(carol.ID), []string{"t3", "t1"}},
		{"?project_id=" + store.IDString(q.ID), []string{"t3", "t2"}},
		{"?project_id=" + store.IDString(q.ID) + "&action=mentioned&author_id=" + store.IDString(carol.ID), []string{"t3"}},
		{"?type=Issue", []string{}},
		{"?state=done", []string{}},
	} {
		if got := e.bodies(t, bob, c.query); !slices.Equal(got, c.want) {
			t.Errorf("GET /todos%s: %v, want %v", c.query, got, c.want)
		}
	}
	for _, c := range []struct{ query, want string }{
		{"?state=all", `{"error":"state does not have a valid value"}`},
		{"?type=Widget", `{"error":"type does not have a valid value"}`},
		{"?action=poked", `{"error":"action does not have a valid value"}`},
		{"?author_id=abc", `{"error":"author_id is invalid"}`},
	} {
		if status, _, raw := e.call(t, bob.Token, http.MethodGet, "/api/v4/todos"+c.query); status != 400 || raw != c.want {
			t.Errorf("GET /todos%s: %d %s, want 400 %s", c.query, status, raw, c.want)
		}
	}
	status, h, raw := e.call(t, bob.Token, http.MethodGet, "/api/v4/todos?per_page=2&page=2")
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	fennectest.CheckPages(t, "todos", h, 5, 3, 2, 2, "3", "1")

	// Anonymous callers have no list.
	if status, _, raw := e.call(t, "", http.MethodGet, "/api/v4/todos"); status != 401 || raw != `{"message":"401 Unauthorized"}` {
		t.Errorf("anonymous: %d %s", status, raw)
	}

	// Marking one: 201 with the todo, done; someone else's or an unknown
	// one is 404; marking twice answers the same.
	path := "/api/v4/todos/" + store.IDString(ids[0]) + "/mark_as_done"
	for range 2 {
		status, _, raw = e.call(t, bob.Token, http.MethodPost, path)
		if status != 201 || !json.Valid([]byte(raw)) {
			t.Fatalf("mark_as_done: %d %s", status, raw)
		}
		var td struct {
			ID    int64
			State string
			Body  string
		}
		if err := json.Unmarshal([]byte(raw), &td); err != nil || td.ID != ids[0] || td.State != "done" || td.Body != "t4" {
			t.Fatalf("marked %s", raw)
		}
	}
	for _, c := range []struct {
		token, path string
		status      int
		want        string
	}{
		{carol.Token, path, 404, `{"message":"404 Todo Not Found"}`},
		{bob.Token, "/api/v4/todos/999999/mark_as_done", 404, `{"message":"404 Todo Not Found"}`},
		{bob.Token, "/api/v4/todos/abc/mark_as_done", 400, `{"error":"id is invalid"}`},
		{"", path, 401, `{"message":"401 Unauthorized"}`},
	} {
		if status, _, raw := e.call(t, c.token, http.MethodPost, c.path); status != c.status || raw != c.want {
			t.Errorf("POST %s: %d %s, want %d %s", c.path, status, raw, c.status, c.want)
		}
	}
	if got := e.bodies(t, bob, "?state=done"); !slices.Equal(got, []string{"t4"}) {
		t.Fatalf("done after one: %v", got)
	}
	// Marking all: 204, nothing pending left, idempotent.
	for range 2 {
		if status, _, raw := e.call(t, bob.Token, http.MethodPost, "/api/v4/todos/mark_as_done"); status != 204 || raw != "" {
			t.Fatalf("mark all: %d %s", status, raw)
		}
	}
	if got := e.bodies(t, bob, ""); len(got) != 0 {
		t.Fatalf("pending after mark all: %v", got)
	}
	if got := e.bodies(t, bob, "?state=done"); len(got) != 5 {
		t.Fatalf("done after mark all: %v", got)
	}
}

// Todos whose target the user can no longer see are not listed; a deleted
// project's todos are removed; a deleted author shows as the ghost user.
func TestVisibilityAndCleanup(t *testing.T) {
	t.Parallel()
	e := startWidgets(t)
	alice, bob, carol := e.CreateUser(t, "alice"), e.CreateUser(t, "bob"), e.CreateUser(t, "carol")
	p := e.project(t, alice.Client, "box", "private")
	q := e.project(t, alice.Client, "other", "private")
	for _, pr := range []*gitlab.Project{p, q} {
		e.member(t, pr, bob, gitlab.DeveloperPermissions)
		e.member(t, pr, carol, gitlab.DeveloperPermissions)
	}
	ctx := context.Background()
	w1, w2, w3 := e.widgets.add(p.ID, "one"), e.widgets.add(p.ID, "two"), e.widgets.add(q.ID, "three")
	for i, w := range []target.Target{w1, w2, w3} {
		if err := e.collab.AddTodos(ctx, target.NewTodo{UserID: bob.ID, AuthorID: carol.ID, Target: w, Action: target.Mentioned, Body: "b" + store.IDString(int64(i+1))}); err != nil {
			t.Fatal(err)
		}
	}
	e.widgets.hide(w2.ID, bob.ID)
	if got := e.bodies(t, bob, ""); !slices.Equal(got, []string{"b3", "b1"}) {
		t.Fatalf("with one hidden: %v", got)
	}
	if _, err := e.Client.ProjectMembers.DeleteProjectMember(q.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.bodies(t, bob, ""); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("after leaving a project: %v", got)
	}
	if _, err := e.Client.Users.DeleteUser(carol.ID); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	list, _, err := bob.Client.Todos.ListTodos(nil)
	if err != nil || len(list) != 1 || list[0].Author.Username != "ghost" || list[0].Author.ID != carol.ID {
		t.Fatalf("ghost author: %+v %v", list, err)
	}
	rows := func() int {
		n := 0
		_ = e.db.View(ctx, func(tx *store.Tx) error { n = store.Keys("todos.todos").Count(tx); return nil })
		return n
	}
	if n := rows(); n != 3 {
		t.Fatalf("%d todos stored", n)
	}
	if _, err := alice.Client.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	if n := rows(); n != 1 {
		t.Fatalf("%d todos stored after the project's deletion", n)
	}
}
