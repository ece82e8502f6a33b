package event

import (
	"encoding/json"
	"testing"
)

// The event waits in the outbox across upgrades: its JSON must not change.
func TestUserDeletedJSONIsFrozen(t *testing.T) {
	const old = `{"user_id":4,"username":"alice"}`
	var ev UserDeleted
	if err := json.Unmarshal([]byte(old), &ev); err != nil || ev.UserID != 4 {
		t.Fatalf("decoded %+v, %v", ev, err)
	}
	if b, _ := json.Marshal(ev); string(b) != old || ev.EventTopic() != "identity.user_deleted" {
		t.Fatalf("encoded %s", b)
	}
}
