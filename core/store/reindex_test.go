package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

type tagged struct {
	ID   uint64 `json:"id"`
	Name string `json:"name"`
}

func (t *tagged) RecordID() uint64      { return t.ID }
func (t *tagged) SetRecordID(id uint64) { t.ID = id }

// An index added to a table with rows is filled by Reindex, as a migration
// would do; a unique index the rows violate is refused.
func TestReindexFillsANewIndex(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	ctx := context.Background()
	plain := store.NewTable[uint64, tagged]("re.things")
	indexed := store.NewTable[uint64, tagged]("re.things",
		store.Index[tagged]{Name: "name", Unique: true, Keys: func(x *tagged) []string { return []string{x.Name} }})
	if err := db.EnsureBuckets(indexed.Buckets()); err != nil {
		t.Fatal(err)
	}
	err := db.Update(ctx, func(tx *store.Tx) error {
		for _, n := range []string{"a", "b", "c"} {
			if err := plain.Insert(tx, &tagged{Name: n}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(tx *store.Tx) error {
		if _, err := indexed.GetBy(tx, "name", "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("before Reindex: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return indexed.Reindex(tx, "name") }); err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(tx *store.Tx) error {
		got, err := indexed.GetBy(tx, "name", "b")
		if err != nil || got.ID != 2 {
			t.Errorf("after Reindex: %+v %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A duplicate name makes the unique rebuild fail and change nothing.
	if err := db.Update(ctx, func(tx *store.Tx) error { return plain.Insert(tx, &tagged{Name: "a"}) }); err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, func(tx *store.Tx) error { return indexed.Reindex(tx, "name") })
	var conflict *store.ConflictError
	if !errors.As(err, &conflict) || conflict.Key != "a" {
		t.Fatalf("want a conflict on a, got %v", err)
	}
	_ = db.View(ctx, func(tx *store.Tx) error {
		if got, err := indexed.GetBy(tx, "name", "c"); err != nil || got.ID != 3 {
			t.Errorf("a failed rebuild lost the old index: %v", err)
		}
		return nil
	})
}

// DeleteBy removes exactly the rows under one key of a non-unique index.
func TestDeleteBy(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	ctx := context.Background()
	byName := store.NewTable[uint64, tagged]("del.things",
		store.Index[tagged]{Name: "name", Keys: func(x *tagged) []string { return []string{x.Name} }})
	if err := db.EnsureBuckets(byName.Buckets()); err != nil {
		t.Fatal(err)
	}
	err := db.Update(ctx, func(tx *store.Tx) error {
		for _, n := range []string{"a", "b", "a", "ab", "a"} {
			if err := byName.Insert(tx, &tagged{Name: n}); err != nil {
				return err
			}
		}
		n, err := byName.DeleteBy(tx, "name", "a")
		if err != nil || n != 3 {
			t.Errorf("DeleteBy a: %d %v", n, err)
		}
		if n, _ := byName.DeleteBy(tx, "name", "missing"); n != 0 {
			t.Errorf("DeleteBy of a missing key deleted %d", n)
		}
		if got := byName.Count(tx); got != 2 {
			t.Errorf("%d rows left, want 2 (b and ab)", got)
		}
		ids, _ := byName.IDsBy(tx, "name", "ab")
		if len(ids) != 1 {
			t.Errorf("ab lost: %v", ids)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
