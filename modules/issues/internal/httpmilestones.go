package internal

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/issues/issue"
)

// The endpoints of project and group milestones.

// MilestonePath is a milestone's :id and :milestone_id (its global id, as
// in GitLab 9.x's v4).
type MilestonePath struct {
	ProjectPath
	MilestoneID int64 `path:"milestone_id"`
}

// GroupRef is a group's :id.
type GroupRef struct {
	ID string `path:"id" doc:"Group id or URL-encoded path"`
}

// GroupMilestonePath is a group milestone's :id and :milestone_id.
type GroupMilestonePath struct {
	GroupRef
	MilestoneID int64 `path:"milestone_id"`
}

// GroupMilestoneView is a group milestone.
type GroupMilestoneView struct {
	ID          int64    `json:"id"`
	IID         int64    `json:"iid"`
	GroupID     int64    `json:"group_id"`
	Title       string   `json:"title"`
	Description *string  `json:"description"`
	State       string   `json:"state"`
	CreatedAt   api.Time `json:"created_at"`
	UpdatedAt   api.Time `json:"updated_at"`
	DueDate     *string  `json:"due_date"`
	StartDate   *string  `json:"start_date"`
}

func groupMilestoneView(m issue.Milestone) *GroupMilestoneView {
	v := milestoneView(m)
	return &GroupMilestoneView{ID: v.ID, IID: v.IID, GroupID: v.GroupID, Title: v.Title, Description: v.Description,
		State: v.State, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, DueDate: v.DueDate, StartDate: v.StartDate}
}

type milestonesOutput struct {
	api.PageHeaders
	Body []MilestoneView
}

type milestoneOutput struct {
	Body *MilestoneView
}

type groupMilestonesOutput struct {
	api.PageHeaders
	Body []GroupMilestoneView
}

type groupMilestoneOutput struct{ Body *GroupMilestoneView }

type milestoneBody struct {
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	DueDate     *string `json:"due_date,omitempty"`
	StartDate   *string `json:"start_date,omitempty"`
	StateEvent  *string `json:"state_event,omitempty"`
}

func (b *milestoneBody) fields() (issue.MilestoneFields, issue.MilestoneEvent) {
	var ev issue.MilestoneEvent
	if b.StateEvent != nil {
		ev = issue.MilestoneEvent(*b.StateEvent)
		if ev == "" {
			ev = " " // given but empty is no state event either
		}
	}
	return issue.MilestoneFields{Title: b.Title, Description: b.Description, DueDate: b.DueDate, StartDate: b.StartDate}, ev
}

type groupMilestoneCreate struct {
	Title       *string `json:"title,omitempty" required:"true"`
	Description *string `json:"description,omitempty"`
	DueDate     *string `json:"due_date,omitempty"`
	StartDate   *string `json:"start_date,omitempty"`
}

func (s *Service) listMilestones(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
	State  string  `query:"state" doc:"active or closed"`
	IIDs   []int64 `query:"iids"`
	Search string  `query:"search"`
}) (*milestonesOutput, error) {
	list, total, err := s.Milestones(ctx, in.ID, issue.MilestoneQuery{State: in.State, IIDs: in.IIDs, Search: in.Search,
		Offset: in.Offset(), Limit: in.Limit()})
	if err != nil {
		return nil, err
	}
	out := &milestonesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []MilestoneView{}}
	for _, m := range list {
		out.Body = append(out.Body, *milestoneView(m))
	}
	return out, nil
}

func milestoneAnswer(m issue.Milestone, err error) (*milestoneOutput, error) {
	if err != nil {
		return nil, err
	}
	return &milestoneOutput{Body: milestoneView(m)}, nil
}

func (s *Service) getMilestone(ctx context.Context, in *MilestonePath) (*milestoneOutput, error) {
	return milestoneAnswer(s.GetMilestone(ctx, in.ID, issue.MilestoneID(in.MilestoneID)))
}

func (s *Service) createMilestone(ctx context.Context, in *struct {
	ProjectPath
	Body milestoneBody
}) (*milestoneOutput, error) {
	f, _ := in.Body.fields()
	return milestoneAnswer(s.CreateMilestone(ctx, in.ID, f))
}

func (s *Service) updateMilestone(ctx context.Context, in *struct {
	MilestonePath
	Body milestoneBody
}) (*milestoneOutput, error) {
	f, ev := in.Body.fields()
	return milestoneAnswer(s.UpdateMilestone(ctx, in.ID, issue.MilestoneID(in.MilestoneID), f, ev))
}

func (s *Service) milestoneIssues(ctx context.Context, in *struct {
	MilestonePath
	api.PageParams
}) (*issuesOutput, error) {
	return s.page(ctx, in.PageParams, func(ctx context.Context) ([]issue.Issue, int, error) {
		return s.MilestoneIssues(ctx, in.ID, issue.MilestoneID(in.MilestoneID), in.Offset(), in.Limit())
	})
}

func (s *Service) registerMilestones(a *api.API) {
	tags := []string{"milestones"}
	api.Register(a, api.Op{ID: "list-project-milestones", Method: http.MethodGet, Path: "/projects/{id}/milestones", Tags: tags,
		Summary: "A project's milestones"}, s.listMilestones)
	api.Register(a, api.Op{ID: "get-project-milestone", Method: http.MethodGet, Path: "/projects/{id}/milestones/{milestone_id}", Tags: tags,
		Summary: "A milestone"}, s.getMilestone)
	api.Register(a, api.Op{ID: "create-project-milestone", Method: http.MethodPost, Path: "/projects/{id}/milestones", Tags: tags,
		Summary: "Create a milestone", Access: api.SignedIn}, s.createMilestone)
	api.Register(a, api.Op{ID: "update-project-milestone", Method: http.MethodPut, Path: "/projects/{id}/milestones/{milestone_id}", Tags: tags,
		Summary: "Edit, close or activate a milestone", Access: api.SignedIn}, s.updateMilestone)
	api.Register(a, api.Op{ID: "list-project-milestone-issues", Method: http.MethodGet, Path: "/projects/{id}/milestones/{milestone_id}/issues", Tags: tags,
		Summary: "The issues of a milestone"}, s.milestoneIssues)
}

func (s *Service) registerGroupMilestones(a *api.API) {
	tags := []string{"milestones"}
	api.Register(a, api.Op{ID: "list-group-milestones", Method: http.MethodGet, Path: "/groups/{id}/milestones", Tags: tags,
		Summary: "A group's milestones"}, s.listGroupMilestones)
	api.Register(a, api.Op{ID: "get-group-milestone", Method: http.MethodGet, Path: "/groups/{id}/milestones/{milestone_id}", Tags: tags,
		Summary: "A group milestone"}, s.getGroupMilestone)
	api.Register(a, api.Op{ID: "create-group-milestone", Method: http.MethodPost, Path: "/groups/{id}/milestones", Tags: tags,
		Summary: "Create a group milestone (group Master or Owner)", Access: api.SignedIn}, s.createGroupMilestone)
	api.Register(a, api.Op{ID: "update-group-milestone", Method: http.MethodPut, Path: "/groups/{id}/milestones/{milestone_id}", Tags: tags,
		Summary: "Edit, close or activate a group milestone (group Master or Owner)", Access: api.SignedIn}, s.updateGroupMilestone)
	api.Register(a, api.Op{ID: "list-group-milestone-issues", Method: http.MethodGet, Path: "/groups/{id}/milestones/{milestone_id}/issues", Tags: tags,
		Summary: "The issues of a group milestone the caller may see"}, s.groupMilestoneIssues)
}

func (s *Service) listGroupMilestones(ctx context.Context, in *struct {
	GroupRef
	api.PageParams
	State  string  `query:"state" enum:"active,closed," doc:"active or closed"`
	IIDs   []int64 `query:"iids"`
	Search string  `query:"search" doc:"Title or description contains this"`
}) (*groupMilestonesOutput, error) {
	list, total, err := s.GroupMilestones(ctx, in.ID, issue.MilestoneQuery{State: in.State, IIDs: in.IIDs, Search: in.Search,
		Offset: in.Offset(), Limit: in.Limit()})
	if err != nil {
		return nil, err
	}
	out := &groupMilestonesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []GroupMilestoneView{}}
	for _, m := range list {
		out.Body = append(out.Body, *groupMilestoneView(m))
	}
	return out, nil
}

func groupMilestoneAnswer(m issue.Milestone, err error) (*groupMilestoneOutput, error) {
	if err != nil {
		return nil, err
	}
	return &groupMilestoneOutput{Body: groupMilestoneView(m)}, nil
}

func (s *Service) getGroupMilestone(ctx context.Context, in *GroupMilestonePath) (*groupMilestoneOutput, error) {
	return groupMilestoneAnswer(s.GetGroupMilestone(ctx, in.ID, issue.MilestoneID(in.MilestoneID)))
}

func (s *Service) createGroupMilestone(ctx context.Context, in *struct {
	GroupRef
	Body groupMilestoneCreate
}) (*groupMilestoneOutput, error) {
	b := &in.Body
	return groupMilestoneAnswer(s.CreateGroupMilestone(ctx, in.ID,
		issue.MilestoneFields{Title: b.Title, Description: b.Description, DueDate: b.DueDate, StartDate: b.StartDate}))
}

func (s *Service) updateGroupMilestone(ctx context.Context, in *struct {
	GroupMilestonePath
	Body milestoneBody
}) (*groupMilestoneOutput, error) {
	f, ev := in.Body.fields()
	return groupMilestoneAnswer(s.UpdateGroupMilestone(ctx, in.ID, issue.MilestoneID(in.MilestoneID), f, ev))
}

func (s *Service) groupMilestoneIssues(ctx context.Context, in *struct {
	GroupMilestonePath
	api.PageParams
}) (*issuesOutput, error) {
	return s.page(ctx, in.PageParams, func(ctx context.Context) ([]issue.Issue, int, error) {
		return s.GroupMilestoneIssues(ctx, in.ID, issue.MilestoneID(in.MilestoneID), in.Offset(), in.Limit())
	})
}
