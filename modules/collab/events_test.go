package collab_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
)

// A note shows in the project's feed as "commented on", with the note as
// the spec's Event resource has it, to those who may see its noteable only;
// a NoteEvent goes out for created and updated notes, system ones too.
func TestFeedAndNoteEvents(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, guest := e.user(t, "alice"), e.user(t, "guest")
	p := e.project(t, alice.Client, "box", "private")
	e.member(t, p, guest, gitlab.GuestPermissions)
	open := e.things.add(p.ID, alice.ID, "Open thing", false)
	secret := e.things.add(p.ID, alice.ID, "Secret thing", true)

	_, openNote := e.post(t, alice.Token, p.ID, open.IID, "hello")
	_, secretNote := e.post(t, alice.Token, p.ID, secret.IID, "psst")
	status, _, raw := e.call(t, alice.Token, http.MethodPut, notesPath(p.ID, open.IID)+"/"+openNote, `{"body":"hello again"}`)
	wantStatus(t, status, raw, 200)
	if err := e.collab.System(context.Background(), open, alice.ID, "closed"); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)

	type entry struct {
		ActionName  string          `json:"action_name"`
		TargetID    int64           `json:"target_id"`
		TargetType  string          `json:"target_type"`
		TargetTitle string          `json:"target_title"`
		Note        json.RawMessage `json:"note"`
	}
	feed := func(token string) []entry {
		status, _, raw := e.call(t, token, http.MethodGet, "/api/v4/projects/"+store.IDString(p.ID)+"/events", "")
		wantStatus(t, status, raw, 200)
		var out []entry
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		var notes []entry
		for _, en := range out {
			if en.TargetType == "Note" {
				notes = append(notes, en)
			}
		}
		return notes
	}
	mine := feed(alice.Token)
	if len(mine) != 2 || mine[0].TargetTitle != "Secret thing" || mine[1].TargetTitle != "Open thing" ||
		mine[1].ActionName != "commented on" || store.IDString(mine[1].TargetID) != openNote || store.IDString(mine[0].TargetID) != secretNote {
		t.Fatalf("owner's feed %+v", mine)
	}
	var note map[string]any
	if err := json.Unmarshal(mine[1].Note, &note); err != nil {
		t.Fatal(err)
	}
	keys := []string{"attachment", "author", "body", "created_at", "id", "noteable_id", "noteable_type", "system"}
	got := make([]string, 0, len(note))
	for k := range note {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, keys) || note["body"] != "hello" || note["noteable_id"] != float64(open.ID) || note["noteable_type"] != "Thing" ||
		note["system"] != false || note["attachment"] != nil {
		t.Fatalf("feed note %s", mine[1].Note)
	}
	// The guest may not see the confidential thing, so not its note.
	if theirs := feed(guest.Token); len(theirs) != 1 || store.IDString(theirs[0].TargetID) != openNote {
		t.Fatalf("guest's feed %+v", theirs)
	}

	evs := e.events.all()
	var summary []string
	for _, ev := range evs {
		summary = append(summary, string(ev.Action)+":"+ev.Body)
	}
	if want := []string{"created:hello", "created:psst", "updated:hello again", "created:closed"}; !slices.Equal(summary, want) {
		t.Fatalf("note events %v, want %v", summary, want)
	}
	last := evs[3]
	if !last.System || last.ProjectID != p.ID || last.NoteableType != "Thing" || last.NoteableID != open.ID ||
		last.NoteableIID != open.IID || last.AuthorID != alice.ID || last.CreatedAt.IsZero() || last.NoteID == 0 {
		t.Fatalf("system note event %+v", last)
	}
}

// Deleting a project removes its notes, counts, subscriptions and todos
// (through the outbox); a deleted user's notes stay, by the ghost user.
func TestProjectAndUserDeleted(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "private")
	keep := e.project(t, alice.Client, "keep", "private")
	for _, pr := range []*gitlab.Project{p, keep} {
		e.member(t, pr, bob, gitlab.DeveloperPermissions)
	}
	gone := e.things.add(p.ID, alice.ID, "Doomed", false)
	stays := e.things.add(keep.ID, alice.ID, "Stays", false)
	e.post(t, alice.Token, p.ID, gone.IID, "hi @bob")
	e.post(t, bob.Token, keep.ID, stays.IID, "bob was here, @alice")
	if _, err := e.collab.Subscribe(context.Background(), gone, bob.ID, true); err != nil {
		t.Fatal(err)
	}
	rows := func(bucket string) int {
		n := 0
		err := e.db.View(context.Background(), func(tx *store.Tx) error {
			n = store.Keys(bucket).Count(tx)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if rows("notes.notes") != 2 || rows("todos.todos") != 2 || rows("notes.subscriptions") != 2 {
		t.Fatalf("before: %d notes, %d todos, %d subscriptions", rows("notes.notes"), rows("todos.todos"), rows("notes.subscriptions"))
	}

	if _, err := alice.Client.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	if rows("notes.notes") != 1 || rows("todos.todos") != 1 || rows("notes.subscriptions") != 1 || e.countNotes(t, gone.ID) != 0 {
		t.Fatalf("after: %d notes, %d todos, %d subscriptions", rows("notes.notes"), rows("todos.todos"), rows("notes.subscriptions"))
	}

	// The outbox delivers at least once: the same deletion again (as after
	// a crash) is harmless, and is handled without a retry pending.
	err := e.db.Update(context.Background(), func(tx *store.Tx) error {
		return e.bus.Publish(tx, projects.ProjectEvent{Action: projects.ProjectDeleted, ProjectID: p.ID, UserID: alice.ID})
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	if pending, err := e.bus.Pending(); err != nil || pending != 0 {
		t.Fatalf("after a redelivery: %d pending, %v", pending, err)
	}
	if rows("notes.notes") != 1 || rows("todos.todos") != 1 || rows("notes.subscriptions") != 1 {
		t.Fatalf("after a redelivery: %d notes, %d todos, %d subscriptions", rows("notes.notes"), rows("todos.todos"), rows("notes.subscriptions"))
	}

	// The spec's note author has the user's email (it was left out).
	status, _, raw := e.call(t, alice.Token, http.MethodGet, notesPath(keep.ID, stays.IID), "")
	wantStatus(t, status, raw, 200)
	if !strings.Contains(string(raw), `"email":"`+bob.Email+`","created_at":"`) {
		t.Fatalf("a note's author email: %s", raw)
	}
	if _, err := e.Client.Users.DeleteUser(bob.ID); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	status, _, raw = e.call(t, alice.Token, http.MethodGet, notesPath(keep.ID, stays.IID), "")
	wantStatus(t, status, raw, 200)
	if !strings.Contains(string(raw), `"author":{"id":`+store.IDString(bob.ID)+`,"name":"Ghost User","username":"ghost","state":"blocked","avatar_url":null,"web_url":"`) ||
		!strings.Contains(string(raw), `"email":null,"created_at":null}`) {
		t.Fatalf("a deleted user's note: %s", raw)
	}
}

// Subscriptions: participants (author, assignees, commenters, mentioned)
// are subscribed until they unsubscribe; explicit choices win; a repeat
// changes nothing (the endpoints' 304).
func TestSubscriptions(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob, carol, dave, erin := e.user(t, "alice"), e.user(t, "bob"), e.user(t, "carol"), e.user(t, "dave"), e.user(t, "erin")
	p := e.project(t, alice.Client, "box", "private")
	for _, u := range []user{bob, carol, dave} {
		e.member(t, p, u, gitlab.DeveloperPermissions)
	}
	thing := e.things.add(p.ID, alice.ID, "Thing", false, carol.ID)
	ctx := context.Background()
	subscribers := func() []int64 {
		ids, err := e.collab.Subscribers(ctx, thing)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if got := subscribers(); !slices.Equal(got, []int64{alice.ID, carol.ID}) {
		t.Fatalf("author and assignee: %v", got)
	}
	// bob comments; dave is mentioned; erin (no access) is mentioned too.
	e.post(t, bob.Token, p.ID, thing.IID, "cc @dave @erin")
	if got := subscribers(); !slices.Equal(got, []int64{alice.ID, bob.ID, carol.ID, dave.ID}) {
		t.Fatalf("with participants: %v", got)
	}
	for _, c := range []struct {
		who        user
		subscribe  bool
		changed    bool
		subscribed bool
	}{
		{alice, true, false, true},  // already, as the author
		{alice, false, true, false}, // unsubscribes
		{alice, false, false, false},
		{erin, true, true, true}, // explicit, whatever their access (notifications filter)
		{bob, false, true, false},
		{bob, true, true, true},
	} {
		changed, err := e.collab.Subscribe(ctx, thing, c.who.ID, c.subscribe)
		if err != nil || changed != c.changed {
			t.Fatalf("%s subscribe=%v: changed %v, %v", c.who.Username, c.subscribe, changed, err)
		}
		if got, err := e.collab.Subscribed(ctx, thing, c.who.ID); err != nil || got != c.subscribed {
			t.Fatalf("%s subscribed: %v, %v", c.who.Username, got, err)
		}
	}
	if got := subscribers(); !slices.Equal(got, []int64{bob.ID, carol.ID, dave.ID, erin.ID}) {
		t.Fatalf("finally: %v", got)
	}
	// The explicit choices alone: not carol and dave, who only take part.
	explicit, err := e.collab.Subscriptions(ctx, thing)
	if err != nil || !maps.Equal(explicit, map[int64]bool{alice.ID: false, bob.ID: true, erin.ID: true}) {
		t.Fatalf("explicit subscriptions: %v, %v", explicit, err)
	}
	// Remove forgets the noteable's conversation.
	if err := e.collab.Remove(ctx, thing.Target()); err != nil {
		t.Fatal(err)
	}
	if got := subscribers(); !slices.Equal(got, []int64{alice.ID, carol.ID}) || e.countNotes(t, thing.ID) != 0 {
		t.Fatalf("after Remove: %v", got)
	}
	if explicit, err := e.collab.Subscriptions(ctx, thing); err != nil || len(explicit) != 0 {
		t.Fatalf("explicit subscriptions after Remove: %v, %v", explicit, err)
	}
	var _ target.Service = e.collab
}
