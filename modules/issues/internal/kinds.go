package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Kinds registers issues with the collab module, as one target kind:
// /projects/:id/issues/:issue_iid/notes (discussions, award emoji,
// participants), subscribe, unsubscribe and todo, the todos' "Issue"
// targets and the feeds' "Issue" entries. Reading the project's issues
// (the feature on) is the collab module's check; a confidential issue is
// this module's.
func Kinds(s *Service) []target.Kind {
	return []target.Kind{{
		Type: issue.NoteableType, OpName: "project-issue", Read: projects.ReadIssues,
		Path: "issues", Param: "issue_iid",
		// A note that is only an award emoji (":+1:") awards it instead.
		EmojiNotesAward: true,
		// GET .../participants (GitLab 10.x).
		Participants: true,
		Resolve: func(ctx context.Context, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
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
		Visible: func(ctx context.Context, p projects.ProjectInfo, id int64) (bool, error) {
			ok := false
			err := s.db.View(ctx, func(tx *store.Tx) error {
				i, err := issueOf(tx, p, id)
				if errors.Is(err, ErrIssueNotFound) {
					return nil
				}
				ok = err == nil && visible(p, i, auth.FromContext(ctx).UserID())
				return err
			})
			return ok, err
		},
		// The HTTP adapter renders an issue (httpkinds.go).
		View:   s.viewTarget,
		Render: s.renderTodo,
	}}
}

// issueOf reads issue id of project p, whoever may see it;
// ErrIssueNotFound for none (or one of another project).
func issueOf(tx *store.Tx, p projects.ProjectInfo, id int64) (*Issue, error) {
	i, err := issues.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && i.ProjectID != p.ID) {
		return nil, ErrIssueNotFound
	}
	return i, err
}
