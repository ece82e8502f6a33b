package event

import (
	"encoding/json"
	"testing"
)

// The event waits in the outbox across upgrades: its JSON must decode and
// encode back to the same bytes, and its topic never changes.
func TestIssueEventJSONIsFrozen(t *testing.T) {
	const old = `{"action":"close","project_id":3,"user_id":2,"issue":{"id":7,"iid":1,"project_id":3,"title":"t",` +
		`"description":"d","state":"closed","author_id":2,"assignee_ids":[4],"milestone_id":5,"confidential":true,` +
		`"due_date":"2030-01-02","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:06Z",` +
		`"url":"http://x/g/p/issues/1","labels":["bug"]}}`
	var ev IssueEvent
	if err := json.Unmarshal([]byte(old), &ev); err != nil || ev.Action != Close || ev.Issue.AssigneeIDs[0] != 4 {
		t.Fatalf("decoded %+v, %v", ev, err)
	}
	if b, _ := json.Marshal(ev); string(b) != old {
		t.Fatalf("encoded %s", b)
	}
	if ev.EventTopic() != "issues.issue" {
		t.Fatal("the topic is persisted; it must not change")
	}
}
