package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Kinds registers merge requests with the collab module, as one target
// kind: /projects/:id/merge_requests/:merge_request_iid/notes (discussions,
// award emoji, participants), the todos' "MergeRequest" targets and the
// feeds' "MergeRequest" entries.
func Kinds(s *Service) []target.Kind {
	return []target.Kind{{
		Type: mergerequest.NoteableType, Path: "merge_requests", Param: "merge_request_iid",
		// A note that is only an award emoji (":+1:") awards it instead.
		EmojiNotesAward: true,
		// GET .../participants (GitLab 10.x).
		Participants: true,
		Resolve: func(ctx context.Context, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
			if !p.Features.MergeRequestsEnabled {
				return target.Noteable{}, projects.ErrForbidden
			}
			if _, err := s.Access.RequireID(ctx, p.ID, projects.ReadMergeRequests); err != nil {
				return target.Noteable{}, err
			}
			var n target.Noteable
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
		CanComment: func(ctx context.Context, p projects.ProjectInfo, n target.Noteable) error {
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
		// The caller must be able to read the project's merge requests.
		Visible: func(ctx context.Context, projectID, _ int64) (bool, error) {
			_, err := s.Access.RequireID(ctx, projectID, projects.ReadMergeRequests)
			if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
				return false, nil
			}
			return err == nil, err
		},
		Render: s.renderTodo,
	}}
}
