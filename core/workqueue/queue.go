package workqueue

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/store"
)

// DefaultMaxAttempts is how many attempts a job gets when the queue is
// not told otherwise.
const DefaultMaxAttempts = 10

// DefaultLease is how long a taken job stays the taker's.
const DefaultLease = 10 * time.Minute

// ErrNotDead is returned by Retry for a job that is not a dead letter.
var ErrNotDead = errors.New("workqueue: no such dead letter")

// Handler does one job. It returns nil when the job is done, an error to
// have it tried again later, Permanent(err) to make it a dead letter at
// once. Its context ends when Run's does.
type Handler func(ctx context.Context, job *Job) error

// Item is a job as the queue keeps it.
type Item struct {
	ID         int64     `json:"id"`
	Key        string    `json:"key"`
	Payload    []byte    `json:"-"` // kept apart (the payloads bucket)
	Attempts   int       `json:"attempts,omitempty"`
	NextTry    time.Time `json:"next_try"`
	Lease      string    `json:"lease,omitempty"` // owner:sequence of the taker
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	LastError  string    `json:"last_error,omitempty"`
	EnqueuedAt time.Time `json:"enqueued_at"`
	DeadAt     time.Time `json:"dead_at,omitzero"` // set for a dead letter
}

// Job is a taken item handed to the handler.
type Job struct {
	Item
	// Last is true when a failure of this attempt makes the job a dead
	// letter (no retry follows).
	Last    bool
	records []func(*store.Tx) error
}

// Record adds fn to the transaction that records this attempt's outcome
// (done, retry or dead letter), so what the handler learned commits with
// it. fn may run more than once (store.DB.Update's contract). It does not
// run when the outcome is dropped (a lost lease) or the attempt was
// interrupted by the end of Run.
func (j *Job) Record(fn func(tx *store.Tx) error) { j.records = append(j.records, fn) }

// permanentError marks a failure no retry can mend.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }
func (p permanentError) Unwrap() error { return p.err }

// Permanent wraps err so the job becomes a dead letter without retries.
func Permanent(err error) error { return permanentError{err} }

// Option tunes a queue.
type Option func(*Queue)

// WithMaxAttempts sets how many attempts a job gets before it becomes a
// dead letter (DefaultMaxAttempts when n < 1).
func WithMaxAttempts(n int) Option { return func(q *Queue) { q.maxAttempts = n } }

// WithLease sets how long a taken job stays the taker's (DefaultLease).
func WithLease(d time.Duration) Option { return func(q *Queue) { q.lease = d } }

// WithLogger sets where failures of the queue itself are logged.
func WithLogger(l *zap.Logger) Option { return func(q *Queue) { q.log = l } }

// WithSharedStore says several processes work this queue through a store
// they share: Run then frees no lease when it starts, and a job another
// worker took becomes available again when its lease expires. (With
// bbolt, one process per file, leave it off.)
func WithSharedStore() Option { return func(q *Queue) { q.shared = true } }

// WithConcurrency bounds how many jobs run at once across all keys (n < 1:
// no bound, one per key with work). A queue whose handler opens a
// connection per job (mail to each recipient) keeps a fan-out from opening
// hundreds at once.
func WithConcurrency(n int) Option {
	return func(q *Queue) {
		if n > 0 {
			q.slots = make(chan struct{}, n)
		}
	}
}

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(q *Queue) { q.now = now } }

// Queue is one named durable queue.
type Queue struct {
	db          *store.DB
	name        string
	policy      backoff.Policy
	handler     Handler
	maxAttempts int
	lease       time.Duration
	log         *zap.Logger
	now         func() time.Time
	shared      bool          // WithSharedStore
	slots       chan struct{} // WithConcurrency; nil: no bound
	// paused, set by tests, stops renewing leases: the process paused or
	// cut off from the store, as another node sees a dead one.
	paused atomic.Bool

	owner string        // this queue value's lease owner
	seq   atomic.Uint64 // lease sequence

	items, payloads, order, dead []byte // bucket names

	mu      sync.Mutex
	running bool
	poked   map[string]bool          // keys enqueued since Run last looked
	kick    chan struct{}            // wakes Run
	workers map[string]chan struct{} // key -> its worker's wake-up
}

// New builds the queue name over db. Jobs are retried after
// policy.Delay(attempts); h does them once Run runs. The queue's buckets
// are created by its first write; a module declares them with its tables
// (Buckets) so they exist from the start. An empty name or a nil handler
// is a programming error: New panics.
func New(db *store.DB, name string, policy backoff.Policy, h Handler, opts ...Option) *Queue {
	if name == "" || strings.IndexByte(name, 0) >= 0 || h == nil {
		panic("workqueue: a queue needs a name and a handler")
	}
	q := &Queue{
		db: db, name: name, policy: policy, handler: h,
		maxAttempts: DefaultMaxAttempts, lease: DefaultLease, log: zap.NewNop(), now: time.Now,
		owner: rand.Text(),
		poked: map[string]bool{}, kick: make(chan struct{}, 1), workers: map[string]chan struct{}{},
	}
	for _, o := range opts {
		o(q)
	}
	if q.maxAttempts < 1 {
		q.maxAttempts = DefaultMaxAttempts
	}
	if q.lease <= 0 {
		q.lease = DefaultLease
	}
	q.log = q.log.With(zap.String("queue", name))
	if db != nil { // nil only in tests of a queue's owner that never run it
		if db.Shared() {
			// Other nodes work the queue too: no lease found at start
			// is this process's, and their enqueues wake this node's
			// workers.
			q.shared = true
		}
		db.OnSignal(q.signal(), func(key []byte) { q.poke(string(key)) })
	}
	names := Buckets(name)
	q.items, q.payloads, q.order, q.dead = []byte(names[0]), []byte(names[1]), []byte(names[2]), []byte(names[3])
	return q
}

// Declared is a queue's name as a module lists it with its tables
// (workqueue.Declared("webhooks.deliveries")), so that the queue's buckets
// exist from the start.
type Declared string

// Buckets are the declared queue's buckets.
func (d Declared) Buckets() []string { return Buckets(string(d)) }

// Buckets are the buckets of the queue name: items, payloads, order, dead.
func Buckets(name string) []string {
	p := "workqueue." + name + "."
	return []string{p + "items", p + "payloads", p + "order", p + "dead"}
}

// Buckets are q's buckets (a module lists them with its tables).
func (q *Queue) Buckets() []string { return Buckets(q.name) }

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

// buckets are q's buckets in tx, created when missing in a write (a
// migration may enqueue before the module declared them). In a read they
// may be missing: the queue is empty then (none says ok false).
type buckets struct{ items, payloads, order, dead keysIn }

// keysIn is one of a queue's key spaces in one transaction: the bucket
// methods the queue's code is written against, on the store's Keys.
type keysIn struct {
	tx *store.Tx
	k  store.Keys
}

func (b keysIn) Get(k []byte) []byte           { return b.k.Get(b.tx, k) }
func (b keysIn) Put(k, v []byte) error         { return b.k.Put(b.tx, k, v) }
func (b keysIn) Delete(k []byte) error         { return b.k.Delete(b.tx, k) }
func (b keysIn) Cursor() store.Cursor          { return b.k.Cursor(b.tx) }
func (b keysIn) NextSequence() (uint64, error) { return b.k.NextSequence(b.tx) }

func (q *Queue) bucketsIn(tx *store.Tx) (b buckets, ok bool, err error) {
	return bucketsIn(tx, q.items, q.payloads, q.order, q.dead)
}

func bucketsIn(tx *store.Tx, names ...[]byte) (buckets, bool, error) {
	var out [4]keysIn
	for i, n := range names {
		k := store.Keys(n)
		if !k.Exists(tx) {
			if !tx.Writable() {
				return buckets{}, false, nil
			}
			if err := k.Ensure(tx); err != nil {
				return buckets{}, false, err
			}
		}
		out[i] = keysIn{tx, k}
	}
	return buckets{out[0], out[1], out[2], out[3]}, true, nil
}

// writeBuckets are q's buckets in a write transaction.
func (q *Queue) writeBuckets(tx *store.Tx) (buckets, error) {
	b, ok, err := q.bucketsIn(tx)
	if err == nil && !ok {
		err = store.ErrReadOnlyTx
	}
	return b, err
}

func orderKey(key string, id int64) []byte {
	return append(append([]byte(key), 0), store.Key(id)...)
}

func checkKey(key string) error {
	if strings.IndexByte(key, 0) >= 0 {
		return fmt.Errorf("workqueue: a key may not hold a NUL byte")
	}
	return nil
}

// Enqueue adds a job for key at the end of key's line, in tx: it exists
// once tx commits, and the workers are woken then.
func (q *Queue) Enqueue(tx *store.Tx, key string, payload []byte) error {
	_, err := q.EnqueueAt(tx, key, payload, time.Time{})
	return err
}

// EnqueueAt is Enqueue for a job that is not due before at (the zero time:
// due now), and returns the job's id, with which the caller may Remove it
// in a later transaction. A job whose work is usually done by its caller
// uses it: the job is the durable promise of a retry, due after a grace
// period, and the caller removes it once the work is done. The jobs behind
// it on its key wait for it.
func (q *Queue) EnqueueAt(tx *store.Tx, key string, payload []byte, at time.Time) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	b, err := q.writeBuckets(tx)
	if err != nil {
		return 0, err
	}
	now := q.now()
	if at.Before(now) {
		at = now
	}
	id, err := enqueue(b, &Item{Key: key, Payload: payload, NextTry: at, EnqueuedAt: now})
	if err != nil {
		return 0, err
	}
	if err := tx.Signal(q.signal(), []byte(key)); err != nil {
		return 0, err
	}
	return id, nil
}

// EnqueueIn adds it to the queue name in tx without a Queue value: a store
// migration moving an older queue's rows uses it, in their order. It keeps
// its Key, Payload, Attempts, NextTry, LastError and EnqueuedAt; the id is
// the queue's next. The queue's Run finds the job when it starts.
func EnqueueIn(tx *store.Tx, name string, it Item) error {
	if err := checkKey(it.Key); err != nil {
		return err
	}
	names := Buckets(name)
	b, ok, err := bucketsIn(tx, []byte(names[0]), []byte(names[1]), []byte(names[2]), []byte(names[3]))
	if err == nil && !ok {
		err = store.ErrReadOnlyTx
	}
	if err != nil {
		return err
	}
	_, err = enqueue(b, &Item{Key: it.Key, Payload: it.Payload, Attempts: it.Attempts, NextTry: it.NextTry,
		LastError: it.LastError, EnqueuedAt: it.EnqueuedAt})
	return err
}

// KeysIn are the keys with live jobs in the queue name, in order, as tx
// sees them.
func KeysIn(tx *store.Tx, name string) ([]string, error) {
	names := Buckets(name)
	b, ok, err := bucketsIn(tx, []byte(names[0]), []byte(names[1]), []byte(names[2]), []byte(names[3]))
	if err != nil || !ok {
		return nil, err
	}
	return liveKeys(b), nil
}

// enqueue stores it (Payload apart) under the next id, at the end of its
// key's line.
func enqueue(b buckets, it *Item) (int64, error) {
	seq, err := b.items.NextSequence()
	if err != nil {
		return 0, err
	}
	it.ID = int64(seq)
	if err := put(b, it); err != nil {
		return 0, err
	}
	if err := b.payloads.Put(store.Key(it.ID), it.Payload); err != nil {
		return 0, err
	}
	return it.ID, b.order.Put(orderKey(it.Key, it.ID), nil)
}

func put(b buckets, it *Item) error {
	v, err := json.Marshal(it)
	if err != nil {
		return err
	}
	return b.items.Put(store.Key(it.ID), v)
}

// get reads item id (without its payload); nil when there is none.
func get(b buckets, id int64) (*Item, error) {
	raw := b.items.Get(store.Key(id))
	if raw == nil {
		return nil, nil
	}
	it := &Item{}
	if err := json.Unmarshal(raw, it); err != nil {
		return nil, fmt.Errorf("workqueue: item %d: %w", id, err)
	}
	return it, nil
}

// remove deletes item it everywhere.
func remove(b buckets, it *Item) error {
	k := store.Key(it.ID)
	for _, err := range []error{b.items.Delete(k), b.payloads.Delete(k), b.order.Delete(orderKey(it.Key, it.ID)), b.dead.Delete(k)} {
		if err != nil {
			return err
		}
	}
	return nil
}

// head is the id of key's next live job; false when key has none.
func head(b buckets, key string) (int64, bool) {
	prefix := append([]byte(key), 0)
	k, _ := b.order.Cursor().Seek(prefix)
	if k == nil || !bytes.HasPrefix(k, prefix) || len(k) != len(prefix)+8 {
		return 0, false
	}
	return int64(store.KeyID(k)), true
}

// liveKeys are the keys with live jobs, in order.
func liveKeys(b buckets) []string {
	var out []string
	c := b.order.Cursor()
	for k, _ := c.First(); k != nil; {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			k, _ = c.Next()
			continue
		}
		out = append(out, string(k[:i]))
		k, _ = c.Seek(append(append([]byte(nil), k[:i]...), 1)) // past this key's jobs
	}
	return out
}

// Remove deletes job id, live or dead, in tx; a missing job is no error.
func (q *Queue) Remove(tx *store.Tx, id int64) error {
	b, err := q.writeBuckets(tx)
	if err != nil {
		return err
	}
	it, err := get(b, id)
	if err != nil || it == nil {
		return err
	}
	return remove(b, it)
}

// DropKey deletes every live job of key in tx (the thing they were for is
// gone); dead letters stay.
func (q *Queue) DropKey(tx *store.Tx, key string) error {
	b, err := q.writeBuckets(tx)
	if err != nil {
		return err
	}
	prefix := append([]byte(key), 0)
	var ids []int64
	c := b.order.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			ids = append(ids, int64(store.KeyID(k)))
		}
	}
	for _, id := range ids {
		if err := remove(b, &Item{ID: id, Key: key}); err != nil {
			return err
		}
	}
	return nil
}

// Items are key's live jobs in order, with their payloads.
func (q *Queue) Items(ctx context.Context, key string) ([]Item, error) {
	var out []Item
	err := q.db.View(ctx, func(tx *store.Tx) error {
		out = nil
		b, ok, err := q.bucketsIn(tx)
		if err != nil || !ok {
			return err
		}
		prefix := append([]byte(key), 0)
		c := b.order.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			it, err := withPayload(b, int64(store.KeyID(k)))
			if err != nil {
				return err
			}
			if it != nil {
				out = append(out, *it)
			}
		}
		return nil
	})
	return out, err
}

// Dead are the dead letters, oldest job first, with their payloads.
func (q *Queue) Dead(ctx context.Context) ([]Item, error) {
	var out []Item
	err := q.db.View(ctx, func(tx *store.Tx) error {
		out = nil
		b, ok, err := q.bucketsIn(tx)
		if err != nil || !ok {
			return err
		}
		c := b.dead.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			it, err := withPayload(b, int64(store.KeyID(k)))
			if err != nil {
				return err
			}
			if it != nil {
				out = append(out, *it)
			}
		}
		return nil
	})
	return out, err
}

func withPayload(b buckets, id int64) (*Item, error) {
	it, err := get(b, id)
	if err != nil || it == nil {
		return nil, err
	}
	it.Payload = bytes.Clone(b.payloads.Get(store.Key(id)))
	return it, nil
}

// Retry puts dead letter id back in its key's line, in its place by id,
// due now and with a fresh count of attempts; ErrNotDead when id is not a
// dead letter.
func (q *Queue) Retry(ctx context.Context, id int64) error {
	return q.db.Update(ctx, func(tx *store.Tx) error {
		b, err := q.writeBuckets(tx)
		if err != nil {
			return err
		}
		it, err := get(b, id)
		if err != nil {
			return err
		}
		if it == nil || it.DeadAt.IsZero() {
			return ErrNotDead
		}
		it.DeadAt, it.Attempts, it.NextTry, it.Lease, it.LeaseUntil = time.Time{}, 0, q.now(), "", time.Time{}
		if err := put(b, it); err != nil {
			return err
		}
		if err := b.dead.Delete(store.Key(id)); err != nil {
			return err
		}
		if err := b.order.Put(orderKey(it.Key, id), nil); err != nil {
			return err
		}
		return tx.Signal(q.signal(), []byte(it.Key))
	})
}

// signal is the topic that tells every node's Run of new work (the
// payload is the key).
func (q *Queue) signal() string { return "workqueue." + q.name }

// poke tells Run that key has new work.
func (q *Queue) poke(key string) {
	q.mu.Lock()
	q.poked[key] = true
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

func (q *Queue) newLease() string {
	return q.owner + ":" + strconv.FormatUint(q.seq.Add(1), 10)
}

func (q *Queue) ownLease(lease string) bool { return strings.HasPrefix(lease, q.owner+":") }
