package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// The HTTP adapter of the merge: PUT .../merge and the cancel of merge
// when pipeline succeeds decode, call the service and render; the merge's
// domain errors get GitLab's answers here (mapMergeErrors).

// mapMergeErrors gives the merge's domain errors GitLab 9.x's answers.
func mapMergeErrors(a *api.API) {
	a.MapError(mergerequest.ErrMergeNotAllowed, func(error) *api.Error { return api.Unauthorized() })
	a.MapError(mergerequest.ErrNotOpen, func(error) *api.Error { return api.NotAcceptable("406 Not Acceptable") })
	a.MapError(mergerequest.ErrNoAutoMerge, func(error) *api.Error { return api.NotAcceptable("406 Not Acceptable") })
	a.MapError(mergerequest.ErrNotChangeable, func(error) *api.Error { return api.MethodNotAllowed("") })
	a.MapError(mergerequest.ErrSHAMismatch, func(err error) *api.Error {
		head := ""
		var e *mergerequest.SHAMismatchError
		if errors.As(err, &e) {
			head = e.Head
		}
		return api.Conflict("SHA does not match HEAD of source branch: " + head)
	})
	a.MapError(mergerequest.ErrTargetMoved, func(error) *api.Error {
		return api.Conflict("The target branch moved while merging; try again")
	})
}

type acceptInput struct {
	MRPath
	Body struct {
		MergeCommitMessage        *string `json:"merge_commit_message,omitempty"`
		ShouldRemoveSourceBranch  *bool   `json:"should_remove_source_branch,omitempty"`
		MergeWhenPipelineSucceeds *bool   `json:"merge_when_pipeline_succeeds,omitempty"`
		SHA                       *string `json:"sha,omitempty"`
	}
}

// accept is PUT .../merge: 401 without the right to merge into the target
// branch, 406 when merged or closed, 405 when it cannot be merged (work in
// progress, a missing branch, conflicts), 409 when sha is not the source's
// head; with merge_when_pipeline_succeeds while the head pipeline runs,
// the intent is recorded and the merge happens when it succeeds.
func (s *Service) accept(ctx context.Context, in *acceptInput) (*mrOutput, error) {
	b := in.Body
	m, err := s.Merge(ctx, in.ref(), mergerequest.MergeInput{SHA: b.SHA, Message: b.MergeCommitMessage,
		RemoveSourceBranch:   b.ShouldRemoveSourceBranch,
		WhenPipelineSucceeds: b.MergeWhenPipelineSucceeds != nil && *b.MergeWhenPipelineSucceeds})
	if err != nil {
		return nil, err
	}
	return s.renderOne(ctx, m)
}

// cancelMWPS is PUT (or POST) .../cancel_merge_when_pipeline_succeeds.
func (s *Service) cancelMWPS(ctx context.Context, in *MRPath) (*mrOutput, error) {
	m, err := s.CancelAutoMerge(ctx, in.ref())
	if err != nil {
		return nil, err
	}
	return s.renderOne(ctx, m)
}
