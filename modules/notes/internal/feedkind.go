package internal

import (
	"context"

	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// FeedKinds registers the "Note" entries of the feeds: a note is seen by
// whoever may see its noteable, as the noteable's kind resolves it for the
// caller.
func FeedKinds(s *Service) []feed.Kind {
	return []feed.Kind{{TargetType: "Note", Visible: s.noteVisible}}
}

func (s *Service) noteVisible(ctx context.Context, projectID, noteID int64) (bool, error) {
	_, _, err := s.noteOfProject(ctx, projectID, noteID)
	if err != nil {
		return false, nil
	}
	return true, nil
}
