package internal

import (
	"context"
	"encoding/json"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// SnippetNoteView is the spec's answer to GET
// /projects/:id/snippets/:snippet_id/notes/:note_id: "a record with
// snippet-like fields (id, title, file_name, author, expires_at,
// created_at, updated_at)". GitLab's documentation of the time showed a
// snippet where a note was expected, and the spec keeps that shape. It is
// still the answer about one note, so every field that can describe the
// note does: id is the note's (the :note_id asked for, so a client that
// reads ids back finds the same note), author, created_at and updated_at
// are who wrote it and when. A note has no title, file name or expiry:
// those are the snippet's, the note's noteable (expires_at is always null).
// body is added, beyond the listed fields, so the answer still carries
// what the note says.
type SnippetNoteView struct {
	ID        int64           `json:"id"`
	Title     string          `json:"title"`
	FileName  string          `json:"file_name"`
	Author    json.RawMessage `json:"author"`
	ExpiresAt *api.Time       `json:"expires_at"`
	CreatedAt json.RawMessage `json:"created_at"`
	UpdatedAt json.RawMessage `json:"updated_at"`
	Body      string          `json:"body"`
}

// noteView builds SnippetNoteView from the collab module's Note resource,
// read through its JSON (the resource's Go type is the collab module's own).
func (s noteKind) noteView(ctx context.Context, n target.Noteable, note any) (any, error) {
	raw, err := json.Marshal(note)
	if err != nil {
		return nil, err
	}
	var fromNote struct {
		ID        int64           `json:"id"`
		Body      string          `json:"body"`
		Author    json.RawMessage `json:"author"`
		CreatedAt json.RawMessage `json:"created_at"`
		UpdatedAt json.RawMessage `json:"updated_at"`
	}
	if err := json.Unmarshal(raw, &fromNote); err != nil {
		return nil, err
	}
	v := &SnippetNoteView{ID: fromNote.ID, Title: n.Title, Author: orNull(fromNote.Author),
		CreatedAt: orNull(fromNote.CreatedAt), UpdatedAt: orNull(fromNote.UpdatedAt), Body: fromNote.Body}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		sn, err := snippets.Get(tx, snippet.ID(n.ID))
		if err != nil {
			return err
		}
		v.Title, v.FileName = sn.Title, sn.FileName
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

func orNull(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage("null")
	}
	return m
}
