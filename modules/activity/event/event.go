// Package event is the contract of the event other modules publish to add
// an entry to the activity feed (through the core/events outbox). It is a
// public package of its own, not internal/, so the contract is defined where
// the publishing modules can read it, and apart from the module's root
// package only because that one imports internal/ (Module()) and internal/
// uses these types: Go forbids the cycle. The root package re-exports every
// name here.
//
// The payload is persisted in the outbox, so its JSON is frozen.
package event

import "encoding/json"

// Action is the action_name of a feed entry, in GitLab's words.
type Action string

// The action names of GitLab's events API.
const (
	Created     Action = "created"
	Updated     Action = "updated"
	Closed      Action = "closed"
	Reopened    Action = "reopened"
	PushedTo    Action = "pushed to"
	PushedNew   Action = "pushed new"
	Deleted     Action = "deleted"
	CommentedOn Action = "commented on"
	Merged      Action = "merged"
	Joined      Action = "joined"
	Left        Action = "left"
	Destroyed   Action = "destroyed"
	Expired     Action = "expired"
	Opened      Action = "opened"
)

// Event asks the activity module to record a feed entry. Modules above
// activity publish it (events.Bus.Publish) in the transaction of the change
// it describes: a push ("pushed to", with Data), a merge request "opened", a
// note "commented on". Key, when set, makes redelivery harmless: a second
// event with the same key is dropped ("notes.note:42"). Zero values render
// as null: TargetID 0, empty TargetType, TargetTitle and Title, no Data.
type Event struct {
	ProjectID   int64           `json:"project_id"`
	AuthorID    int64           `json:"author_id"`
	ActionName  Action          `json:"action_name"`
	TargetID    int64           `json:"target_id,omitempty"`
	TargetType  string          `json:"target_type,omitempty"`
	TargetTitle string          `json:"target_title,omitempty"`
	Title       string          `json:"title,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	Note        json.RawMessage `json:"note,omitempty"`
	// Key dedupes redeliveries; leave it empty only for events that may
	// legitimately repeat with the same fields.
	Key string `json:"key,omitempty"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (Event) EventTopic() string { return "activity.record" }
