package storetest_test

import (
	"context"
	"os"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/store/postgres"
	"github.com/fennec-forge/fennec/core/store/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgserver.StopShared()
	os.Exit(code)
}

// TestPostgres runs the store's contract on the PostgreSQL engine, each
// opening on a database of its own on one shared server (skipped without
// PostgreSQL, except in CI).
func TestPostgres(t *testing.T) {
	server := pgserver.Shared(t)
	storetest.Run(t, func(t testing.TB) *store.DB {
		engine, err := postgres.Open(context.Background(), server.NewDatabase(t), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		db, err := store.OpenEngine(engine, store.Options{})
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
