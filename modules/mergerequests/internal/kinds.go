package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/notes"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
	"github.com/fennec-forge/fennec/modules/todos"
)

// NoteKinds registers merge requests as noteables:
// /projects/:id/merge_requests/:merge_request_iid/notes.
func NoteKinds(s *Service) []notes.Kind {
	return []notes.Kind{{
		Type: mergerequest.NoteableType, Path: "merge_requests", Param: "merge_request_iid",
		// A note that is only an award emoji (":+1:") awards it instead.
		EmojiNotesAward: true,
		// GET .../participants (GitLab 10.x).
		Participants: true,
		Resolve: func(ctx context.Context, p projects.ProjectInfo, ref int64) (notes.Noteable, error) {
			if !p.Features.MergeRequestsEnabled {
				return notes.Noteable{}, projects.ErrForbidden
			}
			if _, err := s.Access.RequireID(ctx, p.ID, projects.ReadMergeRequests); err != nil {
				return notes.Noteable{}, err
			}
			var n notes.Noteable
			err := s.DB.View(ctx, func(tx *store.Tx) error {
				m, err := mrByIID(tx, p.ID, ref)
				if err != nil {
					return err
				}
				n = s.noteable(p, m)
				return nil
			})
			return n, err
		},
		// A locked merge request (being merged) and archived projects
		// refuse comments.
		CanComment: func(ctx context.Context, p projects.ProjectInfo, n notes.Noteable) error {
			if p.Archived {
				return projects.ErrForbidden
			}
			locked := false
			err := s.DB.View(ctx, func(tx *store.Tx) error {
				m, err := mrs.Get(tx, uint64(n.ID))
				if errors.Is(err, store.ErrNotFound) {
					return nil
				}
				if err != nil {
					return err
				}
				locked = m.State == StateLocked
				return nil
			})
			if err != nil {
				return err
			}
			if locked {
				return projects.ErrForbidden
			}
			return nil
		},
		// Threads are resolved, and line comments sit on the diffs.
		Resolvable:    true,
		CheckPosition: s.checkPosition,
	}}
}

// TodoKinds registers merge requests as todo targets.
func TodoKinds(s *Service) []todos.Kind {
	return []todos.Kind{{
		Type:   mergerequest.NoteableType,
		Render: s.renderTodo,
		Visible: func(ctx context.Context, userID int64, t todos.Target) (bool, error) {
			u, err := s.Lookup.LookupUser(ctx, i64(userID))
			if err != nil {
				return false, nil
			}
			p, err := auth.ForUser(u)
			if err != nil {
				return false, nil
			}
			_, err = s.Access.RequireID(auth.WithPrincipal(ctx, p), t.ProjectID, projects.ReadMergeRequests)
			return err == nil, nil
		},
	}}
}

// FeedKinds registers merge requests as feed targets: the caller must be
// able to read the project's merge requests.
func FeedKinds(s *Service) []feed.Kind {
	return []feed.Kind{{
		TargetType: mergerequest.NoteableType,
		Visible: func(ctx context.Context, projectID, targetID int64) (bool, error) {
			_, err := s.Access.RequireID(ctx, projectID, projects.ReadMergeRequests)
			if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
				return false, nil
			}
			return err == nil, err
		},
	}}
}
