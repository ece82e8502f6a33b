package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxBranchMergeRequests bounds the merge requests a branch's pages name:
// a branch is rarely the source of more than one open merge request.
const maxBranchMergeRequests = 5

// BranchMR is an open merge request from a branch, with its target
// project as the caller sees it.
type BranchMR struct {
	Target projects.ProjectInfo
	IID    int64
	Title  string
}

// OpenFromBranch are the open merge requests whose source is the
// project's branch, oldest first, in the target projects whose merge
// requests the caller may read; at most limit. It reads the source index,
// so its cost is that branch's merge requests, not the project's.
func (s *Service) OpenFromBranch(ctx context.Context, projectID int64, branch string, limit int) ([]BranchMR, error) {
	var open []*MR
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		all, err := mrs.AllBy(tx, "source", branchKey(projectID, branch))
		open = open[:0]
		for _, m := range all {
			if m.Open() {
				open = append(open, m)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	readable := map[int64]*projects.ProjectInfo{}
	var out []BranchMR
	for _, m := range open {
		info, seen := readable[m.ProjectID]
		if !seen {
			if i, err := s.readProjectID(ctx, m.ProjectID); err == nil {
				info = &i
			}
			readable[m.ProjectID] = info
		}
		if info == nil {
			continue
		}
		out = append(out, BranchMR{Target: *info, IID: m.IID, Title: m.Title})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}
