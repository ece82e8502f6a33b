package internal

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/repository/merge"
)

// POST /projects/:id/repository/commits/:sha/revert: a new commit on a
// branch that undoes a commit's change. It is the cherry-pick turned
// around: the merge engine merges the branch's head with the commit's
// parent, taking the commit itself as the base, so what the commit
// changed is changed back wherever the branch still has it. A merge commit
// is reverted against its first parent (git revert -m 1, as GitLab does
// for a merged merge request); a root commit against the empty tree.
//
// The caller is author and committer. The message is GitLab's:
// `Revert "<title>"`, a blank line, `This reverts commit <sha>` (GitLab
// names the merge request instead when the commit merged one: the
// repository module does not know merge requests, so it always names the
// commit).

// errCannotRevert: the revert does not apply cleanly, or leaves nothing to
// commit.
var errCannotRevert = errors.New("repository: the commit cannot be reverted")

// revertTree is head's tree with c's change undone: errCannotRevert when
// that conflicts or changes nothing.
func revertTree(s storer.EncodedObjectStorer, head, c *object.Commit) (plumbing.Hash, error) {
	ours, err := head.Tree()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	base, err := c.Tree()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var theirs *object.Tree // a root commit: back to the empty tree
	if c.NumParents() > 0 {
		parent, err := c.Parent(0)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if theirs, err = parent.Tree(); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	res, err := merge.MergeTrees(s, base, ours, theirs, merge.Options{})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if !res.Clean || res.Tree == ours.Hash {
		return plumbing.ZeroHash, errCannotRevert
	}
	return res.Tree, nil
}

// Revert commits on branch a new commit undoing commit sha's change (see
// the top of the file); errCannotRevert when that does not apply.
func (w *Writer) Revert(ctx context.Context, project, sha, branch string) (*object.Commit, error) {
	op, err := w.openCommitOnBranch(ctx, project, sha, branch)
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
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: plumbing.NewBranchReferenceName(branch), Old: head.Hash(), New: hash}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return nil, invalid("The branch moved while reverting; try again")
		}
		return nil, err
	}
	return repo.CommitObject(hash)
}
