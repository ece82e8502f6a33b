package event

import "time"

// NoteAction says what happened to a note.
type NoteAction string

// The actions of NoteEvent.
const (
	NoteCreated NoteAction = "created"
	NoteUpdated NoteAction = "updated"
)

// NoteEvent is published in the transaction that creates or updates a note
// (system notes too, System set).
type NoteEvent struct {
	Action       NoteAction `json:"action"`
	NoteID       int64      `json:"note_id"`
	Body         string     `json:"body"`
	ProjectID    int64      `json:"project_id"`
	NoteableType string     `json:"noteable_type"`
	NoteableID   int64      `json:"noteable_id"`
	// NoteableIID is the noteable's iid (0 for a snippet).
	NoteableIID int64     `json:"noteable_iid"`
	AuthorID    int64     `json:"author_id"`
	System      bool      `json:"system"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (NoteEvent) EventTopic() string { return "notes.note" }
