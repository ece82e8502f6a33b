package internal

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	fconfig "github.com/fennec-forge/fennec/core/config"
)

// Two Storages on one directory are two nodes sharing a data directory:
// each has its own in-process locks. Writers on both move one ref by
// compare-and-set, each from the value it read to a successor of its own.
// Every successful move must start where the last one ended: followed back
// from the final value, the moves form one chain as long as the number of
// successes. Without the cross-process lock two nodes move the ref from the
// same value, and one acknowledged move is lost.
func TestRefCompareAndSetHoldsAcrossProcesses(t *testing.T) {
	moves, chain, why := casRace(t, true)
	if why != "" || moves != chain {
		t.Fatalf("%d successful moves, but the ref's history holds %d: moves were lost %s", moves, chain, why)
	}
	t.Logf("%d moves, one chain", moves)
}

// The race above does lose moves without the lock: the test can fail.
func TestRefCompareAndSetRaceIsReal(t *testing.T) {
	if testing.Short() {
		t.Skip("a demonstration of the race the lock prevents")
	}
	for attempt := 0; attempt < 5; attempt++ {
		if moves, chain, why := casRace(t, false); why != "" || moves != chain {
			t.Logf("without the lock: %d moves, a chain of %d %s", moves, chain, why)
			return
		}
	}
	t.Fatal("five races without the cross-process lock lost nothing: TestRefCompareAndSetHoldsAcrossProcesses cannot fail")
}

// casRace runs the writers and follows the chain back; why is set when the
// chain breaks on a value no successful move set.
func casRace(t *testing.T, crossProcess bool) (moves, chain int, why string) {
	t.Helper()
	cfg := fconfig.Default()
	cfg.Data = t.TempDir()
	cfg.NoSync = true
	ref := plumbing.NewBranchReferenceName("main")
	var mu sync.Mutex
	from := map[plumbing.Hash]plumbing.Hash{} // new value -> old value of each success
	var wg sync.WaitGroup
	deadline := time.Now().Add(400 * time.Millisecond)
	for node := range 2 {
		st := NewStorage(cfg, nil, zap.NewNop())
		st.crossProcess = crossProcess
		repo, err := st.Open(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; time.Now().Before(deadline); i++ {
					var cur plumbing.Hash
					if r, err := repo.Storer.Reference(ref); err == nil {
						cur = r.Hash()
					}
					next := plumbing.ComputeHash(plumbing.BlobObject, []byte(fmt.Sprintf("%d/%d/%d", node, w, i)))
					if errs := st.UpdateRefs(1, repo, []RefUpdate{{Name: ref, Old: cur, New: next}}, false); errs[0] == nil {
						mu.Lock()
						from[next] = cur
						moves++
						mu.Unlock()
					}
				}
			}()
		}
	}
	wg.Wait()
	st := NewStorage(cfg, nil, zap.NewNop())
	repo, err := st.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := repo.Storer.Reference(ref)
	if err != nil {
		t.Fatal(err)
	}
	for h := r.Hash(); !h.IsZero(); chain++ {
		prev, ok := from[h]
		if !ok {
			return moves, chain, fmt.Sprintf("(the history reaches %s, which no successful move set)", h)
		}
		h = prev
	}
	return moves, chain, ""
}
