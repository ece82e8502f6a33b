package internal

// The HTTP adapter of refs.go: routes, request inputs, GitLab views and
// status codes; the service side stays in refs.go.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
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
	info, repo, err := w.rd.open(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	if _, err := branchRef(repo, in.Branch); err != nil {
		return nil, ErrBranchNotFound
	}
	err = w.db.Update(ctx, func(tx *store.Tx) error {
		p, err := protections.GetBy(tx, "branch", refKey(uint64(info.ID), in.Branch))
		switch {
		case errors.Is(err, store.ErrNotFound) && on:
			return protections.Insert(tx, &Protection{ProjectID: uint64(info.ID), Name: in.Branch,
				DevelopersCanPush: in.Body.DevelopersCanPush, DevelopersCanMerge: in.Body.DevelopersCanMerge})
		case err != nil:
			if errors.Is(err, store.ErrNotFound) {
				return nil // unprotecting an unprotected branch changes nothing
			}
			return err
		case on:
			// The older endpoint knows two levels per action, as GitLab
			// 9.x's did: developers, or masters (never "no one").
			p.DevelopersCanPush, p.DevelopersCanMerge = in.Body.DevelopersCanPush, in.Body.DevelopersCanMerge
			p.NoOneCanPush, p.NoOneCanMerge = false, false
			return protections.Update(tx, p)
		default:
			return protections.Delete(tx, p.ID)
		}
	})
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
	info, repo, err := w.rd.open(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	// The objects written below are unreachable until the ref moves; a
	// repack in between would drop them as garbage. Hold the repository's
	// maintenance lock shared, as pushes do, until the ref has moved.
	maint := w.rd.store.maintenanceLock(info.ID)
	maint.RLock()
	defer maint.RUnlock()
	b := in.Body
	if !validTagName(b.TagName) {
		return nil, &tagRefusal{"Tag name invalid"}
	}
	mayPushProtected := func() bool { ok, _ := w.rd.access.Can(ctx, in.ID, projects.PushProtected); return ok }
	if branch, err := w.hiddenProtected(ctx, info.ID, plumbing.NewTagReferenceName(b.TagName).String(), mayPushProtected); err != nil {
		return nil, err
	} else if branch != "" {
		return nil, &tagRefusal{"Tag " + b.TagName + " would hide the protected branch " + branch}
	}
	c, err := resolveCommit(repo, b.Ref, info.DefaultBranch)
	if err != nil {
		return nil, &tagRefusal{"Target " + b.Ref + " is invalid"}
	}
	name := plumbing.NewTagReferenceName(b.TagName)
	if _, err := repo.Reference(name, false); err == nil {
		return nil, &tagRefusal{"Tag " + b.TagName + " already exists"}
	}
	target := c.Hash
	if b.Message != nil && strings.TrimSpace(*b.Message) != "" {
		pr := auth.FromContext(ctx)
		tagger := object.Signature{Name: pr.User.Username, Email: pr.User.Username + "@users.noreply.fennec", When: time.Now()}
		tag := &object.Tag{Name: b.TagName, Tagger: tagger, Message: strings.TrimSpace(*b.Message) + "\n", TargetType: plumbing.CommitObject, Target: c.Hash}
		obj := repo.Storer.NewEncodedObject()
		if err := tag.Encode(obj); err != nil {
			return nil, err
		}
		if target, err = repo.Storer.SetEncodedObject(obj); err != nil {
			return nil, err
		}
	}
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: name, New: target}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return nil, &tagRefusal{"Tag " + b.TagName + " already exists"}
		}
		return nil, err
	}
	if b.ReleaseDescription != nil && *b.ReleaseDescription != "" {
		if err := w.db.Update(ctx, func(tx *store.Tx) error {
			return insertRelease(tx, newRelease(ctx, info.ID, b.TagName, c.Hash.String(), b.ReleaseDescription))
		}); err != nil {
			return nil, err
		}
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
