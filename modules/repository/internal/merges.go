package internal

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
	"github.com/fennec-forge/fennec/modules/repository/gitrepo"
	"github.com/fennec-forge/fennec/modules/repository/merge"
)

// This file is the repository side of merge requests: the questions a
// merge request asks of two revisions (do they merge, which commits and
// diffs lie between them) and the merge itself, made by the merge engine
// and landed with the compare-and-set ref update every write uses, so a
// push that lands meanwhile is never lost.

// Merges is the service behind repository.Merges.
type Merges struct{ w *Writer }

// NewMerges builds it over the module's writer.
func NewMerges(w *Writer) *Merges { return &Merges{w: w} }

// ErrMergeConflict: the two revisions do not merge cleanly.
var ErrMergeConflict = gitrepo.ErrMergeConflict

// MergeSpec says what Merges.Merge does (the contract's).
type MergeSpec = gitrepo.MergeSpec

func (m *Merges) open(ctx context.Context, projectID int64) (*git.Repository, error) {
	return m.w.rd.store.Open(ctx, projectID)
}

// hold takes the maintenance lock of the projects shared (as pushes do),
// in id order, for the whole of an operation: a background repack removes
// the packs it replaces and the objects no ref reaches, so an operation
// that ran meanwhile would miss objects it had listed, or lose a merge
// commit written before its ref moved. The returned func releases them.
func (m *Merges) hold(ids ...int64) func() {
	ids = slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return id <= 0 })
	slices.Sort(ids)
	ids = slices.Compact(ids)
	locks := make([]*sync.RWMutex, len(ids))
	for i, id := range ids {
		locks[i] = m.w.rd.store.maintenanceLock(id)
		locks[i].RLock()
	}
	return func() {
		for i := len(locks) - 1; i >= 0; i-- {
			locks[i].RUnlock()
		}
	}
}

// BranchHead is the commit a branch points at; ErrBranchNotFound when it
// does not exist.
func (m *Merges) BranchHead(ctx context.Context, projectID int64, branch string) (string, error) {
	defer m.hold(projectID)()
	repo, err := m.open(ctx, projectID)
	if err != nil {
		return "", err
	}
	r, err := branchRef(repo, branch)
	if err != nil {
		return "", ErrBranchNotFound
	}
	return r.Hash().String(), nil
}

// commitOf reads commit sha: ErrCommitNotFound when it is no commit of
// the repository; any other failure (an unreadable pack, a corrupt object)
// is returned as it is, so it is answered 500 and logged rather than
// taken for a missing commit.
func commitOf(repo *git.Repository, sha string) (*object.Commit, error) {
	if !plumbing.IsHash(sha) {
		return nil, ErrCommitNotFound
	}
	c, err := repo.CommitObject(plumbing.NewHash(sha))
	switch {
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return nil, ErrCommitNotFound
	case err != nil:
		return nil, fmt.Errorf("repository: read commit %s: %w", sha, err)
	}
	return c, nil
}

// mergeTrees merges source into target (commits), base their first merge
// base (none: an empty base, as git merges unrelated histories).
func mergeTrees(repo *git.Repository, target, source *object.Commit) (*merge.Result, error) {
	bases, err := target.MergeBase(source)
	if err != nil {
		return nil, err
	}
	var base *object.Tree
	if len(bases) > 0 {
		if base, err = bases[0].Tree(); err != nil {
			return nil, err
		}
	}
	ours, err := target.Tree()
	if err != nil {
		return nil, err
	}
	theirs, err := source.Tree()
	if err != nil {
		return nil, err
	}
	return merge.MergeTrees(repo.Storer, base, ours, theirs, merge.Options{OursLabel: target.Hash.String(), TheirsLabel: source.Hash.String()})
}

// CanMerge says whether commit source merges cleanly into commit target.
func (m *Merges) CanMerge(ctx context.Context, projectID int64, target, source string) (bool, error) {
	defer m.hold(projectID)()
	repo, err := m.open(ctx, projectID)
	if err != nil {
		return false, err
	}
	t, err := commitOf(repo, target)
	if err != nil {
		return false, err
	}
	s, err := commitOf(repo, source)
	if err != nil {
		return false, err
	}
	res, err := mergeTrees(repo, t, s)
	if err != nil {
		return false, err
	}
	return res.Clean, nil
}

// mergeAttempts bounds the retries of a merge whose branch moved between
// reading it and moving it. Several merges into one branch at once (a
// merge train's worth, from several nodes) each lose to the others and to
// pushes: a few attempts per competitor.
const mergeAttempts = 12

// mergeBackoff is the pause before attempt n (from 1) of a merge that
// lost its race: random, and growing, so that merges that lost together
// do not race again in step.
func mergeBackoff(n int) time.Duration {
	return time.Duration(rand.Int64N(int64(n)*int64(5*time.Millisecond) + 1))
}

// Merge makes the merge commit of spec.Source into spec.Branch (two
// parents: the branch's head, then the source) and moves the branch to it
// by compare-and-set. When a push moves the branch meanwhile the merge is
// made again over the new head, so the push is kept; ErrMergeConflict when
// the revisions (now) conflict. It returns the merge commit's id.
func (m *Merges) Merge(ctx context.Context, info projects.ProjectInfo, spec MergeSpec) (string, error) {
	projectID := info.ID
	defer m.hold(projectID, spec.SourceProject)()
	if spec.SourceProject > 0 {
		if err := m.importObjects(ctx, projectID, spec.SourceProject, spec.Source); err != nil {
			return "", err
		}
	}
	pr := auth.FromContext(ctx)
	sig := object.Signature{Name: "Fennec", Email: "fennec@localhost"}
	if pr.UserID() > 0 {
		if u, err := m.w.users.UserByID(ctx, pr.UserID()); err == nil {
			sig.Name, sig.Email = u.Name, u.Email
		}
	}
	name := plumbing.NewBranchReferenceName(spec.Branch)
	for attempt := 0; ; attempt++ {
		// Each attempt opens the repository afresh and reads the branch
		// before any object: go-git lists the packs once, at the first
		// object read, and a push writes its pack before it moves the
		// ref, so a head read first is always found in the packs listed
		// after it. A repository opened earlier would miss a pack pushed
		// since and answer "object not found" for the new head.
		repo, err := m.open(ctx, projectID)
		if err != nil {
			return "", err
		}
		head, err := branchRef(repo, spec.Branch)
		if err != nil {
			return "", ErrBranchNotFound
		}
		source, err := commitOf(repo, spec.Source)
		if err != nil {
			return "", err
		}
		target, err := repo.CommitObject(head.Hash())
		if err != nil {
			return "", err
		}
		res, err := mergeTrees(repo, target, source)
		if err != nil {
			return "", err
		}
		if !res.Clean {
			return "", ErrMergeConflict
		}
		sig.When = time.Now()
		c := &object.Commit{Author: sig, Committer: sig, Message: spec.Message, TreeHash: res.Tree,
			ParentHashes: []plumbing.Hash{target.Hash, source.Hash}}
		obj := repo.Storer.NewEncodedObject()
		if err := c.Encode(obj); err != nil {
			return "", err
		}
		hash, err := repo.Storer.SetEncodedObject(obj)
		if err != nil {
			return "", err
		}
		err = m.w.moveRef(ctx, info, repo, RefUpdate{Name: name, Old: target.Hash, New: hash})
		if err == nil {
			return hash.String(), nil
		}
		if !errors.Is(err, ErrRefMoved) || attempt+1 == mergeAttempts {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(mergeBackoff(attempt + 1)):
		}
	}
}

// DeleteBranch removes a branch if it still points at sha (ErrRefMoved
// otherwise), as the user in ctx; it does not check protection.
func (m *Merges) DeleteBranch(ctx context.Context, projectID int64, branch, sha string) error {
	defer m.hold(projectID)()
	repo, err := m.open(ctx, projectID)
	if err != nil {
		return err
	}
	info, err := m.w.rd.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), projectID)
	if err != nil {
		return err
	}
	return m.w.moveRef(ctx, info, repo, RefUpdate{Name: plumbing.NewBranchReferenceName(branch), Old: plumbing.NewHash(sha)})
}

// MayMerge says whether the caller in ctx may merge into branch: Developer
// (PushCode), and when the branch is protected, what its merge or push
// access level allows (Master: PushProtected; no one: nobody).
func (m *Merges) MayMerge(ctx context.Context, projectID int64, branch string) (bool, error) {
	ref := fmt.Sprint(projectID)
	if ok, err := m.w.rd.access.Can(ctx, ref, projects.PushCode); err != nil || !ok {
		return false, err
	}
	p, err := m.w.protection(ctx, projectID, branch)
	if err != nil {
		return false, err
	}
	var askErr error
	master := func() bool {
		ok, err := m.w.rd.access.Can(ctx, ref, projects.PushProtected)
		askErr = err
		return ok
	}
	ok := p.allowsMerge(master)
	if askErr != nil {
		return false, askErr
	}
	return ok, nil
}

// Commits lists the commits reachable from head and not from base (git
// log base..head), newest first, at most limit.
func (m *Merges) Commits(ctx context.Context, projectID int64, base, head string, limit int) ([]gitread.Commit, error) {
	defer m.hold(projectID)()
	repo, err := m.open(ctx, projectID)
	if err != nil {
		return nil, err
	}
	h, err := commitOf(repo, head)
	if err != nil {
		return nil, err
	}
	excluded := map[plumbing.Hash]bool{}
	// Without a base (none given, or not in the repository) the whole
	// history of head is listed.
	b, err := commitOf(repo, base)
	if err != nil && !errors.Is(err, ErrCommitNotFound) {
		return nil, err
	}
	if err == nil {
		bases, err := b.MergeBase(h)
		if err != nil {
			return nil, err
		}
		for _, c := range bases {
			excluded[c.Hash] = true
		}
	}
	out := []gitread.Commit{}
	err = object.NewCommitPreorderIter(h, excluded, nil).ForEach(func(c *object.Commit) error {
		if len(out) == limit {
			return storer.ErrStop
		}
		out = append(out, plainCommit(c))
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, err
	}
	return out, nil
}

// Diffs are the changes head makes since its merge base with base, as the
// compare endpoint renders them.
func (m *Merges) Diffs(ctx context.Context, projectID int64, base, head string) ([]DiffView, error) {
	defer m.hold(projectID)()
	repo, err := m.open(ctx, projectID)
	if err != nil {
		return nil, err
	}
	h, err := commitOf(repo, head)
	if err != nil {
		return nil, err
	}
	var baseTree *object.Tree
	// Without a base every file of head is new.
	b, err := commitOf(repo, base)
	if err != nil && !errors.Is(err, ErrCommitNotFound) {
		return nil, err
	}
	if err == nil {
		bases, err := b.MergeBase(h)
		if err != nil {
			return nil, err
		}
		if len(bases) > 0 {
			if baseTree, err = bases[0].Tree(); err != nil {
				return nil, err
			}
		}
	}
	headTree, err := h.Tree()
	if err != nil {
		return nil, err
	}
	objs, err := m.w.rd.store.Objects(projectID)
	if err != nil {
		return nil, err
	}
	return diffEntries(ctx, objs, baseTree, headTree)
}

// Import copies commit sha of project from, with its history and trees,
// into project to's repository where they are missing (a merge request
// from a fork is merged in its target's repository).
func (m *Merges) Import(ctx context.Context, to, from int64, sha string) error {
	defer m.hold(to, from)()
	return m.importObjects(ctx, to, from, sha)
}

// importObjects is Import under the caller's locks.
func (m *Merges) importObjects(ctx context.Context, to, from int64, sha string) error {
	if to == from {
		return nil
	}
	dst, err := m.open(ctx, to)
	if err != nil {
		return err
	}
	src, err := m.open(ctx, from)
	if err != nil {
		return err
	}
	if !plumbing.IsHash(sha) {
		return ErrCommitNotFound
	}
	// Objects are written after those they name (a commit after its tree
	// and parents), so an interrupted copy never leaves a commit whose
	// history is missing; a later copy skips what exists.
	var copies []plumbing.EncodedObject
	stack := []plumbing.Hash{plumbing.NewHash(sha)}
	seen := map[plumbing.Hash]bool{}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] || dst.Storer.HasEncodedObject(h) == nil {
			continue
		}
		seen[h] = true
		obj, err := src.Storer.EncodedObject(plumbing.AnyObject, h)
		switch {
		case errors.Is(err, plumbing.ErrObjectNotFound):
			return ErrCommitNotFound
		case err != nil:
			return fmt.Errorf("repository: read object %s of project %d: %w", h, from, err)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			c, err := object.DecodeCommit(src.Storer, obj)
			if err != nil {
				return err
			}
			stack = append(stack, c.TreeHash)
			stack = append(stack, c.ParentHashes...)
		case plumbing.TreeObject:
			t, err := object.DecodeTree(src.Storer, obj)
			if err != nil {
				return err
			}
			for _, e := range t.Entries {
				if e.Mode != filemode.Submodule {
					stack = append(stack, e.Hash)
				}
			}
		}
		copies = append(copies, obj)
	}
	for i := len(copies) - 1; i >= 0; i-- {
		if _, err := dst.Storer.SetEncodedObject(copies[i]); err != nil {
			return err
		}
	}
	return nil
}
