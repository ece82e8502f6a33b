package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Subscribers remove the notes, subscriptions, awards and todos of a
// deleted project, and a deleted user's todo list. Deleting twice changes
// nothing, so a redelivery is harmless. A deleted user's notes stay
// (rendered with the ghost user), as in GitLab, and so do the todos they
// caused for others (shown with the ghost user as their author). The
// subscribers keep the names they had in the notes and todos modules: the
// outbox knows them by name.
func Subscribers(s *Service) []events.Subscriber {
	isDeleted := func(ev projects.ProjectEvent) bool { return ev.Action == projects.ProjectDeleted }
	return []events.Subscriber{
		// Not in the bus's transaction: a project's notes and todos are
		// removed a step at a time (onProjectNotes, removeTodosBy).
		events.Only(events.Subscribe("notes.project-deleted", s.onProjectNotes), isDeleted),
		events.Only(events.Subscribe("todos.project-deleted", s.onProjectTodos), isDeleted),
		events.Subscribe("todos.user-deleted", s.onUserDeleted),
	}
}

func (s *Service) onProjectNotes(ctx context.Context, ev projects.ProjectEvent) error {
	if ev.Action != projects.ProjectDeleted {
		return nil
	}
	// removeStep notes per transaction: a project's thousands removed in
	// one kept every other writer of the server waiting for seconds. The
	// outbox calls this again until it returns nil; each call goes on
	// from what is left, and removeProject ends with the rest.
	return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		ids, err := notesTable.FirstIDsBy(tx, "project", store.IDString(ev.ProjectID), removeStep)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			n, err := notesTable.Get(tx, id)
			if err != nil {
				return false, err
			}
			if err := notesTable.Delete(tx, id); err != nil {
				return false, err
			}
			if err := userCounts.Delete(tx, countKey(n.NoteableType, n.NoteableID)); err != nil {
				return false, err
			}
		}
		if len(ids) > 0 {
			return false, nil
		}
		return true, removeProject(tx, ev.ProjectID)
	})
}

// removeStep is how many notes, or todos, one transaction of a removal
// removes.
const removeStep = 500

func (s *Service) onProjectTodos(ctx context.Context, ev projects.ProjectEvent) error {
	if ev.Action != projects.ProjectDeleted {
		return nil
	}
	return s.removeTodosBy(ctx, "project", store.IDString(ev.ProjectID))
}

// onUserDeleted removes the deleted user's own list; the todos they caused
// for others stay, shown with the ghost user as their author.
func (s *Service) onUserDeleted(ctx context.Context, ev identity.UserDeleted) error {
	return s.removeTodosBy(ctx, "user", store.IDString(ev.UserID))
}

// removeTodosBy removes the todos of an index key, removeStep per transaction:
// a big project's, or a busy user's, kept every other writer waiting when
// removed in one.
func (s *Service) removeTodosBy(ctx context.Context, index, key string) error {
	return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		ids, err := todosTable.FirstIDsBy(tx, index, key, removeStep)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			if err := todosTable.Delete(tx, id); err != nil {
				return false, err
			}
		}
		return len(ids) < removeStep, nil
	})
}
