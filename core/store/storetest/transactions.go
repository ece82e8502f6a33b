package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// The clauses of transactions: what a transaction sees, what it hides,
// and how the context joins one.

func runTransactions(t *testing.T, open Opener) {
	t.Run("an Update reads its own writes", func(t *testing.T) {
		db := openNotes(t, open)
		ensure(t, db, kv.Name())
		update(t, db, func(tx *store.Tx) error {
			if err := kv.Put(tx, []byte("k"), []byte("v")); err != nil {
				return err
			}
			if got := string(kv.Get(tx, []byte("k"))); got != "v" {
				t.Errorf("Get of the fn's own Put = %q", got)
			}
			n := &note{Slug: "mine", Owner: "me", Title: "written here"}
			if err := notes.Insert(tx, n); err != nil {
				return err
			}
			got, err := notes.Get(tx, n.ID)
			if err != nil || got.Title != "written here" {
				t.Errorf("Get of the fn's own Insert = %+v, %v", got, err)
			}
			if got, err := notes.GetBy(tx, "slug", "mine"); err != nil || got.ID != n.ID {
				t.Errorf("GetBy of the fn's own Insert = %+v, %v", got, err)
			}
			if ids, _ := notes.IDsBy(tx, "owner", "me"); fmt.Sprint(ids) != fmt.Sprint([]int64{n.ID}) {
				t.Errorf("IDsBy of the fn's own Insert = %v", ids)
			}
			if ids, _, _ := notes.Search(tx, "title", "WRITTEN"); fmt.Sprint(ids) != fmt.Sprint([]int64{n.ID}) {
				t.Errorf("Search of the fn's own Insert = %v", ids)
			}
			if c := notes.Count(tx); c != 1 {
				t.Errorf("Count after the fn's own Insert = %d", c)
			}
			return nil
		})
	})

	t.Run("once Update returns, a new View sees the write", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		for i := range 20 {
			update(t, db, func(tx *store.Tx) error { return kv.Put(tx, []byte("n"), []byte(fmt.Sprint(i))) })
			view(t, db, func(tx *store.Tx) error {
				if got := string(kv.Get(tx, []byte("n"))); got != fmt.Sprint(i) {
					t.Fatalf("View after Update %d reads %q", i, got)
				}
				return nil
			})
		}
	})

	t.Run("a View started before a commit keeps its snapshot after it", func(t *testing.T) {
		db := openNotes(t, open)
		ensure(t, db, kv.Name())
		// Grow the store first and free the space again, so that the
		// write below fits in pages the engine already has: bbolt makes a
		// commit that must grow its memory map wait for open readers,
		// which this test holds on purpose.
		filler := strings.Repeat("x", 1000)
		update(t, db, func(tx *store.Tx) error {
			if err := other.Ensure(tx); err != nil {
				return err
			}
			for i := range 400 {
				if err := other.Put(tx, []byte(fmt.Sprint(i)), []byte(filler)); err != nil {
					return err
				}
			}
			return kv.Put(tx, []byte("balance"), []byte("100"))
		})
		update(t, db, func(tx *store.Tx) error { return other.Drop(tx) })
		insertNotes(t, db, note{Slug: "old"})

		committed := make(chan error, 1)
		view(t, db, func(tx *store.Tx) error {
			before := string(kv.Get(tx, []byte("balance")))
			go func() {
				committed <- db.Update(context.Background(), func(tx *store.Tx) error {
					if err := kv.Put(tx, []byte("balance"), []byte("250")); err != nil {
						return err
					}
					return notes.Insert(tx, &note{Slug: "new"})
				})
			}()
			select {
			case err := <-committed:
				if err != nil {
					t.Errorf("the concurrent Update: %v", err)
				}
				committed <- err
			case <-time.After(10 * time.Second):
				t.Error("a write could not commit while a read was open")
				return nil
			}
			if after := string(kv.Get(tx, []byte("balance"))); before != "100" || after != "100" {
				t.Errorf("a View's read before and after another's commit = %q, %q; want 100 both", before, after)
			}
			if n := notes.Count(tx); n != 1 {
				t.Errorf("the View's Count after another's commit = %d, want 1", n)
			}
			if _, err := notes.GetBy(tx, "slug", "new"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the View sees a row committed after it began: %v", err)
			}
			return nil
		})
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		view(t, db, func(tx *store.Tx) error {
			if got := string(kv.Get(tx, []byte("balance"))); got != "250" || notes.Count(tx) != 2 {
				t.Errorf("a View after the commit reads %q and %d rows, want 250 and 2", got, notes.Count(tx))
			}
			return nil
		})
	})

	t.Run("a failed fn's writes are never visible", func(t *testing.T) {
		db := openNotes(t, open)
		ensure(t, db, kv.Name())
		for _, failure := range []string{"error", "panic"} {
			err := func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panicked: %v", r)
					}
				}()
				return db.Update(context.Background(), func(tx *store.Tx) error {
					if err := kv.Put(tx, []byte(failure), []byte("1")); err != nil {
						return err
					}
					if err := notes.Insert(tx, &note{Slug: failure}); err != nil {
						return err
					}
					if failure == "panic" {
						panic("storetest: on purpose")
					}
					return errRefused
				})
			}()
			if err == nil {
				t.Errorf("a fn that failed by %s: Update returned nil", failure)
			}
		}
		view(t, db, func(tx *store.Tx) error {
			if kv.Count(tx) != 0 || notes.Count(tx) != 0 {
				t.Errorf("failed writes left %d keys and %d rows", kv.Count(tx), notes.Count(tx))
			}
			if _, err := notes.GetBy(tx, "slug", "error"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a failed insert's unique key: %v", err)
			}
			return nil
		})
	})

	t.Run("View and Update with tx.Context() join that transaction", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		update(t, db, func(tx *store.Tx) error {
			if err := kv.Put(tx, []byte("outer"), []byte("1")); err != nil {
				return err
			}
			err := db.View(tx.Context(), func(inner *store.Tx) error {
				if inner != tx {
					t.Error("View with tx.Context() opened another transaction")
				}
				if !kv.Has(inner, []byte("outer")) {
					t.Error("a joined View does not see the uncommitted write")
				}
				return nil
			})
			if err != nil {
				return err
			}
			return db.Update(tx.Context(), func(inner *store.Tx) error {
				if inner != tx {
					t.Error("Update with tx.Context() opened another transaction")
				}
				return kv.Put(inner, []byte("inner"), []byte("1"))
			})
		})
		// The joined write is the outer transaction's: it rolls back with it.
		err := db.Update(context.Background(), func(tx *store.Tx) error {
			if err := db.UpdateAlone(tx.Context(), func(inner *store.Tx) error {
				return kv.Put(inner, []byte("doomed"), []byte("1"))
			}); err != nil {
				return err
			}
			return errRefused
		})
		if !errors.Is(err, errRefused) {
			t.Fatalf("outer Update = %v, want its error", err)
		}
		view(t, db, func(tx *store.Tx) error {
			if got := fmt.Sprint(keysOf(tx, kv)); got != "[inner outer]" {
				t.Errorf("keys = %s, want [inner outer]", got)
			}
			return nil
		})
	})

	t.Run("a write inside a read's context is ErrReadOnlyTx", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		view(t, db, func(tx *store.Tx) error {
			ran := false
			write := func(*store.Tx) error { ran = true; return nil }
			if err := db.Update(tx.Context(), write); !errors.Is(err, store.ErrReadOnlyTx) {
				t.Errorf("Update in a View's context = %v, want ErrReadOnlyTx", err)
			}
			if err := db.UpdateAlone(tx.Context(), write); !errors.Is(err, store.ErrReadOnlyTx) {
				t.Errorf("UpdateAlone in a View's context = %v, want ErrReadOnlyTx", err)
			}
			if ran {
				t.Error("the refused write function ran")
			}
			return db.View(tx.Context(), func(inner *store.Tx) error {
				if inner != tx || inner.Writable() {
					t.Errorf("a View in a View's context: same tx %v, writable %v", inner == tx, inner.Writable())
				}
				return nil
			})
		})
	})

	t.Run("another database's transaction in the context is not joined", func(t *testing.T) {
		first, second := open(t), open(t)
		ensure(t, first, kv.Name())
		ensure(t, second, kv.Name())
		update(t, first, func(tx *store.Tx) error {
			return second.View(tx.Context(), func(inner *store.Tx) error {
				if inner == tx || inner.Writable() {
					t.Errorf("a View of another database joined this one's transaction")
				}
				return nil
			})
		})
	})
}
