package internal

// The CI variables API of projects and groups (GitLab 9.x): the HTTP
// adapter over cicd.Service's variables (variables.go).

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// VariableView is a project variable as GitLab 9.x shows it.
type VariableView struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	Protected bool   `json:"protected"`
}

// VariablePath is a variable's :id and :key; exported so that an
// operation's input can embed it (huma skips unexported embedded structs:
// an edit saw no project and answered 404).
type VariablePath struct {
	ProjectPath
	Key string `path:"key"`
}

// GroupPath is a group's :id (exported: huma skips unexported embedded
// structs).
type GroupPath struct {
	ID string `path:"id" doc:"Group id or URL-encoded path"`
}

// GroupVariablePath is a group variable's :id and :key.
type GroupVariablePath struct {
	GroupPath
	Key string `path:"key"`
}

type variableBody struct {
	Key       *string `json:"key,omitempty"`
	Value     *string `json:"value,omitempty"`
	Protected *bool   `json:"protected,omitempty"`
}

type groupVariableCreate struct {
	Key       *string `json:"key,omitempty" required:"true"`
	Value     *string `json:"value,omitempty" required:"true"`
	Protected *bool   `json:"protected,omitempty"`
}

type variablesOutput struct {
	api.PageHeaders
	Body []VariableView
}

type variableOutput struct {
	Body *VariableView
}

func (b variableBody) fields() cicd.VariableFields {
	return cicd.VariableFields{Key: b.Key, Value: b.Value, Protected: b.Protected}
}

// variableAnswer renders the variable a command or reader returned.
func variableAnswer(v cicd.SecretVariable, err error) (*variableOutput, error) {
	if err != nil {
		return nil, err
	}
	return &variableOutput{Body: &VariableView{Key: v.Key, Value: v.Value, Protected: v.Protected}}, nil
}

// variablesAnswer renders a page of variables.
func variablesAnswer(ctx context.Context, page api.PageParams, list []cicd.SecretVariable, total int, err error) (*variablesOutput, error) {
	if err != nil {
		return nil, err
	}
	out := &variablesOutput{PageHeaders: api.Paginate(ctx, page, total), Body: []VariableView{}}
	for _, v := range list {
		out.Body = append(out.Body, VariableView{Key: v.Key, Value: v.Value, Protected: v.Protected})
	}
	return out, nil
}

func (s *Service) listVariables(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
}) (*variablesOutput, error) {
	list, total, err := s.ProjectVariables(ctx, in.ID, in.Offset(), in.Limit())
	return variablesAnswer(ctx, in.PageParams, list, total, err)
}

func (s *Service) getVariable(ctx context.Context, in *VariablePath) (*variableOutput, error) {
	return variableAnswer(s.ProjectVariable(ctx, in.ID, in.Key))
}

func (s *Service) createVariableAPI(ctx context.Context, in *struct {
	ProjectPath
	Body variableBody
}) (*variableOutput, error) {
	return variableAnswer(s.CreateProjectVariable(ctx, in.ID, in.Body.fields()))
}

func (s *Service) updateVariable(ctx context.Context, in *struct {
	VariablePath
	Body variableBody
}) (*variableOutput, error) {
	return variableAnswer(s.UpdateProjectVariable(ctx, in.ID, in.Key, in.Body.fields()))
}

func (s *Service) deleteVariable(ctx context.Context, in *VariablePath) (*variableOutput, error) {
	return variableAnswer(s.DeleteProjectVariable(ctx, in.ID, in.Key))
}

func (s *Service) registerVariables(a *api.API) {
	tags := []string{"variables"}
	api.Register(a, api.Op{ID: "list-project-variables", Method: http.MethodGet, Path: "/projects/{id}/variables", Tags: tags,
		Summary: "A project's CI variables (Master)", Access: api.SignedIn}, s.listVariables)
	api.Register(a, api.Op{ID: "get-project-variable", Method: http.MethodGet, Path: "/projects/{id}/variables/{key}", Tags: tags,
		Summary: "A CI variable", Access: api.SignedIn}, s.getVariable)
	api.Register(a, api.Op{ID: "create-project-variable", Method: http.MethodPost, Path: "/projects/{id}/variables", Tags: tags,
		Summary: "Create a CI variable", Access: api.SignedIn}, s.createVariableAPI)
	api.Register(a, api.Op{ID: "update-project-variable", Method: http.MethodPut, Path: "/projects/{id}/variables/{key}", Tags: tags,
		Summary: "Edit a CI variable", Access: api.SignedIn}, s.updateVariable)
	api.Register(a, api.Op{ID: "delete-project-variable", Method: http.MethodDelete, Path: "/projects/{id}/variables/{key}", Tags: tags,
		Summary: "Delete a CI variable (answers it)", Access: api.SignedIn, Status: http.StatusOK}, s.deleteVariable)
}

func (s *Service) listGroupVariables(ctx context.Context, in *struct {
	GroupPath
	api.PageParams
}) (*variablesOutput, error) {
	list, total, err := s.GroupVariables(ctx, in.ID, in.Offset(), in.Limit())
	return variablesAnswer(ctx, in.PageParams, list, total, err)
}

func (s *Service) createGroupVariable(ctx context.Context, in *struct {
	GroupPath
	Body groupVariableCreate
}) (*variableOutput, error) {
	return variableAnswer(s.CreateGroupVariable(ctx, in.ID, cicd.VariableFields{Key: in.Body.Key, Value: in.Body.Value, Protected: in.Body.Protected}))
}

func (s *Service) registerGroupVariables(a *api.API) {
	tags := []string{"variables"}
	api.Register(a, api.Op{ID: "list-group-variables", Method: http.MethodGet, Path: "/groups/{id}/variables", Tags: tags,
		Summary: "A group's CI variables (Master)", Access: api.SignedIn}, s.listGroupVariables)
	api.Register(a, api.Op{ID: "get-group-variable", Method: http.MethodGet, Path: "/groups/{id}/variables/{key}", Tags: tags,
		Summary: "A group CI variable", Access: api.SignedIn}, func(ctx context.Context, in *GroupVariablePath) (*variableOutput, error) {
		return variableAnswer(s.GroupVariable(ctx, in.ID, in.Key))
	})
	api.Register(a, api.Op{ID: "create-group-variable", Method: http.MethodPost, Path: "/groups/{id}/variables", Tags: tags,
		Summary: "Create a group CI variable", Access: api.SignedIn}, s.createGroupVariable)
	api.Register(a, api.Op{ID: "update-group-variable", Method: http.MethodPut, Path: "/groups/{id}/variables/{key}", Tags: tags,
		Summary: "Edit a group CI variable", Access: api.SignedIn}, func(ctx context.Context, in *struct {
		GroupVariablePath
		Body variableBody
	}) (*variableOutput, error) {
		return variableAnswer(s.UpdateGroupVariable(ctx, in.ID, in.Key, in.Body.fields()))
	})
	api.Register(a, api.Op{ID: "delete-group-variable", Method: http.MethodDelete, Path: "/groups/{id}/variables/{key}", Tags: tags,
		Summary: "Delete a group CI variable (answers it)", Access: api.SignedIn, Status: http.StatusOK}, func(ctx context.Context, in *GroupVariablePath) (*variableOutput, error) {
		return variableAnswer(s.DeleteGroupVariable(ctx, in.ID, in.Key))
	})
}
