package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// The clauses of a module's own bucket of keys (store.Keys).

var (
	kv     = store.Keys("storetest.kv")
	other  = store.Keys("storetest.other")
	absent = store.Keys("storetest.never-declared")
)

func runKeys(t *testing.T, open Opener) {
	t.Run("a missing key reads as nil", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		view(t, db, func(tx *store.Tx) error {
			if v := kv.Get(tx, []byte("nothing")); v != nil {
				t.Errorf("Get of a missing key = %q, want nil", v)
			}
			if kv.Has(tx, []byte("nothing")) {
				t.Error("Has of a missing key = true")
			}
			if v := absent.Get(tx, []byte("k")); v != nil || absent.Exists(tx) || absent.Count(tx) != 0 {
				t.Errorf("an undeclared bucket: Get %q, Exists %v, Count %d; want nil, false, 0", v, absent.Exists(tx), absent.Count(tx))
			}
			if k, _ := absent.Cursor(tx).First(); k != nil {
				t.Errorf("an undeclared bucket's cursor found %q", k)
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			if err := absent.Put(tx, []byte("k"), []byte("v")); err == nil {
				t.Error("Put into an undeclared bucket succeeded")
			}
			return nil
		})
	})

	t.Run("a put value is read back, in its transaction and after", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		update(t, db, func(tx *store.Tx) error {
			if err := kv.Put(tx, []byte("k1"), []byte("value one")); err != nil {
				return err
			}
			if got := string(kv.Get(tx, []byte("k1"))); got != "value one" {
				t.Errorf("Get in the writing transaction = %q", got)
			}
			return kv.Put(tx, []byte("k2"), []byte{0, 1, 0xff})
		})
		update(t, db, func(tx *store.Tx) error { return kv.Put(tx, []byte("k1"), []byte("value two")) })
		view(t, db, func(tx *store.Tx) error {
			if got := string(kv.Get(tx, []byte("k1"))); got != "value two" {
				t.Errorf("k1 = %q, want the overwritten %q", got, "value two")
			}
			if got := kv.Get(tx, []byte("k2")); !bytes.Equal(got, []byte{0, 1, 0xff}) {
				t.Errorf("k2 = %x, want 0001ff", got)
			}
			return nil
		})
	})

	t.Run("an empty value is stored and Has says so", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		update(t, db, func(tx *store.Tx) error {
			if err := kv.Put(tx, []byte("nil"), nil); err != nil {
				return err
			}
			return kv.Put(tx, []byte("empty"), []byte{})
		})
		view(t, db, func(tx *store.Tx) error {
			for _, k := range []string{"nil", "empty"} {
				v := kv.Get(tx, []byte(k))
				if v == nil || len(v) != 0 || !kv.Has(tx, []byte(k)) {
					t.Errorf("%s: Get = %v (nil %v), Has %v; want an empty non-nil value and true", k, v, v == nil, kv.Has(tx, []byte(k)))
				}
			}
			if n := kv.Count(tx); n != 2 {
				t.Errorf("Count = %d, want 2", n)
			}
			return nil
		})
	})

	t.Run("delete removes a key and a missing key is no error", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		update(t, db, func(tx *store.Tx) error {
			for _, k := range []string{"a", "b", "c"} {
				if err := kv.Put(tx, []byte(k), []byte(k)); err != nil {
					return err
				}
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			if err := kv.Delete(tx, []byte("b")); err != nil {
				return err
			}
			if kv.Has(tx, []byte("b")) {
				t.Error("a deleted key is still there in its transaction")
			}
			return kv.Delete(tx, []byte("never"))
		})
		view(t, db, func(tx *store.Tx) error {
			if got := keysOf(tx, kv); fmt.Sprint(got) != "[a c]" {
				t.Errorf("keys after deleting b = %s, want [a c]", got)
			}
			return nil
		})
	})

	t.Run("Ensure, Exists and Drop manage a bucket", func(t *testing.T) {
		db := open(t)
		view(t, db, func(tx *store.Tx) error {
			if other.Exists(tx) {
				t.Error("a bucket nobody made exists")
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			if err := other.Ensure(tx); err != nil {
				return err
			}
			if !other.Exists(tx) {
				t.Error("Exists = false right after Ensure")
			}
			return other.Put(tx, []byte("kept"), []byte("1"))
		})
		update(t, db, func(tx *store.Tx) error { return other.Ensure(tx) })
		view(t, db, func(tx *store.Tx) error {
			if !other.Has(tx, []byte("kept")) {
				t.Error("a second Ensure lost the bucket's keys")
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error { return other.Drop(tx) })
		view(t, db, func(tx *store.Tx) error {
			if other.Exists(tx) || other.Get(tx, []byte("kept")) != nil {
				t.Error("a dropped bucket is still there")
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error { return other.Drop(tx) })
		update(t, db, func(tx *store.Tx) error { return other.Ensure(tx) })
		view(t, db, func(tx *store.Tx) error {
			if n := other.Count(tx); n != 0 {
				t.Errorf("a bucket dropped and made again holds %d keys, want 0", n)
			}
			return nil
		})
	})

	t.Run("the engine lists buckets in byte order and refuses to drop a missing one", func(t *testing.T) {
		db := open(t)
		names := []string{"storetest.b", "storetest.a\xff", "storetest.a", "storetest.a\x00"}
		ensure(t, db, names...)
		var listed []string
		err := db.Engine().View(context.Background(), func(etx store.EngineTx) error {
			all, err := etx.Buckets()
			for _, name := range all {
				if bytes.HasPrefix(name, []byte("storetest.")) {
					listed = append(listed, string(name))
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := `["storetest.a" "storetest.a\x00" "storetest.a\xff" "storetest.b"]`; fmt.Sprintf("%q", listed) != want {
			t.Errorf("buckets = %q, want %s", listed, want)
		}
		err = db.Engine().Update(context.Background(), func(etx store.EngineTx) error {
			if err := etx.DeleteBucket([]byte("storetest.never")); !errors.Is(err, store.ErrBucketNotFound) {
				t.Errorf("DeleteBucket of a missing bucket = %v, want ErrBucketNotFound", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Count is the number of keys", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		update(t, db, func(tx *store.Tx) error {
			for i := range 37 {
				if err := kv.Put(tx, []byte(fmt.Sprintf("k%03d", i)), []byte("x")); err != nil {
					return err
				}
			}
			return kv.Put(tx, []byte("k000"), []byte("overwritten, not added"))
		})
		update(t, db, func(tx *store.Tx) error {
			for i := range 5 {
				if err := kv.Delete(tx, []byte(fmt.Sprintf("k%03d", i*7))); err != nil {
					return err
				}
			}
			if n := kv.Count(tx); n != 32 {
				t.Errorf("Count in the deleting transaction = %d, want 32", n)
			}
			return nil
		})
		view(t, db, func(tx *store.Tx) error {
			if n := kv.Count(tx); n != 32 {
				t.Errorf("Count = %d, want 32", n)
			}
			return nil
		})
	})

	t.Run("NextSequence starts at 1 and never repeats across transactions", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name(), other.Name())
		var got []uint64
		for range 5 {
			var taken []uint64
			update(t, db, func(tx *store.Tx) error {
				taken = taken[:0]
				for range 3 {
					n, err := kv.NextSequence(tx)
					if err != nil {
						return err
					}
					taken = append(taken, n)
				}
				return nil
			})
			got = append(got, taken...)
		}
		if fmt.Sprint(got) != "[1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]" {
			t.Errorf("sequence over five transactions = %v, want 1..15", got)
		}
		update(t, db, func(tx *store.Tx) error {
			if n, err := other.NextSequence(tx); err != nil || n != 1 {
				t.Errorf("another bucket's first number = %d, %v; want 1 (sequences are per bucket)", n, err)
			}
			return nil
		})
	})

	t.Run("a rolled-back transaction leaves no write", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		var last uint64
		update(t, db, func(tx *store.Tx) error {
			var err error
			last, err = kv.NextSequence(tx)
			if err != nil {
				return err
			}
			return kv.Put(tx, []byte("committed"), []byte("1"))
		})
		var rolledBack uint64
		err := db.Update(t.Context(), func(tx *store.Tx) error {
			if err := kv.Put(tx, []byte("rolled back"), []byte("1")); err != nil {
				return err
			}
			if err := kv.Delete(tx, []byte("committed")); err != nil {
				return err
			}
			var err error
			rolledBack, err = kv.NextSequence(tx)
			if err != nil {
				return err
			}
			return errRefused
		})
		if !errors.Is(err, errRefused) {
			t.Fatalf("Update of a failing fn = %v, want its error", err)
		}
		var next uint64
		update(t, db, func(tx *store.Tx) error {
			var err error
			next, err = kv.NextSequence(tx)
			return err
		})
		view(t, db, func(tx *store.Tx) error {
			if kv.Has(tx, []byte("rolled back")) || !kv.Has(tx, []byte("committed")) {
				t.Errorf("after a rollback: rolled-back key there %v, deleted key there %v; want false, true",
					kv.Has(tx, []byte("rolled back")), kv.Has(tx, []byte("committed")))
			}
			return nil
		})
		if next <= last {
			t.Errorf("after a rollback the sequence gave %d, not past the committed %d", next, last)
		}
		// Not a clause: engines differ (see the package documentation).
		t.Logf("%s: committed %d, rolled back %d, next %d (a rolled-back number reused: %v)",
			db.Engine().Name(), last, rolledBack, next, next == rolledBack)
	})
}

// keysOf lists a bucket's keys in the order a forward walk gives them.
func keysOf(tx *store.Tx, k store.Keys) []string {
	var out []string
	k.Walk(tx, nil, false, func(key, _ []byte) bool {
		out = append(out, string(key))
		return true
	})
	return out
}
