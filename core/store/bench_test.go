package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// BenchmarkInsertUpdate is the write path with one writer: each insert is a
// round of its own (one transaction, one fsync).
func BenchmarkInsertUpdate(b *testing.B) {
	db := openDB(b, store.Options{})
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		u := &user{Name: fmt.Sprint("user-", i), Emails: []string{fmt.Sprintf("u%d@example.com", i)}, Team: "t"}
		if err := db.Update(ctx, func(tx *store.Tx) error { return users.Insert(tx, u) }); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := count(b, db); n != i {
		b.Fatalf("Count = %d, want %d", n, i)
	}
}

// BenchmarkInsertUpdate32 inserts b.N rows from 32 goroutines through
// Update, so concurrent calls share transactions and fsyncs (group commit).
func BenchmarkInsertUpdate32(b *testing.B) { benchInsert32(b, (*store.DB).Update) }

// BenchmarkInsertAlone32 is the same load through UpdateAlone, the serial
// path (one transaction and one fsync per insert, one after another): the
// figure group commit is measured against.
func BenchmarkInsertAlone32(b *testing.B) { benchInsert32(b, (*store.DB).UpdateAlone) }

func benchInsert32(b *testing.B, write func(*store.DB, context.Context, func(*store.Tx) error) error) {
	db := openDB(b, store.Options{})
	ctx := context.Background()
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := 0; w < 32; w++ {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				err := write(db, ctx, func(tx *store.Tx) error {
					u := &user{Name: fmt.Sprint("user-", i), Emails: []string{fmt.Sprintf("u%d@example.com", i)}, Team: "t"}
					return users.Insert(tx, u)
				})
				if err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	if n := count(b, db); n != b.N {
		b.Fatalf("Count = %d, want %d", n, b.N)
	}
}

// BenchmarkGetByUnique is the read path: a unique-index lookup in a View.
func BenchmarkGetByUnique(b *testing.B) {
	const rows = 1000
	db := openDB(b, store.Options{})
	recs := make([]*user, rows)
	keys := make([]string, rows)
	for i := range recs {
		keys[i] = fmt.Sprintf("u%d@example.com", i)
		recs[i] = &user{Name: fmt.Sprint("user-", i), Emails: []string{keys[i]}}
	}
	insert(b, db, recs...)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		k := keys[i%rows]
		want := uint64(i%rows + 1)
		i++
		err := db.View(ctx, func(tx *store.Tx) error {
			u, err := users.GetBy(tx, "email", k)
			if err != nil {
				return err
			}
			if u.ID != want {
				return fmt.Errorf("GetBy(%s) = %d, want %d", k, u.ID, want)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
