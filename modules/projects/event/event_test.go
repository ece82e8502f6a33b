package event

import (
	"encoding/json"
	"testing"
)

// Events wait in the outbox across upgrades: the JSON of a release before
// the typed contract must decode, and encode back to the same bytes.
func TestEventJSONIsFrozen(t *testing.T) {
	const project = `{"action":"forked","project_id":9,"user_id":2,"forked_from_id":3}`
	var p ProjectEvent
	if err := json.Unmarshal([]byte(project), &p); err != nil || p.Action != ProjectForked {
		t.Fatalf("decoded %+v, %v", p, err)
	}
	if b, _ := json.Marshal(p); string(b) != project {
		t.Fatalf("encoded %s", b)
	}
	const member = `{"action":"left","group_id":4,"user_id":5,"author_id":6}`
	var m MemberEvent
	if err := json.Unmarshal([]byte(member), &m); err != nil || m.Action != MemberLeft {
		t.Fatalf("decoded %+v, %v", m, err)
	}
	if b, _ := json.Marshal(m); string(b) != member {
		t.Fatalf("encoded %s", b)
	}
	if p.EventTopic() != "projects.project" || m.EventTopic() != "projects.member" {
		t.Fatal("topics are persisted; they must not change")
	}
}
