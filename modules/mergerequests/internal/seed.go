package internal

import (
	"context"
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// Seed adds n merged merge requests ("seed 1" ... "seed n", one minute
// apart, newest last) by authorID to a project, 2,000 per transaction,
// straight into the store: no events, notes or todos. For benchmarks,
// which need a project of 10,000 merge requests faster than the API would
// make them. Merged ones: the one-open-per-branch-pair rule does not apply.
func (s *Service) Seed(ctx context.Context, projectID, authorID int64, n int, sha string) error {
	base := s.now().Add(-time.Duration(n) * time.Minute)
	return s.DB.InBatches(ctx, n, 2000, func(tx *store.Tx, k int) error {
		at := base.Add(time.Duration(k) * time.Minute)
		return insertMR(tx, &MR{ProjectID: projectID, SourceProjectID: projectID, SourceBranch: "seed-" + strconv.Itoa(k),
			TargetBranch: "master", Title: "seed " + strconv.Itoa(k+1), Description: "seeded for a benchmark",
			State: StateMerged, AuthorID: authorID, SHA: sha, TargetSHA: sha, MergeStatus: StatusCan, MergeCommitSHA: sha,
			CreatedAt: at, UpdatedAt: at})
	})
}
