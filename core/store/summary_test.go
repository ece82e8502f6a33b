package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// TestSummarizeTellsCopiesApart: a summary changes with any key, value or
// sequence (values swapped between two keys included); HoldsData is false
// for a store only opened, true once anything is written; Empty removes
// every bucket.
func TestSummarizeTellsCopiesApart(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e := db.Engine()
	if held, err := store.HoldsData(ctx, e); err != nil || held {
		t.Fatalf("a store only opened holds data: %v %v", held, err)
	}
	put := func(fn func(b store.Bucket) error) map[string]store.BucketSummary {
		t.Helper()
		err := e.Update(ctx, func(etx store.EngineTx) error {
			b, err := etx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return fn(b)
		})
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.Summarize(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := put(func(b store.Bucket) error {
		_ = b.Put([]byte("k1"), []byte("a"))
		return b.Put([]byte("k2"), []byte("bc"))
	})
	if first["b"].Keys != 2 {
		t.Fatalf("summary %+v", first["b"])
	}
	swapped := put(func(b store.Bucket) error {
		_ = b.Put([]byte("k1"), []byte("bc"))
		return b.Put([]byte("k2"), []byte("a"))
	})
	if swapped["b"].Digest == first["b"].Digest {
		t.Fatal("swapping two values left the digest as it was")
	}
	// Moving a byte from a value to the next key keeps the concatenation.
	shifted := put(func(b store.Bucket) error {
		_ = b.Delete([]byte("k2"))
		_ = b.Put([]byte("k1"), []byte("bck"))
		return b.Put([]byte("2"), []byte("a"))
	})
	if shifted["b"].Digest == swapped["b"].Digest {
		t.Fatal("moving a byte between key and value left the digest as it was")
	}
	sequenced := put(func(b store.Bucket) error { return b.SetSequence(9) })
	if sequenced["b"].Sequence != 9 || sequenced["b"].Digest != shifted["b"].Digest {
		t.Fatalf("summary after a sequence %+v", sequenced["b"])
	}
	if held, err := store.HoldsData(ctx, e); err != nil || !held {
		t.Fatalf("a store with keys holds no data: %v %v", held, err)
	}
	if err := store.Empty(ctx, e); err != nil {
		t.Fatal(err)
	}
	if s, err := store.Summarize(ctx, e); err != nil || len(s) != 0 {
		t.Fatalf("after Empty: %v %v", s, err)
	}
}
