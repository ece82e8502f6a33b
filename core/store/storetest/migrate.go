package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// The clauses of schema migrations.

// migrationLog is where the suite's migrations record that they ran, in a
// transaction of their own: the only honest witness if an engine runs a
// write function again.
var migrationLog = store.Keys("storetest.migrations")

// logged is a migration that records "module:version" in migrationLog.
func logged(module string, version int) store.Migration {
	return store.Migration{Module: module, Version: version, Name: fmt.Sprintf("step %d", version), Up: func(tx *store.Tx) error {
		if err := migrationLog.Ensure(tx); err != nil {
			return err
		}
		n, err := migrationLog.NextSequence(tx)
		if err != nil {
			return err
		}
		return migrationLog.Put(tx, store.Key(n), []byte(fmt.Sprintf("%s:%d", module, version)))
	}}
}

// ranMigrations lists migrationLog in order.
func ranMigrations(t *testing.T, db *store.DB) string {
	t.Helper()
	var out []string
	view(t, db, func(tx *store.Tx) error {
		migrationLog.Walk(tx, nil, false, func(_, v []byte) bool {
			out = append(out, string(v))
			return true
		})
		return nil
	})
	return fmt.Sprint(out)
}

func versions(t *testing.T, db *store.DB, modules ...string) string {
	t.Helper()
	var out []string
	for _, m := range modules {
		v, err := db.SchemaVersion(m)
		if err != nil {
			t.Fatalf("SchemaVersion(%s): %v", m, err)
		}
		out = append(out, fmt.Sprintf("%s=%d", m, v))
	}
	return fmt.Sprint(out)
}

func runMigrations(t *testing.T, open Opener) {
	t.Run("Migrate runs each migration once, in order, module by module", func(t *testing.T) {
		db := open(t)
		ctx := context.Background()
		if got := versions(t, db, "alpha", "beta"); got != "[alpha=0 beta=0]" {
			t.Errorf("versions of a fresh database = %s", got)
		}
		// Given out of order: modules run in name order, versions in order.
		first := []store.Migration{logged("beta", 2), logged("alpha", 1), logged("beta", 1)}
		if err := db.Migrate(ctx, first); err != nil {
			t.Fatal(err)
		}
		if got := ranMigrations(t, db); got != "[alpha:1 beta:1 beta:2]" {
			t.Errorf("migrations ran: %s, want [alpha:1 beta:1 beta:2]", got)
		}
		if got := versions(t, db, "alpha", "beta", "gamma"); got != "[alpha=1 beta=2 gamma=0]" {
			t.Errorf("versions = %s", got)
		}
		if err := db.Migrate(ctx, first); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx, append(first, logged("beta", 3))); err != nil {
			t.Fatal(err)
		}
		if got := ranMigrations(t, db); got != "[alpha:1 beta:1 beta:2 beta:3]" {
			t.Errorf("after migrating again with one more: %s, want only beta:3 added", got)
		}
		if err := db.Migrate(ctx, []store.Migration{logged("beta", 1)}); err == nil {
			t.Error("Migrate accepted a database newer than its migrations")
		}
		if err := db.Migrate(ctx, []store.Migration{logged("delta", 1), logged("delta", 3)}); err == nil {
			t.Error("Migrate accepted a gap in the versions")
		}
		if got := versions(t, db, "beta", "delta"); got != "[beta=3 delta=0]" {
			t.Errorf("refused migrations changed the versions: %s", got)
		}
	})

	t.Run("a failing migration rolls back its writes", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		ctx := context.Background()
		broken := store.Migration{Module: "alpha", Version: 2, Name: "broken", Up: func(tx *store.Tx) error {
			if err := kv.Put(tx, []byte("half done"), []byte("1")); err != nil {
				return err
			}
			if err := logged("alpha", 2).Up(tx); err != nil {
				return err
			}
			return errRefused
		}}
		err := db.Migrate(ctx, []store.Migration{logged("alpha", 1), broken})
		if !errors.Is(err, errRefused) {
			t.Fatalf("Migrate with a failing migration = %v, want its error", err)
		}
		if got := versions(t, db, "alpha"); got != "[alpha=1]" {
			t.Errorf("version after a failed migration = %s, want alpha=1", got)
		}
		if got := ranMigrations(t, db); got != "[alpha:1]" {
			t.Errorf("log after a failed migration = %s, want [alpha:1]", got)
		}
		view(t, db, func(tx *store.Tx) error {
			if kv.Has(tx, []byte("half done")) {
				t.Error("a failed migration's write was committed")
			}
			return nil
		})
		if err := db.Migrate(ctx, []store.Migration{logged("alpha", 1), logged("alpha", 2)}); err != nil {
			t.Fatal(err)
		}
		if got := ranMigrations(t, db); got != "[alpha:1 alpha:2]" {
			t.Errorf("log after the fixed migration = %s", got)
		}
	})
}
