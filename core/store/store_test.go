package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// user is the record type of the test table.
type user struct {
	ID     uint64   `json:"id"`
	Name   string   `json:"name"`
	Emails []string `json:"emails,omitempty"`
	Team   string   `json:"team,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Phase  string   `json:"phase,omitempty"`
}

func (u *user) RecordID() uint64      { return u.ID }
func (u *user) SetRecordID(id uint64) { u.ID = id }

const usersTable = "test.users"

// users has two unique indexes (one with several keys per row) and two
// non-unique ones; the order of the indexes matters for the partial-write
// tests: "name" is written before "email".
var users = store.NewTable[uint64, user](usersTable,
	store.Index[user]{Name: "name", Unique: true, Keys: func(u *user) []string { return []string{store.Fold(u.Name)} }},
	store.Index[user]{Name: "email", Unique: true, Keys: func(u *user) []string {
		out := make([]string, 0, len(u.Emails))
		for _, e := range u.Emails {
			out = append(out, store.Fold(e))
		}
		return out
	}},
	store.Index[user]{Name: "team", Keys: func(u *user) []string { return []string{u.Team} }},
	store.Index[user]{Name: "tag", Keys: func(u *user) []string { return u.Tags }},
)

var errBoom = errors.New("boom")

// openDB opens a fresh database in a temp dir with the users table declared.
func openDB(t testing.TB, opts store.Options) *store.DB {
	t.Helper()
	db := openAt(t, filepath.Join(t.TempDir(), "fennec.db"), opts)
	if err := db.EnsureBuckets(users.Buckets()); err != nil {
		t.Fatalf("EnsureBuckets: %v", err)
	}
	return db
}

func openAt(t testing.TB, path string, opts store.Options) *store.DB {
	t.Helper()
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func update(t testing.TB, db *store.DB, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t testing.TB, db *store.DB, fn func(tx *store.Tx) error) {
	t.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// insert stores the rows in one transaction and returns their ids.
func insert(t testing.TB, db *store.DB, rows ...*user) []uint64 {
	t.Helper()
	ids := make([]uint64, 0, len(rows))
	update(t, db, func(tx *store.Tx) error {
		for _, r := range rows {
			if err := users.Insert(tx, r); err != nil {
				return err
			}
			ids = append(ids, r.ID)
		}
		return nil
	})
	return ids
}

func get(t testing.TB, db *store.DB, id uint64) (*user, error) {
	t.Helper()
	var u *user
	err := db.View(context.Background(), func(tx *store.Tx) error {
		var err error
		u, err = users.Get(tx, id)
		return err
	})
	return u, err
}

func getBy(t testing.TB, db *store.DB, index, key string) (*user, error) {
	t.Helper()
	var u *user
	err := db.View(context.Background(), func(tx *store.Tx) error {
		var err error
		u, err = users.GetBy(tx, index, key)
		return err
	})
	return u, err
}

// wantGetBy asserts that the unique key resolves to the row with id want.
func wantGetBy(t testing.TB, db *store.DB, index, key string, want uint64) {
	t.Helper()
	u, err := getBy(t, db, index, key)
	if err != nil {
		t.Fatalf("GetBy(%s, %q): %v, want row %d", index, key, err, want)
	}
	if u.ID != want {
		t.Fatalf("GetBy(%s, %q) = row %d, want row %d", index, key, u.ID, want)
	}
}

// wantNoKey asserts that the unique key resolves to nothing.
func wantNoKey(t testing.TB, db *store.DB, index, key string) {
	t.Helper()
	u, err := getBy(t, db, index, key)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetBy(%s, %q) = %+v, %v; want ErrNotFound", index, key, u, err)
	}
}

func idsBy(t testing.TB, db *store.DB, index, key string) []uint64 {
	t.Helper()
	var ids []uint64
	view(t, db, func(tx *store.Tx) error {
		var err error
		ids, err = users.IDsBy(tx, index, key)
		return err
	})
	return ids
}

func count(t testing.TB, db *store.DB) int {
	t.Helper()
	var n int
	view(t, db, func(tx *store.Tx) error {
		n = users.Count(tx)
		return nil
	})
	return n
}

// bucketKeys is the number of keys in a raw bucket (index buckets are named
// by Table.Buckets, so this stays black-box).
func bucketKeys(t testing.TB, db *store.DB, name string) int {
	t.Helper()
	var n int
	view(t, db, func(tx *store.Tx) error {
		k := store.Keys(name)
		if !k.Exists(tx) {
			return fmt.Errorf("no bucket %q", name)
		}
		n = k.Count(tx)
		return nil
	})
	return n
}

func wantConflict(t testing.TB, err error, want store.ConflictError) {
	t.Helper()
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	var ce *store.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %T %v, want *store.ConflictError", err, err)
	}
	if *ce != want {
		t.Fatalf("ConflictError = %+v, want %+v", *ce, want)
	}
}

// ---------------------------------------------------------------------------
// Open, locking, buckets

func TestOpenCreatesFileAndParentDirs(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "fennec.db")
	db := openAt(t, path, store.Options{})
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("database file: %v", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want regular 0600", fi.Mode())
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("parent dir: %v", err)
	}
	if !di.IsDir() || di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, want dir 0700", di.Mode())
	}
}

func TestOpenPersistsAcrossReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fennec.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnsureBuckets(users.Buckets()); err != nil {
		t.Fatal(err)
	}
	insert(t, db, &user{Name: "alice"}, &user{Name: "bob"})
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db = openAt(t, path, store.Options{})
	wantGetBy(t, db, "name", "bob", 2)
	if n := count(t, db); n != 2 {
		t.Errorf("Count after reopen = %d, want 2", n)
	}
	if ids := insert(t, db, &user{Name: "carol"}); ids[0] != 3 {
		t.Errorf("id after reopen = %d, want 3", ids[0])
	}
}

func TestOpenLockedFailsFast(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fennec.db")
	first := openAt(t, path, store.Options{})

	start := time.Now()
	second, err := store.Open(path, store.Options{}) // default LockTimeout (1s)
	elapsed := time.Since(start)
	if err == nil {
		second.Close()
		t.Fatal("second Open of a locked database succeeded")
	}
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "database is locked") || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %q, want it to mention %q and the path %q", err, "database is locked", path)
	}
	if elapsed > 1500*time.Millisecond {
		t.Errorf("second Open took %v, want <= 1.5s", elapsed)
	}

	// Once the holder lets go, the file opens again.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	third, err := store.Open(path, store.Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	third.Close()
}

func TestOpenShortLockTimeout(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fennec.db")
	openAt(t, path, store.Options{})
	start := time.Now()
	_, err := store.Open(path, store.Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("Open with LockTimeout 100ms took %v", d)
	}
}

func TestOpenRejectsNonDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "garbage.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a bbolt file "), 1024), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(path, store.Options{LockTimeout: 100 * time.Millisecond})
	if err == nil {
		db.Close()
		t.Fatal("Open of a garbage file succeeded")
	}
	if errors.Is(err, store.ErrLocked) {
		t.Errorf("err = %v, must not be ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("err = %q, want the path in it", err)
	}
}

func TestEnsureBucketsIdempotent(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "alice"})
	for i := 0; i < 3; i++ {
		if err := db.EnsureBuckets(users.Buckets()); err != nil {
			t.Fatalf("EnsureBuckets #%d: %v", i+2, err)
		}
	}
	// Existing data survives, new buckets appear.
	wantGetBy(t, db, "name", "alice", 1)
	if err := db.EnsureBuckets([]string{"extra", "extra"}); err != nil {
		t.Fatal(err)
	}
	view(t, db, func(tx *store.Tx) error {
		if !store.Keys("extra").Exists(tx) {
			t.Error("bucket extra not created")
		}
		return nil
	})
	if err := db.EnsureBuckets([]string{""}); err == nil {
		t.Error("EnsureBuckets with an empty name succeeded")
	}
}

func TestTableBuckets(t *testing.T) {
	t.Parallel()
	want := []string{usersTable, usersTable + "#name", usersTable + "#email", usersTable + "#team", usersTable + "#tag"}
	if got := users.Buckets(); !slices.Equal(got, want) {
		t.Errorf("Buckets() = %q, want %q", got, want)
	}
	if users.Name() != usersTable {
		t.Errorf("Name() = %q", users.Name())
	}
}

func TestUndeclaredTable(t *testing.T) {
	t.Parallel()
	db := openAt(t, filepath.Join(t.TempDir(), "fennec.db"), store.Options{})
	err := db.Update(context.Background(), func(tx *store.Tx) error { return users.Insert(tx, &user{Name: "x"}) })
	if err == nil || !strings.Contains(err.Error(), "no bucket") {
		t.Errorf("Insert into undeclared table: %v, want a 'no bucket' error", err)
	}
	view(t, db, func(tx *store.Tx) error {
		if users.Exists(tx, 1) {
			t.Error("Exists on undeclared table = true")
		}
		if _, err := users.Get(tx, 1); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get on undeclared table: %v, want a bucket error", err)
		}
		if n := users.Count(tx); n != 0 {
			t.Errorf("Count = %d", n)
		}
		return nil
	})
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	fn := func(*store.Tx) error { called = true; return nil }
	for name, run := range map[string]func(context.Context, func(*store.Tx) error) error{
		"View": db.View, "Update": db.Update, "UpdateAlone": db.UpdateAlone,
	} {
		if err := run(ctx, fn); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with canceled ctx: %v, want context.Canceled", name, err)
		}
	}
	if called {
		t.Error("fn ran despite a canceled context")
	}
}

// ---------------------------------------------------------------------------
// Keys

func TestKeyRoundTrip(t *testing.T) {
	t.Parallel()
	for _, id := range []uint64{0, 1, 255, 256, 1<<32 - 1, 1 << 32, 1<<63 + 5, math.MaxUint64} {
		k := store.Key(id)
		if len(k) != 8 {
			t.Fatalf("len(Key(%d)) = %d", id, len(k))
		}
		if binary.BigEndian.Uint64(k) != id {
			t.Errorf("Key(%d) = %x, not big-endian", id, k)
		}
		if got := store.KeyID(k); got != id {
			t.Errorf("KeyID(Key(%d)) = %d", id, got)
		}
		// Composite keys (prefix + id) decode to their trailing id.
		if got := store.KeyID(append([]byte("prefix\x00"), k...)); got != id {
			t.Errorf("KeyID(prefix+Key(%d)) = %d", id, got)
		}
	}
	for _, short := range [][]byte{nil, {}, {1, 2, 3, 4, 5, 6, 7}} {
		if got := store.KeyID(short); got != 0 {
			t.Errorf("KeyID(%x) = %d, want 0", short, got)
		}
	}
}

func TestKeyOrderIsNumericOrder(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	edges := []uint64{0, 1, 255, 256, 65535, 65536, 1<<56 - 1, 1 << 56, math.MaxUint64 - 1, math.MaxUint64}
	vals := append([]uint64(nil), edges...)
	for i := 0; i < 2000; i++ {
		vals = append(vals, r.Uint64()>>(r.UintN(64)))
	}
	for i := 0; i < len(vals); i++ {
		a, b := vals[i], vals[(i*7+3)%len(vals)]
		want := 0
		if a < b {
			want = -1
		} else if a > b {
			want = 1
		}
		if got := bytes.Compare(store.Key(a), store.Key(b)); got != want {
			t.Fatalf("bytes.Compare(Key(%d), Key(%d)) = %d, want %d", a, b, got, want)
		}
	}
}

func TestFold(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"  Alice@Example.COM\t": "alice@example.com", "": "", "bob": "bob"} {
		if got := store.Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

// ---------------------------------------------------------------------------
// CRUD

func TestInsertAssignsSequentialIDs(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	if got := insert(t, db, &user{Name: "a"}, &user{Name: "b"}); !slices.Equal(got, []uint64{1, 2}) {
		t.Fatalf("ids = %v, want [1 2]", got)
	}
	if got := insert(t, db, &user{Name: "c"}); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("id = %v, want [3]", got)
	}
	// Stored records carry their id.
	u, err := get(t, db, 3)
	if err != nil || u.ID != 3 || u.Name != "c" {
		t.Fatalf("Get(3) = %+v, %v", u, err)
	}
}

func TestInsertSequenceRollsBackWithTransaction(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "a"})
	var assigned uint64
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for _, n := range []string{"b", "c"} {
			r := &user{Name: n}
			if err := users.Insert(tx, r); err != nil {
				return err
			}
			assigned = r.ID
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want errBoom", err)
	}
	if assigned != 3 {
		t.Fatalf("inside the failed tx the last id was %d, want 3", assigned)
	}
	if n := count(t, db); n != 1 {
		t.Errorf("Count = %d, want 1", n)
	}
	wantNoKey(t, db, "name", "b")
	if _, err := get(t, db, 2); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(2) after rollback: %v, want ErrNotFound", err)
	}
	if got := insert(t, db, &user{Name: "d"}); got[0] != 2 {
		t.Errorf("next id after rolled-back inserts = %d, want 2", got[0])
	}
}

func TestGetExistsUpdateDelete(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "alice", Team: "red"}, &user{Name: "bob"})

	view(t, db, func(tx *store.Tx) error {
		for id, want := range map[uint64]bool{0: false, 1: true, 2: true, 3: false} {
			if got := users.Exists(tx, id); got != want {
				t.Errorf("Exists(%d) = %v, want %v", id, got, want)
			}
		}
		if u, err := users.Get(tx, 3); !errors.Is(err, store.ErrNotFound) || u != nil {
			t.Errorf("Get(3) = %+v, %v; want nil, ErrNotFound", u, err)
		}
		return nil
	})

	update(t, db, func(tx *store.Tx) error {
		u, err := users.Get(tx, 1)
		if err != nil {
			return err
		}
		u.Team = "blue"
		u.Tags = []string{"x"}
		return users.Update(tx, u)
	})
	u, err := get(t, db, 1)
	if err != nil || u.Team != "blue" || u.Name != "alice" || !slices.Equal(u.Tags, []string{"x"}) {
		t.Fatalf("after Update Get(1) = %+v, %v", u, err)
	}
	if n := count(t, db); n != 2 {
		t.Errorf("Count after Update = %d, want 2", n)
	}

	// Update and Delete of a missing row.
	err = db.Update(context.Background(), func(tx *store.Tx) error { return users.Update(tx, &user{ID: 9, Name: "ghost"}) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Update(missing) = %v, want ErrNotFound", err)
	}
	wantNoKey(t, db, "name", "ghost")
	err = db.Update(context.Background(), func(tx *store.Tx) error { return users.Delete(tx, 9) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete(missing) = %v, want ErrNotFound", err)
	}

	update(t, db, func(tx *store.Tx) error { return users.Delete(tx, 1) })
	if _, err := get(t, db, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(1) after Delete: %v", err)
	}
	wantNoKey(t, db, "name", "alice")
	if ids := idsBy(t, db, "team", "blue"); len(ids) != 0 {
		t.Errorf("team index after Delete = %v", ids)
	}
	if n := count(t, db); n != 1 {
		t.Errorf("Count after Delete = %d, want 1", n)
	}
	// Ids are not reused after a delete.
	if got := insert(t, db, &user{Name: "carol"}); got[0] != 3 {
		t.Errorf("id after delete = %d, want 3", got[0])
	}
}

func TestCount(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	if n := count(t, db); n != 0 {
		t.Fatalf("Count of empty table = %d", n)
	}
	for i := 0; i < 5; i++ {
		insert(t, db, &user{Name: fmt.Sprint("u", i)})
	}
	if n := count(t, db); n != 5 {
		t.Fatalf("Count = %d, want 5", n)
	}
	update(t, db, func(tx *store.Tx) error {
		if err := users.Delete(tx, 2); err != nil {
			return err
		}
		return users.Delete(tx, 4)
	})
	if n := count(t, db); n != 3 {
		t.Fatalf("Count after 2 deletes = %d, want 3", n)
	}
	// A failed delete does not touch the count.
	_ = db.Update(context.Background(), func(tx *store.Tx) error { return users.Delete(tx, 2) })
	if n := count(t, db); n != 3 {
		t.Fatalf("Count after a failed delete = %d, want 3", n)
	}
	update(t, db, func(tx *store.Tx) error {
		for _, id := range []uint64{1, 3, 5} {
			if err := users.Delete(tx, id); err != nil {
				return err
			}
		}
		return nil
	})
	if n := count(t, db); n != 0 {
		t.Fatalf("Count after deleting all = %d, want 0", n)
	}
	// No index entries are left behind.
	for _, b := range users.Buckets() {
		if n := bucketKeys(t, db, b); n != 0 {
			t.Errorf("bucket %s has %d keys after deleting every row", b, n)
		}
	}
}

// ---------------------------------------------------------------------------
// Unique indexes

func TestUniqueConflictOnInsert(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "Alice", Emails: []string{"alice@example.com"}, Team: "red"})

	tests := []struct {
		name string
		row  user
		want store.ConflictError
	}{
		{"same name", user{Name: "alice"}, store.ConflictError{Table: usersTable, Index: "name", Key: "alice"}},
		{"name differs in case and space", user{Name: " ALICE "}, store.ConflictError{Table: usersTable, Index: "name", Key: "alice"}},
		{"second email taken", user{Name: "bob", Emails: []string{"bob@example.com", "Alice@Example.com"}}, store.ConflictError{Table: usersTable, Index: "email", Key: "alice@example.com"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := tc.row
			err := db.Update(context.Background(), func(tx *store.Tx) error { return users.Insert(tx, &row) })
			wantConflict(t, err, tc.want)
			if !strings.Contains(err.Error(), usersTable+"."+tc.want.Index) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.want.Key)) {
				t.Errorf("message %q does not name the index and key", err)
			}
			// Nothing changed.
			if n := count(t, db); n != 1 {
				t.Errorf("Count = %d, want 1", n)
			}
			wantGetBy(t, db, "name", "alice", 1)
			wantGetBy(t, db, "email", "alice@example.com", 1)
			wantNoKey(t, db, "name", "bob")
			wantNoKey(t, db, "email", "bob@example.com")
			if n := bucketKeys(t, db, usersTable); n != 1 {
				t.Errorf("rows = %d, want 1", n)
			}
		})
	}
	// The sequence was rolled back with each failed transaction.
	if got := insert(t, db, &user{Name: "bob"}); got[0] != 2 {
		t.Errorf("id after failed inserts = %d, want 2", got[0])
	}
}

func TestUniqueConflictOnUpdate(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db,
		&user{Name: "alice", Emails: []string{"a@x"}, Team: "red", Tags: []string{"t"}},
		&user{Name: "bob", Emails: []string{"b@x", "b2@x"}, Team: "blue", Tags: []string{"t"}},
	)
	tests := []struct {
		name   string
		change func(u *user)
		want   store.ConflictError
	}{
		{"name to another row's", func(u *user) { u.Name = "ALICE" }, store.ConflictError{Table: usersTable, Index: "name", Key: "alice"}},
		{"email to another row's", func(u *user) { u.Emails = []string{"b@x", "a@x"} }, store.ConflictError{Table: usersTable, Index: "email", Key: "a@x"}},
		{"name and team", func(u *user) { u.Team = "green"; u.Name = "alice" }, store.ConflictError{Table: usersTable, Index: "name", Key: "alice"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := db.Update(context.Background(), func(tx *store.Tx) error {
				u, err := users.Get(tx, 2)
				if err != nil {
					return err
				}
				tc.change(u)
				return users.Update(tx, u)
			})
			wantConflict(t, err, tc.want)
			u, err := get(t, db, 2)
			if err != nil || u.Name != "bob" || u.Team != "blue" || !slices.Equal(u.Emails, []string{"b@x", "b2@x"}) {
				t.Fatalf("row 2 changed: %+v, %v", u, err)
			}
			wantGetBy(t, db, "name", "alice", 1)
			wantGetBy(t, db, "name", "bob", 2)
			wantGetBy(t, db, "email", "a@x", 1)
			wantGetBy(t, db, "email", "b@x", 2)
			wantGetBy(t, db, "email", "b2@x", 2)
			if ids := idsBy(t, db, "team", "blue"); !slices.Equal(ids, []uint64{2}) {
				t.Errorf("team blue = %v, want [2]", ids)
			}
			if ids := idsBy(t, db, "team", "green"); len(ids) != 0 {
				t.Errorf("team green = %v, want []", ids)
			}
			if ids := idsBy(t, db, "tag", "t"); !slices.Equal(ids, []uint64{1, 2}) {
				t.Errorf("tag t = %v, want [1 2]", ids)
			}
			if n := count(t, db); n != 2 {
				t.Errorf("Count = %d, want 2", n)
			}
		})
	}
}

// A ConflictError is a refusal the caller may handle inside its transaction
// (skip the row, try another name) and then commit. The refused write must
// not have changed anything.

func TestInsertConflictHandledInTxLeavesNoDanglingKey(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "alice", Emails: []string{"a@x"}})
	update(t, db, func(tx *store.Tx) error {
		err := users.Insert(tx, &user{Name: "bob", Emails: []string{"a@x"}})
		var ce *store.ConflictError
		if !errors.As(err, &ce) || ce.Index != "email" {
			return fmt.Errorf("Insert = %v, want email conflict", err)
		}
		return nil // handled: commit the rest of the work
	})
	// Today the name index keeps "bob" -> 2, a row that does not exist.
	if ids := idsBy(t, db, "name", "bob"); len(ids) != 0 {
		t.Errorf("name index has bob -> %v after the refused insert, want nothing", ids)
	}
	wantNoKey(t, db, "name", "bob")
	// So the name cannot be used any more, and the refused insert used up id 2.
	var r user
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		r = user{Name: "bob", Emails: []string{"b@x"}}
		return users.Insert(tx, &r)
	})
	if err != nil {
		t.Fatalf("inserting the free name bob: %v", err)
	}
	if r.ID != 2 {
		t.Errorf("id = %d, want 2 (the refused insert must not consume an id)", r.ID)
	}
	if n := count(t, db); n != 2 {
		t.Errorf("Count = %d, want 2", n)
	}
}

func TestUpdateConflictHandledInTxKeepsIndexes(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "alice", Team: "red"}, &user{Name: "bob", Emails: []string{"b@x"}, Team: "blue"})
	update(t, db, func(tx *store.Tx) error {
		u, err := users.Get(tx, 2)
		if err != nil {
			return err
		}
		u.Name = "alice"
		err = users.Update(tx, u)
		var ce *store.ConflictError
		if !errors.As(err, &ce) || ce.Index != "name" {
			return fmt.Errorf("Update = %v, want name conflict", err)
		}
		return nil // handled: the row keeps its old name
	})
	wantGetBy(t, db, "name", "bob", 2) // fails: ErrNotFound
	wantGetBy(t, db, "email", "b@x", 2)
	if ids := idsBy(t, db, "team", "blue"); !slices.Equal(ids, []uint64{2}) {
		t.Errorf("team blue = %v, want [2]", ids)
	}
}

func TestUpdateMovesUniqueKey(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "alice", Emails: []string{"a@x", "a2@x"}}, &user{Name: "bob"})
	update(t, db, func(tx *store.Tx) error {
		u, err := users.Get(tx, 1)
		if err != nil {
			return err
		}
		u.Name = "Alicia"
		u.Emails = []string{"a2@x", "a3@x"}
		return users.Update(tx, u)
	})
	wantNoKey(t, db, "name", "alice")
	wantGetBy(t, db, "name", "alicia", 1)
	wantNoKey(t, db, "email", "a@x")
	wantGetBy(t, db, "email", "a2@x", 1)
	wantGetBy(t, db, "email", "a3@x", 1)
	if n := bucketKeys(t, db, usersTable+"#email"); n != 2 {
		t.Errorf("email index has %d keys, want 2", n)
	}

	// The freed keys can be taken by another row, the kept ones cannot.
	if got := insert(t, db, &user{Name: "alice", Emails: []string{"a@x"}}); got[0] != 3 {
		t.Fatalf("re-insert id = %d, want 3", got[0])
	}
	wantGetBy(t, db, "name", "alice", 3)
	wantGetBy(t, db, "email", "a@x", 3)
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		return users.Insert(tx, &user{Name: "dora", Emails: []string{"a3@x"}})
	})
	wantConflict(t, err, store.ConflictError{Table: usersTable, Index: "email", Key: "a3@x"})

	// Updating a row without changing its keys is not a conflict with itself.
	update(t, db, func(tx *store.Tx) error {
		u, err := users.Get(tx, 3)
		if err != nil {
			return err
		}
		u.Team = "red"
		return users.Update(tx, u)
	})
	wantGetBy(t, db, "name", "alice", 3)
}

func TestSwapUniqueKeysInOneTransaction(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "a"}, &user{Name: "b"})
	update(t, db, func(tx *store.Tx) error {
		u1, _ := users.Get(tx, 1)
		u2, _ := users.Get(tx, 2)
		u1.Name = "tmp"
		if err := users.Update(tx, u1); err != nil {
			return err
		}
		u2.Name = "a"
		if err := users.Update(tx, u2); err != nil {
			return err
		}
		u1.Name = "b"
		return users.Update(tx, u1)
	})
	wantGetBy(t, db, "name", "a", 2)
	wantGetBy(t, db, "name", "b", 1)
	wantNoKey(t, db, "name", "tmp")
}

func TestGetByErrors(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "a", Team: "red"})
	view(t, db, func(tx *store.Tx) error {
		if _, err := users.GetBy(tx, "team", "red"); err == nil || !strings.Contains(err.Error(), "not unique") {
			t.Errorf("GetBy on a non-unique index: %v", err)
		}
		if _, err := users.GetBy(tx, "nope", "a"); err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
			t.Errorf("GetBy on an unknown index: %v", err)
		}
		if _, err := users.IDsBy(tx, "nope", "a"); err == nil {
			t.Error("IDsBy on an unknown index succeeded")
		}
		// IDsBy works on unique indexes too.
		if ids, err := users.IDsBy(tx, "name", "a"); err != nil || !slices.Equal(ids, []uint64{1}) {
			t.Errorf("IDsBy(name, a) = %v, %v", ids, err)
		}
		if ids, err := users.IDsBy(tx, "name", "zz"); err != nil || ids == nil || len(ids) != 0 {
			t.Errorf("IDsBy(name, zz) = %#v, %v; want empty non-nil", ids, err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// Non-unique indexes and key edge cases

func TestNonUniqueIndexKeysDoNotLeak(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	teams := []string{"ab", "ab\x00c", "abc", "a", "", "ab", "ab\x00", "b"}
	rows := make([]*user, len(teams))
	for i, tm := range teams {
		rows[i] = &user{Name: fmt.Sprint("u", i+1), Team: tm}
	}
	insert(t, db, rows...)

	tests := []struct {
		key  string
		want []uint64
	}{
		{"ab", []uint64{1, 6}},
		{"ab\x00c", []uint64{2}},
		{"abc", []uint64{3}},
		{"a", []uint64{4}},
		{"ab\x00", []uint64{7}},
		{"ab\x00\x00", nil},
		{"b", []uint64{8}},
		{"", nil},
		{"zzz", nil},
		{"\x00", nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q", tc.key), func(t *testing.T) {
			got := idsBy(t, db, "team", tc.key)
			if got == nil {
				t.Fatalf("IDsBy(%q) returned nil, want a non-nil slice", tc.key)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("IDsBy(team, %q) = %v, want %v", tc.key, got, tc.want)
			}
		})
	}
	// Row 5 has an empty team: it is not in the index at all.
	if n := bucketKeys(t, db, usersTable+"#team"); n != 7 {
		t.Errorf("team index has %d entries, want 7", n)
	}
}

func TestNonUniqueIndexAscendingAndMaintained(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	rows := make([]*user, 300) // ids beyond one byte check big-endian ordering
	for i := range rows {
		tm := "odd"
		if i%2 == 1 {
			tm = "even"
		}
		rows[i] = &user{Name: fmt.Sprint("u", i+1), Team: tm}
	}
	insert(t, db, rows...)
	even := idsBy(t, db, "team", "even")
	if len(even) != 150 || !slices.IsSorted(even) || even[0] != 2 || even[149] != 300 {
		t.Fatalf("even ids: len %d first %v sorted %v", len(even), even[:3], slices.IsSorted(even))
	}
	for _, id := range even {
		if id%2 != 0 {
			t.Fatalf("odd id %d in team even", id)
		}
	}
	// Move 257 to "even", delete 2.
	update(t, db, func(tx *store.Tx) error {
		u, err := users.Get(tx, 257)
		if err != nil {
			return err
		}
		u.Team = "even"
		if err := users.Update(tx, u); err != nil {
			return err
		}
		return users.Delete(tx, 2)
	})
	even = idsBy(t, db, "team", "even")
	if len(even) != 150 || even[0] != 4 || !slices.IsSorted(even) || !slices.Contains(even, 257) {
		t.Errorf("after move/delete: len %d first %d contains 257 %v", len(even), even[0], slices.Contains(even, 257))
	}
	if odd := idsBy(t, db, "team", "odd"); len(odd) != 149 || slices.Contains(odd, 257) {
		t.Errorf("odd after move: len %d contains 257 %v", len(odd), slices.Contains(odd, 257))
	}
}

func TestEmptyAndDuplicateKeys(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	// Two rows with an empty unique key do not conflict: empty keys are skipped.
	ids := insert(t, db,
		&user{Name: "", Emails: []string{"", "A@x", "a@x ", "a@x"}, Tags: []string{"x", "x", "", "y", "x"}},
		&user{Name: "", Emails: []string{""}},
	)
	if !slices.Equal(ids, []uint64{1, 2}) {
		t.Fatalf("ids = %v", ids)
	}
	wantNoKey(t, db, "name", "")
	wantNoKey(t, db, "email", "")
	wantGetBy(t, db, "email", "a@x", 1)
	if ids := idsBy(t, db, "tag", "x"); !slices.Equal(ids, []uint64{1}) {
		t.Errorf("tag x = %v, want [1] (once)", ids)
	}
	if ids := idsBy(t, db, "tag", ""); len(ids) != 0 {
		t.Errorf("tag '' = %v", ids)
	}
	for b, want := range map[string]int{
		usersTable + "#name":  0,
		usersTable + "#email": 1,
		usersTable + "#tag":   2,
		usersTable + "#team":  0,
	} {
		if n := bucketKeys(t, db, b); n != want {
			t.Errorf("%s has %d keys, want %d", b, n, want)
		}
	}
	// Removing the duplicates on delete leaves nothing behind.
	update(t, db, func(tx *store.Tx) error { return users.Delete(tx, 1) })
	if n := bucketKeys(t, db, usersTable+"#tag"); n != 0 {
		t.Errorf("tag index after delete has %d keys", n)
	}
	if n := bucketKeys(t, db, usersTable+"#email"); n != 0 {
		t.Errorf("email index after delete has %d keys", n)
	}
}

func TestUniqueKeyWithNULBytes(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "ab"}, &user{Name: "ab\x00c"}, &user{Name: "ab\x00"})
	wantGetBy(t, db, "name", "ab", 1)
	wantGetBy(t, db, "name", "ab\x00c", 2)
	wantGetBy(t, db, "name", "ab\x00", 3)
	wantNoKey(t, db, "name", "abc")
}

// ---------------------------------------------------------------------------
// Scan and Page

func fiveRows(t *testing.T) *store.DB {
	t.Helper()
	db := openDB(t, store.Options{})
	for i := 1; i <= 5; i++ {
		insert(t, db, &user{Name: fmt.Sprint("u", i)})
	}
	return db
}

func TestScan(t *testing.T) {
	t.Parallel()
	db := fiveRows(t)
	tests := []struct {
		name string
		desc bool
		skip int
		stop int // stop after this many rows (0: never)
		want []uint64
	}{
		{"asc all", false, 0, 0, []uint64{1, 2, 3, 4, 5}},
		{"desc all", true, 0, 0, []uint64{5, 4, 3, 2, 1}},
		{"asc skip 2", false, 2, 0, []uint64{3, 4, 5}},
		{"desc skip 1 stop 2", true, 1, 2, []uint64{4, 3}},
		{"asc stop 1", false, 0, 1, []uint64{1}},
		{"skip everything", false, 5, 0, nil},
		{"skip past end", true, 50, 0, nil},
		{"negative skip", false, -3, 2, []uint64{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []uint64
			view(t, db, func(tx *store.Tx) error {
				return users.Scan(tx, tc.desc, tc.skip, func(u *user) (bool, error) {
					got = append(got, u.ID)
					return tc.stop == 0 || len(got) < tc.stop, nil
				})
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("error stops and propagates", func(t *testing.T) {
		t.Parallel()
		calls := 0
		err := db.View(context.Background(), func(tx *store.Tx) error {
			return users.Scan(tx, false, 0, func(u *user) (bool, error) {
				calls++
				if u.ID == 2 {
					return true, errBoom
				}
				return true, nil
			})
		})
		if !errors.Is(err, errBoom) || calls != 2 {
			t.Errorf("err = %v after %d calls, want errBoom after 2", err, calls)
		}
	})
}

func TestPage(t *testing.T) {
	t.Parallel()
	db := fiveRows(t)
	tests := []struct {
		name          string
		desc          bool
		offset, limit int
		want          []uint64
	}{
		{"first page", false, 0, 2, []uint64{1, 2}},
		{"second page", false, 2, 2, []uint64{3, 4}},
		{"last partial page", false, 4, 2, []uint64{5}},
		{"desc second page", true, 2, 2, []uint64{3, 2}},
		{"exactly at end", false, 5, 2, []uint64{}},
		{"offset past end", false, 100, 10, []uint64{}},
		{"desc offset past end", true, 6, 1, []uint64{}},
		{"limit zero", false, 0, 0, []uint64{}},
		{"limit larger than table", true, 0, 100, []uint64{5, 4, 3, 2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			view(t, db, func(tx *store.Tx) error {
				rows, total, err := users.Page(tx, tc.desc, tc.offset, tc.limit)
				if err != nil {
					t.Fatalf("Page: %v", err)
				}
				if rows == nil {
					t.Fatal("Page returned a nil slice")
				}
				got := make([]uint64, 0, len(rows))
				for _, r := range rows {
					got = append(got, r.ID)
				}
				if !slices.Equal(got, tc.want) || total != 5 {
					t.Errorf("Page = %v, total %d; want %v, 5", got, total, tc.want)
				}
				return nil
			})
		})
	}
}

func TestPageLimitOutOfRange(t *testing.T) {
	t.Parallel()
	db := fiveRows(t)
	for _, tc := range []struct {
		limit int
		want  int
	}{{-1, 0}, {math.MinInt, 0}, {math.MaxInt, 5}} {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			view(t, db, func(tx *store.Tx) error {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("Page(limit=%d) panicked: %v", tc.limit, r)
					}
				}()
				rows, total, err := users.Page(tx, false, 0, tc.limit)
				if err != nil || rows == nil || len(rows) != tc.want || total != 5 {
					t.Errorf("Page(limit=%d) = %d rows (nil %v), total %d, %v; want %d, 5", tc.limit, len(rows), rows == nil, total, err, tc.want)
				}
				return nil
			})
		})
	}
}

// ---------------------------------------------------------------------------
// Migrations

type migLog struct {
	mu  sync.Mutex
	ran []string
}

func (l *migLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ran = append(l.ran, s)
}

func (l *migLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ran)
}

// mig builds a migration that records itself and writes a marker key into
// the bucket "mig".
func mig(l *migLog, module string, version int) store.Migration {
	name := fmt.Sprintf("%s/%d", module, version)
	return store.Migration{Module: module, Version: version, Name: name, Up: func(tx *store.Tx) error {
		l.add(name)
		mig := store.Keys("mig")
		if err := mig.Ensure(tx); err != nil {
			return err
		}
		return mig.Put(tx, []byte(name), []byte("done"))
	}}
}

func schemaVersion(t *testing.T, db *store.DB, module string) int {
	t.Helper()
	v, err := db.SchemaVersion(module)
	if err != nil {
		t.Fatalf("SchemaVersion(%s): %v", module, err)
	}
	return v
}

func markerExists(t *testing.T, db *store.DB, name string) bool {
	t.Helper()
	found := false
	view(t, db, func(tx *store.Tx) error {
		found = store.Keys("mig").Has(tx, []byte(name))
		return nil
	})
	return found
}

func TestMigrateOrderAndOnce(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	l := &migLog{}
	ms := []store.Migration{mig(l, "webhooks", 2), mig(l, "identity", 3), mig(l, "webhooks", 1), mig(l, "identity", 1), mig(l, "identity", 2), mig(l, "activity", 1)}
	if v := schemaVersion(t, db, "identity"); v != 0 {
		t.Fatalf("fresh SchemaVersion = %d", v)
	}
	if err := db.Migrate(context.Background(), ms); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	want := []string{"activity/1", "identity/1", "identity/2", "identity/3", "webhooks/1", "webhooks/2"}
	if got := l.get(); !slices.Equal(got, want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	for mod, v := range map[string]int{"activity": 1, "identity": 3, "webhooks": 2, "unknown": 0} {
		if got := schemaVersion(t, db, mod); got != v {
			t.Errorf("SchemaVersion(%s) = %d, want %d", mod, got, v)
		}
	}

	// Second run: nothing.
	if err := db.Migrate(context.Background(), ms); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if got := l.get(); len(got) != len(want) {
		t.Fatalf("second Migrate ran %v", got[len(want):])
	}

	// A new release adds one migration: only that one runs.
	ms = append(ms, mig(l, "identity", 4))
	if err := db.Migrate(context.Background(), ms); err != nil {
		t.Fatalf("third Migrate: %v", err)
	}
	if got := l.get(); !slices.Equal(got[len(want):], []string{"identity/4"}) {
		t.Fatalf("third Migrate ran %v, want [identity/4]", got[len(want):])
	}
	if v := schemaVersion(t, db, "identity"); v != 4 {
		t.Errorf("SchemaVersion(identity) = %d, want 4", v)
	}
}

func TestMigratePersistsAcrossReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fennec.db")
	l := &migLog{}
	ms := []store.Migration{mig(l, "m", 1), mig(l, "m", 2)}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openAt(t, path, store.Options{})
	if err := db.Migrate(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	if got := l.get(); !slices.Equal(got, []string{"m/1", "m/2"}) {
		t.Errorf("ran %v, want each once", got)
	}
	if v := schemaVersion(t, db, "m"); v != 2 {
		t.Errorf("SchemaVersion = %d, want 2", v)
	}
}

func TestMigrateRejectsBadSets(t *testing.T) {
	t.Parallel()
	noop := func(*store.Tx) error { return nil }
	tests := []struct {
		name string
		ms   []store.Migration
		want string
	}{
		{"gap", []store.Migration{{Module: "m", Version: 1, Up: noop}, {Module: "m", Version: 3, Up: noop}}, "without gaps"},
		{"duplicate", []store.Migration{{Module: "m", Version: 1, Up: noop}, {Module: "m", Version: 2, Up: noop}, {Module: "m", Version: 2, Up: noop}}, "without gaps"},
		{"starts at 2", []store.Migration{{Module: "m", Version: 2, Up: noop}}, "without gaps"},
		{"version 0", []store.Migration{{Module: "m", Version: 0, Up: noop}, {Module: "m", Version: 1, Up: noop}}, "incomplete"},
		{"negative version", []store.Migration{{Module: "m", Version: -1, Up: noop}}, "incomplete"},
		{"no module", []store.Migration{{Version: 1, Up: noop}}, "incomplete"},
		{"no Up", []store.Migration{{Module: "m", Version: 1}}, "incomplete"},
		// A valid module sorted first must not run when another is invalid.
		{"bad second module", []store.Migration{{Module: "a", Version: 1, Up: noop}, {Module: "z", Version: 2, Up: noop}}, "without gaps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := openDB(t, store.Options{NoSync: true})
			ran := false
			ms := slices.Clone(tc.ms)
			for i := range ms {
				if ms[i].Up != nil {
					ms[i].Up = func(*store.Tx) error { ran = true; return nil }
				}
			}
			err := db.Migrate(context.Background(), ms)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Migrate = %v, want error containing %q", err, tc.want)
			}
			if ran {
				t.Error("a migration ran although the set was rejected")
			}
			for _, mod := range []string{"a", "m", "z"} {
				if v := schemaVersion(t, db, mod); v != 0 {
					t.Errorf("SchemaVersion(%s) = %d, want 0", mod, v)
				}
			}
		})
	}
}

func TestMigrateFailureRollsBack(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	l := &migLog{}
	broken := store.Migration{Module: "m", Version: 2, Name: "broken", Up: func(tx *store.Tx) error {
		mig := store.Keys("mig")
		if err := mig.Ensure(tx); err != nil {
			return err
		}
		if err := mig.Put(tx, []byte("m/2"), []byte("half")); err != nil {
			return err
		}
		if err := users.Insert(tx, &user{Name: "from-migration"}); err != nil {
			return err
		}
		return errBoom
	}}
	err := db.Migrate(context.Background(), []store.Migration{mig(l, "m", 1), broken, mig(l, "m", 3)})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Migrate = %v, want errBoom wrapped", err)
	}
	if !strings.Contains(err.Error(), "m 2 (broken)") {
		t.Errorf("error %q does not name the migration", err)
	}
	if v := schemaVersion(t, db, "m"); v != 1 {
		t.Errorf("SchemaVersion = %d, want 1", v)
	}
	if got := l.get(); !slices.Equal(got, []string{"m/1"}) {
		t.Errorf("ran %v, want [m/1] (m/3 must not run after a failure)", got)
	}
	if !markerExists(t, db, "m/1") || markerExists(t, db, "m/2") {
		t.Error("the failed migration's write survived or m/1's write is missing")
	}
	if n := count(t, db); n != 0 {
		t.Errorf("Count = %d, the failed migration's insert survived", n)
	}

	// Fixed in the next release: resumes at 2.
	err = db.Migrate(context.Background(), []store.Migration{mig(l, "m", 1), mig(l, "m", 2), mig(l, "m", 3)})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.get(); !slices.Equal(got, []string{"m/1", "m/2", "m/3"}) {
		t.Errorf("ran %v", got)
	}
	if v := schemaVersion(t, db, "m"); v != 3 {
		t.Errorf("SchemaVersion = %d, want 3", v)
	}
}

func TestMigrateRefusesNewerDatabase(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	l := &migLog{}
	if err := db.Migrate(context.Background(), []store.Migration{mig(l, "m", 1), mig(l, "m", 2), mig(l, "m", 3)}); err != nil {
		t.Fatal(err)
	}
	err := db.Migrate(context.Background(), []store.Migration{mig(l, "m", 1), mig(l, "m", 2)})
	if err == nil {
		t.Fatal("Migrate with fewer migrations than applied succeeded")
	}
	if !strings.Contains(err.Error(), "schema version 3") || !strings.Contains(err.Error(), "knows only 2") {
		t.Errorf("error %q does not say 3 vs 2", err)
	}
	if v := schemaVersion(t, db, "m"); v != 3 {
		t.Errorf("SchemaVersion = %d, want 3", v)
	}
	if got := l.get(); len(got) != 3 {
		t.Errorf("ran %v", got)
	}
}

func TestMigrateCanceled(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	l := &migLog{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := db.Migrate(ctx, []store.Migration{mig(l, "m", 1)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Migrate = %v, want context.Canceled", err)
	}
	if v := schemaVersion(t, db, "m"); v != 0 || len(l.get()) != 0 {
		t.Errorf("version %d, ran %v", v, l.get())
	}
}

// ---------------------------------------------------------------------------
// Batch

func TestBatchConcurrentInserts(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	const total, workers = 1000, 32
	jobs := make(chan int, total)
	for i := 0; i < total; i++ {
		jobs <- i
	}
	close(jobs)
	var (
		mu   sync.Mutex
		ids  = make([]uint64, 0, total)
		errs []error
		wg   sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for i := range jobs {
				var id uint64
				err := db.Update(context.Background(), func(tx *store.Tx) error {
					r := &user{Name: fmt.Sprint("user-", i), Tags: []string{fmt.Sprint("w", i%7)}}
					if err := users.Insert(tx, r); err != nil {
						return err
					}
					id = r.ID
					return nil
				})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					ids = append(ids, id)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d Batch calls failed, first: %v", len(errs), errs[0])
	}
	slices.Sort(ids)
	for i, id := range ids {
		if id != uint64(i+1) {
			t.Fatalf("ids are not exactly 1..%d: position %d holds %d", total, i, id)
		}
	}
	if len(ids) != total {
		t.Fatalf("%d ids, want %d", len(ids), total)
	}
	if n := count(t, db); n != total {
		t.Errorf("Count = %d, want %d", n, total)
	}
	if n := bucketKeys(t, db, usersTable+"#name"); n != total {
		t.Errorf("name index has %d keys, want %d", n, total)
	}
	var tagged int
	for w := 0; w < 7; w++ {
		tagged += len(idsBy(t, db, "tag", fmt.Sprint("w", w)))
	}
	if tagged != total {
		t.Errorf("tag index covers %d rows, want %d", tagged, total)
	}
}

func TestBatchFailingCallDoesNotSpoilOthers(t *testing.T) {
	t.Parallel()
	// Concurrent calls share group-commit rounds; the property holds whether
	// the failing call shares a round with others or not.
	db := openDB(t, store.Options{})
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Go(func() {
			errs[i] = db.Update(context.Background(), func(tx *store.Tx) error {
				if err := users.Insert(tx, &user{Name: fmt.Sprint("b", i)}); err != nil {
					return err
				}
				if i == 7 {
					return errBoom
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i == 7 {
			if !errors.Is(err, errBoom) {
				t.Errorf("call 7: %v, want errBoom", err)
			}
		} else if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if c := count(t, db); c != n-1 {
		t.Errorf("Count = %d, want %d", c, n-1)
	}
	wantNoKey(t, db, "name", "b7")
	// The failed call's id was rolled back: the ids are 1..n-1.
	var ids []uint64
	view(t, db, func(tx *store.Tx) error {
		return users.Scan(tx, false, 0, func(u *user) (bool, error) { ids = append(ids, u.ID); return true, nil })
	})
	if len(ids) != n-1 || ids[0] != 1 || ids[len(ids)-1] != n-1 {
		t.Errorf("ids = %v, want 1..%d", ids, n-1)
	}
}

// ---------------------------------------------------------------------------
// Backup and Verify

// gateWriter blocks its first Write until release is closed, so the backup is
// held open while the writers carry on.
type gateWriter struct {
	w       io.Writer
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.once.Do(func() {
		close(g.started)
		<-g.release
	})
	return g.w.Write(p)
}

func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{NoSync: true})
	// Grow the file and free the space again, so that writers during the
	// backup reuse free pages instead of remapping (bbolt's remap waits for
	// open read transactions, which would stall the writers).
	update(t, db, func(tx *store.Tx) error {
		if err := store.Keys("scratch").Ensure(tx); err != nil {
			return err
		}
		return store.Keys("scratch").Put(tx, []byte("blob"), make([]byte, 8<<20))
	})
	update(t, db, func(tx *store.Tx) error { return store.Keys("scratch").Drop(tx) })
	update(t, db, func(*store.Tx) error { return nil }) // release the freed pages

	var (
		backupStarted atomic.Bool // set before the snapshot's read tx begins
		inBackup      = make(chan struct{})
		mu            sync.Mutex
		before        []uint64 // committed before the backup started
		during        []uint64 // begun after the snapshot was open
		committed     atomic.Int64
		duringN       atomic.Int64
		stop          = make(chan struct{})
		wg            sync.WaitGroup
		werr          atomic.Value
	)
	for w := 0; w < 4; w++ {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				phase := "unknown"
				select {
				case <-inBackup:
					phase = "during"
				default:
				}
				r := &user{Name: fmt.Sprintf("w%d-%d", w, i), Phase: phase, Tags: []string{phase}}
				if err := db.Update(context.Background(), func(tx *store.Tx) error { return users.Insert(tx, r) }); err != nil {
					werr.Store(err)
					return
				}
				committed.Add(1)
				mu.Lock()
				if phase == "during" {
					during = append(during, r.ID)
					duringN.Add(1)
				} else if !backupStarted.Load() {
					before = append(before, r.ID)
				}
				mu.Unlock()
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()

	// Let the writers get going.
	deadline := time.Now().Add(5 * time.Second)
	for committed.Load() < 200 {
		if time.Now().After(deadline) {
			t.Fatalf("writers committed only %d rows in 5s", committed.Load())
		}
		runtime.Gosched()
	}

	dest := filepath.Join(t.TempDir(), "backup.db")
	gate := &gateWriter{started: make(chan struct{}), release: make(chan struct{})}
	go func() {
		<-gate.started
		close(inBackup)
		// Writers must make progress while the snapshot is open.
		d := time.Now().Add(5 * time.Second)
		for duringN.Load() < 50 && time.Now().Before(d) {
			time.Sleep(time.Millisecond)
		}
		close(gate.release)
	}()
	backupStarted.Store(true)
	n, err := store.WriteSnapshot(dest, func(w io.Writer) (int64, error) {
		gate.w = w
		return db.Backup(gate)
	})
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if got := duringN.Load(); got < 50 {
		t.Errorf("writers committed only %d rows while the backup was open; the backup blocked them", got)
	}
	if v := werr.Load(); v != nil {
		t.Fatalf("writer: %v", v)
	}
	fi, err := os.Stat(dest)
	if err != nil || fi.Size() != n {
		t.Fatalf("backup file size %v (%v), Backup reported %d", fi, err, n)
	}
	if err := store.Verify(dest); err != nil {
		t.Fatalf("Verify(backup): %v", err)
	}

	mu.Lock()
	beforeIDs, duringIDs := slices.Clone(before), slices.Clone(during)
	mu.Unlock()
	bk := openAt(t, dest, store.Options{})
	view(t, bk, func(tx *store.Tx) error {
		for _, id := range beforeIDs {
			if !users.Exists(tx, id) {
				t.Errorf("row %d committed before the backup is missing", id)
			}
		}
		for _, id := range duringIDs {
			if users.Exists(tx, id) {
				t.Errorf("row %d begun after the snapshot was taken is in the backup", id)
			}
		}
		rows := 0
		err := users.Scan(tx, false, 0, func(u *user) (bool, error) {
			rows++
			if got, err := users.GetBy(tx, "name", u.Name); err != nil || got.ID != u.ID {
				return false, fmt.Errorf("index of row %d inconsistent: %v", u.ID, err)
			}
			return true, nil
		})
		if err != nil {
			t.Error(err)
		}
		if c := users.Count(tx); c != rows || rows < len(beforeIDs) {
			t.Errorf("backup: Count %d, rows %d, before %d", c, rows, len(beforeIDs))
		}
		if ids, _ := users.IDsBy(tx, "tag", "during"); len(ids) != 0 {
			t.Errorf("backup has %d 'during' rows", len(ids))
		}
		return nil
	})
	if len(beforeIDs) < 150 || len(duringIDs) < 50 {
		t.Errorf("weak run: %d rows before, %d during", len(beforeIDs), len(duringIDs))
	}
}

func TestBackupToWriter(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "alice"}, &user{Name: "bob"})
	var buf bytes.Buffer
	n, err := db.Backup(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n == 0 {
		t.Fatalf("Backup reported %d bytes, wrote %d", n, buf.Len())
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := store.Verify(path); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	cp := openAt(t, path, store.Options{})
	wantGetBy(t, cp, "name", "bob", 2)

	// A failing writer fails the backup. (bbolt formats the writer's error
	// with %s, so only the text survives, not the error chain.)
	if _, err := db.Backup(failWriter{}); err == nil || !strings.Contains(err.Error(), errBoom.Error()) {
		t.Errorf("Backup to failing writer = %v, want an error mentioning %q", err, errBoom)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBoom }

func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestBackupFileAtomic(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "alice"})
	dir := t.TempDir()
	dest := filepath.Join(dir, "fennec-backup.db")
	if err := os.WriteFile(dest, []byte("previous backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := db.BackupFile(dest)
	if err != nil {
		t.Fatalf("BackupFile: %v", err)
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"fennec-backup.db"}) {
		t.Errorf("directory after BackupFile = %q, want only the backup", got)
	}
	fi, err := os.Stat(dest)
	if err != nil || fi.Size() != n {
		t.Fatalf("size %v %v, want %d", fi, err, n)
	}
	cp := openAt(t, dest, store.Options{})
	wantGetBy(t, cp, "name", "alice", 1)
}

func TestWriteSnapshotFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fill    func(io.Writer) (int64, error)
		wantErr error
	}{
		{"fill fails", func(w io.Writer) (int64, error) {
			n, _ := w.Write([]byte("partial"))
			return int64(n), errBoom
		}, errBoom},
		{"fill writes garbage", func(w io.Writer) (int64, error) {
			n, err := w.Write(bytes.Repeat([]byte("garbage!"), 4096))
			return int64(n), err
		}, nil},
		{"fill writes nothing", func(io.Writer) (int64, error) { return 0, nil }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, existing := range []bool{false, true} {
				dir := t.TempDir()
				dest := filepath.Join(dir, "b.db")
				if existing {
					if err := os.WriteFile(dest, []byte("old"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				n, err := store.WriteSnapshot(dest, tc.fill)
				if err == nil {
					t.Fatalf("WriteSnapshot succeeded (n=%d)", n)
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("err = %v, want %v", err, tc.wantErr)
				}
				if n != 0 {
					t.Errorf("n = %d, want 0", n)
				}
				want := []string(nil)
				if existing {
					want = []string{"b.db"}
					if b, _ := os.ReadFile(dest); string(b) != "old" {
						t.Errorf("existing file changed to %q", b)
					}
				}
				if got := dirEntries(t, dir); !slices.Equal(got, want) {
					t.Errorf("dir = %q, want %q", got, want)
				}
			}
		})
	}
	t.Run("missing directory", func(t *testing.T) {
		t.Parallel()
		_, err := store.WriteSnapshot(filepath.Join(t.TempDir(), "no", "such", "b.db"), func(io.Writer) (int64, error) {
			t.Error("fill called")
			return 0, nil
		})
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want ErrNotExist", err)
		}
	})
}

func TestVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	db, err := store.Open(good, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnsureBuckets(users.Buckets()); err != nil {
		t.Fatal(err)
	}
	insert(t, db, &user{Name: "a"}, &user{Name: "b"})
	db.Close()

	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"valid database", good, true},
		{"garbage", write("garbage.db", bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 8192)), false},
		{"short garbage", write("short.db", []byte("hello")), false},
		{"empty file", write("empty.db", nil), false},
		{"missing file", filepath.Join(dir, "missing.db"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := store.Verify(tc.path)
			if tc.ok && err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !tc.ok {
				if err == nil {
					t.Fatal("Verify accepted it")
				}
				if !strings.Contains(err.Error(), tc.path) {
					t.Errorf("error %q does not name the file", err)
				}
			}
		})
	}
	// Verify does not modify what it checks.
	after, _ := os.ReadFile(good)
	if !bytes.Equal(after, goodBytes) {
		t.Error("Verify changed the database file")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Error("Verify created the missing file")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "empty.db")); len(b) != 0 {
		t.Errorf("Verify wrote %d bytes into an empty file", len(b))
	}
}

func TestVerifyTruncatedFile(t *testing.T) {
	t.Parallel()
	good := filepath.Join(t.TempDir(), "good.db")
	db, err := store.Open(good, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnsureBuckets(users.Buckets()); err != nil {
		t.Fatal(err)
	}
	insert(t, db, &user{Name: "a"}, &user{Name: "b"})
	db.Close()
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.db")
	if err := os.WriteFile(truncated, raw[:len(raw)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := store.Verify(truncated); err == nil { // today: fatal error: fault [signal SIGBUS]
		t.Fatal("Verify accepted a truncated file")
	}
	// The same through WriteSnapshot: a short stream must be refused, not crash.
	dest := filepath.Join(t.TempDir(), "b.db")
	if _, err := store.WriteSnapshot(dest, func(w io.Writer) (int64, error) {
		n, err := w.Write(raw[:len(raw)/3])
		return int64(n), err
	}); err == nil {
		t.Fatal("WriteSnapshot accepted a truncated snapshot")
	}
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("truncated snapshot was put in place: %v", err)
	}
}

// corruptFreelist builds a database that opens fine but has several
// structural errors: its freelist is emptied, so every free page becomes
// "unreachable unfreed".
func corruptFreelist(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "corrupt.db")
	db, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.EnsureBuckets(users.Buckets()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		update(t, db, func(tx *store.Tx) error {
			for j := 0; j < 50; j++ {
				if err := users.Insert(tx, &user{Name: fmt.Sprintf("u%d-%d", i, j), Tags: []string{strings.Repeat("t", 100)}}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	db.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// bbolt page header: id u64, flags u16, count u16, overflow u32; the meta
	// page (page 0) holds magic u32, version u32, pageSize u32 after it.
	pageSize := int(binary.LittleEndian.Uint32(raw[16+8:]))
	emptied := 0
	for off := 0; off+pageSize <= len(raw); off += pageSize {
		id := binary.LittleEndian.Uint64(raw[off:])
		flags := binary.LittleEndian.Uint16(raw[off+8:])
		count := binary.LittleEndian.Uint16(raw[off+10:])
		if id == uint64(off/pageSize) && flags == 0x10 && count >= 2 {
			binary.LittleEndian.PutUint16(raw[off+10:], 0)
			emptied++
		}
	}
	if emptied == 0 {
		t.Fatal("found no freelist page with two or more free pages to corrupt")
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func checkGoroutines() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "bbolt.(*Tx).check")
}

func TestVerifyCorruptFileStopsChecker(t *testing.T) {
	// Not parallel: it inspects all goroutines.
	path := corruptFreelist(t)
	err := store.Verify(path)
	if err == nil || !strings.Contains(err.Error(), "unreachable unfreed") {
		t.Fatalf("Verify = %v, want an 'unreachable unfreed' error", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for checkGoroutines() {
		if time.Now().After(deadline) {
			t.Fatal("bbolt's checker goroutine is still running 2s after Verify returned")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Update takes the stored row's index keys from the transaction's earlier
// read of it, unless the row changed since: two copies read in one
// transaction and updated one after the other still leave exactly the last
// version's keys.
func TestUpdateAfterAnotherUpdateOfTheSameRow(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	insert(t, db, &user{Name: "carol", Team: "red", Tags: []string{"a"}})
	update(t, db, func(tx *store.Tx) error {
		first, err := users.Get(tx, 1)
		if err != nil {
			return err
		}
		second, err := users.Get(tx, 1)
		if err != nil {
			return err
		}
		first.Name, first.Team = "caroline", "blue"
		if err := users.Update(tx, first); err != nil {
			return err
		}
		// second still holds the row as first read: its update must move
		// the keys first wrote, not those it was read with.
		second.Name, second.Tags = "carla", []string{"b"}
		return users.Update(tx, second)
	})
	wantNoKey(t, db, "name", "carol")
	wantNoKey(t, db, "name", "caroline")
	wantGetBy(t, db, "name", "carla", 1)
	if n := bucketKeys(t, db, usersTable+"#name"); n != 1 {
		t.Errorf("name index has %d keys, want 1", n)
	}
	if n := bucketKeys(t, db, usersTable+"#team"); n != 1 {
		t.Errorf("team index has %d keys, want 1 (red, the row's team again)", n)
	}
	if n := bucketKeys(t, db, usersTable+"#tag"); n != 1 {
		t.Errorf("tag index has %d keys, want 1", n)
	}
}
