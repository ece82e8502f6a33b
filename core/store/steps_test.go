package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// FirstIDsBy gives the first n ids of a key, in order, and no more.
func TestFirstIDsBy(t *testing.T) {
	db := openDB(t, store.Options{})
	update(t, db, func(tx *store.Tx) error {
		for i := range 10 {
			team := "a"
			if i%2 == 1 {
				team = "b"
			}
			if err := users.Insert(tx, &user{Name: fmt.Sprint("u", i), Team: team}); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, db, func(tx *store.Tx) error {
		for _, tt := range []struct {
			key  string
			n    int
			want []uint64
		}{{"a", 3, []uint64{1, 3, 5}}, {"b", 10, []uint64{2, 4, 6, 8, 10}}, {"b", 0, []uint64{}}, {"c", 5, []uint64{}}} {
			got, err := users.FirstIDsBy(tx, "team", tt.key, tt.n)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("FirstIDsBy(team, %q, %d) = %v, %v; want %v", tt.key, tt.n, got, err, tt.want)
			}
		}
		if got, err := users.FirstIDsBy(tx, "name", "u3", 5); err != nil || !slices.Equal(got, []uint64{4}) {
			t.Errorf("FirstIDsBy on a unique index = %v, %v", got, err)
		}
		return nil
	})
}

// UpdateInSteps commits each step on its own, until one says done; a
// step's error stops it with the earlier steps committed, and a second
// run goes on from what they left.
func TestUpdateInSteps(t *testing.T) {
	db := openDB(t, store.Options{})
	update(t, db, func(tx *store.Tx) error {
		for i := range 25 {
			if err := users.Insert(tx, &user{Name: fmt.Sprint("u", i), Team: "gone"}); err != nil {
				return err
			}
		}
		return nil
	})
	removeTen := func(fail int) func(tx *store.Tx) (bool, error) {
		steps := 0
		return func(tx *store.Tx) (bool, error) {
			steps++
			if steps == fail {
				return false, errBoom
			}
			ids, err := users.FirstIDsBy(tx, "team", "gone", 10)
			if err != nil {
				return false, err
			}
			for _, id := range ids {
				if err := users.Delete(tx, id); err != nil {
					return false, err
				}
			}
			return len(ids) < 10, nil
		}
	}
	if err := db.UpdateInSteps(context.Background(), removeTen(2)); !errors.Is(err, errBoom) {
		t.Fatalf("err = %v", err)
	}
	view(t, db, func(tx *store.Tx) error {
		if n := users.Count(tx); n != 15 {
			t.Errorf("after a failed second step: %d rows, want 15", n)
		}
		return nil
	})
	if err := db.UpdateInSteps(context.Background(), removeTen(0)); err != nil {
		t.Fatal(err)
	}
	view(t, db, func(tx *store.Tx) error {
		if n := users.Count(tx); n != 0 {
			t.Errorf("%d rows left", n)
		}
		return nil
	})
}

// SlowestWrite is the longest write function, of either write path.
func TestSlowestWrite(t *testing.T) {
	db := openDB(t, store.Options{})
	db.ResetSlowestWrite()
	update(t, db, func(*store.Tx) error { time.Sleep(30 * time.Millisecond); return nil })
	if d := db.SlowestWrite(); d < 30*time.Millisecond {
		t.Errorf("after a 30 ms Update: %v", d)
	}
	db.ResetSlowestWrite()
	if err := db.UpdateAlone(context.Background(), func(*store.Tx) error { time.Sleep(20 * time.Millisecond); return nil }); err != nil {
		t.Fatal(err)
	}
	if d := db.SlowestWrite(); d < 20*time.Millisecond || d > 10*time.Second {
		t.Errorf("after a 20 ms UpdateAlone: %v", d)
	}
}
