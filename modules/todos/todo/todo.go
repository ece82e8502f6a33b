package todo

import (
	"context"
	"errors"
)

// Action is a todo's action_name, in GitLab's words.
type Action string

// The actions of GitLab 9.x's todos.
const (
	Assigned          Action = "assigned"
	Mentioned         Action = "mentioned"
	BuildFailed       Action = "build_failed"
	Marked            Action = "marked"
	Unmergeable       Action = "unmergeable"
	DirectlyAddressed Action = "directly_addressed"
)

// Target names what a todo is about: an issue or a merge request (Type is
// the API's target_type, "Issue", "MergeRequest"; ID its global id).
type Target struct {
	Type      string
	ID        int64
	ProjectID int64
}

// New is a todo to add: for UserID, because AuthorID did Action on Target.
// Body is the text shown with it (the note or description that mentioned
// the user; the target's title otherwise).
type New struct {
	UserID   int64
	AuthorID int64
	Target   Target
	Action   Action
	Body     string
}

// ErrExists is Mark's answer when the user already has a pending todo for
// the target: the endpoints answer 304 Not Modified.
var ErrExists = errors.New("todos: a pending todo for this target exists")

// Kind is a kind of todo target a module owns (issues register "Issue",
// merge requests "MergeRequest"). Render gives the target as the API
// renders it (the Todo resource's target field) and its web URL
// (target_url); Visible says whether a user may see it (confidential issues).
// Both are called with the context of the request being answered.
type Kind struct {
	Type    string
	Render  func(ctx context.Context, t Target) (view any, webURL string, err error)
	Visible func(ctx context.Context, userID int64, t Target) (bool, error)
}
