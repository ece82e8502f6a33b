package collab_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// The conversation of a target is target.Service's, with no request: what
// a page, an admin command or an embedder calls is what the HTTP adapter
// calls, with the same rules and domain errors.
func TestServiceWithoutHTTP(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "public")
	thing := e.things.add(p.ID, alice.ID, "Thing one", false)
	as := func(u *fennectest.User) context.Context {
		pr, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username})
		if err != nil {
			t.Fatal(err)
		}
		return auth.WithPrincipal(context.Background(), pr)
	}
	w := target.Where{Type: "Thing", Project: "alice/box", Ref: store.IDString(thing.IID)}
	body := func(s string) *string { return &s }

	posted, err := e.collab.CreateNote(as(bob), w, target.NoteInput{Body: body("hello @alice")})
	if err != nil || posted.Note == nil || posted.Note.Body != "hello @alice" || posted.Note.AuthorID != bob.ID {
		t.Fatalf("CreateNote: %+v %v", posted, err)
	}
	if _, err := e.collab.CreateNote(as(bob), w, target.NoteInput{Body: body("  ")}); !errors.Is(err, target.ErrMissing) {
		t.Fatalf("a blank body: %v", err)
	}
	bad := w
	bad.Ref = "x"
	if _, err := e.collab.CreateNote(as(bob), bad, target.NoteInput{Body: body("hi")}); !errors.Is(err, target.ErrBadParam) {
		t.Fatalf("a malformed reference: %v", err)
	}
	award, err := e.collab.CreateNote(as(bob), w, target.NoteInput{Body: body(":+1:")})
	if err != nil || award.Award == nil || award.Award.Name != "thumbsup" || award.Note != nil {
		t.Fatalf("an emoji-only note: %+v %v", award, err)
	}
	if _, err := e.collab.AddAward(as(bob), w, nil, "thumbsup"); !errors.Is(err, target.ErrAwardTaken) {
		t.Fatalf("the same award again: %v", err)
	}
	started, err := e.collab.StartThread(as(alice), w, target.NoteInput{Body: body("a thread")}, nil)
	if err != nil || len(started.Notes) != 1 || started.Notes[0].Type != "DiscussionNote" {
		t.Fatalf("StartThread: %+v %v", started, err)
	}
	reply, err := e.collab.Reply(as(bob), w, started.ID, target.NoteInput{Body: body("a reply")})
	if err != nil || reply.DiscussionID != started.ID {
		t.Fatalf("Reply: %+v %v", reply, err)
	}
	notes, total, err := e.collab.Notes(as(bob), w, target.Page{Offset: 0, Limit: 20})
	if err != nil || total != 3 || len(notes) != 3 || notes[2].Body != "a reply" {
		t.Fatalf("Notes: %d %+v %v", total, notes, err)
	}
	if err := e.collab.DeleteNote(as(bob), w, store.IDString(started.Notes[0].ID)); err == nil {
		t.Fatal("bob deleted alice's note")
	}
	if err := e.collab.DeleteNote(as(alice), w, store.IDString(started.Notes[0].ID)); err != nil {
		t.Fatal(err)
	}
	users, total, err := e.collab.Participants(as(bob), w, target.Page{Limit: 20})
	if err != nil || total != 2 || len(users) != 2 || users[0].ID != alice.ID || users[1].ID != bob.ID {
		t.Fatalf("Participants: %d %+v %v", total, users, err)
	}
}
