package internal

// The CI variables of projects and groups (cicd.Service). Group variables
// follow GitLab v4 (9.x): /groups/:id/variables with the project
// variable's shape, for the group's Masters and Owners (and
// administrators); anyone else who sees the group gets 403, who does not
// 404 Group Not Found. Values are sealed as a project's. Every job of a
// project of the group, or of a subgroup below it, receives them; a nearer
// group's variable of the same key wins over a farther one's and a project
// variable over both, protected ones reach protected refs only, and they
// are masked in traces as project variables are (handover.go).
// httpvariables.go is the API over them.

import (
	"context"
	"errors"
	"regexp"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
	projectevent "github.com/fennec-forge/fennec/modules/projects/event"
)

// purposeVariable is what variable values are sealed for (core/sealed).
const purposeVariable = "ci.variable"

var variableKeyRule = regexp.MustCompile(`^[a-zA-Z0-9_]{1,255}$`)

// variableOwner is whose variables a command works on: a project's, or a
// group's (GroupID set).
type variableOwner struct {
	projectID, groupID int64
}

// list is the index and key that list the owner's variables.
func (o variableOwner) list() (index, key string) {
	if o.groupID != 0 {
		return "group", store.IDString(o.groupID)
	}
	return "project", store.IDString(o.projectID)
}

// row is a new variable of the owner.
func (o variableOwner) row(key, sealed string) *Variable {
	return &Variable{ProjectID: o.projectID, GroupID: o.groupID, Key: key, Value: sealed}
}

func variableOwnerKey(v *Variable) string {
	if v.GroupID != 0 {
		return "g" + store.IDString(v.GroupID)
	}
	return store.IDString(v.ProjectID)
}

// projectVariables resolves a project for its variables: Masters.
func (s *Service) projectVariables(ctx context.Context, project string) (variableOwner, error) {
	info, err := s.access.Require(ctx, project, projects.AdminProject)
	return variableOwner{projectID: info.ID}, err
}

// groupVariables resolves a group for its variables: its Masters and
// Owners.
func (s *Service) groupVariables(ctx context.Context, group string) (variableOwner, error) {
	g, err := s.teams.ResolveGroup(ctx, group)
	if err != nil {
		return variableOwner{}, err
	}
	if g.Level < projects.Master {
		return variableOwner{}, projects.ErrForbidden
	}
	return variableOwner{groupID: g.ID}, nil
}

// groupVariableIDs are the ids of the variables of the group owning the
// project and of the groups above it (ProjectInfo.GroupIDs; none for a
// personal project), the farthest group's first: a later variable of a
// key takes an earlier one's place, so a nearer group's wins over a
// farther one's, and the project's (after them all) over every group's.
func (s *Service) groupVariableIDs(ctx context.Context, projectID int64) ([]int64, error) {
	info, err := s.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), projectID)
	if errors.Is(err, projects.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []int64
	err = s.db.View(ctx, func(tx *store.Tx) error {
		for n := len(info.GroupIDs) - 1; n >= 0; n-- {
			more, err := variables.IDsBy(tx, "group", store.IDString(info.GroupIDs[n]))
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
		return nil
	})
	return ids, err
}

// onGroupDeleted deletes a deleted group's variables (secrets kept for no
// one) in the transaction that acknowledges the event; each subgroup has
// its own event. A repeat finds none left.
func (s *Service) onGroupDeleted(ctx context.Context, ev projectevent.GroupEvent) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		_, err := variables.DeleteBy(tx, "group", store.IDString(ev.GroupID))
		return err
	})
}

// withGroupVariables puts the group's variable ids before the project's.
func withGroupVariables(_ *store.Tx, group, project []int64) ([]int64, error) {
	return append(append([]int64(nil), group...), project...), nil
}

func (s *Service) variableRecord(v *Variable) (cicd.SecretVariable, error) {
	plain, err := s.box.Unseal(v.Value, purposeVariable)
	return cicd.SecretVariable{Key: v.Key, Value: plain, Protected: v.Protected}, err
}

// variables lists the owner's variables, a page of them unsealed.
func (s *Service) variables(ctx context.Context, o variableOwner, err error, offset, limit int) ([]cicd.SecretVariable, int, error) {
	if err != nil {
		return nil, 0, err
	}
	var list []*Variable
	err = s.db.View(ctx, func(tx *store.Tx) error {
		index, key := o.list()
		ids, err := variables.IDsBy(tx, index, key)
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
		return nil, 0, err
	}
	out := []cicd.SecretVariable{}
	for _, v := range store.Window(list, offset, limit) {
		r, err := s.variableRecord(v)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, len(list), nil
}

// variableOp loads the owner's variable of a key for op (in a write
// transaction when write) and returns it as op leaves it.
func (s *Service) variableOp(ctx context.Context, o variableOwner, err error, key string, write bool, op func(tx *store.Tx, v *Variable) error) (cicd.SecretVariable, error) {
	if err != nil {
		return cicd.SecretVariable{}, err
	}
	var v *Variable
	fn := func(tx *store.Tx) error {
		var err error
		v, err = variables.GetBy(tx, "key", variableOwnerKey(o.row("", ""))+"/"+key)
		if errors.Is(err, store.ErrNotFound) {
			return cicd.ErrVariableNotFound
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
		return cicd.SecretVariable{}, err
	}
	return s.variableRecord(v)
}

func noVariableOp(*store.Tx, *Variable) error { return nil }

// changeVariable applies an update's value and protection.
func (s *Service) changeVariable(in cicd.VariableFields) func(tx *store.Tx, v *Variable) error {
	return func(tx *store.Tx, v *Variable) error {
		if in.Value != nil {
			v.Value = s.box.Seal(*in.Value, purposeVariable)
		}
		if in.Protected != nil {
			v.Protected = *in.Protected
		}
		return variables.Update(tx, v)
	}
}

func deleteVariable(tx *store.Tx, v *Variable) error { return variables.Delete(tx, v.ID) }

// createVariable stores a new variable of the owner.
func (s *Service) createVariable(ctx context.Context, o variableOwner, err error, in cicd.VariableFields) (cicd.SecretVariable, error) {
	if err != nil {
		return cicd.SecretVariable{}, err
	}
	switch {
	case in.Key == nil && in.Value == nil:
		return cicd.SecretVariable{}, &cicd.MissingError{Fields: []string{"key", "value"}}
	case in.Key == nil:
		return cicd.SecretVariable{}, &cicd.MissingError{Fields: []string{"key"}}
	case in.Value == nil:
		return cicd.SecretVariable{}, &cicd.MissingError{Fields: []string{"value"}}
	case !variableKeyRule.MatchString(*in.Key):
		return cicd.SecretVariable{}, cicd.ErrInvalidVariableKey
	}
	v := o.row(*in.Key, s.box.Seal(*in.Value, purposeVariable))
	if in.Protected != nil {
		v.Protected = *in.Protected
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		err := variables.Insert(tx, v)
		var conflict *store.ConflictError
		if errors.As(err, &conflict) {
			return cicd.ErrVariableKeyTaken
		}
		return err
	})
	if err != nil {
		return cicd.SecretVariable{}, err
	}
	return cicd.SecretVariable{Key: v.Key, Value: *in.Value, Protected: v.Protected}, nil
}

// ProjectVariables implements cicd.Service.
func (s *Service) ProjectVariables(ctx context.Context, project string, offset, limit int) ([]cicd.SecretVariable, int, error) {
	o, err := s.projectVariables(ctx, project)
	return s.variables(ctx, o, err, offset, limit)
}

// ProjectVariable implements cicd.Service.
func (s *Service) ProjectVariable(ctx context.Context, project, key string) (cicd.SecretVariable, error) {
	o, err := s.projectVariables(ctx, project)
	return s.variableOp(ctx, o, err, key, false, noVariableOp)
}

// CreateProjectVariable implements cicd.Service.
func (s *Service) CreateProjectVariable(ctx context.Context, project string, in cicd.VariableFields) (cicd.SecretVariable, error) {
	o, err := s.projectVariables(ctx, project)
	return s.createVariable(ctx, o, err, in)
}

// UpdateProjectVariable implements cicd.Service.
func (s *Service) UpdateProjectVariable(ctx context.Context, project, key string, in cicd.VariableFields) (cicd.SecretVariable, error) {
	o, err := s.projectVariables(ctx, project)
	return s.variableOp(ctx, o, err, key, true, s.changeVariable(in))
}

// DeleteProjectVariable implements cicd.Service.
func (s *Service) DeleteProjectVariable(ctx context.Context, project, key string) (cicd.SecretVariable, error) {
	o, err := s.projectVariables(ctx, project)
	return s.variableOp(ctx, o, err, key, true, deleteVariable)
}

// GroupVariables implements cicd.Service.
func (s *Service) GroupVariables(ctx context.Context, group string, offset, limit int) ([]cicd.SecretVariable, int, error) {
	o, err := s.groupVariables(ctx, group)
	return s.variables(ctx, o, err, offset, limit)
}

// GroupVariable implements cicd.Service.
func (s *Service) GroupVariable(ctx context.Context, group, key string) (cicd.SecretVariable, error) {
	o, err := s.groupVariables(ctx, group)
	return s.variableOp(ctx, o, err, key, false, noVariableOp)
}

// CreateGroupVariable implements cicd.Service.
func (s *Service) CreateGroupVariable(ctx context.Context, group string, in cicd.VariableFields) (cicd.SecretVariable, error) {
	o, err := s.groupVariables(ctx, group)
	return s.createVariable(ctx, o, err, in)
}

// UpdateGroupVariable implements cicd.Service.
func (s *Service) UpdateGroupVariable(ctx context.Context, group, key string, in cicd.VariableFields) (cicd.SecretVariable, error) {
	o, err := s.groupVariables(ctx, group)
	return s.variableOp(ctx, o, err, key, true, s.changeVariable(in))
}

// DeleteGroupVariable implements cicd.Service.
func (s *Service) DeleteGroupVariable(ctx context.Context, group, key string) (cicd.SecretVariable, error) {
	o, err := s.groupVariables(ctx, group)
	return s.variableOp(ctx, o, err, key, true, deleteVariable)
}
