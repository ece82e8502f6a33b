package event

import (
	"encoding/json"
	"testing"
)

// Push events wait in the outbox across upgrades: the JSON of a release
// before the typed contract must decode, and encode back to the same bytes.
func TestPushEventJSONIsFrozen(t *testing.T) {
	const old = `{"object_kind":"tag_push","project_id":7,"user_id":1,"ref":"refs/tags/v1",` +
		`"before":"0000000000000000000000000000000000000000","after":"1111111111111111111111111111111111111111",` +
		`"commits":[{"id":"2222222222222222222222222222222222222222","message":"m\n","timestamp":"2026-01-02T03:04:05Z",` +
		`"url":"http://x/g/p/commit/2","author":{"name":"T","email":"t@example.com"},"added":["a"],"modified":[],"removed":[]}],` +
		`"total_commits_count":1,"repository":{"name":"p","url":"http://x/g/p.git","description":"","homepage":"http://x/g/p"}}`
	var ev PushEvent
	if err := json.Unmarshal([]byte(old), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.ObjectKind != TagPush || !ev.Created() || ev.Deleted() || ev.Commits[0].Author.Email != "t@example.com" {
		t.Fatalf("decoded %+v", ev)
	}
	again, err := json.Marshal(ev)
	if err != nil || string(again) != old {
		t.Fatalf("encoded %s, %v", again, err)
	}
	if ev.EventTopic() != "repository.push" {
		t.Fatal("the topic is persisted; it must not change")
	}
}

// CommitCommented waits in the outbox too: its JSON must not change.
func TestCommitCommentedJSONIsFrozen(t *testing.T) {
	const old = `{"comment_id":3,"project_id":2,"sha":"1a2b","author_id":5,"note":"Hm","path":"a.go","line":4,"line_type":"new","created_at":"2026-11-25T15:00:00Z"}`
	var ev CommitCommented
	if err := json.Unmarshal([]byte(old), &ev); err != nil || ev.CommentID != 3 || *ev.Line != 4 {
		t.Fatalf("decoded %+v, %v", ev, err)
	}
	if b, _ := json.Marshal(ev); string(b) != old || ev.EventTopic() != "repository.commit_commented" {
		t.Fatalf("encoded %s", b)
	}
}
