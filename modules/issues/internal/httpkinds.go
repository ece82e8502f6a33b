package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
)

// The collab module shows an issue as GitLab's issue view, in a todo and
// as the answer to subscribe and unsubscribe: rendering it is the HTTP
// adapter's.

// viewTarget is the issues' target.Kind.View: the issue as the caller
// sees it, with subscribed.
func (s *Service) viewTarget(ctx context.Context, p projects.ProjectInfo, n target.Noteable) (any, error) {
	var v *IssueView
	err := s.db.View(ctx, func(tx *store.Tx) error {
		i, err := issueOf(tx, p, n.ID)
		if err != nil {
			return err
		}
		v, err = s.single(ctx, tx, s.record(p, i))
		return err
	})
	return v, err
}

// renderTodo is the issues' target.Kind.Render: the target as GitLab's
// issue view, and its web_url.
func (s *Service) renderTodo(ctx context.Context, p projects.ProjectInfo, id int64) (any, string, error) {
	var view *IssueView
	err := s.db.View(ctx, func(tx *store.Tx) error {
		i, err := issueOf(tx, p, id)
		if err != nil {
			return err
		}
		views, err := s.renderer(ctx).views(tx, s.records([]*Issue{i}, func(*Issue) projects.ProjectInfo { return p }))
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
