package internal

import (
	"context"
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// Seed adds n issues ("seed 1" ... "seed n", one minute apart, newest
// last) by authorID to a project, 2,000 per transaction, straight into the
// store: no events, notes or todos. For benchmarks, which need a project
// of 100,000 issues faster than the API would make it.
func (s *Service) Seed(ctx context.Context, projectID, authorID int64, n int) error {
	base := s.now().Add(-time.Duration(n) * time.Minute)
	for done := 0; done < n; {
		batch := min(2000, n-done)
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			for k := 0; k < batch; k++ {
				at := base.Add(time.Duration(done+k) * time.Minute)
				i := &Issue{ProjectID: uint64(projectID), Title: "seed " + strconv.Itoa(done+k+1), Description: "seeded for a benchmark",
					State: StateOpened, AuthorID: authorID, CreatedAt: at, UpdatedAt: at}
				if err := insertIssue(tx, i); err != nil {
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
