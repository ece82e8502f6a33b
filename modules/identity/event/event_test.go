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

func TestPasswordResetRequestedJSONIsFrozen(t *testing.T) {
	const old = `{"user_id":7,"username":"bo","name":"Bo","email":"bo@example.com","requested_at":"2026-11-25T15:00:00.000000001Z"}`
	var ev PasswordResetRequested
	if err := json.Unmarshal([]byte(old), &ev); err != nil || ev.UserID != 7 || ev.RequestedAt.Nanosecond() != 1 {
		t.Fatalf("decoded %+v, %v", ev, err)
	}
	if b, _ := json.Marshal(ev); string(b) != old || ev.EventTopic() != "identity.password_reset_requested" {
		t.Fatalf("encoded %s", b)
	}
}

func TestUserBlockedJSONIsFrozen(t *testing.T) {
	const old = `{"user_id":9,"username":"carol","state":"ldap_blocked"}`
	var ev UserBlocked
	if err := json.Unmarshal([]byte(old), &ev); err != nil || ev.UserID != 9 || ev.State != "ldap_blocked" {
		t.Fatalf("decoded %+v, %v", ev, err)
	}
	if b, _ := json.Marshal(ev); string(b) != old || ev.EventTopic() != "identity.user_blocked" {
		t.Fatalf("encoded %s", b)
	}
}
