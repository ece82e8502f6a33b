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
	for done := 0; done < n; {
		batch := min(2000, n-done)
		err := s.DB.Update(ctx, func(tx *store.Tx) error {
			for k := 0; k < batch; k++ {
				at := base.Add(time.Duration(done+k) * time.Minute)
				m := &MR{ProjectID: uint64(projectID), SourceProjectID: uint64(projectID), SourceBranch: "seed-" + strconv.Itoa(done+k),
					TargetBranch: "master", Title: "seed " + strconv.Itoa(done+k+1), Description: "seeded for a benchmark",
					State: StateMerged, AuthorID: authorID, SHA: sha, TargetSHA: sha, MergeStatus: StatusCan, MergeCommitSHA: sha,
					CreatedAt: at, UpdatedAt: at}
				if err := insertMR(tx, m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		done += batch
	}
	return nil
}
