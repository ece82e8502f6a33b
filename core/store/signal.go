package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
)

// Signals: telling every node that something changed. A cache dropped
// after a commit (a revoked token), a loop woken by new work (a queued
// job, an outbox entry) must learn of commits made by other nodes sharing
// the store too. tx.Signal(topic, payload) runs the topic's handlers on
// this node once the transaction commits, as OnCommit does, and on a
// shared engine also appends the signal to the _signals bucket in the same
// transaction. Every node reads the signals other nodes appended a few
// times a second (PollSignals) and runs its own handlers for them.
//
// The bucket is an append-only log keyed by time, node and a counter, so
// writers never touch the same key (no serialisation conflicts between
// nodes), and a reader walks only the last moments. Entries older than
// signalKeep are pruned by the leader of the nodes (PruneSignals).

// signalBucket holds the signal log.
var signalBucket = Keys("_signals")

// SignalEvery is how often a node reads other nodes' signals.
const SignalEvery = 200 * time.Millisecond

// signalWindow is how far back a poll reads: longer than any clock skew
// between nodes and any commit's delay, so no signal is missed; the keys
// seen within it are remembered, so none is handled twice.
const signalWindow = 10 * time.Second

// signalKeep is how long signals stay in the log.
const signalKeep = time.Minute

// SharedEngine is an Engine several processes may use at once (a
// database server); a bbolt file is not one.
type SharedEngine interface {
	Engine
	Shared() bool
}

// Shared says whether other nodes may be using this store at the same
// time: then signals are written to the store and leases matter.
func (db *DB) Shared() bool {
	s, ok := db.engine.(SharedEngine)
	return ok && s.Shared()
}

type signals struct {
	node     [8]byte
	counter  atomic.Uint64
	mu       sync.RWMutex
	handlers map[string][]func(payload []byte)
	// pollMu serialises polls; seen are the keys handled within the
	// window.
	pollMu sync.Mutex
	seen   map[string]time.Time
}

func (s *signals) init() {
	_, _ = rand.Read(s.node[:])
	s.handlers = map[string][]func([]byte){}
	s.seen = map[string]time.Time{}
}

// OnSignal registers fn to run when topic is signalled, by a commit of
// this node or (on a shared store) of another. fn runs in the committing
// or polling goroutine: it must be quick (drop a cache, poke a channel).
func (db *DB) OnSignal(topic string, fn func(payload []byte)) {
	db.signals.mu.Lock()
	defer db.signals.mu.Unlock()
	db.signals.handlers[topic] = append(db.signals.handlers[topic], fn)
}

func (db *DB) runSignal(topic string, payload []byte) {
	db.signals.mu.RLock()
	hs := db.signals.handlers[topic]
	db.signals.mu.RUnlock()
	for _, fn := range hs {
		fn(payload)
	}
}

// Signal runs topic's handlers with payload after this transaction
// commits, on this node and, on a shared store, on every other node (within
// about SignalEvery). A transaction rolled back signals nothing.
//
// A topic signalled without a payload more than once in a transaction is
// signalled once.
func (tx *Tx) Signal(topic string, payload []byte) error {
	db := tx.db
	if len(payload) == 0 {
		if tx.signalled[topic] {
			return nil
		}
		if tx.signalled == nil {
			tx.signalled = map[string]bool{}
		}
		tx.signalled[topic] = true
	}
	p := append([]byte(nil), payload...)
	tx.OnCommit(func() { db.runSignal(topic, p) })
	if !db.Shared() {
		return nil
	}
	if err := signalBucket.Ensure(tx); err != nil {
		return err
	}
	key := make([]byte, 24)
	binary.BigEndian.PutUint64(key, uint64(time.Now().UnixNano()))
	copy(key[8:16], db.signals.node[:])
	binary.BigEndian.PutUint64(key[16:], db.signals.counter.Add(1))
	val := make([]byte, 0, 2+len(topic)+len(p))
	val = binary.AppendUvarint(val, uint64(len(topic)))
	val = append(append(val, topic...), p...)
	return signalBucket.Put(tx, key, val)
}

// PollSignals reads the signals other nodes appended since the last poll
// and runs this node's handlers for them. A shared store's node calls it
// every SignalEvery (RunSignals); on a store of one process it does
// nothing.
func (db *DB) PollSignals(ctx context.Context) error {
	if !db.Shared() {
		return nil
	}
	s := &db.signals
	s.pollMu.Lock()
	defer s.pollMu.Unlock()
	now := time.Now()
	from := make([]byte, 8)
	binary.BigEndian.PutUint64(from, uint64(now.Add(-signalWindow).UnixNano()))
	type sig struct {
		topic   string
		payload []byte
	}
	var fresh []sig
	var fresher []string
	err := db.View(ctx, func(tx *Tx) error {
		fresh, fresher = nil, nil
		c := signalBucket.Cursor(tx)
		for k, v := c.Seek(from); k != nil; k, v = c.Next() {
			if len(k) != 24 || bytes.Equal(k[8:16], s.node[:]) {
				continue
			}
			if _, ok := s.seen[string(k)]; ok {
				continue
			}
			n, w := binary.Uvarint(v)
			if w <= 0 || uint64(len(v)-w) < n {
				continue
			}
			fresh = append(fresh, sig{string(v[w : w+int(n)]), append([]byte(nil), v[w+int(n):]...)})
			fresher = append(fresher, string(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range fresher {
		s.seen[k] = now
	}
	for k, at := range s.seen {
		if now.Sub(at) > 2*signalWindow {
			delete(s.seen, k)
		}
	}
	for _, f := range fresh {
		db.runSignal(f.topic, f.payload)
	}
	return nil
}

// PruneSignals deletes the signals older than a minute, in transactions
// of bounded size; the leader of several nodes calls it now and then.
func (db *DB) PruneSignals(ctx context.Context) error {
	cutoff := time.Now().Add(-signalKeep)
	for range 100 {
		n, err := db.pruneSignals(ctx, cutoff)
		if err != nil || n < pruneBatch {
			return err
		}
	}
	return nil
}

// pruneBatch bounds the signals one transaction deletes.
const pruneBatch = 2000

// pruneSignals deletes up to pruneBatch signals appended before cutoff
// and says how many.
func (db *DB) pruneSignals(ctx context.Context, cutoff time.Time) (int, error) {
	end := make([]byte, 8)
	binary.BigEndian.PutUint64(end, uint64(cutoff.UnixNano()))
	var n int
	err := db.Update(ctx, func(tx *Tx) error {
		var old [][]byte
		c := signalBucket.Cursor(tx)
		for k, _ := c.First(); k != nil && bytes.Compare(k, end) < 0 && len(old) < pruneBatch; k, _ = c.Next() {
			old = append(old, append([]byte(nil), k...))
		}
		n = len(old)
		for _, k := range old {
			if err := signalBucket.Delete(tx, k); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// RunSignals polls other nodes' signals until ctx ends (on a shared store;
// otherwise it returns at once), telling report each poll's outcome (nil
// for success), so that it can log an outage once.
func (db *DB) RunSignals(ctx context.Context, report func(error)) {
	if !db.Shared() {
		return
	}
	t := time.NewTicker(SignalEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := db.PollSignals(ctx); ctx.Err() == nil && report != nil {
				report(err)
			}
		}
	}
}
