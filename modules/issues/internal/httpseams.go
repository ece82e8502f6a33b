package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Seams are the labels, milestones and closing issues this module keeps,
// as the collab contract's target.Labels, target.Milestones and
// target.Closer give them to the modules that attach them (merge
// requests), which import nothing of this one: records for their logic,
// this module's views (GitLab's JSON, so the adapter's) for their answers.
type Seams struct{ *Service }

var (
	_ target.Labels     = Seams{}
	_ target.Milestones = Seams{}
	_ target.Closer     = Seams{}
)

// LabelEvents implements target.Labels.
func (s Seams) LabelEvents(ctx context.Context, resourceType string, resourceID int64, offset, limit int) ([]any, int, error) {
	list, total, err := s.labelEventPage(ctx, func(ctx context.Context) ([]issue.LabelEvent, int, error) {
		return s.labelEventsOf(ctx, resourceType, resourceID, offset, limit)
	})
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = v
	}
	return out, total, err
}

// LabelEvent implements target.Labels.
func (s Seams) LabelEvent(ctx context.Context, resourceType string, resourceID int64, eventID int64) (any, error) {
	list, _, err := s.labelEventPage(ctx, func(ctx context.Context) ([]issue.LabelEvent, int, error) {
		e, err := s.labelEventOf(ctx, resourceType, resourceID, eventID)
		return []issue.LabelEvent{e}, 1, err
	})
	if err != nil {
		return nil, err
	}
	return list[0], nil
}

// Milestone implements target.Milestones.
func (s Seams) Milestone(ctx context.Context, projectID, id int64) (target.Milestone, error) {
	return seamMilestone(s.milestoneByID(ctx, projectID, id))
}

// Assignable implements target.Milestones.
func (s Seams) Assignable(ctx context.Context, projectID, id int64) (target.Milestone, error) {
	return seamMilestone(s.assignable(ctx, projectID, id))
}

// ByTitle implements target.Milestones.
func (s Seams) ByTitle(ctx context.Context, projectID int64, title string) (target.Milestone, error) {
	return seamMilestone(s.milestoneByTitle(ctx, projectID, title))
}

// Open implements target.Milestones.
func (s Seams) Open(ctx context.Context, projectID int64, limit int) ([]target.Milestone, error) {
	list, err := s.openMilestones(ctx, projectID, limit)
	out := make([]target.Milestone, 0, len(list))
	for _, m := range list {
		t, _ := seamMilestone(m, nil)
		out = append(out, t)
	}
	return out, err
}

func seamMilestone(m issue.Milestone, err error) (target.Milestone, error) {
	if err != nil {
		return target.Milestone{}, err
	}
	return target.Milestone{ID: int64(m.ID), IID: m.IID, ProjectID: m.ProjectID, GroupID: m.GroupID, Title: m.Title,
		Description: m.Description, State: m.State, DueDate: m.DueDate, StartDate: m.StartDate,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, View: milestoneView(m)}, nil
}

// ClosedBy implements target.Closer: which open issues texts (a merge
// request's title, description and commit messages) would close, relative
// to project, among those the caller in ctx may see, rendered as the
// issues' views: the merge requests module's closes_issues and merge
// message.
func (s Seams) ClosedBy(ctx context.Context, project projects.ProjectInfo, texts ...string) ([]target.Closed, error) {
	var out []target.Closed
	err := s.db.View(ctx, func(tx *store.Tx) error {
		recs, refs, err := s.closedBy(tx.Context(), project, texts...)
		if err != nil {
			return err
		}
		views, err := s.renderer(ctx).views(tx, recs)
		if err != nil {
			return err
		}
		out = make([]target.Closed, 0, len(views))
		for n, v := range views {
			out = append(out, target.Closed{Ref: refs[n], View: v})
		}
		return nil
	})
	return out, err
}
