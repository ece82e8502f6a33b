package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

// The collab module shows a merge request as GitLab's merge request view,
// in a todo and as the answer to subscribe and unsubscribe: rendering it is
// the HTTP adapter's.

// renderTodo is the merge requests' target.Kind.Render: the target as
// GitLab's merge request view, and its web_url.
func (s *Service) renderTodo(ctx context.Context, p projects.ProjectInfo, id int64) (any, string, error) {
	var view *MRView
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		m, err := mrs.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return mergerequest.ErrNotFound
		}
		if err != nil {
			return err
		}
		views, err := s.renderer(ctx).views(tx, []mergerequest.MergeRequest{s.record(p, m)})
		if err != nil {
			return err
		}
		view = &views[0]
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return view, view.WebURL, nil
}

// viewTarget is the merge requests' target.Kind.View: the merge request
// as the caller sees it, with subscribed.
func (s *Service) viewTarget(ctx context.Context, p projects.ProjectInfo, n target.Noteable) (any, error) {
	m, err := s.load(ctx, p.ID, n.IID)
	if err != nil {
		return nil, err
	}
	out, err := s.renderOne(ctx, s.record(p, m))
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}
