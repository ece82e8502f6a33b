package target

import "errors"

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

// NewTodo is a todo to add: for UserID, because AuthorID did Action on
// Target. Body is the text shown with it (the note or description that
// mentioned the user; the target's title otherwise).
type NewTodo struct {
	UserID   int64
	AuthorID int64
	Target   Target
	Action   Action
	Body     string
}

// ErrTodoExists is MarkTodo's answer when the user already has a pending
// todo for the target: the endpoints answer 304 Not Modified.
var ErrTodoExists = errors.New("todos: a pending todo for this target exists")
