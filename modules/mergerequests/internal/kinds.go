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
// award emoji, participants), subscribe, unsubscribe and todo, the todos'
// "MergeRequest" targets and the feeds' "MergeRequest" entries. Reading
// the project's merge requests (the feature on, Reporter+ or open code) is
// the collab module's check, and all a merge request asks of a reader.
func Kinds(s *Service) []target.Kind {
	return []target.Kind{{
		Type: mergerequest.NoteableType, OpName: "merge-request", Read: projects.ReadMergeRequests,
		Path: "merge_requests", Param: "merge_request_iid",
		// A note that is only an award emoji (":+1:") awards it instead.
		EmojiNotesAward: true,
		// GET .../participants (GitLab 10.x).
		Participants: true,
		Resolve: func(ctx context.Context, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
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
		// A locked merge request (being merged) refuses comments.
		CanComment: func(ctx context.Context, p projects.ProjectInfo, n target.Noteable) error {
			locked := false
			err := s.DB.View(ctx, func(tx *store.Tx) error {
				m, err := mrs.Get(tx, n.ID)
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
		// The HTTP adapter renders a merge request (httpkinds.go).
		View:   s.viewTarget,
		Render: s.renderTodo,
	}}
}
