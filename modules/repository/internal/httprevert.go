package internal

// The HTTP adapter of revert.go: routes, request inputs, GitLab views and
// status codes; the service side stays in revert.go.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
)

// cannotRevert is GitLab's answer for a revert that does not apply.
func cannotRevert() *api.Error {
	return api.BadRequest("Sorry, we cannot revert this commit automatically. " +
		"This commit may already have been reverted, or a more recent commit may have updated some of its content.")
}

func (w *Writer) revert(ctx context.Context, in *revertInput) (*struct{ Body *CommitView }, error) {
	op, err := w.openCommitOnBranch(ctx, in.ID, in.SHA, in.Body.Branch)
	if err != nil {
		return nil, err
	}
	defer op.unlock()
	info, repo, c, head := op.info, op.repo, op.commit, op.head
	headCommit, err := repo.CommitObject(head.Hash())
	if err != nil {
		return nil, err
	}
	tree, err := revertTree(repo.Storer, headCommit, c)
	if errors.Is(err, errCannotRevert) {
		return nil, cannotRevert()
	}
	if err != nil {
		return nil, err
	}
	pr := auth.FromContext(ctx)
	sig := object.Signature{Name: pr.User.Username, Email: pr.User.Username, When: time.Now()}
	if u, err := w.users.UserByID(ctx, pr.UserID()); err == nil {
		sig.Name, sig.Email = u.Name, u.Email
	}
	title, _, _ := strings.Cut(c.Message, "\n")
	msg := `Revert "` + strings.TrimSpace(title) + `"` + "\n\nThis reverts commit " + c.Hash.String()
	reverted := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: []plumbing.Hash{head.Hash()}}
	obj := repo.Storer.NewEncodedObject()
	if err := reverted.Encode(obj); err != nil {
		return nil, err
	}
	hash, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return nil, err
	}
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: plumbing.NewBranchReferenceName(in.Body.Branch), Old: head.Hash(), New: hash}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return nil, api.BadRequest("The branch moved while reverting; try again")
		}
		return nil, err
	}
	created, err := repo.CommitObject(hash)
	if err != nil {
		return nil, err
	}
	v := commitView(created)
	return &struct{ Body *CommitView }{Body: &v}, nil
}

func (w *Writer) registerRevert(a *api.API) {
	api.Register(a, api.Op{ID: "revert-commit", Method: http.MethodPost, Path: "/projects/{id}/repository/commits/{sha}/revert",
		Tags: []string{"repository"}, Summary: "Undo a commit's change in a new commit on a branch", Access: api.SignedIn}, w.revert)
}

type revertInput struct {
	ProjectPath
	SHA  string `path:"sha" doc:"The commit to revert"`
	Body struct {
		Branch string `json:"branch" required:"true" doc:"The branch to commit the revert to"`
	}
}
