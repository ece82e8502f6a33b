package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Subscribers are the module's event handlers. Both only delete rows of
// this module (and the deleted snippets' notes, through the notes service
// in the same transaction), so they run in the bus's transaction; deleting
// what is already gone changes nothing, so a redelivery is harmless. They
// work on the store, not through snippet.Service: no principal asks for
// these deletions, and the service's commands are a caller's, with its
// permissions.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		// Not in the bus's transaction: a project's snippets are removed a
		// step at a time (onProjectDeleted).
		events.Only(events.Subscribe("snippets.project-deleted", s.onProjectDeleted), func(ev projects.ProjectEvent) bool {
			return ev.Action == projects.ProjectDeleted
		}),
		events.Subscribe("snippets.user-deleted", s.onUserDeleted),
	}
}

// onProjectDeleted removes a deleted project's snippets. Their notes go
// with the project in the collab module, which removes a project's notes
// itself.
func (s *Service) onProjectDeleted(ctx context.Context, ev projects.ProjectEvent) error {
	if ev.ProjectID <= 0 {
		return nil
	}
	// removeStep snippets per transaction, as many as the project has: in
	// one, a big project's kept every other writer waiting.
	return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		ids, err := snippets.FirstIDsBy(tx, "project", store.IDString(ev.ProjectID), removeStep)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			if err := deleteSnippet(tx, id); err != nil {
				return false, err
			}
		}
		return len(ids) < removeStep, nil
	})
}

// removeStep is how many snippets one transaction of onProjectDeleted
// removes.
const removeStep = 200

// onUserDeleted removes the snippets a deleted user wrote, personal and
// project ones, with their notes: GitLab 9.x destroys a user's snippets
// with the user (it hands issues, merge requests and notes to the ghost
// user, not snippets).
func (s *Service) onUserDeleted(ctx context.Context, ev identity.UserDeleted) error {
	if ev.UserID <= 0 {
		return nil
	}
	// removeStep per transaction, as for a project.
	return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		ids, err := snippets.FirstIDsBy(tx, "author", store.IDString(ev.UserID), removeStep)
		if err != nil {
			return false, err
		}
		for _, id := range ids {
			if err := s.remove(tx, id); err != nil {
				return false, err
			}
		}
		return len(ids) < removeStep, nil
	})
}
