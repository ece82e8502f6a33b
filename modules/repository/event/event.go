// Package event is the contract of the events the repository module
// publishes (through the core/events outbox). It is a public package of its
// own, not internal/, so the contract is defined where other modules can
// read it, and apart from the module's root package only because that one
// imports internal/ (Module()) and internal/ publishes these types: Go
// forbids the cycle. The root package re-exports every name here.
//
// The payloads are persisted in the outbox, so their JSON is frozen: rename
// nothing, add fields only with omitempty.
package event

import "time"

// PushKind is the object_kind of a push payload, as in GitLab's hooks.
type PushKind string

// The kinds of PushEvent.
const (
	BranchPush PushKind = "push"
	TagPush    PushKind = "tag_push"
)

// ZeroSHA is Before of a created ref and After of a deleted one.
const ZeroSHA = "0000000000000000000000000000000000000000"

// PushEvent is published once for every ref that moved (a git push, or the
// API writing a commit or creating or deleting a branch or tag), with
// GitLab's push payload fields. Before or After is ZeroSHA for a created or
// deleted ref.
type PushEvent struct {
	ObjectKind        PushKind     `json:"object_kind"`
	ProjectID         int64        `json:"project_id"`
	UserID            int64        `json:"user_id"`
	Ref               string       `json:"ref"`
	Before            string       `json:"before"`
	After             string       `json:"after"`
	Commits           []PushCommit `json:"commits"`
	TotalCommitsCount int          `json:"total_commits_count"`
	Repository        PushRepo     `json:"repository"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (PushEvent) EventTopic() string { return "repository.push" }

// Created says whether the push created its ref.
func (e PushEvent) Created() bool { return e.Before == ZeroSHA }

// Deleted says whether the push deleted its ref.
func (e PushEvent) Deleted() bool { return e.After == ZeroSHA }

// PushRepo names the repository in a push payload.
type PushRepo struct {
	Name        string `json:"name"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Homepage    string `json:"homepage"`
}

// PushCommit is one commit of a push (at most 20 are listed, oldest first).
type PushCommit struct {
	ID        string `json:"id"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
	URL       string `json:"url"`
	Author    struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	} `json:"author"`
	// The paths the commit added, modified and removed (against its first
	// parent).
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

// CommitCommented is published in the transaction that stores a comment on
// a commit (POST /projects/:id/repository/commits/:sha/comments). GitLab
// kept these as notes with noteable_type "Commit"; here they are the
// repository module's own records, with ids of their own. Path, Line and
// LineType are set for a comment on one line of a file.
type CommitCommented struct {
	CommentID int64     `json:"comment_id"`
	ProjectID int64     `json:"project_id"`
	SHA       string    `json:"sha"`
	AuthorID  int64     `json:"author_id"`
	Note      string    `json:"note"`
	Path      *string   `json:"path,omitempty"`
	Line      *int      `json:"line,omitempty"`
	LineType  *string   `json:"line_type,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// EventTopic implements events.Event; the topic is persisted, never rename it.
func (CommitCommented) EventTopic() string { return "repository.commit_commented" }
