package fennec

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
)

// Node is this process among the nodes that share a store. Work a node
// does outside the store (a job on its executor, a merge in its memory)
// is marked with the node's name, so that another node can tell whether
// the work's owner still lives: each node holds the store lease
// "node:<name>" while it runs (cluster.go), and a node whose lease ended
// is gone. On a store of one process (bbolt) there are no other nodes:
// work marked by an earlier process is that of a dead node.
type Node struct {
	name string
	db   *store.DB
	// leader is set while this node holds the leader lease (cluster.go).
	leader atomic.Bool
	// leaseTTL is how long its leases last unless renewed (cluster.go
	// sets it before any loop starts).
	leaseTTL time.Duration

	// renewedAt is when this node last renewed its liveness lease (unix
	// nanoseconds); cutOff is set while it has not for too long, and
	// onCutOff are the parts to tell then (OnCutOff).
	renewedAt atomic.Int64
	cutOff    atomic.Bool
	cutMu     sync.Mutex
	onCutOff  []func()
}

// OnCutOff registers fn to run, in a goroutine of its own, when this node
// (on a shared store) has not renewed its liveness lease within lease_ttl:
// its lease has ended, the other nodes may take it for dead at any moment
// and take its work over (the leader fails a job on its executor, and the
// job may be retried elsewhere), so work it does outside the store must
// stop at once. Not earlier: a renewal that is merely slow on a loaded
// machine must not stop work the other nodes still take for alive. fn runs again at each new cut-off, after
// the node has renewed its lease in between.
func (n *Node) OnCutOff(fn func()) {
	n.cutMu.Lock()
	defer n.cutMu.Unlock()
	n.onCutOff = append(n.onCutOff, fn)
}

// renewed records a renewal of the liveness lease at now; true when it
// ends a cut-off.
func (n *Node) renewed(now time.Time) bool {
	n.renewedAt.Store(now.UnixNano())
	return n.cutOff.Swap(false)
}

// checkCutOff tells the OnCutOff parts, once per cut-off, when the last
// renewal is a lease old at now; true when it did.
func (n *Node) checkCutOff(now time.Time) bool {
	last := n.renewedAt.Load()
	if last == 0 || now.Sub(time.Unix(0, last)) < n.LeaseTTL() || n.cutOff.Swap(true) {
		return false
	}
	n.cutMu.Lock()
	fns := append([]func(){}, n.onCutOff...)
	n.cutMu.Unlock()
	for _, fn := range fns {
		go fn()
	}
	return true
}

// Leader says whether this node runs the leader's part: always on a store
// of one process, and on a shared store while it holds the lease.
func (n *Node) Leader() bool { return !n.db.Shared() || n.leader.Load() }

func newNode(db *store.DB) *Node { return &Node{name: newNodeName(), db: db} }

// Name is this node's name: host, process id and a random part.
func (n *Node) Name() string { return n.name }

// LeaseTTL is how long a node's leases last unless renewed: a dead node's
// liveness lease ends within it, so work that waits for the end of such
// leases looks about this often.
func (n *Node) LeaseTTL() time.Duration {
	if n.leaseTTL <= 0 {
		return DefaultLeaseTTL
	}
	return n.leaseTTL
}

// Shared says whether other nodes may share the store.
func (n *Node) Shared() bool { return n.db.Shared() }

// nodeLease is the name of a node's liveness lease.
func nodeLease(name string) string { return "node:" + name }

// Alive says whether the named node is running: this node, or (on a
// shared store) a node whose liveness lease has not ended. An empty name
// (work marked before nodes had names) is no live node's.
func (n *Node) Alive(ctx context.Context, name string) (bool, error) {
	if name == "" {
		return false, nil
	}
	if name == n.name {
		return true, nil
	}
	if !n.db.Shared() {
		return false, nil
	}
	l, found, err := n.db.LeaseOf(ctx, nodeLease(name))
	if err != nil || !found {
		return false, err
	}
	return l.Holder == name && time.Now().Before(l.Until), nil
}

// SweepDeadNodes calls sweep about twice a lease_ttl (at most every
// deadNodesEvery) until ctx ends, on a shared store: a part that marks its
// work with the node's name (Alive) takes over or undoes the work of nodes
// that died meanwhile. On a store of one process it returns at once: no
// other node can die there, and the start's recovery found the earlier
// process's work. Errors are sweep's to report; the next round tries again.
func (n *Node) SweepDeadNodes(ctx context.Context, sweep func(context.Context)) {
	if !n.Shared() {
		return
	}
	// Half the lease: a dead node's work is taken over within about 1.5
	// lease_ttl of its death, not lease_ttl plus a fixed period.
	t := time.NewTicker(min(deadNodesEvery, n.LeaseTTL()/2))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			sweep(ctx)
		}
	}
}

// deadNodesEvery is how often, at most, SweepDeadNodes sweeps (more often
// with a short lease_ttl).
const deadNodesEvery = 5 * time.Second

// registerClusterOps adds what an operator of several nodes needs: on a
// shared store the engine, this node and the leases in the readiness
// report; the lead and the outbox's depth in /-/metrics.
func registerClusterOps(a *api.API, db *store.DB, bus *events.Bus, n *Node) {
	// A store of one process has no nodes to tell apart: its readiness
	// answer stays as it was.
	if db.Shared() {
		a.AddReadinessReport("store", func() any {
			r := map[string]any{"engine": db.Engine().Name(), "node": n.name, "leader": n.Leader()}
			ctx, cancel := context.WithTimeout(context.Background(), readinessStoreDeadline)
			defer cancel()
			if leases, err := db.Leases(ctx); err == nil {
				holders := map[string]string{}
				now := time.Now()
				for _, l := range leases {
					if l.Holder != "" && now.Before(l.Until) && !strings.HasPrefix(l.Name, "node:") {
						holders[l.Name] = l.Holder
					}
				}
				r["leases"] = holders
			}
			return r
		})
	}
	reg := a.Metrics().Registry
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "fennec_node_leader",
		Help:        "1 while this node runs the leader's part (holds the leader lease of a shared store).",
		ConstLabels: prometheus.Labels{"node": n.name},
	}, func() float64 {
		if n.Leader() {
			return 1
		}
		return 0
	}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "fennec_outbox_pending",
		Help:        "Events in the outbox not yet handled by all their subscribers (the whole store's).",
		ConstLabels: prometheus.Labels{"node": n.name},
	}, func() float64 {
		pending, err := bus.Pending()
		if err != nil {
			return -1
		}
		return float64(pending)
	}))
}
