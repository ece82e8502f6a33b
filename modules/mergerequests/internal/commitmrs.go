package internal

import (
	"context"
	"errors"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/repository"
)

// GET /projects/:id/repository/commits/:sha/merge_requests: the merge
// requests of a project that hold a commit, newest first. The path is the
// repository's, but merge requests stand above repositories: this module
// serves it and asks the repository's CommitGraph about the history.
//
// A merge request holds a commit when it is its merge commit, or when the
// commit is one of its commits: in its source's history and not in the
// target it is compared with (the target branch's head while open, the
// target as it was merged or last checked otherwise), the commits its
// /commits lists. Every merge request of the project is considered; each
// costs a walk from its head that stops at commits older than the one
// asked about, so the ones made before it cost a commit read.

type commitMRsInput struct {
	ProjectPath
	api.PageParams
	SHA string `path:"sha" doc:"Commit sha, branch or tag"`
}

// CommitMRRoutes serves the merge requests of a commit.
type CommitMRRoutes struct {
	s     *Service
	graph repository.CommitGraph
}

// NewCommitMRRoutes registers GET .../commits/:sha/merge_requests.
func NewCommitMRRoutes(s *Service, graph repository.CommitGraph) fennec.Routes {
	c := &CommitMRRoutes{s: s, graph: graph}
	return fennec.Routes{Name: "mergerequests-commits", Register: func(a *api.API) {
		api.Register(a, api.Op{ID: "commit-merge-requests", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/merge_requests",
			Tags: []string{"merge requests"}, Summary: "The merge requests that hold a commit, newest first"}, c.list)
	}}
}

func (c *CommitMRRoutes) list(ctx context.Context, in *commitMRsInput) (*listOutput, error) {
	s := c.s
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	sha, err := c.graph.ResolveCommit(ctx, info.ID, in.SHA)
	if err != nil {
		return nil, err // ErrCommitNotFound: the repository's 404 Commit Not Found
	}
	var all []*MR
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		var ids []uint64
		store.WalkTimeKeys(tx, byCreated, uint64(info.ID), true, func(id uint64, _ byte) bool {
			ids = append(ids, id)
			return true
		})
		for _, id := range ids {
			m, err := mrs.Get(tx, id)
			if err != nil {
				return err
			}
			all = append(all, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var holding []*MR
	for _, m := range all {
		ok, err := c.holds(ctx, m, sha)
		if err != nil {
			return nil, err
		}
		if ok {
			holding = append(holding, m)
		}
	}
	out := &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(holding))}
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		var err error
		out.Body, err = s.renderer(ctx).views(tx, s.records(info, api.Window(holding, in.PageParams)))
		return err
	})
	return out, err
}

// holds says whether merge request m holds commit sha.
func (c *CommitMRRoutes) holds(ctx context.Context, m *MR, sha string) (bool, error) {
	if m.Deleted {
		return false, nil
	}
	if m.MergeCommitSHA == sha {
		return true, nil
	}
	if m.SHA == "" {
		return false, nil
	}
	base := c.s.baseOf(ctx, m)
	ok, err := c.graph.InRange(ctx, int64(m.ProjectID), sha, base, m.SHA)
	if errors.Is(err, repository.ErrCommitNotFound) && m.SourceProjectID != m.ProjectID {
		// A fork's commits reach the target's repository when they are
		// first looked at; this is such a look.
		if err := c.s.Merges.Import(ctx, int64(m.ProjectID), int64(m.SourceProjectID), m.SHA); err != nil {
			if errors.Is(err, repository.ErrCommitNotFound) {
				return false, nil // the fork's branch is gone
			}
			return false, err
		}
		ok, err = c.graph.InRange(ctx, int64(m.ProjectID), sha, base, m.SHA)
	}
	if errors.Is(err, repository.ErrCommitNotFound) {
		return false, nil
	}
	return ok, err
}
