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
		// Not in the bus's transaction: a project's notes are removed a
		// step at a time (onProject).
		events.Only(events.Subscribe("notes.project-deleted", s.onProject), func(ev projects.ProjectEvent) bool {
			return ev.Action == projects.ProjectDeleted
		}),
	}
}

func (s *Service) onProject(ctx context.Context, ev projects.ProjectEvent) error {
	if ev.Action != projects.ProjectDeleted {
		return nil
	}
	// removeStep notes per transaction: a project's thousands removed in
	// one kept every other writer of the server waiting for seconds. The
	// outbox calls this again until it returns nil; each call goes on
	// from what is left, and removeProject ends with the rest.
	return s.db.UpdateInSteps(ctx, func(tx *store.Tx) (bool, error) {
		ids, err := notesTable.FirstIDsBy(tx, "project", i64(ev.ProjectID), removeStep)
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
			if err := tx.Bucket(userCounts).Delete(countKey(n.NoteableType, n.NoteableID)); err != nil {
				return false, err
			}
		}
		if len(ids) > 0 {
			return false, nil
		}
		return true, removeProject(tx, ev.ProjectID)
	})
}

// removeStep is how many notes one transaction of onProject removes.
const removeStep = 500
