package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/notes"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
	"github.com/fennec-forge/fennec/modules/todos"
)

// NoteKinds registers issues as noteables: /projects/:id/issues/:issue_iid/notes.
func NoteKinds(s *Service) []notes.Kind {
	return []notes.Kind{{
		Type: "Issue", Path: "issues", Param: "issue_iid",
		// A note that is only an award emoji (":+1:") awards it instead.
		EmojiNotesAward: true,
		// GET .../participants (GitLab 10.x).
		Participants: true,
		Resolve: func(ctx context.Context, p projects.ProjectInfo, ref int64) (notes.Noteable, error) {
			if !p.Features.IssuesEnabled {
				return notes.Noteable{}, projects.ErrForbidden
			}
			var n notes.Noteable
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
		CanComment: func(ctx context.Context, p projects.ProjectInfo, n notes.Noteable) error {
			if p.Archived {
				return projects.ErrForbidden
			}
			return nil
		},
	}}
}

// TodoKinds registers issues as todo targets.
func TodoKinds(s *Service) []todos.Kind {
	return []todos.Kind{{
		Type: "Issue",
		Render: func(ctx context.Context, t todos.Target) (any, string, error) {
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
		Visible: func(ctx context.Context, userID int64, t todos.Target) (bool, error) {
			return s.visibleTo(ctx, userID, t.ProjectID, t.ID)
		},
	}}
}

// FeedKinds registers issues as feed targets: the caller must be able to
// read the project's issues and, for a confidential one, see it.
func FeedKinds(s *Service) []feed.Kind {
	return []feed.Kind{{
		TargetType: "Issue",
		Visible: func(ctx context.Context, projectID, targetID int64) (bool, error) {
			return s.visibleAs(ctx, auth.FromContext(ctx).UserID(), projectID, targetID)
		},
	}}
}

// visibleTo says whether user userID may see issue id of a project.
func (s *Service) visibleTo(ctx context.Context, userID, projectID, id int64) (bool, error) {
	u, err := s.lookup.LookupUser(ctx, i64(userID))
	if err != nil {
		return false, nil
	}
	p, err := auth.ForUser(u)
	if err != nil {
		return false, nil
	}
	return s.visibleAs(auth.WithPrincipal(ctx, p), userID, projectID, id)
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
