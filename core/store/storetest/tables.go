package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// The clauses of typed tables and their indexes.

// note is the suite's row: a unique slug, a non-unique owner, a searched
// title.
type note struct {
	ID    int64  `json:"id"`
	Slug  string `json:"slug"`
	Owner string `json:"owner"`
	Title string `json:"title"`
}

func (n *note) RecordID() int64      { return n.ID }
func (n *note) SetRecordID(id int64) { n.ID = id }

const notesName = "storetest.notes"

var (
	bySlug  = store.Index[note]{Name: "slug", Unique: true, Keys: func(n *note) []string { return []string{store.Fold(n.Slug)} }}
	byOwner = store.Index[note]{Name: "owner", Keys: func(n *note) []string { return []string{n.Owner} }}
	byTitle = store.Index[note]{Name: "title", Search: true, Keys: func(n *note) []string { return []string{n.Title} }}
	notes   = store.NewTable[int64, note](notesName, bySlug, byOwner, byTitle)
)

// openNotes is a database with the notes table declared.
func openNotes(t *testing.T, open Opener) *store.DB {
	t.Helper()
	db := open(t)
	ensure(t, db, notes.Buckets()...)
	return db
}

// insertNotes inserts rows in one transaction and returns their ids.
func insertNotes(t *testing.T, db *store.DB, rows ...note) []int64 {
	t.Helper()
	var ids []int64
	update(t, db, func(tx *store.Tx) error {
		ids = ids[:0]
		for _, r := range rows {
			if err := notes.Insert(tx, &r); err != nil {
				return err
			}
			ids = append(ids, r.ID)
		}
		return nil
	})
	return ids
}

// idsOf are the ids of rows.
func idsOf(rows []*note) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func runTables(t *testing.T, open Opener) {
	t.Run("Insert assigns increasing ids from 1, never reused", func(t *testing.T) {
		db := openNotes(t, open)
		ids := insertNotes(t, db, note{Slug: "a"}, note{Slug: "b"}, note{Slug: "c"})
		ids = append(ids, insertNotes(t, db, note{Slug: "d"}, note{Slug: "e"})...)
		if fmt.Sprint(ids) != "[1 2 3 4 5]" {
			t.Errorf("ids = %v, want [1 2 3 4 5]", ids)
		}
		update(t, db, func(tx *store.Tx) error { return notes.Delete(tx, 5) })
		if ids := insertNotes(t, db, note{Slug: "f"}); fmt.Sprint(ids) != "[6]" {
			t.Errorf("id after deleting the last row = %v, want [6]", ids)
		}
	})

	t.Run("Get, Update and Delete a row", func(t *testing.T) {
		db := openNotes(t, open)
		insertNotes(t, db, note{Slug: "one", Owner: "ann", Title: "First"}, note{Slug: "two", Owner: "bob", Title: "Second"})
		view(t, db, func(tx *store.Tx) error {
			n, err := notes.Get(tx, 2)
			if err != nil || *n != (note{ID: 2, Slug: "two", Owner: "bob", Title: "Second"}) {
				t.Errorf("Get(2) = %+v, %v", n, err)
			}
			if _, err := notes.Get(tx, 3); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get of a missing id: %v, want ErrNotFound", err)
			}
			if !notes.Exists(tx, 1) || notes.Exists(tx, 3) {
				t.Errorf("Exists(1) %v, Exists(3) %v; want true, false", notes.Exists(tx, 1), notes.Exists(tx, 3))
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			n, err := notes.Get(tx, 1)
			if err != nil {
				return err
			}
			n.Title = "First, edited"
			if err := notes.Update(tx, n); err != nil {
				return err
			}
			if err := notes.Update(tx, &note{ID: 9, Slug: "nine"}); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Update of a missing row: %v, want ErrNotFound", err)
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			if err := notes.Delete(tx, 2); err != nil {
				return err
			}
			if err := notes.Delete(tx, 2); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a second Delete: %v, want ErrNotFound", err)
			}
			return nil
		})
		view(t, db, func(tx *store.Tx) error {
			if n, err := notes.Get(tx, 1); err != nil || n.Title != "First, edited" || n.Slug != "one" {
				t.Errorf("row 1 after Update = %+v, %v", n, err)
			}
			if _, err := notes.Get(tx, 2); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a deleted row: %v, want ErrNotFound", err)
			}
			if _, err := notes.GetBy(tx, "slug", "two"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a deleted row's unique key: %v, want ErrNotFound", err)
			}
			if ids, _ := notes.IDsBy(tx, "owner", "bob"); len(ids) != 0 {
				t.Errorf("a deleted row's owner still lists %v", ids)
			}
			if ids, _, _ := notes.Search(tx, "title", "second"); len(ids) != 0 {
				t.Errorf("a deleted row's title is still found: %v", ids)
			}
			return nil
		})
	})

	t.Run("a taken unique key is a ConflictError and writes nothing", func(t *testing.T) {
		db := openNotes(t, open)
		insertNotes(t, db, note{Slug: "Alpha", Owner: "ann"}, note{Slug: "beta", Owner: "ann"})
		update(t, db, func(tx *store.Tx) error {
			err := notes.Insert(tx, &note{Slug: "  ALPHA ", Owner: "zed", Title: "intruder"})
			var conflict *store.ConflictError
			if !errors.As(err, &conflict) || !errors.Is(err, store.ErrConflict) {
				t.Fatalf("Insert of a taken slug: %v, want a *ConflictError matching ErrConflict", err)
			}
			if conflict.Table != notesName || conflict.Index != "slug" || conflict.Key != "alpha" {
				t.Errorf("conflict = %+v, want table %s index slug key alpha", conflict, notesName)
			}
			beta, err := notes.GetBy(tx, "slug", "beta")
			if err != nil {
				return err
			}
			beta.Slug, beta.Owner = "alpha", "zed"
			if err := notes.Update(tx, beta); !errors.Is(err, store.ErrConflict) {
				t.Errorf("Update to a taken slug: %v, want ErrConflict", err)
			}
			// The caller goes on and commits: the refused writes must
			// have left nothing behind.
			return nil
		})
		view(t, db, func(tx *store.Tx) error {
			if n := notes.Count(tx); n != 2 {
				t.Errorf("Count = %d, want 2", n)
			}
			if ids, _ := notes.IDsBy(tx, "owner", "zed"); len(ids) != 0 {
				t.Errorf("a refused write left owner entries %v", ids)
			}
			if ids, _, _ := notes.Search(tx, "title", "intruder"); len(ids) != 0 {
				t.Errorf("a refused write left search entries %v", ids)
			}
			if n, err := notes.GetBy(tx, "slug", "alpha"); err != nil || n.ID != 1 {
				t.Errorf("GetBy(alpha) = %+v, %v; want row 1", n, err)
			}
			if n, err := notes.GetBy(tx, "slug", "beta"); err != nil || n.ID != 2 || n.Owner != "ann" {
				t.Errorf("GetBy(beta) = %+v, %v; want row 2 unchanged", n, err)
			}
			return nil
		})
		// A refused insert took no id.
		if ids := insertNotes(t, db, note{Slug: "gamma"}); fmt.Sprint(ids) != "[3]" {
			t.Errorf("the next id after a refused insert = %v, want [3]", ids)
		}
		// A row moving its own unique key frees the old one.
		update(t, db, func(tx *store.Tx) error {
			return notes.Update(tx, &note{ID: 2, Slug: "delta", Owner: "ann"})
		})
		view(t, db, func(tx *store.Tx) error {
			if _, err := notes.GetBy(tx, "slug", "beta"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the moved-from key: %v, want ErrNotFound", err)
			}
			if n, err := notes.GetBy(tx, "slug", "delta"); err != nil || n.ID != 2 {
				t.Errorf("the moved-to key = %+v, %v; want row 2", n, err)
			}
			return nil
		})
		if ids := insertNotes(t, db, note{Slug: "beta"}); fmt.Sprint(ids) != "[4]" {
			t.Errorf("insert of a freed key = %v, want [4]", ids)
		}
	})

	t.Run("a non-unique index lists its rows by key in id order", func(t *testing.T) {
		db := openNotes(t, open)
		insertNotes(t, db,
			note{Slug: "1", Owner: "alice"}, note{Slug: "2", Owner: "al"}, note{Slug: "3", Owner: "alice"},
			note{Slug: "4", Owner: "alice"}, note{Slug: "5", Owner: "alice\x00x"}, note{Slug: "6", Owner: "bob"})
		view(t, db, func(tx *store.Tx) error {
			cases := map[string]string{"alice": "[1 3 4]", "al": "[2]", "bob": "[6]", "alice\x00x": "[5]", "nobody": "[]"}
			for key, want := range cases {
				ids, err := notes.IDsBy(tx, "owner", key)
				if err != nil || fmt.Sprint(ids) != want {
					t.Errorf("IDsBy(owner %q) = %v, %v; want %s", key, ids, err, want)
				}
			}
			rows, err := notes.AllBy(tx, "owner", "alice")
			if err != nil || fmt.Sprint(idsOf(rows)) != "[1 3 4]" || rows[1].Slug != "3" {
				t.Errorf("AllBy(alice) = %v, %v", rows, err)
			}
			if ids, err := notes.FirstIDsBy(tx, "owner", "alice", 2); err != nil || fmt.Sprint(ids) != "[1 3]" {
				t.Errorf("FirstIDsBy(alice, 2) = %v, %v; want [1 3]", ids, err)
			}
			if ids, err := notes.IDsBy(tx, "slug", "3"); err != nil || fmt.Sprint(ids) != "[3]" {
				t.Errorf("IDsBy on a unique index = %v, %v; want [3]", ids, err)
			}
			if _, err := notes.GetBy(tx, "owner", "bob"); err == nil {
				t.Error("GetBy on a non-unique index succeeded")
			}
			if _, err := notes.IDsBy(tx, "no such index", "x"); err == nil {
				t.Error("IDsBy on an unknown index succeeded")
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			n, err := notes.Get(tx, 3)
			if err != nil {
				return err
			}
			n.Owner = "bob"
			return notes.Update(tx, n)
		})
		var deleted int
		update(t, db, func(tx *store.Tx) error {
			var err error
			deleted, err = notes.DeleteBy(tx, "owner", "alice")
			return err
		})
		view(t, db, func(tx *store.Tx) error {
			if ids, _ := notes.IDsBy(tx, "owner", "bob"); fmt.Sprint(ids) != "[3 6]" {
				t.Errorf("bob's rows after a move = %v, want [3 6]", ids)
			}
			if ids, _ := notes.IDsBy(tx, "owner", "alice"); deleted != 2 || len(ids) != 0 {
				t.Errorf("DeleteBy(alice) deleted %d (want 2), left %v", deleted, ids)
			}
			if ids, _ := notes.IDs(tx); fmt.Sprint(ids) != "[2 3 5 6]" {
				t.Errorf("IDs = %v, want [2 3 5 6]", ids)
			}
			return nil
		})
	})

	t.Run("Count follows inserts and deletes", func(t *testing.T) {
		db := openNotes(t, open)
		view(t, db, func(tx *store.Tx) error {
			if n := notes.Count(tx); n != 0 {
				t.Errorf("Count of an empty table = %d", n)
			}
			return nil
		})
		rows := make([]note, 25)
		for i := range rows {
			rows[i].Slug = fmt.Sprint(i)
		}
		insertNotes(t, db, rows...)
		update(t, db, func(tx *store.Tx) error {
			for _, id := range []int64{2, 4, 6} {
				if err := notes.Delete(tx, id); err != nil {
					return err
				}
			}
			if n := notes.Count(tx); n != 22 {
				t.Errorf("Count in the deleting transaction = %d, want 22", n)
			}
			return nil
		})
		view(t, db, func(tx *store.Tx) error {
			if n := notes.Count(tx); n != 22 {
				t.Errorf("Count = %d, want 22", n)
			}
			return nil
		})
	})

	t.Run("Scan and Page walk ids in order with an offset", func(t *testing.T) {
		db := openNotes(t, open)
		rows := make([]note, 12)
		for i := range rows {
			rows[i].Slug = fmt.Sprint(i)
		}
		insertNotes(t, db, rows...)
		update(t, db, func(tx *store.Tx) error { return notes.Delete(tx, 5) })
		view(t, db, func(tx *store.Tx) error {
			pages := []struct {
				desc          bool
				offset, limit int
				want          string
			}{
				{false, 0, 3, "[1 2 3]"},
				{false, 3, 4, "[4 6 7 8]"},
				{false, 9, 5, "[11 12]"},
				{false, 11, 5, "[]"},
				{false, 50, 5, "[]"},
				{true, 0, 3, "[12 11 10]"},
				{true, 7, 10, "[4 3 2 1]"},
				{false, 0, 0, "[]"},
			}
			for _, p := range pages {
				got, total, err := notes.Page(tx, p.desc, p.offset, p.limit)
				if err != nil || fmt.Sprint(idsOf(got)) != p.want || total != 11 {
					t.Errorf("Page(desc %v, offset %d, limit %d) = %v total %d, %v; want %s total 11",
						p.desc, p.offset, p.limit, idsOf(got), total, err, p.want)
				}
			}
			var seen []int64
			err := notes.Scan(tx, true, 2, func(n *note) (bool, error) {
				seen = append(seen, n.ID)
				return len(seen) < 3, nil
			})
			if err != nil || fmt.Sprint(seen) != "[10 9 8]" {
				t.Errorf("Scan(desc, skip 2, stop after 3) = %v, %v; want [10 9 8]", seen, err)
			}
			err = notes.Scan(tx, false, 0, func(n *note) (bool, error) {
				return true, errRefused
			})
			if !errors.Is(err, errRefused) {
				t.Errorf("Scan did not pass on fn's error: %v", err)
			}
			return nil
		})
	})

	t.Run("Search finds substrings in any case", func(t *testing.T) {
		db := openNotes(t, open)
		insertNotes(t, db,
			note{Slug: "1", Title: "Fennec Store Engine"},
			note{Slug: "2", Title: "PostgreSQL engine"},
			note{Slug: "3", Title: "bbolt file"},
			note{Slug: "4", Title: "ÉCOLE été"})
		search := func(tx *store.Tx, q string) string {
			ids, ok, err := notes.Search(tx, "title", q)
			if err != nil || !ok {
				t.Errorf("Search(%q): ok %v, %v", q, ok, err)
			}
			return fmt.Sprint(ids)
		}
		view(t, db, func(tx *store.Tx) error {
			cases := map[string]string{
				"engine": "[1 2]", "ENGINE": "[1 2]", "eNgInE": "[1 2]", "store": "[1]", "SQL": "[2]",
				"olt fi": "[3]", "zzz": "[]", "école": "[4]", "ÉTÉ": "[4]", "fennec store engine": "[1]",
			}
			for q, want := range cases {
				if got := search(tx, q); got != want {
					t.Errorf("Search(%q) = %s, want %s", q, got, want)
				}
			}
			if _, ok, err := notes.Search(tx, "title", "en"); ok || err != nil {
				t.Errorf("Search of a two-byte query: ok %v, %v; want false: the caller scans", ok, err)
			}
			if _, _, err := notes.Search(tx, "owner", "abc"); err == nil {
				t.Error("Search on an index that is not a search index succeeded")
			}
			return nil
		})
		update(t, db, func(tx *store.Tx) error {
			return notes.Update(tx, &note{ID: 3, Slug: "3", Title: "an engine file"})
		})
		view(t, db, func(tx *store.Tx) error {
			if got := search(tx, "engine"); got != "[1 2 3]" {
				t.Errorf("Search(engine) after an edit = %s, want [1 2 3]", got)
			}
			if got := search(tx, "bbolt"); got != "[]" {
				t.Errorf("Search(bbolt) after an edit = %s, want []", got)
			}
			return nil
		})
	})

	t.Run("Reindex rebuilds an index from the rows", func(t *testing.T) {
		db := open(t)
		// Version one of a table, without the indexes a later migration
		// adds (same name, same buckets for the rows).
		plain := store.NewTable[int64, note](notesName, byTitle)
		ensure(t, db, plain.Buckets()...)
		update(t, db, func(tx *store.Tx) error {
			for _, n := range []note{{Slug: "x", Owner: "ann", Title: "alpha"}, {Slug: "y", Owner: "bob", Title: "beta"}, {Slug: "z", Owner: "ann", Title: "gamma"}} {
				if err := plain.Insert(tx, &n); err != nil {
					return err
				}
			}
			return nil
		})
		ensure(t, db, notes.Buckets()...)
		update(t, db, func(tx *store.Tx) error {
			for _, ix := range []string{"owner", "slug", "title"} {
				if err := notes.Reindex(tx, ix); err != nil {
					return err
				}
			}
			return nil
		})
		view(t, db, func(tx *store.Tx) error {
			if ids, _ := notes.IDsBy(tx, "owner", "ann"); fmt.Sprint(ids) != "[1 3]" {
				t.Errorf("owner ann after Reindex = %v, want [1 3]", ids)
			}
			if n, err := notes.GetBy(tx, "slug", "y"); err != nil || n.ID != 2 {
				t.Errorf("slug y after Reindex = %+v, %v", n, err)
			}
			if ids, _, _ := notes.Search(tx, "title", "AMM"); fmt.Sprint(ids) != "[3]" {
				t.Errorf("Search(AMM) after Reindex = %v, want [3]", ids)
			}
			return nil
		})
		// Rows that break a unique index: Reindex refuses, and the
		// transaction (a migration) rolls back.
		update(t, db, func(tx *store.Tx) error {
			return plain.Update(tx, &note{ID: 3, Slug: "X", Owner: "ann", Title: "gamma"})
		})
		err := db.Update(t.Context(), func(tx *store.Tx) error { return notes.Reindex(tx, "slug") })
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("Reindex over duplicate unique keys: %v, want ErrConflict", err)
		}
		view(t, db, func(tx *store.Tx) error {
			if n, err := notes.GetBy(tx, "slug", "y"); err != nil || n.ID != 2 {
				t.Errorf("after a refused Reindex slug y = %+v, %v; want the old index kept", n, err)
			}
			return nil
		})
	})
}
