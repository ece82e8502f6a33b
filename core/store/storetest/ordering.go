package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// The clauses of byte order: cursors, prefix walks, time keys.

// awkwardKeys are keys whose order trips up an engine that compares
// anything but raw bytes: zero and 0xff bytes, keys that are prefixes of
// each other, one-byte keys at both ends. In byte order.
var awkwardKeys = [][]byte{
	{0x00},
	{0x00, 0x00},
	{0x00, 0x01},
	{0x01},
	[]byte("a"),
	[]byte("a\x00"),
	[]byte("a\x00\x00"),
	[]byte("a\x01"),
	[]byte("aa"),
	[]byte("a\x7f"),
	[]byte("a\x80"),
	[]byte("a\xff"),
	[]byte("a\xff\x00"),
	[]byte("a\xff\xff"),
	[]byte("b"),
	{0x7f},
	{0x80},
	{0xfe, 0xff},
	{0xff},
	{0xff, 0x00},
	{0xff, 0xff},
	{0xff, 0xff, 0xff},
}

// putAwkward stores awkwardKeys in a scrambled order, each valued by its
// position in the sorted list.
func putAwkward(t *testing.T, db *store.DB) {
	t.Helper()
	if !slices.IsSortedFunc(awkwardKeys, bytes.Compare) {
		t.Fatal("the suite's awkwardKeys are not in byte order")
	}
	ensure(t, db, kv.Name())
	update(t, db, func(tx *store.Tx) error {
		for i := range awkwardKeys {
			j := (i * 7) % len(awkwardKeys) // 7 and 22 are coprime: a permutation
			if err := kv.Put(tx, awkwardKeys[j], []byte{byte(j)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// hexes shows keys in hex, so a failure names the bytes.
func hexes(keys [][]byte) string {
	var b bytes.Buffer
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%x", k)
	}
	return "[" + b.String() + "]"
}

// walk collects the keys WalkPrefix visits.
func walk(tx *store.Tx, prefix []byte, desc bool) [][]byte {
	var out [][]byte
	store.WalkPrefix(tx, kv, prefix, desc, func(k, _ []byte) bool {
		out = append(out, clone(k))
		return true
	})
	return out
}

// withPrefix is the awkward keys that start with prefix, in order.
func withPrefix(prefix []byte, desc bool) [][]byte {
	var out [][]byte
	for _, k := range awkwardKeys {
		if bytes.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	if desc {
		slices.Reverse(out)
	}
	return out
}

func runOrdering(t *testing.T, open Opener) {
	t.Run("keys come back in byte order", func(t *testing.T) {
		db := open(t)
		putAwkward(t, db)
		view(t, db, func(tx *store.Tx) error {
			var got [][]byte
			err := kv.ForEach(tx, func(k, v []byte) error {
				got = append(got, clone(k))
				if want := awkwardKeys[v[0]]; !bytes.Equal(k, want) {
					t.Errorf("key %x holds the value of %x", k, want)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if hexes(got) != hexes(awkwardKeys) {
				t.Errorf("keys in order:\n got %s\nwant %s", hexes(got), hexes(awkwardKeys))
			}
			return nil
		})
	})

	t.Run("a cursor walks, seeks and stops at both ends exactly", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		view(t, db, func(tx *store.Tx) error {
			c := kv.Cursor(tx)
			k1, _ := c.First()
			k2, _ := c.Last()
			k3, _ := c.Seek([]byte("a"))
			if k1 != nil || k2 != nil || k3 != nil {
				t.Errorf("an empty bucket's cursor found %x %x %x", k1, k2, k3)
			}
			return nil
		})
		putAwkward(t, db)
		view(t, db, func(tx *store.Tx) error {
			c := kv.Cursor(tx)
			var forward, backward [][]byte
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				forward = append(forward, clone(k))
			}
			for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
				backward = append(backward, clone(k))
			}
			reversed := slices.Clone(awkwardKeys)
			slices.Reverse(reversed)
			if hexes(forward) != hexes(awkwardKeys) {
				t.Errorf("First/Next walk:\n got %s\nwant %s", hexes(forward), hexes(awkwardKeys))
			}
			if hexes(backward) != hexes(reversed) {
				t.Errorf("Last/Prev walk:\n got %s\nwant %s", hexes(backward), hexes(reversed))
			}
			if k, _ := c.First(); !bytes.Equal(k, awkwardKeys[0]) {
				t.Errorf("First = %x", k)
			} else if k, _ := c.Prev(); k != nil {
				t.Errorf("Prev from the first key = %x, want nil", k)
			}
			if k, _ := c.Last(); !bytes.Equal(k, awkwardKeys[len(awkwardKeys)-1]) {
				t.Errorf("Last = %x", k)
			} else if k, _ := c.Next(); k != nil {
				t.Errorf("Next from the last key = %x, want nil", k)
			}
			seeks := []struct{ seek, want []byte }{
				{nil, awkwardKeys[0]},
				{[]byte{0x00}, []byte{0x00}},                   // exact
				{[]byte{0x00, 0x00, 0x00}, []byte{0x00, 0x01}}, // between a key and the next
				{[]byte("a\x00\x00\x00"), []byte("a\x01")},     // past a prefix's longest key
				{[]byte("a\xff\x01"), []byte("a\xff\xff")},     // inside 0xff runs
				{[]byte("c"), []byte{0x7f}},                    // between letters and high bytes
				{[]byte{0xff, 0xff, 0xfe}, []byte{0xff, 0xff, 0xff}},
				{[]byte{0xff, 0xff, 0xff}, []byte{0xff, 0xff, 0xff}},
				{[]byte{0xff, 0xff, 0xff, 0x00}, nil}, // past the end
				{[]byte{0xff, 0xff, 0xff, 0xff, 0xff}, nil},
			}
			for _, s := range seeks {
				k, v := c.Seek(s.seek)
				if !bytes.Equal(k, s.want) || (k == nil) != (s.want == nil) {
					t.Errorf("Seek(%x) = %x, want %x", s.seek, k, s.want)
					continue
				}
				if k != nil && !bytes.Equal(awkwardKeys[v[0]], k) {
					t.Errorf("Seek(%x) found %x with the value of %x", s.seek, k, awkwardKeys[v[0]])
				}
			}
			// A seek then steps both ways from where it landed.
			c.Seek([]byte("a\x00\x00\x00"))
			if k, _ := c.Prev(); !bytes.Equal(k, []byte("a\x00\x00")) {
				t.Errorf("Prev after Seek(a 00 00 00) = %x, want 610000", k)
			}
			if k, _ := c.Next(); !bytes.Equal(k, []byte("a\x01")) {
				t.Errorf("Next after that = %x, want 6101", k)
			}
			return nil
		})
	})

	t.Run("WalkPrefix visits exactly a prefix's keys, both ways", func(t *testing.T) {
		db := open(t)
		putAwkward(t, db)
		prefixes := [][]byte{
			nil,
			{0x00},
			[]byte("a"),
			[]byte("a\x00"),
			[]byte("a\xff"),
			[]byte("a\xff\xff"),
			{0xff},
			{0xff, 0xff},
			{0xff, 0xff, 0xff},
			{0xff, 0xff, 0xff, 0xff}, // nothing
			[]byte("z"),              // nothing, between keys
		}
		view(t, db, func(tx *store.Tx) error {
			for _, p := range prefixes {
				for _, desc := range []bool{false, true} {
					got, want := walk(tx, p, desc), withPrefix(p, desc)
					if hexes(got) != hexes(want) {
						t.Errorf("WalkPrefix(%x, desc %v):\n got %s\nwant %s", p, desc, hexes(got), hexes(want))
					}
				}
			}
			// fn returning false stops the walk at once.
			n := 0
			store.WalkPrefix(tx, kv, []byte("a"), true, func(k, _ []byte) bool {
				n++
				return n < 2
			})
			if n != 2 {
				t.Errorf("a walk told to stop after 2 keys visited %d", n)
			}
			return nil
		})
	})

	t.Run("time keys walk in time order within their scope", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		at := func(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }
		// Scope 7: ids written out of time order; scopes 6 and 8 are
		// neighbours that must not leak in.
		rows := []struct {
			scope, id int64
			min       int
			flags     byte
		}{
			{7, 30, 30, 3}, {7, 10, 10, 1}, {7, 20, 20, 2}, {7, 5, 20, 9}, {7, 40, -5, 4},
			{6, 99, 15, 0}, {8, 98, 15, 0},
		}
		update(t, db, func(tx *store.Tx) error {
			for _, r := range rows {
				if err := store.PutTimeKey(tx, kv, r.scope, at(r.min), r.id, r.flags); err != nil {
					return err
				}
			}
			return nil
		})
		type seen struct {
			ID    int64
			Flags byte
		}
		view(t, db, func(tx *store.Tx) error {
			for _, desc := range []bool{false, true} {
				var got []seen
				store.WalkTimeKeys(tx, kv, int64(7), desc, func(id int64, flags byte) bool {
					got = append(got, seen{id, flags})
					return true
				})
				// Equal times order by id.
				want := []seen{{40, 4}, {10, 1}, {5, 9}, {20, 2}, {30, 3}}
				if desc {
					slices.Reverse(want)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("WalkTimeKeys(desc %v) = %v, want %v", desc, got, want)
				}
			}
			ids, times, next := store.DueTimeKeys[int64, int64](tx, kv, 7, at(20), 10)
			if fmt.Sprint(ids) != "[40 10 5 20]" || !next.Equal(at(30)) {
				t.Errorf("DueTimeKeys(now +20m) = %v next %v, want [40 10 5 20] next %v", ids, next, at(30))
			}
			wantTimes := []time.Time{at(-5), at(10), at(20), at(20)}
			if len(times) != len(wantTimes) {
				t.Errorf("DueTimeKeys gave %d times for %d ids", len(times), len(ids))
			} else {
				for i := range times {
					if !times[i].Equal(wantTimes[i]) {
						t.Errorf("due time %d = %v, want %v", i, times[i], wantTimes[i])
					}
				}
			}
			if ids, _, next := store.DueTimeKeys[int64, int64](tx, kv, 7, at(20), 2); fmt.Sprint(ids) != "[40 10]" || !next.Equal(at(20)) {
				t.Errorf("DueTimeKeys limited to 2 = %v next %v, want [40 10] next %v", ids, next, at(20))
			}
			if ids, _, next := store.DueTimeKeys[int64, int64](tx, kv, 7, at(-60), 10); len(ids) != 0 || !next.Equal(at(-5)) {
				t.Errorf("DueTimeKeys before any = %v next %v, want none next %v", ids, next, at(-5))
			}
			if ids, _, next := store.DueTimeKeys[int64, int64](tx, kv, 5, at(60), 10); len(ids) != 0 || !next.IsZero() {
				t.Errorf("DueTimeKeys of an empty scope = %v next %v, want none, zero", ids, next)
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error { return store.DeleteTimeKey(tx, kv, int64(7), at(10), int64(10)) })
		view(t, db, func(tx *store.Tx) error {
			if ids, _, _ := store.DueTimeKeys[int64, int64](tx, kv, 7, at(60), 10); fmt.Sprint(ids) != "[40 5 20 30]" {
				t.Errorf("after DeleteTimeKey: %v, want [40 5 20 30]", ids)
			}
			return nil
		})
	})

	t.Run("a cursor sees the writes its transaction made before the move", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		update(t, db, func(tx *store.Tx) error {
			for _, k := range []string{"b", "d"} {
				if err := kv.Put(tx, []byte(k), []byte(k)); err != nil {
					return err
				}
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			c := kv.Cursor(tx)
			if k, _ := c.First(); string(k) != "b" {
				t.Errorf("First = %q, want b", k)
			}
			if err := kv.Put(tx, []byte("a"), []byte("new")); err != nil {
				return err
			}
			if err := kv.Put(tx, []byte("c"), []byte("new")); err != nil {
				return err
			}
			if k, v := c.First(); string(k) != "a" || string(v) != "new" {
				t.Errorf("First after putting a = %q %q, want a new", k, v)
			}
			if k, _ := c.Seek([]byte("bb")); string(k) != "c" {
				t.Errorf("Seek(bb) after putting c = %q, want c", k)
			}
			if err := kv.Delete(tx, []byte("d")); err != nil {
				return err
			}
			if k, _ := c.Last(); string(k) != "c" {
				t.Errorf("Last after deleting d = %q, want c", k)
			}
			if got := fmt.Sprint(keysOf(tx, kv)); got != "[a b c]" {
				t.Errorf("a walk in the writing transaction = %s, want [a b c]", got)
			}
			return nil
		})
	})

	t.Run("keys collected in a walk can be deleted after it", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		update(t, db, func(tx *store.Tx) error {
			for i := range 120 {
				for _, p := range []string{"p/", "q/"} {
					if err := kv.Put(tx, []byte(fmt.Sprintf("%s%03d", p, i)), []byte("x")); err != nil {
						return err
					}
				}
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			var doomed [][]byte
			kv.Walk(tx, []byte("p/"), false, func(k, _ []byte) bool {
				if k[len(k)-1]%2 == 0 {
					doomed = append(doomed, clone(k))
				}
				return true
			})
			for _, k := range doomed {
				if err := kv.Delete(tx, k); err != nil {
					return err
				}
			}
			if len(doomed) != 60 {
				t.Errorf("collected %d even keys, want 60", len(doomed))
			}
			return nil
		})
		var removed int
		update(t, db, func(tx *store.Tx) error {
			var err error
			removed, err = kv.DeletePrefix(tx, []byte("q/"))
			return err
		})
		view(t, db, func(tx *store.Tx) error {
			got := keysOf(tx, kv)
			if removed != 120 || len(got) != 60 {
				t.Fatalf("DeletePrefix removed %d (want 120); %d keys left (want 60)", removed, len(got))
			}
			for i, k := range got {
				if want := fmt.Sprintf("p/%03d", 2*i+1); k != want {
					t.Errorf("key %d = %q, want %q", i, k, want)
				}
			}
			return nil
		})
	})
}
