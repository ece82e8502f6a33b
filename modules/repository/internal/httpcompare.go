package internal

// The HTTP adapter of compare.go: routes, request inputs, GitLab views and
// status codes; the service side stays in compare.go.

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

func (rd *Reader) registerCompare(a *api.API) {
	api.Register(a, api.Op{ID: "repository-compare", Method: http.MethodGet, Path: "/projects/{id}/repository/compare",
		Tags: []string{"repository"}, Summary: "Commits and diffs between two refs (merge-base semantics)", Access: api.Public}, rd.compare)
}

type compareInput struct {
	ProjectPath
	From string `query:"from" required:"true" doc:"Commit sha or branch"`
	To   string `query:"to" required:"true" doc:"Commit sha or branch"`
}

func (rd *Reader) compare(ctx context.Context, in *compareInput) (*struct{ Body *CompareView }, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	from, err := resolveCommit(repo, in.From, info.DefaultBranch)
	if err != nil || in.From == "" {
		return nil, ErrCommitNotFound
	}
	to, err := resolveCommit(repo, in.To, info.DefaultBranch)
	if err != nil || in.To == "" {
		return nil, ErrCommitNotFound
	}
	out := &CompareView{Commits: []CommitView{}, Diffs: []DiffView{}, CompareSameRef: from.Hash == to.Hash}
	if out.CompareSameRef {
		return &struct{ Body *CompareView }{Body: out}, nil
	}
	bases, err := from.MergeBase(to)
	if err != nil {
		return nil, err
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
	var commits []*object.Commit
	iter := object.NewCommitPreorderIter(to, excluded, nil)
	err = iter.ForEach(func(c *object.Commit) error {
		if len(commits) == maxCompareCommits {
			out.CompareTimeout = true
			return storer.ErrStop
		}
		commits = append(commits, c)
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, err
	}
	// Oldest first, as GitLab lists a comparison.
	reverse(commits)
	for _, c := range commits {
		out.Commits = append(out.Commits, commitView(c))
	}
	if len(commits) > 0 {
		last := commitView(to)
		out.Commit = &last
	}
	toTree, err := to.Tree()
	if err != nil {
		return nil, err
	}
	var baseTree *object.Tree
	if len(bases) > 0 {
		if baseTree, err = bases[0].Tree(); err != nil {
			return nil, err
		}
	}
	objs, err := rd.store.Objects(info.ID)
	if err != nil {
		return nil, err
	}
	if out.Diffs, err = diffEntries(ctx, objs, baseTree, toTree); err != nil {
		return nil, err
	}
	return &struct{ Body *CompareView }{Body: out}, nil
}
