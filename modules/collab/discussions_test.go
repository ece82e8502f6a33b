package collab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/event"
)

func discussionsPath(projectID, iid int64) string {
	return strings.TrimSuffix(notesPath(projectID, iid), "/notes") + "/discussions"
}

type discussionJSON struct {
	ID             string `json:"id"`
	IndividualNote bool   `json:"individual_note"`
	Notes          []struct {
		ID          int64   `json:"id"`
		Type        *string `json:"type"`
		Body        string  `json:"body"`
		System      bool    `json:"system"`
		Resolvable  bool    `json:"resolvable"`
		Resolved    bool    `json:"resolved"`
		NoteableIID *int64  `json:"noteable_iid"`
		Author      struct {
			Username string `json:"username"`
		} `json:"author"`
	} `json:"notes"`
}

var discussionID = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Every note is in a thread: a plain note (and a system note) is a thread
// by itself; a discussion started as such gathers its replies, which are
// notes like any other (todos for mentions, NoteEvents for hooks and mail,
// the notes list); a reply to a plain note makes a thread of it.
func TestDiscussionThreads(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "private")
	e.member(t, p, bob, 30)
	thing := e.things.add(p.ID, alice.ID, "First thing", false)
	base := discussionsPath(p.ID, thing.IID)

	if err := e.collab.System(context.Background(), thing, alice.ID, "closed"); err != nil {
		t.Fatal(err)
	}
	status, _, body := e.call(t, alice.Token, http.MethodPost, notesPath(p.ID, thing.IID), `{"body":"plain"}`)
	wantStatus(t, status, body, http.StatusCreated)
	var plain struct{ ID int64 }
	_ = json.Unmarshal(body, &plain)

	status, _, body = e.call(t, alice.Token, http.MethodPost, base, `{"body":"Shall we?"}`)
	wantStatus(t, status, body, http.StatusCreated)
	var started discussionJSON
	if err := json.Unmarshal(body, &started); err != nil {
		t.Fatal(err)
	}
	if !discussionID.MatchString(started.ID) || started.IndividualNote || len(started.Notes) != 1 ||
		started.Notes[0].Type == nil || *started.Notes[0].Type != "DiscussionNote" || started.Notes[0].Body != "Shall we?" ||
		started.Notes[0].Resolvable || started.Notes[0].NoteableIID == nil || *started.Notes[0].NoteableIID != thing.IID {
		t.Fatalf("started %s", body)
	}
	// The shape: GitLab's Discussion, whose notes are the Note resource with
	// the thread's fields.
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	note := raw["notes"].([]any)[0].(map[string]any)
	for _, k := range []string{"id", "type", "body", "attachment", "author", "created_at", "updated_at", "system", "noteable_id",
		"noteable_type", "noteable_iid", "project_id", "resolvable", "resolved", "resolved_by", "resolved_at"} {
		if _, ok := note[k]; !ok {
			t.Errorf("a thread's note lacks %q: %s", k, body)
		}
	}
	if _, ok := note["position"]; ok {
		t.Errorf("a DiscussionNote has no position: %s", body)
	}

	status, _, body = e.call(t, bob.Token, http.MethodPost, base+"/"+started.ID+"/notes", `{"body":"Yes, @alice"}`)
	wantStatus(t, status, body, http.StatusCreated)
	var reply struct {
		ID   int64
		Type string
		Body string
	}
	if err := json.Unmarshal(body, &reply); err != nil || reply.Type != "DiscussionNote" || reply.Body != "Yes, @alice" {
		t.Fatalf("reply %s", body)
	}

	status, h, body := e.call(t, bob.Token, http.MethodGet, base, "")
	wantStatus(t, status, body, http.StatusOK)
	var list []discussionJSON
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || !list[0].IndividualNote || !list[0].Notes[0].System || list[0].Notes[0].Type != nil ||
		!list[1].IndividualNote || list[1].Notes[0].ID != plain.ID || !discussionID.MatchString(list[1].ID) ||
		list[2].ID != started.ID || len(list[2].Notes) != 2 || list[2].Notes[1].ID != reply.ID || list[2].Notes[1].Author.Username != "bob" {
		t.Fatalf("threads %s", body)
	}
	fennectest.CheckPages(t, "discussions", h, 3, 1, 20, 1, "", "")
	systemThread, plainThread := list[0].ID, list[1].ID
	status, h, body = e.call(t, bob.Token, http.MethodGet, base+"?per_page=1&page=3", "")
	wantStatus(t, status, body, http.StatusOK)
	if err := json.Unmarshal(body, &list); err != nil || len(list) != 1 || list[0].ID != started.ID {
		t.Fatalf("page 3 of threads %s", body)
	}
	fennectest.CheckPages(t, "discussions", h, 3, 3, 1, 3, "", "2")

	// The reply is a note: in the notes list, a todo for the mention, a
	// NoteEvent.
	status, _, body = e.call(t, alice.Token, http.MethodGet, notesPath(p.ID, thing.IID), "")
	if status != 200 || !strings.Contains(string(body), `"body":"Yes, @alice"`) {
		t.Fatalf("notes list: %d %s", status, body)
	}
	e.Drain(t)
	found := false
	for _, ev := range e.events.all() {
		found = found || (ev.NoteID == reply.ID && ev.Action == event.NoteCreated && ev.AuthorID == bob.ID)
	}
	if !found {
		t.Fatal("no NoteEvent for the reply")
	}
	status, _, body = e.call(t, alice.Token, http.MethodGet, "/api/v4/todos", "")
	if status != 200 || !strings.Contains(string(body), `"body":"Yes, @alice"`) {
		t.Fatalf("alice's todos: %d %s", status, body)
	}

	// A reply to a plain note makes a thread of it.
	status, _, body = e.call(t, bob.Token, http.MethodPost, base+"/"+systemThread+"/notes", `{"body":"x"}`)
	if status != 400 || strings.TrimSpace(string(body)) != `{"message":"400 Bad request - Discussion can not be replied to."}` {
		t.Fatalf("reply to a system note: %d %s", status, body)
	}
	status, _, body = e.call(t, bob.Token, http.MethodPost, base+"/"+plainThread+"/notes", `{"body":"on the plain one"}`)
	wantStatus(t, status, body, http.StatusCreated)
	var one discussionJSON
	status, _, body = e.call(t, bob.Token, http.MethodGet, base+"/"+plainThread, "")
	if err := json.Unmarshal(body, &one); status != 200 || err != nil || one.IndividualNote || len(one.Notes) != 2 ||
		*one.Notes[0].Type != "DiscussionNote" || one.Notes[0].ID != plain.ID {
		t.Fatalf("a plain note replied to: %d %s", status, body)
	}

	// Notes of a thread: read, edit, delete; a note is found in its own
	// thread only.
	status, _, body = e.call(t, bob.Token, http.MethodGet, base+"/"+started.ID+"/notes", "")
	if status != 200 || !strings.HasPrefix(string(body), `[{"id":`) || !strings.Contains(string(body), `"body":"Shall we?"`) {
		t.Fatalf("notes of a thread: %d %s", status, body)
	}
	status, _, body = e.call(t, bob.Token, http.MethodPut, base+"/"+started.ID+"/notes/"+store.IDString(reply.ID), `{"body":"Yes!"}`)
	if status != 200 || !strings.Contains(string(body), `"body":"Yes!"`) || !strings.Contains(string(body), `"type":"DiscussionNote"`) {
		t.Fatalf("edit: %d %s", status, body)
	}
	status, _, body = e.call(t, alice.Token, http.MethodGet, base+"/"+plainThread+"/notes/"+store.IDString(reply.ID), "")
	if status != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Note Not Found"}` {
		t.Fatalf("a note of another thread: %d %s", status, body)
	}
	for _, tc := range []struct{ body, want string }{
		{`{}`, `{"error":"body, resolved are missing, exactly one parameter must be provided"}`},
		{`{"body":"a","resolved":true}`, `{"error":"body, resolved are mutually exclusive"}`},
		{`{"resolved":true}`, `{"message":"400 Bad request - Note is not resolvable"}`},
	} {
		status, _, body = e.call(t, bob.Token, http.MethodPut, base+"/"+started.ID+"/notes/"+store.IDString(reply.ID), tc.body)
		if status != 400 || strings.TrimSpace(string(body)) != tc.want {
			t.Errorf("PUT %s: %d %s", tc.body, status, body)
		}
	}
	// Threads of a kind that is not resolvable have no resolve route.
	status, _, body = e.call(t, alice.Token, http.MethodPut, base+"/"+started.ID, `{"resolved":true}`)
	if status != 405 {
		t.Errorf("resolving a thing's thread: %d %s", status, body)
	}
	status, _, body = e.call(t, alice.Token, http.MethodDelete, base+"/"+started.ID+"/notes/"+store.IDString(reply.ID), "")
	wantStatus(t, status, body, http.StatusNoContent)
	status, _, body = e.call(t, alice.Token, http.MethodGet, base+"/"+started.ID, "")
	if err := json.Unmarshal(body, &one); status != 200 || err != nil || len(one.Notes) != 1 {
		t.Fatalf("after the delete: %d %s", status, body)
	}

	for _, id := range []string{strings.Repeat("0", 40), "nope"} {
		status, _, body = e.call(t, alice.Token, http.MethodGet, base+"/"+id, "")
		if status != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Discussion Not Found"}` {
			t.Errorf("thread %s: %d %s", id, status, body)
		}
	}
	// A thread of another noteable is not this one's.
	other := e.things.add(p.ID, alice.ID, "Second thing", false)
	status, _, body = e.call(t, alice.Token, http.MethodGet, discussionsPath(p.ID, other.IID)+"/"+started.ID, "")
	if status != 404 {
		t.Errorf("a thread under another thing: %d %s", status, body)
	}
	status, _, body = e.call(t, alice.Token, http.MethodPost, base, `{"body":"  "}`)
	if status != 400 || strings.TrimSpace(string(body)) != `{"error":"body is missing"}` {
		t.Errorf("a blank thread: %d %s", status, body)
	}
	// Readers who may not see the thing see no threads.
	carol := e.user(t, "carol")
	status, _, body = e.call(t, carol.Token, http.MethodGet, base, "")
	if status != 404 {
		t.Errorf("a stranger lists threads: %d %s", status, body)
	}
}
