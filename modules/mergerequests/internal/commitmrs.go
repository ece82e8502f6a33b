package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/repository"
)

// The merge requests of a project that hold a commit (GET
// /projects/:id/repository/commits/:sha/merge_requests), newest first. The
// path is the repository's, but merge requests stand above repositories:
// this module serves it and asks the repository's CommitGraph about the
// history.
//
// A merge request holds a commit when it is its merge commit, or when the
// commit is one of its commits: in its source's history and not in the
// target it is compared with (the target branch's head while open, the
// target as it was merged or last checked otherwise), the commits its
// /commits lists. Every merge request of the project is considered; each
// costs a walk from its head that stops at commits older than the one
// asked about, so the ones made before it cost a commit read.

// CommitMergeRequests implements mergerequest.Service.
func (s *Service) CommitMergeRequests(ctx context.Context, project, rev string, offset, limit int) ([]mergerequest.MergeRequest, int, error) {
	info, err := s.readProject(ctx, project)
	if err != nil {
		return nil, 0, err
	}
	sha, err := s.Graph.ResolveCommit(ctx, info.ID, rev)
	if err != nil {
		return nil, 0, err // ErrCommitNotFound: the repository's 404 Commit Not Found
	}
	var all []*MR
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		var ids []int64
		store.WalkTimeKeys(tx, byCreated, info.ID, true, func(id int64, _ byte) bool {
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
		return nil, 0, err
	}
	var holding []*MR
	for _, m := range all {
		ok, err := s.holds(ctx, m, sha)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			holding = append(holding, m)
		}
	}
	return s.records(info, store.Window(holding, offset, limit)), len(holding), nil
}

// holds says whether merge request m holds commit sha.
func (s *Service) holds(ctx context.Context, m *MR, sha string) (bool, error) {
	if m.Deleted {
		return false, nil
	}
	if m.MergeCommitSHA == sha {
		return true, nil
	}
	if m.SHA == "" {
		return false, nil
	}
	base := s.baseOf(ctx, m)
	ok, err := s.Graph.InRange(ctx, m.ProjectID, sha, base, m.SHA)
	if errors.Is(err, repository.ErrCommitNotFound) && m.SourceProjectID != m.ProjectID {
		// A fork's commits reach the target's repository when they are
		// first looked at; this is such a look.
		if err := s.Merges.Import(ctx, m.ProjectID, m.SourceProjectID, m.SHA); err != nil {
			if errors.Is(err, repository.ErrCommitNotFound) {
				return false, nil // the fork's branch is gone
			}
			return false, err
		}
		ok, err = s.Graph.InRange(ctx, m.ProjectID, sha, base, m.SHA)
	}
	if errors.Is(err, repository.ErrCommitNotFound) {
		return false, nil
	}
	return ok, err
}
