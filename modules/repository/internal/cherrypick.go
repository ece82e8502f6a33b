package internal

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/merge"
)

// commitOnBranch is what cherry-pick and revert start from: a commit of
// the project and the branch to commit onto, with the repository's
// maintenance lock held shared until unlock.
type commitOnBranch struct {
	info   projects.ProjectInfo
	repo   *git.Repository
	commit *object.Commit
	head   *plumbing.Reference
	unlock func()
}

// CherryPick applies a commit's change on top of a branch with the merge
// engine (base: the commit's parent), keeping its author and message; the
// caller is the committer. The branch moves by compare-and-set, so a push
// that lands meanwhile is not lost: the pick fails and can be retried.
func (w *Writer) CherryPick(ctx context.Context, project, sha, branchName string) (*object.Commit, error) {
	op, err := w.openCommitOnBranch(ctx, project, sha, branchName)
	if err != nil {
		return nil, err
	}
	defer op.unlock()
	info, repo, c, head := op.info, op.repo, op.commit, op.head
	branch := head.Name()
	if c.NumParents() > 1 {
		return nil, errCannotPick // merge commits need a mainline; not supported
	}
	headCommit, err := repo.CommitObject(head.Hash())
	if err != nil {
		return nil, err
	}
	ours, err := headCommit.Tree()
	if err != nil {
		return nil, err
	}
	theirs, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var base *object.Tree
	if c.NumParents() == 1 {
		parent, err := c.Parent(0)
		if err != nil {
			return nil, err
		}
		if base, err = parent.Tree(); err != nil {
			return nil, err
		}
	}
	res, err := merge.MergeTrees(repo.Storer, base, ours, theirs, merge.Options{})
	if err != nil {
		return nil, err
	}
	if !res.Clean || res.Tree == ours.Hash {
		return nil, errCannotPick // a conflict, or nothing left to apply
	}
	pr := auth.FromContext(ctx)
	committer := object.Signature{Name: pr.User.Username, Email: pr.User.Username, When: time.Now()}
	if u, err := w.users.UserByID(ctx, pr.UserID()); err == nil {
		committer.Name, committer.Email = u.Name, u.Email
	}
	msg := strings.TrimRight(c.Message, "\n") + "\n\n(cherry picked from commit " + c.Hash.String() + ")\n"
	picked := &object.Commit{Author: c.Author, Committer: committer, Message: msg, TreeHash: res.Tree, ParentHashes: []plumbing.Hash{head.Hash()}}
	obj := repo.Storer.NewEncodedObject()
	if err := picked.Encode(obj); err != nil {
		return nil, err
	}
	hash, err := repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return nil, err
	}
	if err := w.moveRef(ctx, info, repo, RefUpdate{Name: branch, Old: head.Hash(), New: hash}); err != nil {
		if errors.Is(err, ErrRefMoved) {
			return nil, invalid("The branch moved while picking; try again")
		}
		return nil, err
	}
	return repo.CommitObject(hash)
}

// openCommitOnBranch resolves sha and branch in project ref for a caller
// who may push code there (protected branches included). The objects the
// caller then writes are unreachable until the ref moves, and a repack in
// between would drop them as garbage, so the maintenance lock is held
// shared, as pushes hold it, until unlock.
func (w *Writer) openCommitOnBranch(ctx context.Context, ref, sha, branch string) (*commitOnBranch, error) {
	info, repo, err := w.rd.open(ctx, ref, projects.PushCode)
	if err != nil {
		return nil, err
	}
	maint := w.rd.store.maintenanceLock(info.ID)
	maint.RLock()
	fail := func(err error) (*commitOnBranch, error) {
		maint.RUnlock()
		return nil, err
	}
	c, err := resolveCommit(repo, sha, info.DefaultBranch)
	if err != nil || sha == "" {
		return fail(ErrCommitNotFound)
	}
	head, err := branchRef(repo, branch)
	if err != nil {
		return fail(ErrBranchNotFound)
	}
	if ok, err := w.mayPushBranch(ctx, info.ID, ref, branch); err != nil {
		return fail(err)
	} else if !ok {
		return fail(refused("You are not allowed to push into this branch"))
	}
	return &commitOnBranch{info: info, repo: repo, commit: c, head: head, unlock: maint.RUnlock}, nil
}
