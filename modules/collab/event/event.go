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
	// Type is the note's type ("" by itself, "DiscussionNote" in a thread,
	// "DiffNote" in a line comment's thread), DiscussionID its thread's
	// id and Position, for a DiffNote, the line it was made on (the
	// webhooks' object_attributes). Absent in events recorded before.
	Type         string        `json:"type,omitempty"`
	DiscussionID string        `json:"discussion_id,omitempty"`
	Position     *NotePosition `json:"position,omitempty"`
}

// NotePosition is a line comment's place: the diff's commits, the file
// on each side and the line on each side (nil: not on that side).
type NotePosition struct {
	BaseSHA      string `json:"base_sha"`
	StartSHA     string `json:"start_sha"`
	HeadSHA      string `json:"head_sha"`
	PositionType string `json:"position_type"`
	OldPath      string `json:"old_path"`
	NewPath      string `json:"new_path"`
	OldLine      *int   `json:"old_line"`
	NewLine      *int   `json:"new_line"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (NoteEvent) EventTopic() string { return "notes.note" }

// Merged is published by the module of a target that closes issues when it
// lands (a merge request merged into its project's default branch), in the
// transaction that records it: the issues Texts name with GitLab's closing
// pattern ("Closes #1", "fixes group/p#3") are closed as UserID may close
// them, with the system note "closed via <Via>", and, when MentionVia is
// set, those Texts only reference get "mentioned in <MentionVia>". Key
// names the cause ("merge_request:12"), so a redelivery closes nothing
// twice. The issues module listens; the publisher knows nothing of issues.
type Merged struct {
	ProjectID  int64    `json:"project_id"`
	UserID     int64    `json:"user_id"`
	Key        string   `json:"key"`
	Via        string   `json:"via"`
	MentionVia string   `json:"mention_via,omitempty"`
	Texts      []string `json:"texts"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (Merged) EventTopic() string { return "collab.merged" }
