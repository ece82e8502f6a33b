package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// The todos API shows a merge request target as GitLab's merge request
// view: rendering it is the HTTP adapter's.

// renderTodo is the merge requests' todos.Kind.Render: the target as
// GitLab's merge request view, and its web_url.
func (s *Service) renderTodo(ctx context.Context, t target.Target) (any, string, error) {
	sys := auth.WithPrincipal(ctx, auth.System())
	info, err := s.Access.ResolveID(sys, t.ProjectID)
	if err != nil {
		return nil, "", err
	}
	var view *MRView
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		m, err := mrs.Get(tx, uint64(t.ID))
		if errors.Is(err, store.ErrNotFound) {
			return mergerequest.ErrNotFound
		}
		if err != nil {
			return err
		}
		views, err := s.renderer(ctx).views(tx, []mergerequest.MergeRequest{s.record(info, m)})
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
