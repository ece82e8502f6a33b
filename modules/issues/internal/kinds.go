package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Kinds registers issues with the collab module, as one target kind:
// /projects/:id/issues/:issue_iid/notes (discussions, award emoji,
// participants), the todos' "Issue" targets and the feeds' "Issue" entries.
func Kinds(s *Service) []target.Kind {
	return []target.Kind{{
		Type: "Issue", Path: "issues", Param: "issue_iid",
		// A note that is only an award emoji (":+1:") awards it instead.
		EmojiNotesAward: true,
		// GET .../participants (GitLab 10.x).
		Participants: true,
		Resolve: func(ctx context.Context, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
			if !p.Features.IssuesEnabled {
				return target.Noteable{}, projects.ErrForbidden
			}
			var n target.Noteable
			err := s.db.View(ctx, func(tx *store.Tx) error {
				i, err := issueByIID(tx, p, ref, auth.FromContext(ctx).UserID())
				if err != nil {
					return err
				}
				n = s.noteable(p, i)
				return nil
			})
			return n, err
		},
		// Anyone who may read the issue may comment on it, except on an
		// archived project.
		CanComment: func(ctx context.Context, p projects.ProjectInfo, n target.Noteable) error {
			if p.Archived {
				return projects.ErrForbidden
			}
			return nil
		},
		// The caller must be able to read the project's issues and, for a
		// confidential one, see it.
		Visible: func(ctx context.Context, projectID, id int64) (bool, error) {
			return s.visibleAs(ctx, auth.FromContext(ctx).UserID(), projectID, id)
		},
		Render: func(ctx context.Context, t target.Target) (any, string, error) {
			// The todo's owner could see the issue when it was listed
			// (Visible); the server reads it for them.
			sys := auth.WithPrincipal(ctx, auth.System())
			info, err := s.access.ResolveID(sys, t.ProjectID)
			if err != nil {
				return nil, "", err
			}
			var view *IssueView
			err = s.db.View(ctx, func(tx *store.Tx) error {
				i, err := issues.Get(tx, uint64(t.ID))
				if errors.Is(err, store.ErrNotFound) {
					return ErrIssueNotFound
				}
				if err != nil {
					return err
				}
				views, err := s.renderer(ctx).views(tx, []*Issue{i}, func(*Issue) projects.ProjectInfo { return info })
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
		},
	}}
}

// visibleAs says whether the caller in ctx (uid) may see issue id.
func (s *Service) visibleAs(ctx context.Context, uid, projectID, id int64) (bool, error) {
	info, err := s.access.RequireID(ctx, projectID, projects.ReadIssues)
	if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok := false
	err = s.db.View(ctx, func(tx *store.Tx) error {
		i, err := issues.Get(tx, uint64(id))
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = i.ProjectID == uint64(projectID) && visible(info, i, uid)
		return nil
	})
	return ok, err
}
