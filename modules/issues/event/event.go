package event

import "time"

// Action is what happened to the issue, as the Issue Hook's
// object_attributes.action says it.
type Action string

// The actions of IssueEvent.
const (
	Open   Action = "open"
	Update Action = "update"
	Close  Action = "close"
	Reopen Action = "reopen"
)

// Issue is the issue as it is after the change, with the fields of the
// Issue Hook's object_attributes (users by id; the listener resolves them).
type Issue struct {
	ID           int64     `json:"id"`
	IID          int64     `json:"iid"`
	ProjectID    int64     `json:"project_id"`
	Title        string    `json:"title"`
	Description  string    `json:"description"`
	State        string    `json:"state"`
	AuthorID     int64     `json:"author_id"`
	AssigneeIDs  []int64   `json:"assignee_ids"`
	MilestoneID  int64     `json:"milestone_id,omitempty"`
	Confidential bool      `json:"confidential"`
	DueDate      string    `json:"due_date,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	URL          string    `json:"url"`
	// Labels are the issue's label names, sorted.
	Labels []string `json:"labels"`
}

// IssueEvent is published in the transaction of every change of an issue:
// opened, updated (fields), closed, reopened. UserID is who did it.
type IssueEvent struct {
	Action    Action `json:"action"`
	ProjectID int64  `json:"project_id"`
	UserID    int64  `json:"user_id"`
	Issue     Issue  `json:"issue"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (IssueEvent) EventTopic() string { return "issues.issue" }
