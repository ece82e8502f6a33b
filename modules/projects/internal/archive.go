package internal

// Archive and unarchive: Owner or administrator (the RemoveProject action),
// idempotent, each change published as a ProjectEvent.

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// ArchiveProject archives a project (project.Service).
func (s *Service) ArchiveProject(ctx context.Context, ref string) (project.Project, error) {
	return s.recordOf(ctx)(s.setArchived(ctx, ref, true))
}

// UnarchiveProject unarchives a project (project.Service).
func (s *Service) UnarchiveProject(ctx context.Context, ref string) (project.Project, error) {
	return s.recordOf(ctx)(s.setArchived(ctx, ref, false))
}

// setArchived archives or unarchives the project and returns it as the
// caller now sees it.
func (s *Service) setArchived(ctx context.Context, ref string, archived bool) (*resolved, error) {
	r, err := s.require(ctx, ref, project.RemoveProject)
	if err != nil {
		return nil, err
	}
	action := event.ProjectUnarchived
	if archived {
		action = event.ProjectArchived
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, r.p.ID)
		if err != nil {
			return err
		}
		if p.Archived == archived {
			return nil
		}
		p.Archived = archived
		p.UpdatedAt = s.now().UTC()
		if err := projects.Update(tx, p); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.ProjectEvent{Action: action, ProjectID: p.ID, UserID: auth.FromContext(ctx).UserID()})
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.resolve(ctx, store.IDString(r.p.ID))
}
