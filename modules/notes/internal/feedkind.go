package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// FeedKinds registers the "Note" entries of the feeds: a note is seen by
// whoever may see its noteable, as the noteable's kind resolves it for the
// caller.
func FeedKinds(s *Service) []feed.Kind {
	return []feed.Kind{{TargetType: "Note", Visible: s.noteVisible}}
}

// noteVisible: a note gone since (deleted, or its noteable's kind left the
// bundle) is hidden; so is one whose noteable the caller may not see (the
// kind's Resolve refuses it, with the owner's not-found error, which this
// module cannot tell from another failure: hidden either way, fail closed).
// A failure to read the store is an error.
func (s *Service) noteVisible(ctx context.Context, projectID, noteID int64) (bool, error) {
	note, k, err := s.noteAndKind(ctx, projectID, noteID)
	if errors.Is(err, ErrNoteNotFound) {
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
