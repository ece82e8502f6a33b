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
