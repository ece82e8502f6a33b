package internal

import (
	"context"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// Migration 2 rebuilds the per-project counts from the stored issues:
// counts that drifted (or were never written) come out right, twice in a
// row, and OpenIssuesCount reads them.
func TestRecountMigration(t *testing.T) {
	db, update := migrationStore(t)
	ctx := context.Background()
	at := time.Date(2017, 5, 24, 10, 0, 0, 0, time.UTC)
	stored := []*Issue{
		{ProjectID: 1, IID: 1, State: StateOpened},
		{ProjectID: 1, IID: 2, State: StateReopened, Confidential: true},
		{ProjectID: 1, IID: 3, State: StateClosed},
		{ProjectID: 2, IID: 1, State: StateClosed, Confidential: true},
		{ProjectID: 3, IID: 1, State: StateOpened},
	}
	update(func(tx *store.Tx) error {
		if err := insertRows(tx, at, stored); err != nil {
			return err
		}
		// Drifted counts: wrong numbers, and a project with no issue left.
		if err := addCount(tx, 1, countOpen, 7); err != nil {
			return err
		}
		return addCount(tx, 9, countOpen, 4)
	})
	s := &Service{db: db}
	for run := range 2 {
		update(func(tx *store.Tx) error { return Migrations()[1].Up(tx) })
		want := map[int64][3]int{1: {2, 1, 1}, 2: {0, 1, 1}, 3: {1, 0, 0}, 9: {0, 0, 0}}
		_ = db.View(ctx, func(tx *store.Tx) error {
			for pid, w := range want {
				got := [3]int{getCount(tx, pid, countOpen), getCount(tx, pid, countClosed), getCount(tx, pid, countConfidential)}
				if got != w {
					t.Errorf("run %d, project %d: open/closed/confidential %v, want %v", run, pid, got, w)
				}
			}
			return nil
		})
		for pid, w := range map[int64]int{1: 2, 2: 0, 3: 1, 9: 0, 0: 0, -1: 0} {
			if n, err := s.OpenIssuesCount(ctx, pid); err != nil || n != w {
				t.Errorf("run %d: OpenIssuesCount(%d) = %d, %v; want %d", run, pid, n, err, w)
			}
		}
	}
}

// Migration 3 builds each label's counts from the stored issues, its
// confidential ones apart, the same on a second run.
func TestRecountLabelsMigration(t *testing.T) {
	db, update := migrationStore(t)
	ctx := context.Background()
	at := time.Date(2017, 5, 24, 10, 0, 0, 0, time.UTC)
	stored := []*Issue{
		{ProjectID: 1, IID: 1, State: StateOpened, LabelIDs: []int64{10, 11}},
		{ProjectID: 1, IID: 2, State: StateReopened, Confidential: true, LabelIDs: []int64{10}},
		{ProjectID: 1, IID: 3, State: StateClosed, Confidential: true, LabelIDs: []int64{10, 11}},
		{ProjectID: 1, IID: 4, State: StateClosed},
	}
	update(func(tx *store.Tx) error {
		if err := insertRows(tx, at, stored); err != nil {
			return err
		}
		return addTo(tx, labelCounts, countKey(12, countOpen), 5) // a label with no issue left
	})
	for run := range 2 {
		update(func(tx *store.Tx) error { return Migrations()[2].Up(tx) })
		want := map[int64][4]int{10: {2, 1, 1, 1}, 11: {1, 1, 0, 1}, 12: {0, 0, 0, 0}}
		_ = db.View(ctx, func(tx *store.Tx) error {
			for l, w := range want {
				var got [4]int
				for k, kind := range labelCountKinds {
					got[k] = getLabelCount(tx, l, kind)
				}
				if got != w {
					t.Errorf("run %d, label %d: open/closed/confidential open/confidential closed %v, want %v", run, l, got, w)
				}
			}
			return nil
		})
	}
}
