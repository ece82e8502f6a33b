package internal

import (
	"context"
	"fmt"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// MilestoneMergeRequests implements mergerequest.Service (GET
// /projects/:id/milestones/:milestone_id/merge_requests, GitLab 9.0): the
// project's merge requests of that milestone, every state, newest first as
// the list sorts them. The milestone is the issues module's (a missing one
// is its error); merge requests are read as the list reads them, so a
// caller who may not see the project's merge requests gets the list's
// answer. With a transaction in ctx it reads in that one.
func (s *Service) MilestoneMergeRequests(ctx context.Context, project string, milestoneID int64, offset, limit int) ([]mergerequest.MergeRequest, int, error) {
	var out []mergerequest.MergeRequest
	total := 0
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		info, err := s.readProject(tx.Context(), project)
		if err != nil {
			return err
		}
		if s.Milestones == nil {
			// A bundle without issues has no milestones.
			return fmt.Errorf("%w: no milestones in this bundle", mergerequest.ErrNotFound)
		}
		if _, err := s.Milestones.Milestone(tx.Context(), info.ID, milestoneID); err != nil {
			return err
		}
		// A project's merge requests carry their milestone in the record
		// only: walk them newest first (no milestone index yet; a
		// project's merge requests are read once per page).
		var list []*MR
		var walkErr error
		store.WalkTimeKeys(tx, byCreated, info.ID, true, func(id int64, _ byte) bool {
			m, err := mrs.Get(tx, id)
			if err != nil {
				walkErr = err
				return false
			}
			if m.MilestoneID == milestoneID && !m.Deleted {
				list = append(list, m)
			}
			return true
		})
		if walkErr != nil {
			return walkErr
		}
		total = len(list)
		out = s.records(info, store.Window(list, offset, limit))
		return nil
	})
	return out, total, err
}
