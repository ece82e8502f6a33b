package internal

import (
	"context"
	"time"

	"github.com/fennec-forge/fennec/modules/collab/target"
)

// Seams are the labels and milestones this module keeps, as the collab
// contract's target.Labels and target.Milestones give them to the modules
// that attach them (merge requests), which import nothing of this one:
// records for their logic, this module's views for their answers.
type Seams struct{ *Service }

var (
	_ target.Labels     = Seams{}
	_ target.Milestones = Seams{}
)

// LabelEvents implements target.Labels.
func (s Seams) LabelEvents(ctx context.Context, resourceType string, resourceID int64, offset, limit int) ([]any, int, error) {
	list, total, err := s.Service.LabelEvents(ctx, resourceType, resourceID, offset, limit)
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out, total, err
}

// LabelEvent implements target.Labels.
func (s Seams) LabelEvent(ctx context.Context, resourceType string, resourceID int64, eventID uint64) (any, error) {
	v, err := s.Service.LabelEvent(ctx, resourceType, resourceID, eventID)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Milestone implements target.Milestones.
func (s Seams) Milestone(ctx context.Context, projectID, id int64) (target.Milestone, error) {
	return milestoneRecord(s.Service.Milestone(ctx, projectID, id))
}

// Assignable implements target.Milestones.
func (s Seams) Assignable(ctx context.Context, projectID, id int64) (target.Milestone, error) {
	return milestoneRecord(s.Service.Assignable(ctx, projectID, id))
}

// ByTitle implements target.Milestones.
func (s Seams) ByTitle(ctx context.Context, projectID int64, title string) (target.Milestone, error) {
	return milestoneRecord(s.Service.ByTitle(ctx, projectID, title))
}

func milestoneRecord(v MilestoneView, err error) (target.Milestone, error) {
	if err != nil {
		return target.Milestone{}, err
	}
	m := target.Milestone{ID: int64(v.ID), IID: int64(v.IID), ProjectID: int64(v.ProjectID), GroupID: int64(v.GroupID), Title: v.Title,
		State: v.State, CreatedAt: time.Time(v.CreatedAt), UpdatedAt: time.Time(v.UpdatedAt), View: &v}
	if v.Description != nil {
		m.Description = *v.Description
	}
	if v.DueDate != nil {
		m.DueDate = *v.DueDate
	}
	if v.StartDate != nil {
		m.StartDate = *v.StartDate
	}
	return m, nil
}
