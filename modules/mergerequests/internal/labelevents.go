package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// The resource label events of merge requests (GitLab 11.2). The issues
// module keeps them, as it keeps labels; this module records them in the
// transaction of each label change (create, update) and answers them for
// the merge requests a caller may read.

// mrForEvents is a merge request the caller may read, for its events.
func (s *Service) mrForEvents(ctx context.Context, ref mergerequest.Ref) (*MR, error) {
	info, err := s.readProject(ctx, ref.Project)
	if err != nil {
		return nil, err
	}
	if s.Labels == nil {
		return nil, mergerequest.ErrUnavailable // a bundle without the module that keeps labels has none
	}
	var m *MR
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		m, err = mrByIID(tx, info.ID, int64(ref.IID))
		return err
	})
	return m, err
}

// LabelEvents implements mergerequest.Service.
func (s *Service) LabelEvents(ctx context.Context, ref mergerequest.Ref, offset, limit int) ([]any, int, error) {
	m, err := s.mrForEvents(ctx, ref)
	if err != nil {
		return nil, 0, err
	}
	return s.Labels.LabelEvents(ctx, mergerequest.NoteableType, m.ID, offset, limit)
}

// LabelEvent implements mergerequest.Service.
func (s *Service) LabelEvent(ctx context.Context, ref mergerequest.Ref, eventID int64) (any, error) {
	m, err := s.mrForEvents(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.Labels.LabelEvent(ctx, mergerequest.NoteableType, m.ID, eventID)
}
