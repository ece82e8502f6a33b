package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Resolve implements target.Service: the kind's Resolve, for the modules
// that read targets of every kind (notifications).
func (s *Service) Resolve(ctx context.Context, typ string, p projects.ProjectInfo, ref int64) (target.Noteable, error) {
	k, ok := s.noteKind(typ)
	if !ok {
		return target.Noteable{}, target.ErrUnknownKind
	}
	return k.Resolve(ctx, p, ref)
}

// noteType is the target type of the feed entries of notes ("commented
// on"): the collab module's own, seen by whoever may see the note's
// noteable.
const noteType = "Note"

// Visible implements target.Service: for the activity feeds, as the
// caller in ctx, who may read the project already.
func (s *Service) Visible(ctx context.Context, typ string, projectID, id int64) (bool, error) {
	if typ == noteType {
		return s.noteVisible(ctx, projectID, id)
	}
	k, known := s.byType[typ]
	if !known {
		return false, nil // its module is not in this bundle: nobody can vouch for it
	}
	if k.Visible == nil {
		return true, nil
	}
	return k.Visible(ctx, projectID, id)
}

// noteVisible: a note gone since (deleted, or its noteable's kind left the
// bundle) is hidden; so is one whose noteable the caller may not see (the
// kind's Resolve refuses it, with the owner's not-found error, which this
// module cannot tell from another failure: hidden either way, fail closed).
// A failure to read the store is an error.
func (s *Service) noteVisible(ctx context.Context, projectID, noteID int64) (bool, error) {
	note, k, err := s.noteAndKind(ctx, projectID, noteID)
	if errors.Is(err, target.ErrNoteNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	info, err := s.access.ResolveID(ctx, projectID)
	if errors.Is(err, projects.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = k.Resolve(ctx, info, note.NoteableRef)
	return err == nil, nil
}

// noteAndKind reads note id of project projectID and the kind of its
// noteable; target.ErrNoteNotFound when there is no such note in the project or
// its kind is not registered.
func (s *Service) noteAndKind(ctx context.Context, projectID, id int64) (*Note, target.Kind, error) {
	var note *Note
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		note, err = notesTable.Get(tx, uint64(max(id, 0)))
		return err
	})
	if errors.Is(err, store.ErrNotFound) || (err == nil && note.ProjectID != projectID) {
		return nil, target.Kind{}, target.ErrNoteNotFound
	}
	if err != nil {
		return nil, target.Kind{}, err
	}
	k, ok := s.noteKind(note.NoteableType)
	if !ok {
		return nil, target.Kind{}, target.ErrNoteNotFound
	}
	return note, k, nil
}
