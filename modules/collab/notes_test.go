package collab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// The whole life of a note through the API, with its exact shape, and the
// service's count of user notes beside a system note.
func TestNoteLifecycle(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.user(t, "alice")
	p := e.project(t, alice.Client, "box", "private")
	thing := e.things.add(p.ID, alice.ID, "First thing", false)

	if err := e.collab.System(context.Background(), thing, alice.ID, "closed"); err != nil {
		t.Fatal(err)
	}
	status, _, body := e.call(t, alice.Token, http.MethodPost, notesPath(p.ID, thing.IID), jsonBody(map[string]string{"body": "Hello  "}))
	wantStatus(t, status, body, http.StatusCreated)
	var created map[string]any
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	keys := []string{"id", "body", "attachment", "author", "created_at", "updated_at", "system", "noteable_id", "noteable_type", "upvote", "downvote"}
	if len(created) != len(keys) {
		t.Fatalf("note has keys %v, want %v", created, keys)
	}
	for _, k := range keys {
		if _, ok := created[k]; !ok {
			t.Fatalf("note lacks %q: %s", k, body)
		}
	}
	if created["body"] != "Hello  " || created["attachment"] != nil || created["system"] != false ||
		created["noteable_id"] != float64(thing.ID) || created["noteable_type"] != "Thing" || created["upvote"] != false {
		t.Fatalf("created %s", body)
	}
	author := created["author"].(map[string]any)
	if author["username"] != "alice" || author["id"] != float64(alice.ID) || author["state"] != "active" || author["created_at"] == nil {
		t.Fatalf("author %v", author)
	}

	status, h, body := e.call(t, alice.Token, http.MethodGet, notesPath(p.ID, thing.IID), "")
	wantStatus(t, status, body, http.StatusOK)
	var notes []map[string]any
	if err := json.Unmarshal(body, &notes); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || notes[0]["system"] != true || notes[0]["body"] != "closed" || notes[1]["id"] != created["id"] {
		t.Fatalf("list %s", body)
	}
	fennectest.CheckPages(t, "notes", h, 2, 1, 20, 1, "", "")

	counts, err := e.collab.UserNotesCounts(context.Background(), "Thing", []int64{thing.ID, thing.ID + 1})
	if err != nil || counts[thing.ID] != 1 || counts[thing.ID+1] != 0 {
		t.Fatalf("counts %v, %v", counts, err)
	}
}

// A mention in a note gives the mentioned member a todo listed by GET
// /todos; their own comment on the thing marks it done.
func TestMentionGivesTodo(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "private")
	e.member(t, p, bob, gitlab.DeveloperPermissions)
	thing := e.things.add(p.ID, alice.ID, "First thing", false)

	status, _, body := e.call(t, alice.Token, http.MethodPost, notesPath(p.ID, thing.IID), jsonBody(map[string]string{"body": "ping @bob, not a@bob.c"}))
	wantStatus(t, status, body, http.StatusCreated)
	list, _, err := bob.Client.Todos.ListTodos(nil)
	if err != nil || len(list) != 1 {
		t.Fatalf("todos %v, %v", list, err)
	}
	td := list[0]
	if td.ActionName != "mentioned" || td.TargetType != "Thing" || td.Author.Username != "alice" || td.Body != "ping @bob, not a@bob.c" ||
		td.State != "pending" || td.Project.ID != p.ID || td.TargetURL != thing.WebURL {
		t.Fatalf("todo %+v", td)
	}
	status, _, body = e.call(t, bob.Token, http.MethodPost, notesPath(p.ID, thing.IID), jsonBody(map[string]string{"body": "on it"}))
	wantStatus(t, status, body, http.StatusCreated)
	if list, _, err := bob.Client.Todos.ListTodos(nil); err != nil || len(list) != 0 {
		t.Fatalf("todos after commenting %v, %v", list, err)
	}
}
