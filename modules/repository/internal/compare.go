package internal

import (
	"context"
	"errors"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// maxCompareCommits bounds the commits listed in one comparison; past it the
// answer says compare_timeout, as GitLab does when a comparison is too big.
const maxCompareCommits = 10000

// reverse turns the walk's newest-first order into oldest first.
func reverse(cs []*object.Commit) {
	for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
		cs[i], cs[j] = cs[j], cs[i]
	}
}

// comparison is what to has that from has not: its commits, oldest first
// (at most maxCompareCommits; timeout says there were more), and the diff
// from their merge base to to. The API's compare and the compare page.
func (rd *Reader) comparison(ctx context.Context, projectID int64, from, to *object.Commit) (commits []*object.Commit, diffs []DiffView, timeout bool, err error) {
	bases, err := from.MergeBase(to)
	if err != nil {
		return nil, nil, false, err
	}
	// Commits reachable from "to" but not from "from". Every commit both
	// reach is an ancestor of a merge base, so the walk stops at the merge
	// bases instead of first collecting all of "from"'s history (criss-cross
	// histories, with several merge bases, are the rare case where a shared
	// commit reached by another path could be listed).
	excluded := map[plumbing.Hash]bool{}
	for _, b := range bases {
		excluded[b.Hash] = true
	}
	iter := object.NewCommitPreorderIter(to, excluded, nil)
	err = iter.ForEach(func(c *object.Commit) error {
		if len(commits) == maxCompareCommits {
			timeout = true
			return storer.ErrStop
		}
		commits = append(commits, c)
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, nil, false, err
	}
	// Oldest first, as GitLab lists a comparison.
	reverse(commits)
	toTree, err := to.Tree()
	if err != nil {
		return nil, nil, false, err
	}
	var baseTree *object.Tree
	if len(bases) > 0 {
		if baseTree, err = bases[0].Tree(); err != nil {
			return nil, nil, false, err
		}
	}
	objs, err := rd.store.Objects(projectID)
	if err != nil {
		return nil, nil, false, err
	}
	if diffs, err = diffEntries(ctx, objs, baseTree, toTree); err != nil {
		return nil, nil, false, err
	}
	return commits, diffs, timeout, nil
}
