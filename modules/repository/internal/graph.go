package internal

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/core/auth"
)

// The service behind repository.CommitGraph: questions about a project's
// history that modules above ask without reading git themselves (merge
// requests: which of them hold a commit).

// ResolveCommit is the commit rev (an id, a branch, a tag) names in the
// project's repository, by git's rules (resolveCommit); ErrCommitNotFound
// when it names none.
func (m *Merges) ResolveCommit(ctx context.Context, projectID int64, rev string) (string, error) {
	defer m.hold(projectID)()
	if rev == "" {
		return "", ErrCommitNotFound
	}
	info, err := m.w.rd.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), projectID)
	if err != nil {
		return "", err
	}
	h, err := m.w.rd.store.commitHash(projectID, rev, info.DefaultBranch)
	if errors.Is(err, plumbing.ErrReferenceNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", ErrCommitNotFound
	}
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// InRange says whether commit sha is in head's history and not in base's
// (git log base..head); an empty base, or one the repository does not
// have, leaves the whole history of head. ErrCommitNotFound when head or
// sha is not in the repository.
func (m *Merges) InRange(ctx context.Context, projectID int64, sha, base, head string) (bool, error) {
	defer m.hold(projectID)()
	if !plumbing.IsHash(sha) || !plumbing.IsHash(head) {
		return false, ErrCommitNotFound
	}
	objs, err := m.w.rd.store.Objects(projectID)
	if err != nil {
		return false, err
	}
	s, h := plumbing.NewHash(sha), plumbing.NewHash(head)
	if !objs.Has(s) || !objs.Has(h) {
		return false, ErrCommitNotFound
	}
	reach, err := newReachability(ctx, objs.Read, s)
	if errors.Is(err, errNotCommit) {
		return false, ErrCommitNotFound
	}
	if err != nil {
		return false, err
	}
	if ok, err := reach.from(h); errors.Is(err, errNotCommit) {
		return false, ErrCommitNotFound
	} else if err != nil || !ok {
		return false, err
	}
	if !plumbing.IsHash(base) || !objs.Has(plumbing.NewHash(base)) {
		return true, nil
	}
	inBase, err := reach.from(plumbing.NewHash(base))
	return !inBase, err
}
