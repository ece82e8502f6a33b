package internal

// The HTTP adapter of protectedbranches.go: routes, request inputs, GitLab views and
// status codes; the service side stays in protectedbranches.go.

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

type protectedBranchesInput struct {
	ProjectPath
	api.PageParams
}

type protectedBranchesOutput struct {
	api.PageHeaders
	Body []ProtectedBranchView
}

// accessLevel validates an optional level; absent is masters.
func accessLevel(param string, v *int) (int, error) {
	if v == nil {
		return levelMaster, nil
	}
	switch *v {
	case levelNoOne, levelDeveloper, levelMaster:
		return *v, nil
	}
	return 0, api.NotValidValue(param)
}

func (w *Writer) registerProtectedBranches(a *api.API) {
	tags := []string{"protected_branches"}
	// All four need Master (GitLab 9.x: authorize_admin_project), the
	// listing too: it tells who may push where.
	api.Register(a, api.Op{ID: "list-protected-branches", Method: http.MethodGet, Path: "/projects/{id}/protected_branches", Tags: tags,
		Summary: "A project's protected branches and wildcards, oldest first (Masters)", Access: api.SignedIn}, w.listProtectedBranches)
	api.Register(a, api.Op{ID: "get-protected-branch", Method: http.MethodGet, Path: "/projects/{id}/protected_branches/{name}", Tags: tags,
		Summary: "One protected branch or wildcard, by its exact name (Masters)", Access: api.SignedIn}, w.getProtectedBranch)
	api.Register(a, api.Op{ID: "create-protected-branch", Method: http.MethodPost, Path: "/projects/{id}/protected_branches", Tags: tags,
		Summary: "Protect a branch or a wildcard; the branch need not exist (Masters)", Access: api.SignedIn}, w.createProtectedBranch)
	api.Register(a, api.Op{ID: "delete-protected-branch", Method: http.MethodDelete, Path: "/projects/{id}/protected_branches/{name}", Tags: tags,
		Summary: "Unprotect a branch or a wildcard (Masters)", Access: api.SignedIn}, w.deleteProtectedBranch)
}

func (w *Writer) listProtectedBranches(ctx context.Context, in *protectedBranchesInput) (*protectedBranchesOutput, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	var all []*Protection
	err = w.db.View(ctx, func(tx *store.Tx) error {
		ids, err := protections.IDsBy(tx, "project", store.IDString(info.ID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			p, err := protections.Get(tx, id)
			if err != nil {
				return err
			}
			all = append(all, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	out := &protectedBranchesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(all)), Body: []ProtectedBranchView{}}
	for _, p := range api.Window(all, in.PageParams) {
		out.Body = append(out.Body, protectedBranchView(p))
	}
	return out, nil
}

func (w *Writer) createProtectedBranch(ctx context.Context, in *createProtectedBranchInput) (*protectedBranchOutput, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	push, err := accessLevel("push_access_level", in.Body.PushAccessLevel)
	if err != nil {
		return nil, err
	}
	merge, err := accessLevel("merge_access_level", in.Body.MergeAccessLevel)
	if err != nil {
		return nil, err
	}
	name := in.Body.Name
	if strings.TrimSpace(name) == "" {
		// GitLab 9.x: the model's validation, 422 with its full messages.
		return nil, &api.Error{Status: http.StatusUnprocessableEntity, Message: []string{"Name can't be blank"}}
	}
	p := &Protection{ProjectID: info.ID, Name: name}
	p.setLevels(push, merge)
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := protections.GetBy(tx, "branch", refKey(p.ProjectID, name)); err == nil {
			return api.Conflict("Protected branch '" + name + "' already exists")
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return protections.Insert(tx, p)
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		err = api.Conflict("Protected branch '" + name + "' already exists")
	}
	if err != nil {
		return nil, err
	}
	v := protectedBranchView(p)
	return &protectedBranchOutput{Body: &v}, nil
}

type protectedBranchInput struct {
	ProjectPath
	Name string `path:"name" doc:"Branch name or wildcard (release-*), URL-encoded"`
}

type createProtectedBranchInput struct {
	ProjectPath
	Body struct {
		Name             string `json:"name" required:"true" doc:"Branch name or wildcard (release-*)"`
		PushAccessLevel  *int   `json:"push_access_level,omitempty" doc:"0 (no one), 30 (developers and masters) or 40 (masters, the default)"`
		MergeAccessLevel *int   `json:"merge_access_level,omitempty" doc:"0 (no one), 30 (developers and masters) or 40 (masters, the default)"`
	}
}

type protectedBranchOutput struct{ Body *ProtectedBranchView }

func (w *Writer) getProtectedBranch(ctx context.Context, in *protectedBranchInput) (*protectedBranchOutput, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	var p *Protection
	err = w.db.View(ctx, func(tx *store.Tx) error {
		var err error
		p, err = protections.GetBy(tx, "branch", refKey(info.ID, in.Name))
		if errors.Is(err, store.ErrNotFound) {
			return errProtectionNotFound
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	v := protectedBranchView(p)
	return &protectedBranchOutput{Body: &v}, nil
}

func (w *Writer) deleteProtectedBranch(ctx context.Context, in *protectedBranchInput) (*struct{}, error) {
	info, err := w.rd.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	return nil, w.db.Update(ctx, func(tx *store.Tx) error {
		p, err := protections.GetBy(tx, "branch", refKey(info.ID, in.Name))
		if errors.Is(err, store.ErrNotFound) {
			return errProtectionNotFound
		}
		if err != nil {
			return err
		}
		return protections.Delete(tx, p.ID)
	})
}
