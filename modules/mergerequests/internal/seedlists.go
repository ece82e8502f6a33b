package internal

import (
	"context"
	"strconv"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// SeedVaried adds n merge requests to a project like Seed, varied for the
// list filters' benchmarks: merge request k (from 0) is by authors[k %
// len(authors)], assigned to the next author when k is a multiple of 3,
// labelled labelIDs[k/2 % len(labelIDs)] when k is even, open when k is a
// multiple of 4 (merged otherwise), and says "needle" in its description
// when k is a multiple of 1,000. Straight into the store: no events,
// notes or todos.
func (s *Service) SeedVaried(ctx context.Context, projectID int64, authors, labelIDs []int64, n int, sha string) error {
	base := s.now().Add(-time.Duration(n) * time.Minute)
	return s.DB.InBatches(ctx, n, 2000, func(tx *store.Tx, k int) error {
		at := base.Add(time.Duration(k) * time.Minute)
		m := &MR{ProjectID: projectID, SourceProjectID: projectID, SourceBranch: "seed-" + strconv.Itoa(k),
			TargetBranch: "master", Title: "seed " + strconv.Itoa(k+1), Description: "seeded for a benchmark",
			State: StateMerged, AuthorID: authors[k%len(authors)], SHA: sha, TargetSHA: sha, MergeStatus: StatusCan,
			MergeCommitSHA: sha, CreatedAt: at, UpdatedAt: at}
		if k%3 == 0 {
			m.AssigneeID = authors[(k+1)%len(authors)]
		}
		if k%2 == 0 && len(labelIDs) > 0 {
			m.LabelIDs = []int64{labelIDs[k/2%len(labelIDs)]}
		}
		if k%4 == 0 {
			m.State, m.MergeCommitSHA = StateOpened, ""
		}
		if k%1000 == 0 {
			m.Description = "a needle in the haystack"
		}
		return insertMR(tx, m)
	})
}
