package internal

import (
	"time"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// The states of a todo.
const (
	StatePending = target.TodoPending
	StateDone    = target.TodoDone
)

// Todo is one stored todo. Ids grow with time, so newest first is
// descending id order.
type Todo struct {
	ID         int64     `json:"id"`
	UserID     int64     `json:"user_id"`
	AuthorID   int64     `json:"author_id"`
	ProjectID  int64     `json:"project_id"`
	TargetType string    `json:"target_type"`
	TargetID   int64     `json:"target_id"`
	Action     string    `json:"action"`
	Body       string    `json:"body,omitempty"`
	NoteID     int64     `json:"note_id,omitempty"`
	State      string    `json:"state"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// target names the todo's target.
func (t *Todo) target() target.Target {
	return target.Target{Type: t.TargetType, ID: t.TargetID, ProjectID: t.ProjectID}
}

// record is the contract's view of the todo.
func (t *Todo) record() target.Todo {
	return target.Todo{ID: t.ID, UserID: t.UserID, AuthorID: t.AuthorID, Target: t.target(), Action: target.Action(t.Action),
		Body: t.Body, NoteID: t.NoteID, State: t.State, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

// todoOf is the stored form of a contract's todo.
func todoOf(r target.Todo) *Todo {
	return &Todo{ID: r.ID, UserID: r.UserID, AuthorID: r.AuthorID, ProjectID: r.Target.ProjectID, TargetType: r.Target.Type,
		TargetID: r.Target.ID, Action: string(r.Action), Body: r.Body, NoteID: r.NoteID, State: r.State, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func (t *Todo) RecordID() int64      { return t.ID }
func (t *Todo) SetRecordID(id int64) { t.ID = id }

func targetKey(typ string, id int64) string { return typ + ":" + store.IDString(id) }

// userTargetKey names a user's todos on one target.
func userTargetKey(user int64, typ string, id int64) string {
	return store.IDString(user) + ":" + targetKey(typ, id)
}

// The indexes: a user's todos by state (the list, its default filter
// reading only pending ones), a target's todos (done and removed together),
// a user's pending todos on a target (Add's and Mark's duplicate checks),
// and a project's (removed with it) and a user's (removed with them).
var todosTable = store.NewTable[int64, Todo]("todos.todos",
	store.Index[Todo]{Name: "user_state", Keys: func(t *Todo) []string { return []string{store.IDString(t.UserID) + ":" + t.State} }},
	store.Index[Todo]{Name: "target", Keys: func(t *Todo) []string { return []string{targetKey(t.TargetType, t.TargetID)} }},
	store.Index[Todo]{Name: "pending", Keys: func(t *Todo) []string {
		if t.State != StatePending {
			return nil
		}
		return []string{userTargetKey(t.UserID, t.TargetType, t.TargetID)}
	}},
	store.Index[Todo]{Name: "project", Keys: func(t *Todo) []string { return []string{store.IDString(t.ProjectID)} }},
	store.Index[Todo]{Name: "user", Keys: func(t *Todo) []string { return []string{store.IDString(t.UserID)} }},
)

// pendingOn returns a user's pending todos on a target.
func pendingOn(tx *store.Tx, user int64, typ string, id int64) ([]*Todo, error) {
	ids, err := todosTable.IDsBy(tx, "pending", userTargetKey(user, typ, id))
	if err != nil {
		return nil, err
	}
	return loadTodos(tx, ids)
}

func loadTodos(tx *store.Tx, ids []int64) ([]*Todo, error) {
	out := make([]*Todo, 0, len(ids))
	for _, id := range ids {
		t, err := todosTable.Get(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
