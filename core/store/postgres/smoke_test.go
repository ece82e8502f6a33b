package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/store/postgres"
)

type item struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func (i *item) RecordID() int64      { return i.ID }
func (i *item) SetRecordID(id int64) { i.ID = id }

var items = store.NewTable[int64, item]("smoke.items",
	store.Index[item]{Name: "name", Unique: true, Keys: func(i *item) []string { return []string{i.Name} }},
	store.Index[item]{Name: "search", Search: true, Keys: func(i *item) []string { return []string{i.Name} }})

func TestSmoke(t *testing.T) {
	dsn := os.Getenv("FENNEC_SMOKE_PG")
	if dsn == "" {
		t.Skip("no FENNEC_SMOKE_PG")
	}
	ctx := context.Background()
	e, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.OpenEngine(e, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.EnsureBuckets(items.Buckets()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				errs <- db.Update(ctx, func(tx *store.Tx) error {
					return items.Insert(tx, &item{Name: fmt.Sprintf("Item-%d-%d", g, i)})
				})
			}
		}()
	}
	go func() { wg.Wait(); close(errs) }()
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	err = db.View(ctx, func(tx *store.Tx) error {
		if n := items.Count(tx); n != 160 {
			return fmt.Errorf("count %d", n)
		}
		ids, ok, err := items.Search(tx, "search", "em-3-1")
		if err != nil || !ok {
			return fmt.Errorf("search %v %v", ok, err)
		}
		if len(ids) != 11 {
			return fmt.Errorf("search found %d", len(ids))
		}
		rows, total, err := items.Page(tx, true, 5, 3)
		if err != nil || total != 160 || len(rows) != 3 || rows[0].ID != 155 {
			return fmt.Errorf("page %v %d %v", rows, total, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, func(tx *store.Tx) error { return items.Insert(tx, &item{Name: "Item-0-0"}) })
	if !errorsIsConflict(err) {
		t.Fatalf("dup: %v", err)
	}
}

func errorsIsConflict(err error) bool {
	_, ok := err.(*store.ConflictError)
	return ok
}
