package fennec

// Several nodes on one store. When the store is shared (PostgreSQL), every
// node serves requests and runs the EveryNode parts (listeners, workers of
// the shared work queues), and exactly one node, the leader, runs the
// rest: the outbox's delivery, the scheduler, the sweeps, and the
// provisioners that finish what a stopped node left. The leader holds the
// store lease "fennec.leader" (store.TryLease) and renews it every
// LeaseTTL/5; a node that cannot renew in time stops its leader part, and
// the writes that part still makes are refused by the lease's fencing
// (store.WithLease). Another node takes the lease once it expires, or at
// once when the leader stops cleanly and releases it.
//
// One lease for all of the leader's loops, rather than one each, keeps
// them on one node: the loops wake each other through in-process channels,
// and a takeover moves them together.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
)

// LeaderLease is the name of the leader's lease in the store.
const LeaderLease = "fennec.leader"

// DefaultLeaseTTL is how long the leader lease lasts unless renewed: the
// longest a dead leader's loops stay without a node.
const DefaultLeaseTTL = 5 * time.Second

// leaderReleased is the signal a leader that stops cleanly sends, so that
// another node takes over at once.
const leaderReleased = "fennec.leader.released"

// cluster is this node's part in a shared store.
type cluster struct {
	db    *store.DB
	log   *zap.Logger
	node  string
	nodeV *Node
	ttl   time.Duration
	// dataDir is the data directory the nodes share.
	dataDir string
	// pruned is when the leader last pruned the signal log.
	pruned time.Time

	poke chan struct{}
	bus  *events.Bus

	mu     sync.Mutex
	lease  *store.Lease
	resign context.CancelFunc
	led    *sync.WaitGroup

	// takeovers counts the times this node became the leader.
	takeovers atomic.Int64
	loopDone  chan struct{}
	loopStop  context.CancelFunc
}

// newNodeName names this process among the nodes: host, process id and a
// random part (a restarted process is a new node).
func newNodeName() string {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

func newCluster(db *store.DB, log *zap.Logger, node *Node, dataDir string, ttl time.Duration) *cluster {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	node.leaseTTL = ttl
	c := &cluster{db: db, log: log, node: node.Name(), nodeV: node, dataDir: dataDir, ttl: ttl, poke: make(chan struct{}, 1)}
	db.OnSignal(leaderReleased, func([]byte) {
		select {
		case c.poke <- struct{}{}:
		default:
		}
	})
	return c
}

// Leader says whether this node holds the leader lease.
func (c *cluster) Leader() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lease != nil
}

func isEveryNode(v any) bool { _, ok := v.(EveryNode); return ok }

// startShared is start on a shared store.
func (l *lifecycle) startShared(ctx context.Context, bus *events.Bus, c *cluster) error {
	l.cluster, c.bus = c, bus
	if err := checkSharedDir(c.dataDir); err != nil {
		return err
	}
	if err := c.renewNode(ctx); err != nil {
		return err
	}
	for _, p := range l.parts {
		if pr, ok := p.(Provisioner); ok && isEveryNode(p) {
			if err := pr.Provision(ctx); err != nil {
				return fmt.Errorf("provision %T: %w", p, err)
			}
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	for _, p := range l.parts {
		if r, ok := p.(Runner); ok && isEveryNode(p) {
			l.runs.Add(1)
			go func() {
				defer l.runs.Done()
				l.run(runCtx, r)
			}()
		}
	}
	l.runs.Add(1)
	go func() {
		defer l.runs.Done()
		// Logged once per outage, not five times a second.
		var failing bool
		c.db.RunSignals(runCtx, func(err error) {
			if err == nil {
				if failing {
					c.log.Info("cluster: reading other nodes' signals again")
				}
				failing = false
				return
			}
			if !failing {
				c.log.Warn("cluster: reading other nodes' signals failed", zap.Error(err))
			}
			failing = true
		})
	}()
	// One attempt before serving: the first node of a cluster provisions
	// (the first administrator...) before its first request.
	if err := c.tryLead(ctx, l, bus); err != nil {
		return err
	}
	loopCtx, stop := context.WithCancel(context.Background())
	c.loopStop, c.loopDone = stop, make(chan struct{})
	go func() {
		defer close(c.loopDone)
		watching := make(chan struct{})
		go func() {
			defer close(watching)
			c.watchCutOff(loopCtx)
		}()
		c.loop(loopCtx, l, bus)
		<-watching
	}()
	c.log.Info("cluster: node started", zap.String("node", c.node), zap.Bool("leader", c.Leader()))
	return nil
}

// tryLead takes the leader lease if it is free and starts the leader's
// part; nothing when another node leads.
func (c *cluster) tryLead(ctx context.Context, l *lifecycle, bus *events.Bus) error {
	lease, err := c.db.TryLease(ctx, LeaderLease, c.node, c.ttl)
	if err != nil || lease == nil {
		return err
	}
	leadCtx, resign := context.WithCancel(store.WithLease(context.Background(), lease))
	for _, p := range l.parts {
		if pr, ok := p.(Provisioner); ok && !isEveryNode(p) {
			if err := pr.Provision(leadCtx); err != nil {
				resign()
				_ = c.db.Release(ctx, lease)
				return fmt.Errorf("provision %T: %w", p, err)
			}
		}
	}
	bus.StartContext(leadCtx)
	led := &sync.WaitGroup{}
	for _, p := range l.parts {
		if r, ok := p.(Runner); ok && !isEveryNode(p) {
			led.Add(1)
			go func() {
				defer led.Done()
				l.run(leadCtx, r)
			}()
		}
	}
	c.mu.Lock()
	c.lease, c.resign, c.led = lease, resign, led
	c.mu.Unlock()
	c.nodeV.leader.Store(true)
	c.takeovers.Add(1)
	c.log.Info("cluster: this node leads", zap.String("node", c.node), zap.Uint64("token", lease.Token))
	return nil
}

// stepDown stops the leader's part and, when release, gives the lease up
// so another node need not wait for it to expire.
func (c *cluster) stepDown(ctx context.Context, bus *events.Bus, release bool) {
	c.mu.Lock()
	lease, resign, led := c.lease, c.resign, c.led
	c.lease, c.resign, c.led = nil, nil, nil
	c.mu.Unlock()
	if lease == nil {
		return
	}
	c.nodeV.leader.Store(false)
	resign()
	if err := bus.Stop(ctx); err != nil {
		c.log.Warn("cluster: the outbox's delivery did not stop in time", zap.Error(err))
	}
	done := make(chan struct{})
	go func() { led.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		c.log.Warn("cluster: the leader's loops did not stop in time")
	}
	if release {
		_ = c.db.Release(ctx, lease, func(tx *store.Tx) error { return tx.Signal(leaderReleased, nil) })
	}
	c.log.Info("cluster: this node no longer leads", zap.String("node", c.node), zap.Bool("released", release))
}

// loop renews the lease while leading and tries to take it otherwise.
func (c *cluster) loop(ctx context.Context, l *lifecycle, bus *events.Bus) {
	every := c.ttl / 5
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.poke:
		}
		if err := c.renewNode(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("cluster: renewing this node's liveness lease failed", zap.Error(err))
		}
		c.mu.Lock()
		lease := c.lease
		c.mu.Unlock()
		if lease == nil {
			if err := c.tryLead(ctx, l, bus); err != nil && ctx.Err() == nil {
				c.log.Warn("cluster: taking the leader lease failed", zap.Error(err))
			}
			continue
		}
		err := c.db.Renew(ctx, lease, c.ttl)
		switch {
		case err == nil:
			if time.Since(c.pruned) > time.Minute/4 {
				c.pruned = time.Now()
				if err := c.db.PruneSignals(store.WithLease(ctx, lease)); err != nil && ctx.Err() == nil {
					c.log.Warn("cluster: pruning old signals failed", zap.Error(err))
				}
				// Every process that ever ran has a liveness lease (names
				// are per process); those long ended are dropped.
				if _, err := c.db.PruneLeases(store.WithLease(ctx, lease), nodeLease(""), nodeLeaseKept(c.ttl)); err != nil && ctx.Err() == nil {
					c.log.Warn("cluster: pruning ended node leases failed", zap.Error(err))
				}
			}
		case errors.Is(err, store.ErrLeaseLost):
			c.log.Warn("cluster: the leader lease was taken over", zap.String("node", c.node))
			c.stepDown(context.Background(), bus, false)
		case time.Until(lease.Until) < every:
			// The store does not answer: past the lease, another node
			// may lead, so stop before it can.
			c.log.Warn("cluster: cannot renew the leader lease; stepping down", zap.Error(err))
			c.stepDown(context.Background(), bus, false)
		default:
			c.log.Warn("cluster: renewing the leader lease failed; retrying", zap.Error(err))
		}
	}
}

// nodeLeaseKept is how long an ended liveness lease is kept: well past any
// sweep of dead nodes' work (SweepDeadNodes) that might still read it,
// though a pruned lease reads as ended all the same.
func nodeLeaseKept(ttl time.Duration) time.Duration { return max(time.Hour, 100*ttl) }

// renewNode takes or renews this node's liveness lease (Node.Alive).
func (c *cluster) renewNode(ctx context.Context) error {
	l, err := c.db.TryLease(ctx, nodeLease(c.node), c.node, c.ttl)
	if err == nil && l == nil {
		err = fmt.Errorf("cluster: another process holds this node's name %q", c.node)
	}
	if err == nil && c.nodeV.renewed(time.Now()) {
		c.log.Info("cluster: this node renews its liveness lease again", zap.String("node", c.node))
	}
	return err
}

// watchCutOff looks, apart from the renewal loop (whose store calls may
// hang while the store is unreachable), whether this node's liveness lease
// is about to end unrenewed, and then tells the parts that do work outside
// the store (Node.OnCutOff).
func (c *cluster) watchCutOff(ctx context.Context) {
	t := time.NewTicker(max(c.ttl/20, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if c.nodeV.checkCutOff(now) {
				c.log.Warn("cluster: this node could not renew its liveness lease; stopping its work outside the store before other nodes take it over",
					zap.String("node", c.node))
			}
		}
	}
}

// stop ends this node's part: the leader's loops first, the lease given
// up, then the renewal loop.
func (c *cluster) stop(ctx context.Context) error {
	if c.loopStop != nil {
		c.loopStop()
		<-c.loopDone
	}
	c.stepDown(ctx, c.bus, true)
	// Gone: its work may be taken over at once.
	if l, err := c.db.TryLease(ctx, nodeLease(c.node), c.node, c.ttl); err == nil && l != nil {
		_ = c.db.Release(ctx, l)
	}
	return nil
}
