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
	return s.db.InBatches(ctx, n, 2000, func(tx *store.Tx, k int) error {
		at := base.Add(time.Duration(k) * time.Minute)
		return insertIssue(tx, &Issue{ProjectID: projectID, Title: "seed " + strconv.Itoa(k+1), Description: "seeded for a benchmark",
			State: StateOpened, AuthorID: authorID, CreatedAt: at, UpdatedAt: at})
	})
}
