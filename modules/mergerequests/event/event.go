package event

import "time"

// Action is what happened to the merge request, as the Merge Request
// Hook's object_attributes.action says it.
type Action string

// The actions of MergeRequestEvent.
const (
	Open   Action = "open"
	Update Action = "update"
	Close  Action = "close"
	Reopen Action = "reopen"
	Merge  Action = "merge"
)

// LastCommit is the source branch's head commit (last_commit).
type LastCommit struct {
	ID          string    `json:"id"`
	Message     string    `json:"message"`
	Timestamp   time.Time `json:"timestamp"`
	AuthorName  string    `json:"author_name"`
	AuthorEmail string    `json:"author_email"`
}

// MergeRequest is the merge request after the change, with the fields of
// the hook's object_attributes (users and projects by id; the listener
// resolves them into user, assignee, source and target).
type MergeRequest struct {
	ID              int64       `json:"id"`
	IID             int64       `json:"iid"`
	TargetBranch    string      `json:"target_branch"`
	SourceBranch    string      `json:"source_branch"`
	SourceProjectID int64       `json:"source_project_id"`
	TargetProjectID int64       `json:"target_project_id"`
	AuthorID        int64       `json:"author_id"`
	AssigneeID      int64       `json:"assignee_id,omitempty"`
	Title           string      `json:"title"`
	Description     string      `json:"description"`
	State           string      `json:"state"`
	MergeStatus     string      `json:"merge_status"`
	MilestoneID     int64       `json:"milestone_id,omitempty"`
	MergeCommitSHA  string      `json:"merge_commit_sha,omitempty"`
	SHA             string      `json:"sha"`
	LastCommit      *LastCommit `json:"last_commit,omitempty"`
	WorkInProgress  bool        `json:"work_in_progress"`
	CreatedAt       time.Time   `json:"created_at"`
	UpdatedAt       time.Time   `json:"updated_at"`
	URL             string      `json:"url"`
	// Labels are the label names, sorted.
	Labels []string `json:"labels"`
}

// MergeRequestEvent is published in the transaction of every change of a
// merge request: opened, updated (fields, or a push to either branch),
// closed, reopened, merged. UserID is who did it; ProjectID is the target
// project.
type MergeRequestEvent struct {
	Action       Action       `json:"action"`
	ProjectID    int64        `json:"project_id"`
	UserID       int64        `json:"user_id"`
	MergeRequest MergeRequest `json:"merge_request"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (MergeRequestEvent) EventTopic() string { return "mergerequests.merge_request" }
