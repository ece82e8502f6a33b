package internal

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// Migration 5 fills byUser from the stored issues (a store made before
// it has rows but no keys): the keys are those track writes, twice in a
// row, and stale keys go.
func TestFillByUserMigration(t *testing.T) {
	db, update := migrationStore(t)
	ctx := context.Background()
	at := time.Date(2017, 5, 24, 10, 0, 0, 0, time.UTC)
	stored := []*Issue{
		{ProjectID: 1, IID: 1, State: StateOpened, AuthorID: 5, AssigneeIDs: []int64{6}},
		{ProjectID: 1, IID: 2, State: StateReopened, AuthorID: 6, Confidential: true},
		{ProjectID: 2, IID: 1, State: StateClosed, AuthorID: 5, AssigneeIDs: []int64{5}, CreatedAt: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	update(func(tx *store.Tx) error {
		if err := insertRows(tx, at, stored); err != nil {
			return err
		}
		return byUser.Put(tx, userTimeKey(byAuthorCreated, 9, at, 99), []byte{0, 0, 0, 0, 0, 0, 0, 0, 1})
	})
	dump := func() map[string]string {
		out := map[string]string{}
		_ = db.View(ctx, func(tx *store.Tx) error {
			return byUser.ForEach(tx, func(k, v []byte) error {
				out[string(k)] = string(v)
				return nil
			})
		})
		return out
	}
	want := map[string]string{}
	for _, i := range stored {
		for _, k := range userKeys(i) {
			want[string(k)] = string(userValue(i))
		}
	}
	if len(want) != 4*3+2*2 {
		t.Fatalf("%d keys expected", len(want))
	}
	for run := range 2 {
		update(func(tx *store.Tx) error { return Migrations()[4].Up(tx) })
		if got := dump(); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: %d keys, want %d", run, len(got), len(want))
		}
	}
}
