package internal

import (
	"context"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
)

type milestoneMRsInput struct {
	ProjectPath
	api.PageParams
	MilestoneID int64 `path:"milestone_id" doc:"The id of a project milestone"`
}

// milestoneMRs is GET /projects/:id/milestones/:milestone_id/merge_requests
// (GitLab 9.0): the project's merge requests of that milestone, every
// state, newest first as the list sorts them. The milestone is the issues
// module's (a missing one is its 404); merge requests are read as the
// list reads them, so a caller who may not see the project's merge
// requests gets the list's answer.
func (s *Service) milestoneMRs(ctx context.Context, in *milestoneMRsInput) (*listOutput, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if s.Milestones == nil {
		return nil, api.RecordNotFound() // a bundle without issues has no milestones
	}
	if _, err := s.Milestones.Milestone(ctx, info.ID, in.MilestoneID); err != nil {
		return nil, err
	}
	out := &listOutput{}
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		// A project's merge requests carry their milestone in the record
		// only: walk them newest first (no milestone index yet; a
		// project's merge requests are read once per page).
		var list []*MR
		var walkErr error
		store.WalkTimeKeys(tx, byCreated, uint64(info.ID), true, func(id uint64, _ byte) bool {
			m, err := mrs.Get(tx, id)
			if err != nil {
				walkErr = err
				return false
			}
			if m.MilestoneID == in.MilestoneID && !m.Deleted {
				list = append(list, m)
			}
			return true
		})
		if walkErr != nil {
			return walkErr
		}
		out.PageHeaders = api.Paginate(ctx, in.PageParams, len(list))
		var err error
		out.Body, err = s.renderer(ctx).views(tx, s.records(info, api.Window(list, in.PageParams)))
		return err
	})
	return out, err
}

// NewMilestoneRoutes registers the merge requests of a milestone; the
// route is the milestones' (issues module), the answer this module's.
func NewMilestoneRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "mergerequests-milestones", Register: func(a *api.API) {
		api.Register(a, api.Op{ID: "list-project-milestone-merge-requests", Method: http.MethodGet,
			Path: "/projects/{id}/milestones/{milestone_id}/merge_requests", Tags: []string{"milestones"},
			Summary: "The merge requests of a milestone"}, s.milestoneMRs)
	}}
}
