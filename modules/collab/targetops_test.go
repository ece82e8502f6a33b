package collab_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// A target's todo (POST .../:ref/todo) is served once, by the collab
// module, for every kind with todos: the caller's marked todo with the
// target's title as its body, answered as the Todo resource; a second is
// 304, as in GitLab. target.Service.MarkTodo is the same command without
// HTTP.
func TestMarkTodo(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.user(t, "alice")
	p := e.project(t, alice.Client, "box", "private")
	thing := e.things.add(p.ID, alice.ID, "Thing one", false)
	todo := "/api/v4/projects/" + store.IDString(p.ID) + "/things/" + store.IDString(thing.IID) + "/todo"

	status, _, raw := e.call(t, alice.Token, http.MethodPost, todo, "")
	wantStatus(t, status, raw, http.StatusCreated)
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	keys := []string{"action_name", "author", "body", "created_at", "id", "project", "state", "target", "target_type", "target_url"}
	var have []string
	for k := range got {
		have = append(have, k)
	}
	slices.Sort(have)
	if !slices.Equal(have, keys) || got["action_name"] != "marked" || got["body"] != "Thing one" || got["state"] != "pending" ||
		got["target_type"] != "Thing" || got["target_url"] != thing.WebURL {
		t.Fatalf("marked %s", raw)
	}
	project := got["project"].(map[string]any)
	if len(project) != 5 || project["id"] != float64(p.ID) || project["path_with_namespace"] != "alice/box" ||
		project["name_with_namespace"] != p.NameWithNamespace || project["name"] != "box" || project["path"] != "box" {
		t.Fatalf("project %v", project)
	}
	status, _, raw = e.call(t, alice.Token, http.MethodPost, todo, "")
	wantStatus(t, status, raw, http.StatusNotModified)
	status, _, raw = e.call(t, "", http.MethodPost, todo, "")
	wantStatus(t, status, raw, http.StatusUnauthorized)
	// Not a number: 400 before anything else; a number that names nothing:
	// the kind's 404.
	status, _, raw = e.call(t, alice.Token, http.MethodPost, "/api/v4/projects/"+store.IDString(p.ID)+"/things/x/todo", "")
	wantStatus(t, status, raw, http.StatusBadRequest)
	wantBody(t, raw, `{"error":"thing_iid is invalid"}`)
	status, _, raw = e.call(t, alice.Token, http.MethodPost, "/api/v4/projects/"+store.IDString(p.ID)+"/things/0/todo", "")
	wantStatus(t, status, raw, http.StatusNotFound)

	// The command without HTTP.
	bob := e.user(t, "bob")
	other := e.project(t, bob.Client, "other", "public")
	gadget := e.things.add(other.ID, bob.ID, "Other thing", false)
	as := func(u *fennectest.User) context.Context {
		pr, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username})
		if err != nil {
			t.Fatal(err)
		}
		return auth.WithPrincipal(context.Background(), pr)
	}
	td, err := e.collab.MarkTodo(as(alice), "Thing", "bob/other", gadget.IID)
	if err != nil || td.Action != target.Marked || td.Body != "Other thing" || td.UserID != alice.ID || td.AuthorID != alice.ID ||
		td.Target != gadget.Target() || td.State != target.TodoPending || td.ID == 0 {
		t.Fatalf("MarkTodo: %+v, %v", td, err)
	}
	if _, err := e.collab.MarkTodo(as(alice), "Thing", "bob/other", gadget.IID); !errors.Is(err, target.ErrTodoExists) {
		t.Fatalf("second mark: %v", err)
	}
	if _, err := e.collab.MarkTodo(context.Background(), "Thing", "bob/other", gadget.IID); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("anonymous mark: %v", err)
	}
	if _, err := e.collab.MarkTodo(as(alice), "Gadget", "bob/other", gadget.ID); !errors.Is(err, target.ErrUnknownKind) {
		t.Fatalf("a kind without todos: %v", err)
	}
}

// Subscribe and unsubscribe (POST .../:ref/subscribe, .../unsubscribe)
// are served once, by the collab module, for every kind with a View, and
// answer with it; a subscription already so is 304.
func TestSubscribeEndpoints(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "public")
	thing := e.things.add(p.ID, alice.ID, "Thing one", false)
	base := "/api/v4/projects/" + store.IDString(p.ID) + "/things/" + store.IDString(thing.IID)
	status, _, raw := e.call(t, bob.Token, http.MethodPost, base+"/subscribe", "")
	wantStatus(t, status, raw, http.StatusCreated)
	wantBody(t, raw, `{"id":`+store.IDString(thing.ID)+`,"iid":1,"title":"Thing one"}`)
	status, _, raw = e.call(t, bob.Token, http.MethodPost, base+"/subscribe", "")
	wantStatus(t, status, raw, http.StatusNotModified)
	if ok, err := e.collab.Subscribed(context.Background(), thing, bob.ID); err != nil || !ok {
		t.Fatalf("bob subscribed: %v %v", ok, err)
	}
	status, _, raw = e.call(t, bob.Token, http.MethodPost, base+"/unsubscribe", "")
	wantStatus(t, status, raw, http.StatusCreated)
	status, _, raw = e.call(t, bob.Token, http.MethodPost, base+"/unsubscribe", "")
	wantStatus(t, status, raw, http.StatusNotModified)
	// The author takes part, so is subscribed until they unsubscribe.
	status, _, raw = e.call(t, alice.Token, http.MethodPost, base+"/subscribe", "")
	wantStatus(t, status, raw, http.StatusNotModified)
	status, _, raw = e.call(t, "", http.MethodPost, base+"/subscribe", "")
	wantStatus(t, status, raw, http.StatusUnauthorized)
	// Gadgets have no View: no such endpoints.
	status, _, raw = e.call(t, bob.Token, http.MethodPost, "/api/v4/projects/"+store.IDString(p.ID)+"/gadgets/"+store.IDString(thing.ID)+"/subscribe", "")
	wantStatus(t, status, raw, http.StatusNotFound)
}
