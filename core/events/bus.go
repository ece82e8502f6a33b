package events

import (
	"context"
	"encoding/json" // RawMessage, part of the subscribers' API
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	fastjson "github.com/go-json-experiment/json/v1" // encoding/json's behaviour, faster (as core/store)
	"go.uber.org/zap"

	retry "github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/store"
)

// Event is anything published on the bus. Topic names are stable strings
// ("repository.push"), because they are persisted in the outbox.
type Event interface {
	EventTopic() string
}

// Subscriber handles one topic. Name identifies it in the outbox, so it must
// be unique and stable across releases ("webhooks.push").
type Subscriber struct {
	Name   string
	Topic  string
	Handle func(ctx context.Context, payload json.RawMessage) error
	// InTx declares a handler whose only effect is on the store: the bus
	// may call it with a context that carries its own write transaction
	// (the handler's View and Update join it), together with the other
	// such handlers of a batch and the outbox's bookkeeping, so a batch of
	// events costs one commit instead of one per event, and its effects
	// and its acknowledgement commit together. Such a handler may run
	// again when the transaction is retried, like any write function.
	InTx bool
	// Wants, when set, is asked when an event of the topic is published:
	// an event it refuses is never stored for this subscriber, nor handed
	// to it (a subscriber that acts on one action of many costs nothing
	// for the others). Build it with Only.
	Wants func(ev Event) bool
}

// Only narrows a subscriber of topic E to the events keep accepts, decided
// at publish time (see Subscriber.Wants).
func Only[E Event](s Subscriber, keep func(ev E) bool) Subscriber {
	s.Wants = func(ev Event) bool {
		e, ok := ev.(E)
		return !ok || keep(e)
	}
	return s
}

// Subscribe builds a typed Subscriber: the payload is decoded into E.
func Subscribe[E Event](name string, handle func(ctx context.Context, ev E) error) Subscriber {
	var zero E
	return Subscriber{
		Name:  name,
		Topic: zero.EventTopic(),
		Handle: func(ctx context.Context, payload json.RawMessage) error {
			var ev E
			if err := fastjson.Unmarshal(payload, &ev); err != nil {
				return fmt.Errorf("decode %s: %w", zero.EventTopic(), err)
			}
			return handle(ctx, ev)
		},
	}
}

// SubscribeInTx is Subscribe for a handler that only writes to the store
// (see Subscriber.InTx).
func SubscribeInTx[E Event](name string, handle func(ctx context.Context, ev E) error) Subscriber {
	s := Subscribe(name, handle)
	s.InTx = true
	return s
}

// OutboxBucket is the bucket that holds undelivered events.
const OutboxBucket = "_outbox"

// outbox is OutboxBucket's keys.
var outbox = store.Keys(OutboxBucket)

// outboxSignal wakes the dispatcher after a commit that published, on
// whichever node it runs (store.Tx.Signal).
const outboxSignal = "events.outbox"

type entry struct {
	Topic     string          `json:"topic"`
	Payload   json.RawMessage `json:"payload"`
	Pending   []string        `json:"pending"`
	Attempts  int             `json:"attempts"`
	NextTry   time.Time       `json:"next_try"`
	CreatedAt time.Time       `json:"created_at"`
}

// Bus publishes events into the outbox and delivers them after commit.
type Bus struct {
	db      *store.DB
	log     *zap.Logger
	byTopic map[string][]Subscriber
	byName  map[string]Subscriber

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
	// lastDone is the previous dispatcher's done channel: a Start after a
	// Stop that timed out waits for it, so two dispatchers never overlap.
	lastDone chan struct{}
	mu       sync.Mutex
	idle     *sync.Cond
	working  bool
	// Timeout bounds one handler call; MaxBackoff caps the retry delay.
	Timeout    time.Duration
	MaxBackoff time.Duration
}

// New builds a bus over db with the given subscribers (more may be added
// with Register before Start). Subscriber names must be unique.
func New(db *store.DB, log *zap.Logger, subs []Subscriber) (*Bus, error) {
	b := &Bus{
		db:         db,
		log:        log,
		byTopic:    map[string][]Subscriber{},
		byName:     map[string]Subscriber{},
		kick:       make(chan struct{}, 1),
		Timeout:    30 * time.Second,
		MaxBackoff: 5 * time.Minute,
	}
	b.idle = sync.NewCond(&b.mu)
	db.OnSignal(outboxSignal, func([]byte) { b.Kick() })
	if err := b.Register(subs...); err != nil {
		return nil, err
	}
	if err := db.EnsureBuckets([]string{OutboxBucket}); err != nil {
		return nil, err
	}
	return b, nil
}

// Register adds subscribers. It must run before Start and before anything is
// published (the application does it while it is assembled): subscribers
// may depend on services that themselves publish on this bus, so they
// cannot all exist when the bus is built.
func (b *Bus) Register(subs ...Subscriber) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		return fmt.Errorf("events: Register after Start")
	}
	for _, s := range subs {
		if s.Name == "" || s.Topic == "" || s.Handle == nil {
			return fmt.Errorf("events: subscriber %q is incomplete", s.Name)
		}
		if _, dup := b.byName[s.Name]; dup {
			return fmt.Errorf("events: two subscribers named %q", s.Name)
		}
		b.byName[s.Name] = s
		b.byTopic[s.Topic] = append(b.byTopic[s.Topic], s)
	}
	return nil
}

// Publish writes ev to the outbox inside tx. Delivery starts after tx commits;
// if tx rolls back, the event is gone with it. Events nobody listens to are
// not stored.
func (b *Bus) Publish(tx *store.Tx, ev Event) error {
	var pending []string
	for _, s := range b.byTopic[ev.EventTopic()] {
		if s.Wants == nil || s.Wants(ev) {
			pending = append(pending, s.Name)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	payload, err := fastjson.Marshal(ev)
	if err != nil {
		return fmt.Errorf("events: encode %s: %w", ev.EventTopic(), err)
	}
	e := entry{Topic: ev.EventTopic(), Payload: payload, CreatedAt: time.Now().UTC(), Pending: pending}
	seq, err := outbox.NextSequence(tx)
	if err != nil {
		return err
	}
	raw, err := fastjson.Marshal(e)
	if err != nil {
		return err
	}
	if err := outbox.Put(tx, store.Key(seq), raw); err != nil {
		return err
	}
	if err := tx.Signal(outboxSignal, nil); err != nil {
		return err
	}
	return nil
}

// Kick wakes the dispatcher; cheap and safe to call any time.
func (b *Bus) Kick() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// Start launches the dispatcher. It first delivers whatever an earlier run
// left in the outbox.
func (b *Bus) Start() { b.StartContext(context.Background()) }

// StartContext is Start with the context the deliveries run under (a
// leader's, whose lease fences their writes); Stop or the end of ctx
// stops the dispatcher.
func (b *Bus) StartContext(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		return
	}
	if b.lastDone != nil {
		<-b.lastDone
	}
	b.stop = make(chan struct{})
	b.done = make(chan struct{})
	go b.loop(ctx, b.stop, b.done)
	b.Kick()
}

// Stop ends the dispatcher after the handler call in flight (bounded by ctx).
// Undelivered events stay in the outbox for the next start.
func (b *Bus) Stop(ctx context.Context) error {
	b.mu.Lock()
	stop, done := b.stop, b.done
	b.stop = nil
	b.lastDone = done
	b.mu.Unlock()
	if stop == nil {
		return nil
	}
	close(stop)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Drain waits until the outbox is empty or ctx ends; for tests and shutdown.
func (b *Bus) Drain(ctx context.Context) error {
	for {
		n, err := b.Pending()
		if err != nil || n == 0 {
			return err
		}
		b.Kick()
		select {
		case <-ctx.Done():
			return fmt.Errorf("events: %d undelivered: %w", n, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Backlog counts events not yet handled by all their subscribers and
// tells when the oldest of them was published (zero when there is none):
// the admin overview shows both, for a backlog that only grows is a
// subscriber that keeps failing. It reads one entry beside the count.
func (b *Bus) Backlog(ctx context.Context) (n int, oldest time.Time, err error) {
	err = b.db.View(ctx, func(tx *store.Tx) error {
		n = outbox.Count(tx)
		if _, v := outbox.Cursor(tx).First(); v != nil {
			var e entry
			if fastjson.Unmarshal(v, &e) == nil {
				oldest = e.CreatedAt
			}
		}
		return nil
	})
	return n, oldest, err
}

// Pending counts events not yet handled by all their subscribers.
func (b *Bus) Pending() (int, error) {
	n := 0
	err := b.db.View(context.Background(), func(tx *store.Tx) error {
		n = outbox.Count(tx)
		return nil
	})
	return n, err
}

func (b *Bus) loop(parent context.Context, stop, done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait, err := b.deliverDue(ctx)
		if err != nil && ctx.Err() == nil {
			b.log.Error("events: delivery round failed", zap.Error(err))
			wait = time.Second
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-b.kick:
		case <-timer.C:
		}
	}
}

type outcome struct {
	key  []byte
	done []string
}

// deliverDue hands every due event to its pending subscribers and records the
// result; it returns how long to wait before the next retry is due.
func (b *Bus) deliverDue(ctx context.Context) (time.Duration, error) {
	const batch = 100
	wait := time.Hour
	for {
		now := time.Now()
		type due struct {
			key []byte
			e   entry
		}
		var work []due
		more := false
		err := b.db.View(ctx, func(tx *store.Tx) error {
			c := outbox.Cursor(tx)
			for k, v := c.First(); k != nil; k, v = c.Next() {
				var e entry
				if err := fastjson.Unmarshal(v, &e); err != nil {
					b.log.Error("events: dropping unreadable outbox entry", zap.Uint64("seq", store.KeyID(k)), zap.Error(err))
					work = append(work, due{key: append([]byte(nil), k...)})
					continue
				}
				if e.NextTry.After(now) {
					if d := e.NextTry.Sub(now); d < wait {
						wait = d
					}
					continue
				}
				if len(work) == batch {
					more = true
					break
				}
				work = append(work, due{key: append([]byte(nil), k...), e: e})
			}
			return nil
		})
		if err != nil || len(work) == 0 {
			return wait, err
		}
		results := make([]outcome, 0, len(work))
		var inTx []deferredCall
		for i, w := range work {
			o := outcome{key: w.key}
			for _, name := range w.e.Pending {
				s, ok := b.byName[name]
				if !ok {
					// The subscriber no longer exists (module removed): nothing
					// will ever handle it, so stop waiting for it.
					o.done = append(o.done, name)
					continue
				}
				if s.InTx {
					inTx = append(inTx, deferredCall{result: i, sub: s, entry: w.e})
					continue
				}
				if b.deliver(ctx, s, w.e) {
					o.done = append(o.done, name)
				}
			}
			results = append(results, o)
		}
		retry, err := b.recordWith(ctx, results, inTx)
		if err != nil {
			return wait, err
		}
		if retry > 0 && retry < wait {
			wait = retry
		}
		if !more || ctx.Err() != nil {
			return wait, ctx.Err()
		}
	}
}

// deferredCall is an in-transaction handler call of a batch.
type deferredCall struct {
	result int // index in the batch's outcomes
	sub    Subscriber
	entry  entry
}

// deliver calls one handler and logs a failure; it reports success.
func (b *Bus) deliver(ctx context.Context, s Subscriber, e entry) bool {
	if err := b.call(ctx, s, e.Payload); err != nil {
		if ctx.Err() == nil {
			b.log.Warn("events: handler failed; will retry",
				zap.String("subscriber", s.Name), zap.String("topic", e.Topic),
				zap.Int("attempt", e.Attempts+1), zap.Error(err))
		}
		return false
	}
	return true
}

// recordWith runs a batch's in-transaction handlers and records every
// outcome in one write transaction. When one of those handlers fails, the
// transaction (and with it the others' writes) is dropped, and each runs
// again in a transaction of its own, so one failing handler holds back
// only its own events.
func (b *Bus) recordWith(ctx context.Context, results []outcome, calls []deferredCall) (time.Duration, error) {
	if len(calls) == 0 {
		return b.record(results)
	}
	var shortest time.Duration
	errHandler := errors.New("events: an in-transaction handler failed")
	err := b.db.Update(ctx, func(tx *store.Tx) error {
		all := make([]outcome, len(results))
		for i, o := range results {
			all[i] = outcome{key: o.key, done: append([]string(nil), o.done...)}
		}
		for _, c := range calls {
			if err := b.call(tx.Context(), c.sub, c.entry.Payload); err != nil {
				return fmt.Errorf("%w: %s: %w", errHandler, c.sub.Name, err)
			}
			all[c.result].done = append(all[c.result].done, c.sub.Name)
		}
		var err error
		shortest, err = b.recordIn(tx, all)
		return err
	})
	if err == nil || !errors.Is(err, errHandler) {
		return shortest, err
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	for _, c := range calls {
		if b.deliver(ctx, c.sub, c.entry) {
			results[c.result].done = append(results[c.result].done, c.sub.Name)
		}
	}
	return b.record(results)
}

func (b *Bus) call(ctx context.Context, s Subscriber, payload json.RawMessage) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	return s.Handle(ctx, payload)
}

// record removes handled subscribers from their entries, deletes finished
// entries and schedules retries; it returns the shortest retry delay.
func (b *Bus) record(results []outcome) (time.Duration, error) {
	var shortest time.Duration
	err := b.db.Update(context.Background(), func(tx *store.Tx) error {
		var err error
		shortest, err = b.recordIn(tx, results)
		return err
	})
	return shortest, err
}

// recordIn is record's work inside tx.
func (b *Bus) recordIn(tx *store.Tx, results []outcome) (time.Duration, error) {
	var shortest time.Duration
	err := func() error {
		for _, o := range results {
			raw := outbox.Get(tx, o.key)
			if raw == nil {
				continue
			}
			var e entry
			if err := fastjson.Unmarshal(raw, &e); err != nil {
				if err := outbox.Delete(tx, o.key); err != nil {
					return err
				}
				continue
			}
			e.Pending = without(e.Pending, o.done)
			if len(e.Pending) == 0 {
				if err := outbox.Delete(tx, o.key); err != nil {
					return err
				}
				continue
			}
			e.Attempts++
			delay := backoff(e.Attempts, b.MaxBackoff)
			e.NextTry = time.Now().Add(delay)
			if shortest == 0 || delay < shortest {
				shortest = delay
			}
			v, err := fastjson.Marshal(e)
			if err != nil {
				return err
			}
			if err := outbox.Put(tx, o.key, v); err != nil {
				return err
			}
		}
		return nil
	}()
	return shortest, err
}

func without(list, remove []string) []string {
	out := list[:0]
	for _, s := range list {
		keep := true
		for _, r := range remove {
			if s == r {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, s)
		}
	}
	return out
}

// backoff doubles from 100ms up to max (never below 100ms, so a zero or
// negative MaxBackoff still retries), with the house's jitter: handlers
// that failed together (a receiver down) do not all retry together.
func backoff(attempt int, max time.Duration) time.Duration {
	return retry.Policy{Initial: 100 * time.Millisecond, Max: max, Jitter: retry.DefaultJitter}.Delay(attempt)
}

// Topics lists the topics that have subscribers, sorted; for diagnostics.
func (b *Bus) Topics() []string {
	out := make([]string, 0, len(b.byTopic))
	for t := range b.byTopic {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
