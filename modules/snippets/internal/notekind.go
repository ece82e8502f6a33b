package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// Kinds registers project snippets with the collab module, which then
// serves /projects/:id/snippets/:snippet_id/notes. The kind reads the store
// only: it is built from the store, not from the Service, because the
// Service needs target.Service (to remove a deleted snippet's notes), which
// the collab module builds from the registered kinds; a kind built from the
// Service would be a cycle. Its note view (httpnoteview.go) is the HTTP
// adapter's. It has no Render: notes on snippets give no todos, as in
// GitLab 9.x, and no Visible: snippets make no feed entries.
func Kinds(db *store.DB) []target.Kind {
	k := noteKind{db: db}
	return []target.Kind{{
		Type: snippet.NoteableType, Path: "snippets", Param: "snippet_id",
		Resolve: k.resolveNoteable, CanComment: k.canComment, NoteView: k.noteView,
	}}
}

// noteKind implements the Snippet noteable kind.
type noteKind struct{ db *store.DB }

// resolveNoteable finds a snippet of p that the caller may see, with the
// same answers as GET /projects/:id/snippets/:snippet_id: 403 when the
// project has snippets switched off, 404 Snippet Not Found for a snippet
// that is not there or hidden.
func (s noteKind) resolveNoteable(ctx context.Context, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
	if !p.Features.SnippetsEnabled {
		return target.Noteable{}, projects.ErrForbidden
	}
	var sn *Snippet
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		sn, err = projectSnippet(tx, auth.FromContext(ctx), p, snippet.ID(ref))
		return err
	})
	if err != nil {
		return target.Noteable{}, err
	}
	return noteable(p, sn), nil
}

func noteable(p projects.ProjectInfo, sn *Snippet) target.Noteable {
	return target.Noteable{Type: snippet.NoteableType, ID: int64(sn.ID), ProjectID: p.ID, Title: sn.Title,
		AuthorID: sn.AuthorID, WebURL: p.WebURL + "/snippets/" + store.IDString(sn.ID)}
}

// canComment: whoever may read the snippet may comment on it once signed
// in (GitLab's create_note: members, and any signed-in reader of a public
// or internal project); an archived project takes no new notes.
func (s noteKind) canComment(ctx context.Context, p projects.ProjectInfo, n target.Noteable) error {
	switch {
	case auth.FromContext(ctx).IsAnonymous():
		return auth.ErrUnauthorized
	case p.Archived:
		return projects.ErrForbidden
	}
	return nil
}
