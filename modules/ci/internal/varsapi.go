package internal

import (
	"context"
	"errors"
	"net/http"
	"regexp"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// purposeVariable is what variable values are sealed for (core/sealed).
const purposeVariable = "ci.variable"

// VariableView is a project variable as GitLab 9.x shows it.
type VariableView struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	Protected bool   `json:"protected"`
}

var variableKeyRule = regexp.MustCompile(`^[a-zA-Z0-9_]{1,255}$`)

// VariablePath is a variable's :id and :key; exported so that an
// operation's input can embed it (huma skips unexported embedded structs:
// an edit saw no project and answered 404).
type VariablePath struct {
	ProjectPath
	Key string `path:"key"`
}

type variableBody struct {
	Key       *string `json:"key,omitempty"`
	Value     *string `json:"value,omitempty"`
	Protected *bool   `json:"protected,omitempty"`
}

type variablesOutput struct {
	api.PageHeaders
	Body []VariableView
}

type variableOutput struct {
	Body *VariableView
}

func (s *Service) variableView(v *Variable) (VariableView, error) {
	plain, err := s.box.Unseal(v.Value, purposeVariable)
	return VariableView{Key: v.Key, Value: plain, Protected: v.Protected}, err
}

func (s *Service) listVariables(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
}) (*variablesOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	var list []*Variable
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := variables.IDsBy(tx, "project", u64(uint64(info.ID)))
		if err != nil {
			return err
		}
		for _, id := range ids {
			v, err := variables.Get(tx, id)
			if err != nil {
				return err
			}
			list = append(list, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &variablesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(list)), Body: []VariableView{}}
	for _, v := range api.Window(list, in.PageParams) {
		view, err := s.variableView(v)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, view)
	}
	return out, nil
}

func (s *Service) getVariable(ctx context.Context, in *VariablePath) (*variableOutput, error) {
	return s.variableOp(ctx, *in, false, func(tx *store.Tx, v *Variable) error { return nil })
}

// variableOp loads a variable by key for an operation (in a write
// transaction when write).
func (s *Service) variableOp(ctx context.Context, in VariablePath, write bool, op func(tx *store.Tx, v *Variable) error) (*variableOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	var v *Variable
	fn := func(tx *store.Tx) error {
		var err error
		v, err = variables.GetBy(tx, "key", u64(uint64(info.ID))+"/"+in.Key)
		if errors.Is(err, store.ErrNotFound) {
			return api.NotFound("Variable")
		}
		if err != nil {
			return err
		}
		return op(tx, v)
	}
	if write {
		err = s.db.Update(ctx, fn)
	} else {
		err = s.db.View(ctx, fn)
	}
	if err != nil {
		return nil, err
	}
	view, err := s.variableView(v)
	if err != nil {
		return nil, err
	}
	return &variableOutput{Body: &view}, nil
}

func (s *Service) createVariable(ctx context.Context, in *struct {
	ProjectPath
	Body variableBody
}) (*variableOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	switch {
	case in.Body.Key == nil && in.Body.Value == nil:
		return nil, api.Missing("key", "value")
	case in.Body.Key == nil:
		return nil, api.Missing("key")
	case in.Body.Value == nil:
		return nil, api.Missing("value")
	case !variableKeyRule.MatchString(*in.Body.Key):
		return nil, api.FieldErrors{"key": {"can contain only letters, digits and '_'."}}
	}
	v := &Variable{ProjectID: uint64(info.ID), Key: *in.Body.Key, Value: s.box.Seal(*in.Body.Value, purposeVariable)}
	if in.Body.Protected != nil {
		v.Protected = *in.Body.Protected
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		err := variables.Insert(tx, v)
		var conflict *store.ConflictError
		if errors.As(err, &conflict) {
			return api.FieldErrors{"key": {"has already been taken"}}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	view := VariableView{Key: v.Key, Value: *in.Body.Value, Protected: v.Protected}
	return &variableOutput{Body: &view}, nil
}

func (s *Service) updateVariable(ctx context.Context, in *struct {
	VariablePath
	Body variableBody
}) (*variableOutput, error) {
	return s.variableOp(ctx, in.VariablePath, true, func(tx *store.Tx, v *Variable) error {
		if in.Body.Value != nil {
			v.Value = s.box.Seal(*in.Body.Value, purposeVariable)
		}
		if in.Body.Protected != nil {
			v.Protected = *in.Body.Protected
		}
		return variables.Update(tx, v)
	})
}

func (s *Service) deleteVariable(ctx context.Context, in *VariablePath) (*variableOutput, error) {
	return s.variableOp(ctx, *in, true, func(tx *store.Tx, v *Variable) error {
		return variables.Delete(tx, v.ID)
	})
}

func (s *Service) registerVariables(a *api.API) {
	tags := []string{"variables"}
	api.Register(a, api.Op{ID: "list-project-variables", Method: http.MethodGet, Path: "/projects/{id}/variables", Tags: tags,
		Summary: "A project's CI variables (Master)", Access: api.SignedIn}, s.listVariables)
	api.Register(a, api.Op{ID: "get-project-variable", Method: http.MethodGet, Path: "/projects/{id}/variables/{key}", Tags: tags,
		Summary: "A CI variable", Access: api.SignedIn}, s.getVariable)
	api.Register(a, api.Op{ID: "create-project-variable", Method: http.MethodPost, Path: "/projects/{id}/variables", Tags: tags,
		Summary: "Create a CI variable", Access: api.SignedIn}, s.createVariable)
	api.Register(a, api.Op{ID: "update-project-variable", Method: http.MethodPut, Path: "/projects/{id}/variables/{key}", Tags: tags,
		Summary: "Edit a CI variable", Access: api.SignedIn}, s.updateVariable)
	api.Register(a, api.Op{ID: "delete-project-variable", Method: http.MethodDelete, Path: "/projects/{id}/variables/{key}", Tags: tags,
		Summary: "Delete a CI variable (answers it)", Access: api.SignedIn, Status: http.StatusOK}, s.deleteVariable)
}
