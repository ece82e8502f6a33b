package internal

import (
	"context"
	"net/http"
	"strconv"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/issues/issue"
)

// The project labels' endpoints (the group labels' are httpgrouplabels.go).

type labelsOutput struct {
	api.PageHeaders
	Body []LabelView
}

type labelOutput struct {
	Body *LabelView
}

type labelBody struct {
	Name        *string `json:"name,omitempty"`
	NewName     *string `json:"new_name,omitempty"`
	Color       *string `json:"color,omitempty"`
	Description *string `json:"description,omitempty"`
	Priority    *int    `json:"priority,omitempty"`
}

// LabelPath is a label named in the path (by id or name), as later
// GitLab versions and today's clients address it.
type LabelPath struct {
	ProjectPath
	Label string `path:"label_id"`
}

// labelView shows a label as a project sees it: IsProjectLabel (later
// GitLab's ProjectLabel entity) is false for the labels it inherits.
func labelView(r issue.Label) *LabelView {
	return &LabelView{ID: int64(r.ID), Name: r.Name, Color: r.Color, Description: strPtr(r.Description),
		OpenIssuesCount: r.OpenIssuesCount, ClosedIssuesCount: r.ClosedIssuesCount, Priority: r.Priority,
		IsProjectLabel: r.GroupID == 0}
}

func labelAnswer(r issue.Label, err error) (*labelOutput, error) {
	if err != nil {
		return nil, err
	}
	return &labelOutput{Body: labelView(r)}, nil
}

// parseBoolParam reads a boolean query parameter given as text (so that
// its default may be true): "" is def.
func parseBoolParam(name, v string, def bool) (bool, error) {
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, api.Invalid(name)
	}
	return b, nil
}

func (s *Service) listLabels(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
	IncludeAncestorGroups string `query:"include_ancestor_groups" doc:"true (default): the labels of every group above the project too; false: of its own group only"`
	Search                string `query:"search" doc:"Name or description contains this"`
}) (*labelsOutput, error) {
	ancestors, err := parseBoolParam("include_ancestor_groups", in.IncludeAncestorGroups, true)
	if err != nil {
		return nil, err
	}
	list, total, err := s.Labels(ctx, in.ID, issue.LabelQuery{Ancestors: ancestors, Search: in.Search,
		Offset: in.Offset(), Limit: in.Limit()})
	if err != nil {
		return nil, err
	}
	out := &labelsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []LabelView{}}
	for _, r := range list {
		out.Body = append(out.Body, *labelView(r))
	}
	return out, nil
}

func (s *Service) getLabelByPath(ctx context.Context, in *LabelPath) (*labelOutput, error) {
	return labelAnswer(s.GetLabel(ctx, in.ID, in.Label))
}

func (s *Service) createLabel(ctx context.Context, in *struct {
	ProjectPath
	Body labelBody
}) (*labelOutput, error) {
	b := &in.Body
	return labelAnswer(s.CreateLabel(ctx, in.ID, issue.LabelFields{Name: b.Name, Color: b.Color, Description: b.Description, Priority: b.Priority}))
}

func (s *Service) updateLabelByPath(ctx context.Context, in *struct {
	LabelPath
	Body labelBody
}) (*labelOutput, error) {
	b := &in.Body
	return labelAnswer(s.UpdateLabel(ctx, in.ID, in.Label, issue.LabelFields{Name: b.NewName, Color: b.Color, Description: b.Description, Priority: b.Priority}))
}

func (s *Service) updateLabel(ctx context.Context, in *struct {
	ProjectPath
	Body labelBody
}) (*labelOutput, error) {
	b := &in.Body
	if b.Name == nil {
		return nil, api.Missing("name")
	}
	return labelAnswer(s.UpdateLabel(ctx, in.ID, *b.Name, issue.LabelFields{Name: b.NewName, Color: b.Color, Description: b.Description, Priority: b.Priority}))
}

// nameParam is the label named in the query or the body of the older
// DELETE .../labels (the body wins).
func nameParam(query string, body *string) (string, error) {
	name := query
	if body != nil {
		name = *body
	}
	if name == "" {
		return "", api.Missing("name")
	}
	return name, nil
}

func (s *Service) deleteLabel(ctx context.Context, in *struct {
	ProjectPath
	Name string `query:"name"`
	Body struct {
		Name *string `json:"name,omitempty"`
	}
}) (*deleteOutput, error) {
	name, err := nameParam(in.Name, in.Body.Name)
	if err != nil {
		return nil, err
	}
	return &deleteOutput{}, s.DeleteLabel(ctx, in.ID, name)
}

func (s *Service) deleteLabelByPath(ctx context.Context, in *LabelPath) (*deleteOutput, error) {
	return &deleteOutput{}, s.DeleteLabel(ctx, in.ID, in.Label)
}

func (s *Service) registerLabels(a *api.API) {
	tags := []string{"labels"}
	api.Register(a, api.Op{ID: "list-project-labels", Method: http.MethodGet, Path: "/projects/{id}/labels", Tags: tags,
		Summary: "A project's labels"}, s.listLabels)
	api.Register(a, api.Op{ID: "create-project-label", Method: http.MethodPost, Path: "/projects/{id}/labels", Tags: tags,
		Summary: "Create a label (Reporter+)", Access: api.SignedIn}, s.createLabel)
	api.Register(a, api.Op{ID: "update-project-label", Method: http.MethodPut, Path: "/projects/{id}/labels", Tags: tags,
		Summary: "Edit a label by name (Reporter+)", Access: api.SignedIn}, s.updateLabel)
	api.Register(a, api.Op{ID: "delete-project-label", Method: http.MethodDelete, Path: "/projects/{id}/labels", Tags: tags,
		Summary: "Delete a label by name (Reporter+)", Access: api.SignedIn}, s.deleteLabel)
	api.Register(a, api.Op{ID: "get-project-label", Method: http.MethodGet, Path: "/projects/{id}/labels/{label_id}", Tags: tags,
		Summary: "A label named (or numbered) in the path"}, s.getLabelByPath)
	api.Register(a, api.Op{ID: "update-project-label-by-path", Method: http.MethodPut, Path: "/projects/{id}/labels/{label_id}", Tags: tags,
		Summary: "Edit a label named (or numbered) in the path (Reporter+)", Access: api.SignedIn}, s.updateLabelByPath)
	api.Register(a, api.Op{ID: "delete-project-label-by-path", Method: http.MethodDelete, Path: "/projects/{id}/labels/{label_id}", Tags: tags,
		Summary: "Delete a label named (or numbered) in the path (Reporter+)", Access: api.SignedIn}, s.deleteLabelByPath)
}
