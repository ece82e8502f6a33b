package internal

// The HTTP adapter of refs.go: routes, request inputs, GitLab views and
// status codes; the service side stays in refs.go.

import (
	"context"
	"net/http"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

func (w *Writer) createBranch(ctx context.Context, in *createBranchInput) (*struct{ Body *BranchView }, error) {
	info, repo, err := w.CreateBranch(ctx, in.ID, in.Body.Branch, in.Body.Ref)
	if err != nil {
		return nil, err
	}
	return w.branchOut(ctx, info, repo, in.Body.Branch)
}

func (w *Writer) deleteBranch(ctx context.Context, in *branchInput) (*struct{}, error) {
	return nil, w.DeleteBranch(ctx, in.ID, in.Branch)
}

func (w *Writer) deleteTag(ctx context.Context, in *tagInput) (*struct{}, error) {
	return nil, w.DeleteTag(ctx, in.ID, in.Tag)
}

func (w *Writer) register(a *api.API) {
	w.registerCherryPick(a)
	w.registerCommits(a)
	w.registerReleases(a)
	w.registerProtectedBranches(a)
	tags := []string{"repository"}
	api.Register(a, api.Op{ID: "create-branch", Method: http.MethodPost, Path: "/projects/{id}/repository/branches", Tags: tags,
		Summary: "Create a branch", Access: api.SignedIn}, w.createBranch)
	api.Register(a, api.Op{ID: "delete-branch", Method: http.MethodDelete, Path: "/projects/{id}/repository/branches/{branch}", Tags: tags,
		Summary: "Delete a branch (not the default or a protected one)", Access: api.SignedIn}, w.deleteBranch)
	api.Register(a, api.Op{ID: "protect-branch", Method: http.MethodPut, Path: "/projects/{id}/repository/branches/{branch}/protect", Tags: tags,
		Summary: "Protect a branch", Access: api.SignedIn}, func(ctx context.Context, in *protectInput) (*struct{ Body *BranchView }, error) {
		return w.protect(ctx, in, true)
	})
	api.Register(a, api.Op{ID: "unprotect-branch", Method: http.MethodPut, Path: "/projects/{id}/repository/branches/{branch}/unprotect", Tags: tags,
		Summary: "Unprotect a branch", Access: api.SignedIn}, func(ctx context.Context, in *protectInput) (*struct{ Body *BranchView }, error) {
		return w.protect(ctx, in, false)
	})
	api.Register(a, api.Op{ID: "create-tag", Method: http.MethodPost, Path: "/projects/{id}/repository/tags", Tags: tags,
		Summary: "Create a tag (annotated with a message), optionally with release notes", Access: api.SignedIn}, w.createTag)
	api.Register(a, api.Op{ID: "delete-tag", Method: http.MethodDelete, Path: "/projects/{id}/repository/tags/{tag_name}", Tags: tags,
		Summary: "Delete a tag", Access: api.SignedIn}, w.deleteTag)
	api.Register(a, api.Op{ID: "create-release", Method: http.MethodPost, Path: "/projects/{id}/repository/tags/{tag_name}/release", Tags: tags,
		Summary: "Add release notes to a tag; 409 when it has some", Access: api.SignedIn}, func(ctx context.Context, in *releaseInput) (*struct{ Body *ReleaseView }, error) {
		return w.release(ctx, in, true)
	})
	api.Register(a, api.Op{ID: "update-release", Method: http.MethodPut, Path: "/projects/{id}/repository/tags/{tag_name}/release", Tags: tags,
		Summary: "Change a tag's release notes", Access: api.SignedIn}, func(ctx context.Context, in *releaseInput) (*struct{ Body *ReleaseView }, error) {
		return w.release(ctx, in, false)
	})
}

type createBranchInput struct {
	ProjectPath
	Body struct {
		Branch string `json:"branch" required:"true"`
		Ref    string `json:"ref" required:"true"`
	}
}

type protectInput struct {
	ProjectPath
	Branch string `path:"branch"`
	Body   struct {
		DevelopersCanPush  bool `json:"developers_can_push,omitempty"`
		DevelopersCanMerge bool `json:"developers_can_merge,omitempty"`
	}
}

func (w *Writer) protect(ctx context.Context, in *protectInput, on bool) (*struct{ Body *BranchView }, error) {
	info, repo, err := w.Protect(ctx, in.ID, in.Branch, on, in.Body.DevelopersCanPush, in.Body.DevelopersCanMerge)
	if err != nil {
		return nil, err
	}
	return w.branchOut(ctx, info, repo, in.Branch)
}

type createTagInput struct {
	ProjectPath
	Body struct {
		TagName            string  `json:"tag_name" required:"true"`
		Ref                string  `json:"ref" required:"true"`
		Message            *string `json:"message,omitempty"`
		ReleaseDescription *string `json:"release_description,omitempty"`
	}
}

func (w *Writer) createTag(ctx context.Context, in *createTagInput) (*struct{ Body *TagView }, error) {
	b := in.Body
	info, repo, err := w.CreateTag(ctx, in.ID, newTag{Name: b.TagName, Ref: b.Ref, Message: b.Message, ReleaseDescription: b.ReleaseDescription})
	if err != nil {
		return nil, err
	}
	return w.tagOut(ctx, info, repo, b.TagName)
}

func (w *Writer) branchOut(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, name string) (*struct{ Body *BranchView }, error) {
	r, err := branchRef(repo, name)
	if err != nil {
		return nil, ErrBranchNotFound
	}
	v, err := w.rd.branchView(repo, name, r.Hash())
	if err != nil {
		return nil, err
	}
	w.decorate(ctx, info, repo, &v)
	return &struct{ Body *BranchView }{Body: &v}, nil
}

// decorate fills protection and merged state.
func (w *Writer) decorate(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, v *BranchView) {
	// Display only: the writes check protection themselves and refuse.
	if p, err := w.protection(ctx, info.ID, v.Name); err != nil {
		w.log.Error("repository: branch protection unknown", zap.Int64("project", info.ID), zap.Error(err))
	} else if p != nil {
		v.Protected, v.DevelopersCanPush, v.DevelopersCanMerge = true, p.DevelopersCanPush, p.DevelopersCanMerge
	}
	if v.Name != info.DefaultBranch {
		if def, err := resolveCommit(repo, "", info.DefaultBranch); err == nil {
			if c, err := repo.CommitObject(plumbing.NewHash(v.Commit.ID)); err == nil {
				v.Merged, _ = c.IsAncestor(def)
			}
		}
	}
}

func (w *Writer) tagOut(ctx context.Context, info projects.ProjectInfo, repo *git.Repository, name string) (*struct{ Body *TagView }, error) {
	r, err := tagRef(repo, name)
	if err != nil {
		return nil, ErrTagNotFound
	}
	v, err := tagView(repo, r)
	if err != nil {
		return nil, err
	}
	w.attachRelease(ctx, info.ID, &v)
	return &struct{ Body *TagView }{Body: &v}, nil
}
