package internal

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Group CI variables follow GitLab v4 (9.x): /groups/:id/variables with the
// project variable's shape, for the group's Masters and Owners (and
// administrators); anyone else who sees the group gets 403, who does not
// 404 Group Not Found. Values are sealed as a project's. Every job of a
// project of the group, or of a subgroup below it, receives them; a nearer
// group's variable of the same key wins over a farther one's and a project
// variable over both, protected ones reach protected refs only, and they
// are masked in traces as project variables are (handover.go).

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

type groupVariableCreate struct {
	Key       *string `json:"key,omitempty" required:"true"`
	Value     *string `json:"value,omitempty" required:"true"`
	Protected *bool   `json:"protected,omitempty"`
}

func variableOwnerKey(v *Variable) string {
	if v.GroupID != 0 {
		return "g" + u64(v.GroupID)
	}
	return u64(v.ProjectID)
}

// groupVariableIDs are the ids of the variables of the group owning the
// project and of the groups above it (ProjectInfo.GroupIDs; none for a
// personal project), the farthest group's first: a later variable of a
// key takes an earlier one's place, so a nearer group's wins over a
// farther one's, and the project's (after them all) over every group's.
func (s *Service) groupVariableIDs(ctx context.Context, projectID uint64) ([]uint64, error) {
	info, err := s.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), int64(projectID))
	if errors.Is(err, projects.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []uint64
	err = s.db.View(ctx, func(tx *store.Tx) error {
		for n := len(info.GroupIDs) - 1; n >= 0; n-- {
			more, err := variables.IDsBy(tx, "group", u64(uint64(info.GroupIDs[n])))
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
		return nil
	})
	return ids, err
}

// withGroupVariables puts the group's variable ids before the project's.
func withGroupVariables(_ *store.Tx, group, project []uint64) ([]uint64, error) {
	return append(append([]uint64(nil), group...), project...), nil
}

// adminGroupVariables resolves :id for the variables API.
func (s *Service) adminGroupVariables(ctx context.Context, ref string) (projects.GroupInfo, error) {
	g, err := s.teams.ResolveGroup(ctx, ref)
	if err != nil {
		return g, err
	}
	if g.Level < projects.Master {
		return g, projects.ErrForbidden
	}
	return g, nil
}

func (s *Service) listGroupVariables(ctx context.Context, in *struct {
	GroupPath
	api.PageParams
}) (*variablesOutput, error) {
	g, err := s.adminGroupVariables(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var list []*Variable
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := variables.IDsBy(tx, "group", u64(uint64(g.ID)))
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

// groupVariableOp loads a group variable by key for an operation (in a
// write transaction when write).
func (s *Service) groupVariableOp(ctx context.Context, in GroupVariablePath, write bool, op func(tx *store.Tx, v *Variable) error) (*variableOutput, error) {
	g, err := s.adminGroupVariables(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var v *Variable
	fn := func(tx *store.Tx) error {
		var err error
		v, err = variables.GetBy(tx, "key", "g"+u64(uint64(g.ID))+"/"+in.Key)
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

func (s *Service) createGroupVariable(ctx context.Context, in *struct {
	GroupPath
	Body groupVariableCreate
}) (*variableOutput, error) {
	g, err := s.adminGroupVariables(ctx, in.ID)
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
	v := &Variable{GroupID: uint64(g.ID), Key: *in.Body.Key, Value: s.box.Seal(*in.Body.Value, purposeVariable)}
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

func (s *Service) registerGroupVariables(a *api.API) {
	tags := []string{"variables"}
	api.Register(a, api.Op{ID: "list-group-variables", Method: http.MethodGet, Path: "/groups/{id}/variables", Tags: tags,
		Summary: "A group's CI variables (Master)", Access: api.SignedIn}, s.listGroupVariables)
	api.Register(a, api.Op{ID: "get-group-variable", Method: http.MethodGet, Path: "/groups/{id}/variables/{key}", Tags: tags,
		Summary: "A group CI variable", Access: api.SignedIn}, func(ctx context.Context, in *GroupVariablePath) (*variableOutput, error) {
		return s.groupVariableOp(ctx, *in, false, func(*store.Tx, *Variable) error { return nil })
	})
	api.Register(a, api.Op{ID: "create-group-variable", Method: http.MethodPost, Path: "/groups/{id}/variables", Tags: tags,
		Summary: "Create a group CI variable", Access: api.SignedIn}, s.createGroupVariable)
	api.Register(a, api.Op{ID: "update-group-variable", Method: http.MethodPut, Path: "/groups/{id}/variables/{key}", Tags: tags,
		Summary: "Edit a group CI variable", Access: api.SignedIn}, func(ctx context.Context, in *struct {
		GroupVariablePath
		Body variableBody
	}) (*variableOutput, error) {
		return s.groupVariableOp(ctx, in.GroupVariablePath, true, func(tx *store.Tx, v *Variable) error {
			if in.Body.Value != nil {
				v.Value = s.box.Seal(*in.Body.Value, purposeVariable)
			}
			if in.Body.Protected != nil {
				v.Protected = *in.Body.Protected
			}
			return variables.Update(tx, v)
		})
	})
	api.Register(a, api.Op{ID: "delete-group-variable", Method: http.MethodDelete, Path: "/groups/{id}/variables/{key}", Tags: tags,
		Summary: "Delete a group CI variable (answers it)", Access: api.SignedIn, Status: http.StatusOK}, func(ctx context.Context, in *GroupVariablePath) (*variableOutput, error) {
		return s.groupVariableOp(ctx, *in, true, func(tx *store.Tx, v *Variable) error { return variables.Delete(tx, v.ID) })
	})
}
