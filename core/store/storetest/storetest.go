package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// Opener returns a fresh, empty database; closing it is the opener's
// business (t.Cleanup).
type Opener = func(t testing.TB) *store.DB

// Run checks every clause of the store's contract against the databases
// open makes. Each subtest opens its own database.
func Run(t *testing.T, open Opener) {
	t.Run("keys", func(t *testing.T) { runKeys(t, open) })
	t.Run("ordering", func(t *testing.T) { runOrdering(t, open) })
	t.Run("tables", func(t *testing.T) { runTables(t, open) })
	t.Run("transactions", func(t *testing.T) { runTransactions(t, open) })
	t.Run("group commit", func(t *testing.T) { runGroupCommit(t, open) })
	t.Run("concurrency", func(t *testing.T) { runConcurrency(t, open) })
	t.Run("migrations", func(t *testing.T) { runMigrations(t, open) })
	t.Run("probe succeeds on a healthy database", func(t *testing.T) {
		db := open(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for i := 0; i < 2; i++ {
			if err := db.Probe(ctx); err != nil {
				t.Fatalf("probe %d: %v", i+1, err)
			}
		}
	})
}

// errRefused is what write functions of the suite return to be rolled back.
var errRefused = errors.New("storetest: refused on purpose")

// update runs fn in db.Update and fails the test on an error.
func update(t testing.TB, db *store.DB, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		t.Fatalf("update: %v", err)
	}
}

// view runs fn in db.View and fails the test on an error.
func view(t testing.TB, db *store.DB, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		t.Fatalf("view: %v", err)
	}
}

// ensure declares buckets, as a module does at start-up.
func ensure(t testing.TB, db *store.DB, names ...string) {
	t.Helper()
	if err := db.EnsureBuckets(names); err != nil {
		t.Fatalf("ensure buckets %q: %v", names, err)
	}
}

// clone copies a slice the store returned, valid only in its transaction.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
