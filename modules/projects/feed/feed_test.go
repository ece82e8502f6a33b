package feed

import (
	"encoding/json"
	"testing"
)

// The event waits in the outbox across upgrades: the JSON of a release
// before the typed contract must decode, and encode back to the same bytes.
func TestEventJSONIsFrozen(t *testing.T) {
	const old = `{"project_id":1,"author_id":2,"action_name":"commented on","target_id":3,"target_type":"Note",` +
		`"data":{"x":1},"key":"notes.note:3"}`
	var ev Event
	if err := json.Unmarshal([]byte(old), &ev); err != nil || ev.ActionName != CommentedOn {
		t.Fatalf("decoded %+v, %v", ev, err)
	}
	if b, _ := json.Marshal(ev); string(b) != old {
		t.Fatalf("encoded %s", b)
	}
	if ev.EventTopic() != "activity.record" {
		t.Fatal("the topic is persisted; it must not change")
	}
}
