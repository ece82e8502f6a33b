package internal

// Archive and unarchive: Owner or administrator (the RemoveProject action),
// idempotent, each change published as a ProjectEvent.

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

func (s *Service) registerArchive(a *api.API) {
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "archive-project", Method: http.MethodPost, Path: "/projects/{id}/archive", Tags: tags,
		Summary: "Archive a project (owners and administrators); idempotent", Access: api.SignedIn},
		func(ctx context.Context, in *ProjectPath) (*projectOutput, error) {
			return s.setArchived(ctx, in.ID, true)
		})
	api.Register(a, api.Op{ID: "unarchive-project", Method: http.MethodPost, Path: "/projects/{id}/unarchive", Tags: tags,
		Summary: "Unarchive a project (owners and administrators); idempotent", Access: api.SignedIn},
		func(ctx context.Context, in *ProjectPath) (*projectOutput, error) {
			return s.setArchived(ctx, in.ID, false)
		})
}

func (s *Service) setArchived(ctx context.Context, ref string, archived bool) (*projectOutput, error) {
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
		return s.bus.Publish(tx, event.ProjectEvent{Action: action, ProjectID: int64(p.ID), UserID: auth.FromContext(ctx).UserID()})
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s.actionOutput(ctx, r.p.ID)
}
