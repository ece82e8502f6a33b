package fennec

import (
	"context"
	"time"

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
}

func newNode(db *store.DB) *Node { return &Node{name: newNodeName(), db: db} }

// Name is this node's name: host, process id and a random part.
func (n *Node) Name() string { return n.name }

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
	leases, err := n.db.Leases(ctx)
	if err != nil {
		return false, err
	}
	for _, l := range leases {
		if l.Name == nodeLease(name) {
			return l.Holder == name && time.Now().Before(l.Until), nil
		}
	}
	return false, nil
}
