package target

import (
	"errors"
	"time"
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

// NewTodo is a todo to add: for UserID, because AuthorID did Action on
// Target. Body is the text shown with it (the note or description that
// mentioned the user; the target's title otherwise); NoteID is the note
// that did, when one did (the pages link to it), else 0.
type NewTodo struct {
	UserID   int64
	AuthorID int64
	Target   Target
	Action   Action
	Body     string
	NoteID   int64
}

// The states of a todo.
const (
	TodoPending = "pending"
	TodoDone    = "done"
)

// Todo is one of a user's todos: UserID's, because AuthorID did Action on
// Target.
type Todo struct {
	ID        int64
	UserID    int64
	AuthorID  int64
	Target    Target
	Action    Action
	Body      string
	NoteID    int64  // the note that gave it, 0 for none
	State     string // TodoPending, TodoDone
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ErrTodoExists is MarkTodo's answer when the user already has a pending
// todo for the target: the endpoints answer 304 Not Modified.
var ErrTodoExists = errors.New("todos: a pending todo for this target exists")

// TodoFilter narrows a user's todo list, as GitLab 9.x's todos API does;
// zero values do not filter, and State "" is TodoPending.
type TodoFilter struct {
	Action    Action
	AuthorID  int64
	ProjectID int64
	State     string
	Type      string
}

// Page is a window of a list: Limit items from the Offset-th on.
type Page struct {
	Offset, Limit int
}
