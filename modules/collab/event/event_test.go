package event

import (
	"encoding/json"
	"testing"
	"time"
)

// The event waits in the outbox across upgrades: its topic and JSON are
// frozen. A payload written today must decode, and encode back the same.
func TestNoteEventJSONIsFrozen(t *testing.T) {
	const frozen = `{"action":"created","note_id":7,"body":"hi @bob","project_id":3,"noteable_type":"Issue","noteable_id":11,` +
		`"noteable_iid":2,"author_id":5,"system":false,"created_at":"2017-05-24T10:14:38Z","updated_at":"2017-05-24T10:14:38Z"}`
	var ev NoteEvent
	if err := json.Unmarshal([]byte(frozen), &ev); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2017, 5, 24, 10, 14, 38, 0, time.UTC)
	want := NoteEvent{Action: NoteCreated, NoteID: 7, Body: "hi @bob", ProjectID: 3, NoteableType: "Issue", NoteableID: 11,
		NoteableIID: 2, AuthorID: 5, CreatedAt: at, UpdatedAt: at}
	if ev != want {
		t.Fatalf("decoded %+v", ev)
	}
	if b, _ := json.Marshal(ev); string(b) != frozen {
		t.Fatalf("encoded %s", b)
	}
	if ev.EventTopic() != "notes.note" {
		t.Fatal("the topic is persisted; it must not change")
	}
}

// Merged waits in the outbox too: its topic and JSON are frozen from its
// first release.
func TestMergedJSONIsFrozen(t *testing.T) {
	const frozen = `{"project_id":3,"user_id":5,"key":"merge_request:12","via":"merge request !4",` +
		`"mention_via":"merge request !4","texts":["Fix it","Closes #1"]}`
	var ev Merged
	if err := json.Unmarshal([]byte(frozen), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.ProjectID != 3 || ev.UserID != 5 || ev.Key != "merge_request:12" || ev.Via != "merge request !4" ||
		ev.MentionVia != "merge request !4" || len(ev.Texts) != 2 || ev.Texts[1] != "Closes #1" {
		t.Fatalf("decoded %+v", ev)
	}
	if b, _ := json.Marshal(ev); string(b) != frozen {
		t.Fatalf("encoded %s", b)
	}
	if ev.EventTopic() != "collab.merged" {
		t.Fatal("the topic is persisted; it must not change")
	}
}
