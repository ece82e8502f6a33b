package collab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
)

// pendingTodos lists a user's pending todos as "action:body" strings.
func pendingTodos(t *testing.T, u user) []string {
	t.Helper()
	list, _, err := u.Client.Todos.ListTodos(&gitlab.ListTodosOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, td := range list {
		out = append(out, string(td.ActionName)+":"+td.Body)
	}
	return out
}

func TestMentions(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob, carol, guest, outsider := e.user(t, "alice"), e.user(t, "bob"), e.user(t, "carol.x"), e.user(t, "guest"), e.user(t, "outsider")
	p := e.project(t, alice.Client, "box", "private")
	e.member(t, p, bob, gitlab.DeveloperPermissions)
	e.member(t, p, carol, gitlab.DeveloperPermissions)
	e.member(t, p, guest, gitlab.GuestPermissions)
	thing := e.things.add(p.ID, alice.ID, "Thing", false)
	secret := e.things.add(p.ID, alice.ID, "Secret", true, bob.ID)

	cases := []struct {
		name, body string
		want       map[string]int // username -> pending todos expected after
	}{
		{"an e-mail address is no mention", "write to bob@example.com or x@bob", map[string]int{"bob": 0}},
		{"inline code and fences are skipped", "`@bob` and\n```\n@bob\n```\n", map[string]int{"bob": 0}},
		{"a mention at the start, with a dot in the name and a full stop", "@carol.x. And (@bob)!", map[string]int{"bob": 1, "carol.x": 1}},
		{"a repeat while pending adds nothing", "@bob @BOB again", map[string]int{"bob": 1}},
		{"the author's own mention", "@alice", map[string]int{"alice": 0}},
		{"no access, no todo", "@outsider @nobody", map[string]int{"outsider": 0}},
	}
	users := map[string]user{"alice": alice, "bob": bob, "carol.x": carol, "guest": guest, "outsider": outsider}
	for _, c := range cases {
		status, _, raw := e.call(t, alice.Token, http.MethodPost, notesPath(p.ID, thing.IID), jsonBody(map[string]string{"body": c.body}))
		wantStatus(t, status, raw, 201)
		for name, n := range c.want {
			if got := pendingTodos(t, users[name]); len(got) != n {
				t.Errorf("%s: %s has %v, want %d todos", c.name, name, got, n)
			}
		}
	}

	// A confidential thing: the assignee gets the todo, a guest does not.
	e.post(t, alice.Token, p.ID, secret.IID, "@bob @guest look")
	if got := pendingTodos(t, guest); len(got) != 0 {
		t.Errorf("guest got %v on a confidential thing", got)
	}
	if got := pendingTodos(t, bob); !slices.Contains(got, "mentioned:@bob @guest look") {
		t.Errorf("assignee's todos %v", got)
	}

	// An edit gives a todo for a mention it adds only.
	_, noteID := e.post(t, bob.Token, p.ID, thing.IID, "first draft")
	e.call(t, carol.Token, http.MethodPost, "/api/v4/todos/mark_as_done", "")
	status, _, raw := e.call(t, bob.Token, http.MethodPut, notesPath(p.ID, thing.IID)+"/"+noteID, `{"body":"now with @carol.x"}`)
	wantStatus(t, status, raw, 200)
	if got := pendingTodos(t, carol); !slices.Equal(got, []string{"mentioned:now with @carol.x"}) {
		t.Errorf("after an edit adding a mention: %v", got)
	}
	e.call(t, carol.Token, http.MethodPost, "/api/v4/todos/mark_as_done", "")
	e.call(t, bob.Token, http.MethodPut, notesPath(p.ID, thing.IID)+"/"+noteID, `{"body":"still @carol.x, reworded"}`)
	if got := pendingTodos(t, carol); len(got) != 0 {
		t.Errorf("an edit keeping a mention gave %v", got)
	}

	// Descriptions go through the service (issues call it).
	if err := e.collab.Mentioned(context.Background(), thing, bob.ID, "desc for @guest and @bob"); err != nil {
		t.Fatal(err)
	}
	if got := pendingTodos(t, guest); !slices.Equal(got, []string{"mentioned:desc for @guest and @bob"}) {
		t.Errorf("guest after a description: %v", got)
	}
}

// A hostile body of many mentions costs a bounded number of lookups and
// still answers.
func TestManyMentions(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.user(t, "alice")
	p := e.project(t, alice.Client, "box", "private")
	thing := e.things.add(p.ID, alice.ID, "Thing", false)
	var b strings.Builder
	for i := 0; b.Len() < 900_000; i++ {
		b.WriteString("@u" + store.IDString(int64(i)) + " ")
	}
	status, _, raw := e.call(t, alice.Token, http.MethodPost, notesPath(p.ID, thing.IID), jsonBody(map[string]string{"body": b.String()}))
	wantStatus(t, status, raw, 201)
}

func TestPaginationAndNoteView(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.user(t, "alice")
	p := e.project(t, alice.Client, "box", "public")
	thing := e.things.add(p.ID, alice.ID, "Thing", false)
	var ids []string
	for i := range 7 {
		_, id := e.post(t, alice.Token, p.ID, thing.IID, "note "+store.IDString(int64(i)))
		ids = append(ids, id)
	}
	status, h, raw := e.call(t, "", http.MethodGet, notesPath(p.ID, thing.IID)+"?per_page=3&page=2", "")
	wantStatus(t, status, raw, 200)
	fennectest.CheckPages(t, "notes", h, 7, 3, 3, 2, "3", "1")
	var page []struct{ ID int64 }
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	if len(page) != 3 || store.IDString(page[0].ID) != ids[3] || store.IDString(page[2].ID) != ids[5] {
		t.Fatalf("page 2 %s", raw)
	}
	status, h, raw = e.call(t, "", http.MethodGet, notesPath(p.ID, thing.IID)+"?per_page=3&page=9", "")
	wantStatus(t, status, raw, 200)
	wantBody(t, raw, "[]")
	fennectest.CheckPages(t, "notes", h, 7, 3, 3, 9, "", "3") // the API's rule past the end: prev is the last page

	// The snippet-note quirk: a kind with NoteView renders GET of one note.
	gadgetPath := "/api/v4/projects/" + store.IDString(p.ID) + "/gadgets/" + store.IDString(thing.ID) + "/notes"
	status, _, raw = e.call(t, alice.Token, http.MethodPost, gadgetPath, `{"body":"on the gadget"}`)
	wantStatus(t, status, raw, 201)
	var created struct {
		ID           int64
		NoteableType string `json:"noteable_type"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.NoteableType != "Gadget" {
		t.Fatalf("created %s", raw)
	}
	status, _, raw = e.call(t, alice.Token, http.MethodGet, gadgetPath+"/"+store.IDString(created.ID), "")
	wantStatus(t, status, raw, 200)
	var quirk struct {
		ID    int64
		Title string
		Note  struct{ Body string }
	}
	if err := json.Unmarshal(raw, &quirk); err != nil || quirk.ID != thing.ID || quirk.Title != "Thing" || quirk.Note.Body != "on the gadget" {
		t.Fatalf("NoteView %s", raw)
	}
	// The list is still of notes.
	status, _, raw = e.call(t, alice.Token, http.MethodGet, gadgetPath, "")
	if status != 200 || !strings.HasPrefix(string(raw), `[{"id":`+store.IDString(created.ID)+`,"body":"on the gadget"`) {
		t.Fatalf("gadget notes %d %s", status, raw)
	}
}
