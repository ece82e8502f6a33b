package internal

// The HTTP adapter of protectedbranches.go: routes, request inputs, GitLab views and
// status codes; the service side stays in protectedbranches.go.

import (
	"context"
	"errors"
	"net/http"

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
	all, _, err := w.Protections(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out := &protectedBranchesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(all)), Body: []ProtectedBranchView{}}
	for _, p := range api.Window(all, in.PageParams) {
		out.Body = append(out.Body, protectedBranchView(p))
	}
	return out, nil
}

func (w *Writer) createProtectedBranch(ctx context.Context, in *createProtectedBranchInput) (*protectedBranchOutput, error) {
	p, err := w.CreateProtection(ctx, in.ID, in.Body.Name, in.Body.PushAccessLevel, in.Body.MergeAccessLevel)
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
	return nil, w.DeleteProtection(ctx, in.ID, in.Name)
}
