package internal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// migrationStore opens a store with the module's buckets, for tests of a
// migration; update runs fn in a transaction and fails the test on error.
func migrationStore(t *testing.T) (db *store.DB, update func(fn func(tx *store.Tx) error)) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "fennec.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var names []string
	for _, tb := range Tables() {
		names = append(names, tb.Buckets()...)
	}
	if err := db.EnsureBuckets(names); err != nil {
		t.Fatal(err)
	}
	return db, func(fn func(tx *store.Tx) error) {
		t.Helper()
		if err := db.Update(context.Background(), fn); err != nil {
			t.Fatal(err)
		}
	}
}

// insertRows stores issues as rows only, without the keys and counters
// the service keeps beside them (what a store made before a migration
// has): each titled "t", created at at unless it says otherwise, updated
// an hour after the one before.
func insertRows(tx *store.Tx, at time.Time, stored []*Issue) error {
	for n, i := range stored {
		i.Title, i.UpdatedAt = "t", at.Add(time.Duration(n)*time.Hour)
		if i.CreatedAt.IsZero() {
			i.CreatedAt = at
		}
		if err := issues.Insert(tx, i); err != nil {
			return err
		}
	}
	return nil
}
