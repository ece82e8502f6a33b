package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// A View or Update called with tx.Context() runs inside the open
// transaction instead of opening a second one.
func TestNestedCallsJoinTheOpenTransaction(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	ctx := context.Background()
	err := db.Update(ctx, func(outer *store.Tx) error {
		if err := users.Insert(outer, &user{Name: "joined"}); err != nil {
			return err
		}
		// A nested read sees the outer transaction's uncommitted write.
		if err := db.View(outer.Context(), func(inner *store.Tx) error {
			if inner != outer {
				return errors.New("View opened a second transaction")
			}
			_, err := users.GetBy(inner, "name", "joined")
			return err
		}); err != nil {
			return err
		}
		// Nested writes join too and commit with the outer one.
		if err := db.Update(outer.Context(), func(inner *store.Tx) error {
			return users.Insert(inner, &user{Name: "joined-update"})
		}); err != nil {
			return err
		}
		return db.UpdateAlone(outer.Context(), func(inner *store.Tx) error {
			return users.Insert(inner, &user{Name: "joined-alone"})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, db); n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
	// The context still carries the caller's values and deadline.
	type key struct{}
	vctx := context.WithValue(ctx, key{}, "v")
	_ = db.View(vctx, func(tx *store.Tx) error {
		if tx.Context().Value(key{}) != "v" {
			t.Error("tx.Context() lost the caller's values")
		}
		return nil
	})
}

// A write cannot join a read-only transaction.
func TestWriteInsideReadIsRefused(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	err := db.View(context.Background(), func(tx *store.Tx) error {
		if err := db.Update(tx.Context(), func(*store.Tx) error { return nil }); !errors.Is(err, store.ErrReadOnlyTx) {
			t.Errorf("Update in View: %v, want ErrReadOnlyTx", err)
		}
		if err := db.UpdateAlone(tx.Context(), func(*store.Tx) error { return nil }); !errors.Is(err, store.ErrReadOnlyTx) {
			t.Errorf("UpdateAlone in View: %v, want ErrReadOnlyTx", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The guard (on in race builds, so in `make test`) catches a second
// transaction opened on the same goroutine, and a batched write awaited by a
// goroutine that holds a transaction, and records each.
func TestGuardCatchesNestedTransactions(t *testing.T) {
	if !store.GuardOn() {
		t.Skip("the nesting guard is built only with -race or -tags fennec_txguard")
	}
	t.Parallel()
	db := openDB(t, store.Options{})
	ctx := context.Background()
	cases := map[string]func(){
		"View in View": func() {
			_ = db.View(ctx, func(*store.Tx) error { return db.View(ctx, func(*store.Tx) error { return nil }) })
		},
		"View in UpdateAlone": func() {
			_ = db.UpdateAlone(ctx, func(*store.Tx) error { return db.View(ctx, func(*store.Tx) error { return nil }) })
		},
		"Update in View": func() {
			_ = db.View(ctx, func(*store.Tx) error { return db.Update(ctx, func(*store.Tx) error { return nil }) })
		},
		"View in Update": func() {
			_ = db.Update(ctx, func(*store.Tx) error { return db.View(ctx, func(*store.Tx) error { return nil }) })
		},
		"Update in Update": func() {
			_ = db.Update(ctx, func(*store.Tx) error { return db.Update(ctx, func(*store.Tx) error { return nil }) })
		},
	}
	for name, fn := range cases {
		var got any
		func() {
			defer func() { got = recover() }()
			fn()
		}()
		if msg, _ := got.(string); !strings.Contains(msg, "opened inside") {
			t.Errorf("%s: recovered %v, want the guard's panic", name, got)
		}
	}
	if v := db.Violations(); len(v) != len(cases) {
		t.Errorf("%d violations recorded, want %d: %q", len(v), len(cases), v)
	}
	// The store still works afterwards: no transaction was left open.
	done := make(chan error, 1)
	go func() {
		done <- db.Update(ctx, func(tx *store.Tx) error { return users.Insert(tx, &user{Name: "after"}) })
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the store hangs after the guard fired")
	}
}

// The deadlock the guard exists for: readers that nest lookups through
// tx.Context() keep working while writers grow the file (each growth remaps
// it, which waits for every open reader).
func TestNestedReadsDuringFileGrowth(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := db.View(ctx, func(tx *store.Tx) error {
					users.Count(tx)
					return db.View(tx.Context(), func(tx *store.Tx) error { users.Count(tx); return nil })
				})
				if err != nil && ctx.Err() == nil {
					t.Error(err)
					return
				}
			}
		})
	}
	big := strings.Repeat("x", 64<<10) // grows the file by a remap every few writes
	writers := make(chan error, 2)
	for w := 0; w < 2; w++ {
		go func() {
			for i := 0; i < 60; i++ {
				if err := db.Update(ctx, func(tx *store.Tx) error {
					return users.Insert(tx, &user{Name: fmt.Sprintf("w%d-%d", w, i), Phase: big})
				}); err != nil {
					writers <- err
					return
				}
			}
			writers <- nil
		}()
	}
	for w := 0; w < 2; w++ {
		if err := <-writers; err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("writer: %v (deadlocked?)", err)
		}
	}
	close(stop)
	wg.Wait()
}

// Probe answers while the store works, and fails within its deadline while a
// writer holds the store.
func TestProbe(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	if err := db.Probe(context.Background()); err != nil {
		t.Fatalf("probe of a healthy store: %v", err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.Update(context.Background(), func(*store.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := db.Probe(ctx); !errors.Is(err, store.ErrStuck) {
		t.Fatalf("probe of a stuck store: %v, want ErrStuck", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("probe took %v", d)
	}
	// While the first probe still waits, the next fails at once.
	if err := db.Probe(context.Background()); !errors.Is(err, store.ErrStuck) {
		t.Fatalf("second probe: %v, want ErrStuck at once", err)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for db.Probe(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the store did not recover after the writer finished")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
