package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Subscribers remove the notes and subscriptions of a deleted project.
// Deleting twice changes nothing, so a redelivery is harmless. A deleted
// user's notes stay (rendered with the ghost user), as in GitLab.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.Only(events.SubscribeInTx("notes.project-deleted", s.onProject), func(ev projects.ProjectEvent) bool {
			return ev.Action == projects.ProjectDeleted
		}),
	}
}

func (s *Service) onProject(ctx context.Context, ev projects.ProjectEvent) error {
	if ev.Action != projects.ProjectDeleted {
		return nil
	}
	return s.db.Update(ctx, func(tx *store.Tx) error { return removeProject(tx, ev.ProjectID) })
}
