package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// TestTimeKeysAndSequences: a scope's keys walk in time order both ways and
// never into a neighbouring scope; sequences count from 1 per key.
func TestTimeKeysAndSequences(t *testing.T) {
	db := openDB(t, store.Options{NoSync: true})
	order, seq := []byte("test.order"), []byte("test.seq")
	if err := db.EnsureBuckets([]string{string(order), string(seq)}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for i, scope := range []uint64{1, 2, 2, 2, 3} {
			if err := store.PutTimeKey(tx, order, scope, base.Add(time.Duration(5-i)*time.Second), uint64(10+i), byte(i)); err != nil {
				return err
			}
		}
		return store.DeleteTimeKey(tx, order, uint64(2), base.Add(3*time.Second), uint64(12))
	})
	if err != nil {
		t.Fatal(err)
	}
	walk := func(scope uint64, desc bool) (ids []uint64, flags []byte) {
		_ = db.View(context.Background(), func(tx *store.Tx) error {
			store.WalkTimeKeys(tx, order, scope, desc, func(id uint64, f byte) bool {
				ids, flags = append(ids, id), append(flags, f)
				return true
			})
			return nil
		})
		return
	}
	if ids, flags := walk(2, false); !slices.Equal(ids, []uint64{13, 11}) || !slices.Equal(flags, []byte{3, 1}) {
		t.Fatalf("oldest first: %v %v", ids, flags)
	}
	if ids, _ := walk(2, true); !slices.Equal(ids, []uint64{11, 13}) {
		t.Fatalf("newest first: %v", ids)
	}
	if ids, _ := walk(3, true); !slices.Equal(ids, []uint64{14}) {
		t.Fatalf("the last scope, newest first: %v", ids)
	}
	if ids, _ := walk(4, true); len(ids) != 0 {
		t.Fatalf("an empty scope: %v", ids)
	}
	var got []uint64
	_ = db.Update(context.Background(), func(tx *store.Tx) error {
		for _, k := range []string{"a", "a", "b", "a"} {
			n, err := store.NextInSequence[uint64](tx, seq, []byte(k))
			if err != nil {
				return err
			}
			got = append(got, n)
		}
		return nil
	})
	if !slices.Equal(got, []uint64{1, 2, 1, 3}) {
		t.Fatalf("sequences %v", got)
	}
}

func TestWindow(t *testing.T) {
	list := []int{1, 2, 3, 4, 5}
	for _, c := range []struct {
		offset, limit int
		want          []int
	}{
		{0, 2, []int{1, 2}}, {3, 20, []int{4, 5}}, {5, 1, []int{}}, {9, 1, []int{}},
		{-1, 2, []int{1, 2}}, {1, -1, []int{}}, {0, 0, []int{}},
	} {
		got := store.Window(list, c.offset, c.limit)
		if got == nil || !slices.Equal(got, c.want) {
			t.Errorf("Window(%d, %d) = %v, want %v", c.offset, c.limit, got, c.want)
		}
	}
}

// TestWalkPrefix: the keys under a prefix, both ways, never a neighbour's,
// including prefixes of 0xff bytes (no key follows their range) and the
// empty prefix (every key); fn returning false stops the walk.
func TestWalkPrefix(t *testing.T) {
	db := openDB(t, store.Options{NoSync: true})
	bucket := store.Keys("test.prefix")
	if err := db.EnsureBuckets([]string{string(bucket)}); err != nil {
		t.Fatal(err)
	}
	keys := []string{"\x00", "a", "a\x00", "a\x01", "a\xff", "a\xff\xff", "b", "\xff", "\xff\x00", "\xff\xff"}
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for _, k := range keys {
			if err := bucket.Put(tx, []byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	walk := func(prefix string, desc bool, stopAfter int) (got []string) {
		_ = db.View(context.Background(), func(tx *store.Tx) error {
			store.WalkPrefix(tx, bucket, []byte(prefix), desc, func(k, v []byte) bool {
				if string(v) != "v"+string(k) {
					t.Errorf("key %q has value %q", k, v)
				}
				got = append(got, string(k))
				return len(got) != stopAfter
			})
			return nil
		})
		return got
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"a", []string{"a", "a\x00", "a\x01", "a\xff", "a\xff\xff"}},
		{"a\xff", []string{"a\xff", "a\xff\xff"}},
		{"\xff", []string{"\xff", "\xff\x00", "\xff\xff"}},
		{"\xff\xff", []string{"\xff\xff"}},
		{"c", nil},
		{"", keys},
	} {
		if got := walk(c.prefix, false, -1); !slices.Equal(got, c.want) {
			t.Errorf("%q ascending: %q, want %q", c.prefix, got, c.want)
		}
		desc := slices.Clone(c.want)
		slices.Reverse(desc)
		if got := walk(c.prefix, true, -1); !slices.Equal(got, desc) {
			t.Errorf("%q descending: %q, want %q", c.prefix, got, desc)
		}
	}
	if got := walk("a", true, 2); !slices.Equal(got, []string{"a\xff\xff", "a\xff"}) {
		t.Errorf("stopped after two: %q", got)
	}
}

// TestDueTimeKeys: the rows due by now, soonest first, at most limit,
// only the scope's, and when the next one is due.
func TestDueTimeKeys(t *testing.T) {
	db := openDB(t, store.Options{NoSync: true})
	bucket := []byte("test.due")
	if err := db.EnsureBuckets([]string{string(bucket)}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for i, offset := range []int{30, 10, 20, 40} { // ids 1..4
			if err := store.PutTimeKey(tx, bucket, int64(0), base.Add(time.Duration(offset)*time.Second), int64(i+1), 0); err != nil {
				return err
			}
		}
		return store.PutTimeKey(tx, bucket, int64(1), base, int64(9), 0) // another scope
	})
	if err != nil {
		t.Fatal(err)
	}
	due := func(now time.Duration, limit int) (ids []int64, times []time.Time, next time.Time) {
		_ = db.View(context.Background(), func(tx *store.Tx) error {
			ids, times, next = store.DueTimeKeys[int64, int64](tx, bucket, 0, base.Add(now), limit)
			return nil
		})
		return ids, times, next
	}
	ids, times, next := due(25*time.Second, 10)
	if !slices.Equal(ids, []int64{2, 3}) || !times[0].Equal(base.Add(10*time.Second)) || !next.Equal(base.Add(30*time.Second)) {
		t.Errorf("due at 25 s: %v %v next %v", ids, times, next)
	}
	ids, _, next = due(time.Minute, 1)
	if !slices.Equal(ids, []int64{2}) || !next.Equal(base.Add(20*time.Second)) {
		t.Errorf("due at 60 s, one at a time: %v next %v", ids, next)
	}
	ids, _, next = due(time.Hour, 10)
	if len(ids) != 4 || !next.IsZero() {
		t.Errorf("all due: %v next %v", ids, next)
	}
	ids, _, next = due(0, 10)
	if len(ids) != 0 || !next.Equal(base.Add(10*time.Second)) {
		t.Errorf("none due: %v next %v", ids, next)
	}
}
