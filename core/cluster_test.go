package fennec_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
	"github.com/fennec-forge/fennec/core/store"
)

// clusterKeys is a Keys with the Buckets a module declares.
type clusterKeys struct{}

func (clusterKeys) Buckets() []string { return []string{"clustertest.provisions"} }

// A leader-only loop and an every-node loop, counting where they run, and
// a provisioner that records the lease its writes are fenced by.
type clusterLoops struct {
	name    string
	leading *atomic.Int32 // leader loops running, over all nodes
	every   *atomic.Int32 // every-node loops running, over all nodes
	db      *store.DB
	mu      *sync.Mutex
	log     *[]string
}

type leaderLoop struct{ c *clusterLoops }

func (l leaderLoop) Provision(ctx context.Context) error {
	l.c.mu.Lock()
	*l.c.log = append(*l.c.log, "provision "+l.c.name)
	l.c.mu.Unlock()
	// A fenced write, with the context the leader gets.
	return l.c.db.Update(ctx, func(tx *store.Tx) error {
		return store.Keys("clustertest.provisions").Put(tx, []byte(l.c.name+time.Now().String()), nil)
	})
}

func (l leaderLoop) Run(ctx context.Context) error {
	if n := l.c.leading.Add(1); n > 1 {
		panic(fmt.Sprintf("%d leader loops at once", n))
	}
	defer l.c.leading.Add(-1)
	<-ctx.Done()
	return nil
}

type everyLoop struct{ c *clusterLoops }

func (everyLoop) EveryNode() {}
func (e everyLoop) Run(ctx context.Context) error {
	e.c.every.Add(1)
	defer e.c.every.Add(-1)
	<-ctx.Done()
	return nil
}

// TestClusterOneLeaderAtATime starts three nodes of one app on one
// PostgreSQL database and one data directory: exactly one runs the leader's
// loop and provisioner while all three run the every-node loop; stopping
// the leader moves the lead to another node at once (it releases the lease),
// and a fenced write of the old leader's context is refused afterwards.
func TestClusterOneLeaderAtATime(t *testing.T) {
	dsn := pgserver.Shared(t).NewDatabase(t)
	data := t.TempDir()
	var leading, every atomic.Int32
	var mu sync.Mutex
	var log []string
	type node struct {
		app *fennec.App
		db  *store.DB
	}
	start := func(name string) node {
		cfg := config.Default()
		cfg.Listen, cfg.Data, cfg.Store, cfg.LeaseTTL = "", data, dsn, time.Second
		c := &clusterLoops{name: name, leading: &leading, every: &every, mu: &mu, log: &log}
		mod := fennec.NewModule("clustertest",
			fennec.Provide(
				func(db *store.DB, _ *events.Bus) *clusterLoops { c.db = db; return c },
				func(c *clusterLoops) leaderLoop { return leaderLoop{c} },
				func(c *clusterLoops) everyLoop { return everyLoop{c} },
			),
			fennec.Tables(clusterKeys{}),
		)
		var db *store.DB
		app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(mod), fennec.WithLogger(zap.NewNop()),
			fennec.WithExtract(&db))
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return node{app, db}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10s (leading %d, every %d, log %q)", what, leading.Load(), every.Load(), log)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	a := start("a")
	b := start("b")
	c := start("c")
	waitFor("one leader loop, three every-node loops", func() bool { return leading.Load() == 1 && every.Load() == 3 })
	mu.Lock()
	if len(log) != 1 || log[0] != "provision a" {
		t.Fatalf("provisioned %q, want only the first node (a), the leader", log)
	}
	mu.Unlock()
	leases, err := b.db.Leases(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var holder string
	for _, l := range leases {
		if l.Name == fennec.LeaderLease {
			holder = l.Holder
		}
	}
	if holder == "" {
		t.Fatalf("no leader lease among %+v", leases)
	}

	stopped := time.Now()
	if err := a.app.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor("another node leads after the leader stopped", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return leading.Load() == 1 && len(log) == 2
	})
	if took := time.Since(stopped); took > 3*time.Second {
		t.Errorf("the lead moved %v after a clean stop; the released lease should move it at once", took)
	}
	t.Logf("the lead moved after a clean stop in %v; provisions %q", time.Since(stopped), log)
	for _, n := range []node{b, c} {
		if err := n.app.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if leading.Load() != 0 || every.Load() != 0 {
		t.Fatalf("loops still running after every node stopped: leading %d, every %d", leading.Load(), every.Load())
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	pgserver.StopShared()
	os.Exit(code)
}

// A node that cannot renew its liveness lease (its database gone) tells
// the parts registered with OnCutOff as the lease ends, so that work it
// does outside the store stops before another node takes it over; once
// it renews again, a later cut-off tells them again.
func TestNodeCutOffFromTheStoreStopsItsWork(t *testing.T) {
	srv := pgserver.Start(t, pgserver.Options{})
	cfg := config.Default()
	cfg.Listen, cfg.Data, cfg.Store, cfg.LeaseTTL = "", t.TempDir(), srv.NewDatabase(t), time.Second
	var node *fennec.Node
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithLogger(zap.NewNop()), fennec.WithExtract(&node))
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = app.Stop(ctx)
	})
	var cutOffs atomic.Int32
	var at atomic.Int64
	node.OnCutOff(func() { at.Store(time.Now().UnixNano()); cutOffs.Add(1) })
	waitFor := func(what string, within time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(within)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v", what, within)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(1500 * time.Millisecond) // renewals go on: no cut-off
	if n := cutOffs.Load(); n != 0 {
		t.Fatalf("%d cut-offs while the store answered", n)
	}
	stopped := time.Now()
	srv.Stop()
	waitFor("the cut-off", 5*time.Second, func() bool { return cutOffs.Load() == 1 })
	// Told as the lease (renewed at most lease_ttl/5 before the stop)
	// ended, not a whole sweep of the leader's later.
	if told := time.Unix(0, at.Load()).Sub(stopped); told > 1300*time.Millisecond {
		t.Errorf("told %v after the database stopped, well past the lease", told)
	}
	time.Sleep(500 * time.Millisecond)
	if n := cutOffs.Load(); n != 1 {
		t.Fatalf("told %d times during one cut-off, want once", n)
	}
	srv.Restart(t)
	// Renewing again, then cut off again: told again.
	waitFor("renewals again", 20*time.Second, func() bool {
		alive, err := node.Alive(context.Background(), "some-other-node")
		return err == nil && !alive
	})
	time.Sleep(1500 * time.Millisecond)
	if n := cutOffs.Load(); n != 1 {
		t.Fatalf("%d cut-offs once the store answered again", n)
	}
	srv.Stop()
	waitFor("the second cut-off", 5*time.Second, func() bool { return cutOffs.Load() == 2 })
	srv.Restart(t)
}

// Nodes sharing a data directory share its admin socket: the first node
// serves it, a later one does not take it from it, and when the first
// stops another takes it over within a second or two, so the socket
// answers whichever nodes live.
func TestAdminSocketMovesToALiveNode(t *testing.T) {
	dsn := pgserver.Shared(t).NewDatabase(t)
	data := t.TempDir()
	start := func() *fennec.App {
		cfg := config.Default()
		cfg.Listen, cfg.Data, cfg.Store, cfg.LeaseTTL = "", data, dsn, time.Second
		app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithLogger(zap.NewNop()))
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return app
	}
	stop := func(app *fennec.App) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			t.Error(err)
		}
	}
	answers := func() bool {
		c, err := net.DialTimeout("unix", filepath.Join(data, "fennec.sock"), time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}
	a := start()
	if !answers() {
		t.Fatal("the first node's admin socket does not answer")
	}
	b := start()
	defer stop(b)
	stop(a)
	deadline := time.Now().Add(5 * time.Second)
	for !answers() {
		if time.Now().After(deadline) {
			t.Fatal("after the first node stopped, no node serves the admin socket")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
