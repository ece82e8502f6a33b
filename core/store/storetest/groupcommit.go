package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/store"
)

// The clauses of group commit (the contract in core/store's doc.go).

// callers is how many concurrent Update calls a round gathers.
const callers = 12

// failure is how a caller's write function ends.
type failure int

const (
	succeeds failure = iota
	returnsError
	panics
)

// panicValue is what a panicking write function raises; the caller must
// get this very value back.
type panicValue struct{ caller int }

// roundOutcome is what each caller of a round observed.
type roundOutcome struct {
	err      []error
	panicked []any
	runs     []int32 // how often each fn ran (may exceed one)
	commits  []int32 // how often each OnCommit callback ran
	// committedBeforeReturn: the callback had run when Update returned.
	committedBeforeReturn []bool
}

// concurrentRound runs callers Update calls at once, each writing its own
// key, ending as fates says. A first Update holds the writer until all the
// others have been called, so that they tend to share the next round.
func concurrentRound(t *testing.T, db *store.DB, fates map[int]failure) roundOutcome {
	t.Helper()
	out := roundOutcome{
		err: make([]error, callers), panicked: make([]any, callers),
		runs: make([]int32, callers), commits: make([]int32, callers),
		committedBeforeReturn: make([]bool, callers),
	}
	release := make(chan struct{})
	var gateOnce sync.Once
	gateDone := make(chan error, 1)
	go func() {
		gateDone <- db.Update(context.Background(), func(tx *store.Tx) error {
			gateOnce.Do(func() { <-release })
			return kv.Put(tx, []byte("gate"), []byte("1"))
		})
	}()
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { out.panicked[i] = recover() }()
			out.err[i] = db.Update(context.Background(), func(tx *store.Tx) error {
				atomic.AddInt32(&out.runs[i], 1)
				tx.OnCommit(func() { atomic.AddInt32(&out.commits[i], 1) })
				if err := kv.Put(tx, callerKey(i), []byte("1")); err != nil {
					return err
				}
				switch fates[i] {
				case returnsError:
					return fmt.Errorf("caller %d: %w", i, errRefused)
				case panics:
					panic(panicValue{i})
				}
				return nil
			})
			out.committedBeforeReturn[i] = atomic.LoadInt32(&out.commits[i]) == 1
		}()
	}
	// The callers queue behind the gate (there is no way to observe the
	// queue; a short wait is enough for goroutines that only enqueue).
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if err := <-gateDone; err != nil {
		t.Fatalf("the gate's Update: %v", err)
	}
	return out
}

func callerKey(i int) []byte { return []byte(fmt.Sprintf("caller/%02d", i)) }

// checkRound checks that exactly the callers that failed got their own
// failure and wrote nothing, and that every other committed once.
func checkRound(t *testing.T, db *store.DB, fates map[int]failure, out roundOutcome) {
	t.Helper()
	for i := range callers {
		switch fates[i] {
		case succeeds:
			if out.err[i] != nil || out.panicked[i] != nil {
				t.Errorf("caller %d (succeeds) got %v, panic %v", i, out.err[i], out.panicked[i])
			}
			if out.commits[i] != 1 || !out.committedBeforeReturn[i] {
				t.Errorf("caller %d (succeeds): OnCommit ran %d times (want 1), before Update returned: %v", i, out.commits[i], out.committedBeforeReturn[i])
			}
		case returnsError:
			if !errors.Is(out.err[i], errRefused) || !strings.Contains(fmt.Sprint(out.err[i]), fmt.Sprintf("caller %d:", i)) || out.panicked[i] != nil {
				t.Errorf("caller %d (returns an error) got %v, panic %v; want its own error", i, out.err[i], out.panicked[i])
			}
		case panics:
			if out.panicked[i] != (panicValue{i}) {
				t.Errorf("caller %d (panics) recovered %#v (error %v), want its own panicValue{%d}", i, out.panicked[i], out.err[i], i)
			}
		}
		if fates[i] != succeeds && out.commits[i] != 0 {
			t.Errorf("caller %d failed but its OnCommit ran %d times", i, out.commits[i])
		}
	}
	view(t, db, func(tx *store.Tx) error {
		for i := range callers {
			if has := kv.Has(tx, callerKey(i)); has != (fates[i] == succeeds) {
				t.Errorf("caller %d's key committed: %v, want %v", i, has, fates[i] == succeeds)
			}
		}
		return nil
	})
	t.Logf("runs of each fn: %v", out.runs)
}

func runGroupCommit(t *testing.T, open Opener) {
	t.Run("when one of concurrent Updates fails the others commit and it alone gets its error", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		fates := map[int]failure{3: returnsError, 8: returnsError}
		checkRound(t, db, fates, concurrentRound(t, db, fates))
	})

	t.Run("a panic in fn is raised in its caller and the others commit", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		fates := map[int]failure{0: panics, 5: returnsError, 11: panics}
		checkRound(t, db, fates, concurrentRound(t, db, fates))
	})

	t.Run("OnCommit runs once for a committed write and never for a failed one", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		checkRound(t, db, nil, concurrentRound(t, db, nil))
		var commits atomic.Int32
		err := db.UpdateAlone(context.Background(), func(tx *store.Tx) error {
			tx.OnCommit(func() { commits.Add(1) })
			return errRefused
		})
		if !errors.Is(err, errRefused) || commits.Load() != 0 {
			t.Errorf("a failed UpdateAlone: %v, OnCommit ran %d times; want its error and 0", err, commits.Load())
		}
		err = db.UpdateAlone(context.Background(), func(tx *store.Tx) error {
			tx.OnCommit(func() { commits.Add(1) })
			return nil
		})
		if err != nil || commits.Load() != 1 {
			t.Errorf("a committed UpdateAlone: %v, OnCommit ran %d times; want nil and 1", err, commits.Load())
		}
	})

	t.Run("calls from one goroutine apply in order", func(t *testing.T) {
		db := open(t)
		ensure(t, db, kv.Name())
		for i := range 30 {
			update(t, db, func(tx *store.Tx) error {
				prev := string(kv.Get(tx, []byte("last")))
				if want := fmt.Sprint(i - 1); i > 0 && prev != want {
					t.Errorf("call %d saw %q, want %s", i, prev, want)
				}
				return kv.Put(tx, []byte("last"), []byte(fmt.Sprint(i)))
			})
		}
	})
}
