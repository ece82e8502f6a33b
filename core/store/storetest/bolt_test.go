package storetest_test

import (
	"path/filepath"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/store/storetest"
)

// TestBolt runs the store's contract on the default engine, a bbolt file.
func TestBolt(t *testing.T) {
	storetest.Run(t, func(t testing.TB) *store.DB {
		db, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
		return db
	})
}
