package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// A panic inside a batched function is raised again in the goroutine of the
// call that panicked, and the batch machinery keeps serving the others.
func TestBatchPanicReachesOnlyItsCaller(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{})
	var wg sync.WaitGroup
	recovered := make(chan any, 1)
	errs := make([]error, 8)
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					recovered <- r
				}
			}()
			errs[i] = db.Update(context.Background(), func(tx *store.Tx) error {
				if i == 3 {
					panic("boom 3")
				}
				return users.Insert(tx, &user{Name: fmt.Sprint("p", i)})
			})
		})
	}
	wg.Wait()
	select {
	case r := <-recovered:
		if r != "boom 3" {
			t.Fatalf("recovered %v", r)
		}
	default:
		t.Fatal("the panicking call returned normally")
	}
	for i, err := range errs {
		if i != 3 && err != nil {
			t.Fatalf("call %d failed because another panicked: %v", i, err)
		}
	}
	if n := count(t, db); n != 7 {
		t.Fatalf("%d rows, want 7", n)
	}
	// Still working afterwards.
	if err := db.Update(context.Background(), func(tx *store.Tx) error { return users.Insert(tx, &user{Name: "after"}) }); err != nil {
		t.Fatal(err)
	}
}

// Many rounds of concurrent writers: every call commits exactly once.
func TestBatchGroupCommitUnderLoad(t *testing.T) {
	t.Parallel()
	db := openDB(t, store.Options{MaxBatchSize: 5})
	var wg sync.WaitGroup
	for w := 0; w < 20; w++ {
		wg.Go(func() {
			for j := 0; j < 25; j++ {
				if err := db.Update(context.Background(), func(tx *store.Tx) error {
					return users.Insert(tx, &user{Name: fmt.Sprintf("w%d-%d", w, j)})
				}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := count(t, db); n != 500 {
		t.Fatalf("%d rows, want 500", n)
	}
}
