package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Subscribers remove the todos of a deleted project and of a deleted user.
// Both only write to the store and deleting twice changes nothing, so a
// redelivery is harmless.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		// Not in the bus's transaction: a project's or a user's todos are
		// removed a step at a time (removeBy).
		events.Only(events.Subscribe("todos.project-deleted", s.onProject), func(ev projects.ProjectEvent) bool {
			return ev.Action == projects.ProjectDeleted
		}),
		events.Subscribe("todos.user-deleted", s.onUserDeleted),
	}
}

func (s *Service) onProject(ctx context.Context, ev projects.ProjectEvent) error {
	if ev.Action != projects.ProjectDeleted {
		return nil
	}
	return s.removeBy(ctx, "project", i64(ev.ProjectID))
}

// removeStep is how many todos one transaction of removeBy removes.
const removeStep = 500

// onUserDeleted removes the deleted user's own list; the todos they caused
// for others stay, shown with the ghost user as their author.
func (s *Service) onUserDeleted(ctx context.Context, ev identity.UserDeleted) error {
	return s.removeBy(ctx, "user", i64(ev.UserID))
}

// removeBy removes the todos of an index key, removeStep per transaction:
// a big project's, or a busy user's, kept every other writer waiting when
// removed in one.
func (s *Service) removeBy(ctx context.Context, index, key string) error {
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
