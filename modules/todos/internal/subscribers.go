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
		// Not in the bus's transaction: a project's todos are removed a
		// step at a time (onProject).
		events.Only(events.Subscribe("todos.project-deleted", s.onProject), func(ev projects.ProjectEvent) bool {
			return ev.Action == projects.ProjectDeleted
		}),
		events.SubscribeInTx("todos.user-deleted", s.onUserDeleted),
	}
}

func (s *Service) onProject(ctx context.Context, ev projects.ProjectEvent) error {
	if ev.Action != projects.ProjectDeleted {
		return nil
	}
	// removeStep todos per transaction, as many as the project has: in
	// one, a big project's kept every other writer waiting.
	return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		ids, err := todosTable.FirstIDsBy(tx, "project", i64(ev.ProjectID), removeStep)
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

// removeStep is how many todos one transaction of onProject removes.
const removeStep = 500

// onUserDeleted removes the deleted user's own list; the todos they caused
// for others stay, shown with the ghost user as their author.
func (s *Service) onUserDeleted(ctx context.Context, ev identity.UserDeleted) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		_, err := todosTable.DeleteBy(tx, "user", i64(ev.UserID))
		return err
	})
}
