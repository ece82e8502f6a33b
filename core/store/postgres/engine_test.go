package postgres_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/store/postgres"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgserver.StopShared()
	os.Exit(code)
}

// openNode opens a store on dsn as one node would.
func openNode(t testing.TB, dsn string) *store.DB {
	t.Helper()
	e, err := postgres.Open(context.Background(), dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.OpenEngine(e, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var counters = store.Keys("test.counters")

func TestLeaseFencesAPausedHolder(t *testing.T) {
	dsn := pgserver.Shared(t).NewDatabase(t)
	a, b := openNode(t, dsn), openNode(t, dsn)
	ctx := context.Background()
	if err := a.EnsureBuckets([]string{counters.Name()}); err != nil {
		t.Fatal(err)
	}
	la, err := a.TryLease(ctx, "loop", "node-a", 200*time.Millisecond)
	if err != nil || la == nil {
		t.Fatalf("node a could not take the free lease: %v %v", la, err)
	}
	if lb, err := b.TryLease(ctx, "loop", "node-b", time.Second); err != nil || lb != nil {
		t.Fatalf("node b took a held lease: %v %v", lb, err)
	}
	fenced := store.WithLease(ctx, la)
	if err := a.Update(fenced, func(tx *store.Tx) error { return counters.Put(tx, []byte("x"), []byte("a1")) }); err != nil {
		t.Fatalf("the holder's write failed: %v", err)
	}
	// Node a "pauses" past its lease; node b takes over.
	time.Sleep(250 * time.Millisecond)
	lb, err := b.TryLease(ctx, "loop", "node-b", time.Second)
	if err != nil || lb == nil || lb.Token != la.Token+1 {
		t.Fatalf("node b did not take the expired lease with the next token: %+v %v", lb, err)
	}
	err = a.Update(fenced, func(tx *store.Tx) error { return counters.Put(tx, []byte("x"), []byte("a2")) })
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("the paused holder's write = %v, want ErrLeaseLost", err)
	}
	if err := a.Renew(ctx, la, time.Second); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("renewing a lost lease = %v, want ErrLeaseLost", err)
	}
	var v string
	_ = b.View(ctx, func(tx *store.Tx) error { v = string(counters.Get(tx, []byte("x"))); return nil })
	if v != "a1" {
		t.Fatalf("x = %q, want the fenced write refused (a1)", v)
	}
	if err := b.Release(ctx, lb); err != nil {
		t.Fatal(err)
	}
	if la2, err := a.TryLease(ctx, "loop", "node-a", time.Second); err != nil || la2 == nil || la2.Token != lb.Token+1 {
		t.Fatalf("a released lease was not free at once: %+v %v", la2, err)
	}
}

// A release and the signal that announces it are one transaction: the
// other node hears of it only with the lease free, and a release of a lease
// already lost signals nothing. Ended liveness leases are pruned after
// their grace, live ones and others' stay, and LeaseOf reads one.
func TestReleaseSignalsAndPruning(t *testing.T) {
	dsn := pgserver.Shared(t).NewDatabase(t)
	a, b := openNode(t, dsn), openNode(t, dsn)
	ctx := context.Background()
	var heard atomic.Int32
	b.OnSignal("released", func([]byte) { heard.Add(1) })
	announce := func(tx *store.Tx) error { return tx.Signal("released", nil) }

	la, err := a.TryLease(ctx, "leader", "node-a", time.Minute)
	if err != nil || la == nil {
		t.Fatalf("take: %v %v", la, err)
	}
	if err := a.Release(ctx, la, announce); err != nil {
		t.Fatal(err)
	}
	if err := b.PollSignals(ctx); err != nil {
		t.Fatal(err)
	}
	if heard.Load() != 1 {
		t.Fatalf("the release was heard %d times, want 1", heard.Load())
	}
	if r, found, err := b.LeaseOf(ctx, "leader"); err != nil || !found || r.Holder != "" {
		t.Fatalf("after the release LeaseOf = %+v %v %v, want a free lease", r, found, err)
	}
	// Released again (no longer held): nothing to announce.
	if err := a.Release(ctx, la, announce); err != nil {
		t.Fatal(err)
	}
	if err := b.PollSignals(ctx); err != nil {
		t.Fatal(err)
	}
	if heard.Load() != 1 {
		t.Fatalf("a release of a lease not held was announced (%d)", heard.Load())
	}

	if _, err := a.TryLease(ctx, "node:old", "old", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TryLease(ctx, "node:live", "live", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TryLease(ctx, "other", "x", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if n, err := b.PruneLeases(ctx, "node:", time.Hour); err != nil || n != 0 {
		t.Fatalf("pruned %d (%v) within the grace", n, err)
	}
	if n, err := b.PruneLeases(ctx, "node:", 10*time.Millisecond); err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want the one ended node lease", n, err)
	}
	for name, want := range map[string]bool{"node:old": false, "node:live": true, "other": true} {
		if _, found, err := a.LeaseOf(ctx, name); err != nil || found != want {
			t.Errorf("after pruning, lease %s found = %v (%v), want %v", name, found, err, want)
		}
	}
}

func TestSignalsReachTheOtherNode(t *testing.T) {
	dsn := pgserver.Shared(t).NewDatabase(t)
	a, b := openNode(t, dsn), openNode(t, dsn)
	ctx := context.Background()
	if !a.Shared() {
		t.Fatal("a PostgreSQL store says it is not shared")
	}
	var onA, onB atomic.Int32
	var payload atomic.Value
	a.OnSignal("cache", func([]byte) { onA.Add(1) })
	b.OnSignal("cache", func(p []byte) { onB.Add(1); payload.Store(string(p)) })
	if err := a.Update(ctx, func(tx *store.Tx) error { return tx.Signal("cache", []byte("user 7")) }); err != nil {
		t.Fatal(err)
	}
	if onA.Load() != 1 {
		t.Fatalf("the committing node ran its handler %d times, want 1", onA.Load())
	}
	// A rolled-back transaction signals nothing.
	_ = a.Update(ctx, func(tx *store.Tx) error {
		_ = tx.Signal("cache", []byte("rolled back"))
		return errors.New("no")
	})
	if err := b.PollSignals(ctx); err != nil {
		t.Fatal(err)
	}
	if onB.Load() != 1 || payload.Load() != "user 7" {
		t.Fatalf("the other node ran its handler %d times with %v, want once with user 7", onB.Load(), payload.Load())
	}
	// Polling again handles nothing twice, and a node ignores its own.
	if err := b.PollSignals(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.PollSignals(ctx); err != nil {
		t.Fatal(err)
	}
	if onB.Load() != 1 || onA.Load() != 1 {
		t.Fatalf("handlers ran again: a %d, b %d", onA.Load(), onB.Load())
	}
}

func TestConcurrentNodesLoseNoUpdate(t *testing.T) {
	dsn := pgserver.Shared(t).NewDatabase(t)
	nodes := []*store.DB{openNode(t, dsn), openNode(t, dsn), openNode(t, dsn)}
	ctx := context.Background()
	if err := nodes[0].EnsureBuckets([]string{counters.Name()}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 12, 20
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		db := nodes[w%len(nodes)]
		go func() {
			for i := 0; i < each; i++ {
				errs <- db.Update(ctx, func(tx *store.Tx) error {
					n := 0
					if v := counters.Get(tx, []byte("n")); len(v) == 8 {
						n = int(store.KeyID(v))
					}
					return counters.Put(tx, []byte("n"), store.Key(uint64(n+1)))
				})
			}
		}()
	}
	for i := 0; i < writers*each; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var n uint64
	_ = nodes[1].View(ctx, func(tx *store.Tx) error { n = store.KeyID(counters.Get(tx, []byte("n"))); return nil })
	if n != writers*each {
		t.Fatalf("counter = %d after %d increments on three nodes", n, writers*each)
	}
}

// TestUnreachableDatabaseIsUnavailable: with the server down, reads and
// writes fail with store.ErrUnavailable (the API's 503), and the same
// store works again once the server is back, without reopening.
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	srv := pgserver.Start(t, pgserver.Options{})
	db := openNode(t, srv.NewDatabase(t))
	ctx := context.Background()
	if err := db.EnsureBuckets([]string{counters.Name()}); err != nil {
		t.Fatal(err)
	}
	put := func() error {
		return db.Update(ctx, func(tx *store.Tx) error { return counters.Put(tx, []byte("k"), []byte("v")) })
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if err := put(); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a write with the server down = %v, want ErrUnavailable", err)
	}
	if err := db.View(ctx, func(tx *store.Tx) error { counters.Get(tx, []byte("k")); return nil }); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a read with the server down = %v, want ErrUnavailable", err)
	}
	srv.Restart(t)
	if err := put(); err != nil {
		t.Fatalf("a write after the server came back: %v", err)
	}
}
