package internal

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/issues/issue"
)

// The group labels' endpoints (grouplabels.go says who may do what).

// GroupLabelView is a group label (GitLab's GroupLabel entity): the counts
// only when asked for (with_counts), as GitLab shows them; Fennec keeps no
// subscriptions to labels, so subscribed is false.
type GroupLabelView struct {
	ID                     int64   `json:"id"`
	Name                   string  `json:"name"`
	Color                  string  `json:"color"`
	Description            *string `json:"description"`
	OpenIssuesCount        *int    `json:"open_issues_count,omitempty"`
	ClosedIssuesCount      *int    `json:"closed_issues_count,omitempty"`
	OpenMergeRequestsCount *int    `json:"open_merge_requests_count,omitempty"`
	Subscribed             bool    `json:"subscribed"`
}

// GroupLabelPath is a group label's :id and :label_id (its name or id).
type GroupLabelPath struct {
	GroupRef
	Label string `path:"label_id" doc:"The label's name (URL-encoded) or id"`
}

type groupLabelsOutput struct {
	api.PageHeaders
	Body []GroupLabelView
}

type groupLabelOutput struct{ Body *GroupLabelView }

type groupLabelCreate struct {
	Name        *string `json:"name,omitempty" required:"true"`
	Color       *string `json:"color,omitempty" required:"true" doc:"#RGB or #RRGGBB"`
	Description *string `json:"description,omitempty"`
	// Priority is accepted and ignored: GitLab keeps priorities per
	// project, and its group API drops the parameter (python-gitlab may
	// send it).
	Priority *int `json:"priority,omitempty" doc:"Accepted and ignored (a group label has no priority)"`
}

type groupLabelUpdate struct {
	NewName     *string `json:"new_name,omitempty"`
	Color       *string `json:"color,omitempty"`
	Description *string `json:"description,omitempty"`
}

func groupLabelView(r issue.Label) *GroupLabelView {
	v := &GroupLabelView{ID: int64(r.ID), Name: r.Name, Color: r.Color, Description: strPtr(r.Description)}
	if r.Counted {
		// Merge requests keep no label counts (the project's view shows
		// 0 too).
		open, closed, mrs := r.OpenIssuesCount, r.ClosedIssuesCount, 0
		v.OpenIssuesCount, v.ClosedIssuesCount, v.OpenMergeRequestsCount = &open, &closed, &mrs
	}
	return v
}

func groupLabelAnswer(r issue.Label, err error) (*groupLabelOutput, error) {
	if err != nil {
		return nil, err
	}
	return &groupLabelOutput{Body: groupLabelView(r)}, nil
}

func (s *Service) registerGroupLabels(a *api.API) {
	tags := []string{"labels"}
	api.Register(a, api.Op{ID: "list-group-labels", Method: http.MethodGet, Path: "/groups/{id}/labels", Tags: tags,
		Summary: "A group's labels (and its ancestors')", Access: api.SignedIn}, s.listGroupLabels)
	api.Register(a, api.Op{ID: "get-group-label", Method: http.MethodGet, Path: "/groups/{id}/labels/{label_id}", Tags: tags,
		Summary: "A group label named (or numbered) in the path", Access: api.SignedIn}, s.getGroupLabel)
	api.Register(a, api.Op{ID: "create-group-label", Method: http.MethodPost, Path: "/groups/{id}/labels", Tags: tags,
		Summary: "Create a group label (group Reporter+)", Access: api.SignedIn}, s.createGroupLabel)
	api.Register(a, api.Op{ID: "update-group-label", Method: http.MethodPut, Path: "/groups/{id}/labels", Tags: tags,
		Summary: "Edit a group label by name (group Reporter+)", Access: api.SignedIn}, s.updateGroupLabelByName)
	api.Register(a, api.Op{ID: "update-group-label-by-path", Method: http.MethodPut, Path: "/groups/{id}/labels/{label_id}", Tags: tags,
		Summary: "Edit a group label named (or numbered) in the path (group Reporter+)", Access: api.SignedIn}, s.updateGroupLabelByPath)
	api.Register(a, api.Op{ID: "delete-group-label", Method: http.MethodDelete, Path: "/groups/{id}/labels", Tags: tags,
		Summary: "Delete a group label by name (group Reporter+)", Access: api.SignedIn}, s.deleteGroupLabelByName)
	api.Register(a, api.Op{ID: "delete-group-label-by-path", Method: http.MethodDelete, Path: "/groups/{id}/labels/{label_id}", Tags: tags,
		Summary: "Delete a group label named (or numbered) in the path (group Reporter+)", Access: api.SignedIn}, s.deleteGroupLabelByPath)
}

func (s *Service) listGroupLabels(ctx context.Context, in *struct {
	GroupRef
	api.PageParams
	WithCounts            bool   `query:"with_counts" doc:"Show the counts of issues and merge requests"`
	IncludeAncestorGroups string `query:"include_ancestor_groups" doc:"true (default): the labels of the groups above it too"`
	Search                string `query:"search" doc:"Name or description contains this"`
}) (*groupLabelsOutput, error) {
	ancestors, err := parseBoolParam("include_ancestor_groups", in.IncludeAncestorGroups, true)
	if err != nil {
		return nil, err
	}
	list, total, err := s.GroupLabels(ctx, in.ID, issue.LabelQuery{Ancestors: ancestors, Search: in.Search, WithCounts: in.WithCounts,
		Offset: in.Offset(), Limit: in.Limit()})
	if err != nil {
		return nil, err
	}
	out := &groupLabelsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []GroupLabelView{}}
	for _, r := range list {
		out.Body = append(out.Body, *groupLabelView(r))
	}
	return out, nil
}

func (s *Service) getGroupLabel(ctx context.Context, in *GroupLabelPath) (*groupLabelOutput, error) {
	return groupLabelAnswer(s.GetGroupLabel(ctx, in.ID, in.Label))
}

func (s *Service) createGroupLabel(ctx context.Context, in *struct {
	GroupRef
	Body groupLabelCreate
}) (*groupLabelOutput, error) {
	b := &in.Body
	return groupLabelAnswer(s.CreateGroupLabel(ctx, in.ID, issue.LabelFields{Name: b.Name, Color: b.Color, Description: b.Description}))
}

// updateGroupLabelByName is the older PUT /groups/:id/labels, the label
// named in the parameters (python-gitlab's GroupLabel.save sends name and
// the changed fields there).
func (s *Service) updateGroupLabelByName(ctx context.Context, in *struct {
	GroupRef
	Body struct {
		Name        *string `json:"name,omitempty" required:"true" doc:"The label's name (or id)"`
		NewName     *string `json:"new_name,omitempty"`
		Color       *string `json:"color,omitempty"`
		Description *string `json:"description,omitempty"`
	}
}) (*groupLabelOutput, error) {
	b := &in.Body
	if b.Name == nil {
		return nil, api.Missing("name")
	}
	return groupLabelAnswer(s.UpdateGroupLabel(ctx, in.ID, *b.Name, issue.LabelFields{Name: b.NewName, Color: b.Color, Description: b.Description}))
}

func (s *Service) updateGroupLabelByPath(ctx context.Context, in *struct {
	GroupLabelPath
	Body groupLabelUpdate
}) (*groupLabelOutput, error) {
	b := &in.Body
	return groupLabelAnswer(s.UpdateGroupLabel(ctx, in.ID, in.Label, issue.LabelFields{Name: b.NewName, Color: b.Color, Description: b.Description}))
}

// deleteGroupLabelByName is the older DELETE /groups/:id/labels, the
// label named in the query or the body.
func (s *Service) deleteGroupLabelByName(ctx context.Context, in *struct {
	GroupRef
	Name string `query:"name" doc:"The label's name (or id)"`
	Body struct {
		Name *string `json:"name,omitempty"`
	}
}) (*deleteOutput, error) {
	name, err := nameParam(in.Name, in.Body.Name)
	if err != nil {
		return nil, err
	}
	return &deleteOutput{}, s.DeleteGroupLabel(ctx, in.ID, name)
}

func (s *Service) deleteGroupLabelByPath(ctx context.Context, in *GroupLabelPath) (*deleteOutput, error) {
	return &deleteOutput{}, s.DeleteGroupLabel(ctx, in.ID, in.Label)
}
