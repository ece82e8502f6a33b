// Package feed is the contract between the activity feeds (GET
// /projects/:id/events, GET /users/:id/events, served by the activity
// module) and the modules that have something to show in them: Event,
// which a module publishes (events.Bus.Publish, in the transaction of the
// change it describes) to add a feed entry: a note "commented on", an issue
// "opened", a merge request "merged". Who may see an entry's target is the
// collab module's registry of target kinds (collab.ProvideKinds), which
// the activity module asks.
//
// It belongs to the projects module because every feed entry is about a
// project and every module with something to show already imports projects;
// the activity module sits above them all and only listens, so a new module
// shows entries without a change to activity (see ARCHITECTURE.md, "Feed
// entries and noteables"). It imports no Fennec package.
//
// Event waits in the outbox, so its JSON and topic are frozen.
package feed

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

// Event asks the activity module to record a feed entry. A module publishes
// it (events.Bus.Publish) in the transaction of the change it describes: a
// merge request "opened", a note "commented on" (with TargetType "Note" and
// the note in Note). Key, when set, makes redelivery harmless: a second
// event with the same key is dropped ("notes.note:42"). Zero values render
// as null: TargetID 0, empty TargetType, TargetTitle and Title, no Data.
type Event struct {
	ProjectID   int64  `json:"project_id"`
	AuthorID    int64  `json:"author_id"`
	ActionName  Action `json:"action_name"`
	TargetID    int64  `json:"target_id,omitempty"`
	TargetType  string `json:"target_type,omitempty"`
	TargetTitle string `json:"target_title,omitempty"`
	// TargetIID is the target's number in its project (an issue's or a
	// merge request's; for a note, its noteable's), for the pages' links
	// to it; 0 when it has none, and in events published before it
	// existed. The API's events do not show it (GitLab 9.x has none).
	TargetIID int64           `json:"target_iid,omitempty"`
	Title     string          `json:"title,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Note      json.RawMessage `json:"note,omitempty"`
	// Key dedupes redeliveries; leave it empty only for events that may
	// legitimately repeat with the same fields.
	Key string `json:"key,omitempty"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (Event) EventTopic() string { return "activity.record" }
