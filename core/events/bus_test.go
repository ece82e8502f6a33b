package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
)

// ---------------------------------------------------------------------------
// Event types

type pushed struct {
	Project int64    `json:"project"`
	Ref     string   `json:"ref"`
	Commits []string `json:"commits"`
}

func (pushed) EventTopic() string { return "repository.push" }

type deleted struct {
	Project int64 `json:"project"`
}

func (deleted) EventTopic() string { return "repository.deleted" }

type orphan struct{ N int }

func (orphan) EventTopic() string { return "nobody.listens" }

// ---------------------------------------------------------------------------
// Helpers

const waitFor = 5 * time.Second

var errFail = errors.New("handler failed")

func openDB(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(path, store.Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func newDB(t *testing.T) *store.DB {
	t.Helper()
	return openDB(t, filepath.Join(t.TempDir(), "fennec.db"))
}

// newBus builds a bus with short retries; it is stopped before the DB closes
// (cleanups run last-in first-out).
func newBus(t *testing.T, db *store.DB, subs ...events.Subscriber) *events.Bus {
	t.Helper()
	bus, err := events.New(db, zap.NewNop(), subs)
	if err != nil {
		t.Fatalf("events.New: %v", err)
	}
	bus.MaxBackoff = 10 * time.Millisecond
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		if err := bus.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return bus
}

func publish(t *testing.T, db *store.DB, bus *events.Bus, evs ...events.Event) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for _, ev := range evs {
			if err := bus.Publish(tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
}

func pending(t *testing.T, bus *events.Bus) int {
	t.Helper()
	n, err := bus.Pending()
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	return n
}

func drain(t *testing.T, bus *events.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v", err)
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatalf("timed out after %v waiting for %s", waitFor, what)
		panic("unreachable")
	}
}

// recorder is a typed subscriber that reports every event it handles and can
// be told to fail (or panic) on its first calls.
type recorder[E events.Event] struct {
	mu       sync.Mutex
	calls    []time.Time // when each call started
	failures int         // fail this many first calls
	panics   bool        // fail by panicking
	got      chan E      // successful deliveries
	tried    chan int    // every call, with its number
}

func newRecorder[E events.Event]() *recorder[E] {
	return &recorder[E]{got: make(chan E, 100), tried: make(chan int, 100)}
}

func (r *recorder[E]) sub(name string) events.Subscriber {
	return events.Subscribe(name, func(ctx context.Context, ev E) error {
		r.mu.Lock()
		r.calls = append(r.calls, time.Now())
		n := len(r.calls)
		fail := n <= r.failures
		r.mu.Unlock()
		r.tried <- n
		if fail {
			if r.panics {
				panic(fmt.Sprintf("handler panic %d", n))
			}
			return fmt.Errorf("attempt %d: %w", n, errFail)
		}
		r.got <- ev
		return nil
	})
}

func (r *recorder[E]) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

func (r *recorder[E]) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// ---------------------------------------------------------------------------
// Construction

func TestNewValidatesSubscribers(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, json.RawMessage) error { return nil }
	tests := []struct {
		name string
		subs []events.Subscriber
		want string
	}{
		{"no name", []events.Subscriber{{Topic: "t", Handle: ok}}, `subscriber "" is incomplete`},
		{"no topic", []events.Subscriber{{Name: "a", Handle: ok}}, `subscriber "a" is incomplete`},
		{"no handler", []events.Subscriber{{Name: "a", Topic: "t"}}, `subscriber "a" is incomplete`},
		{"duplicate name same topic", []events.Subscriber{{Name: "a", Topic: "t", Handle: ok}, {Name: "a", Topic: "t", Handle: ok}}, `two subscribers named "a"`},
		{"duplicate name other topic", []events.Subscriber{
			events.Subscribe("hooks", func(context.Context, pushed) error { return nil }),
			events.Subscribe("hooks", func(context.Context, deleted) error { return nil }),
		}, `two subscribers named "hooks"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := newDB(t)
			bus, err := events.New(db, zap.NewNop(), tc.subs)
			if err == nil || bus != nil {
				t.Fatalf("New = %v, %v; want an error", bus, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestSubscribeAndTopics(t *testing.T) {
	t.Parallel()
	s := events.Subscribe("webhooks.push", func(context.Context, pushed) error { return nil })
	if s.Name != "webhooks.push" || s.Topic != "repository.push" || s.Handle == nil {
		t.Fatalf("Subscribe = %+v", s)
	}
	// The typed handler rejects a payload it cannot decode.
	if err := s.Handle(context.Background(), json.RawMessage(`{"project":"not a number"}`)); err == nil || !strings.Contains(err.Error(), "decode repository.push") {
		t.Errorf("Handle(bad payload) = %v, want a decode error", err)
	}

	db := newDB(t)
	bus := newBus(t, db,
		events.Subscribe("b", func(context.Context, deleted) error { return nil }),
		s,
		events.Subscribe("a", func(context.Context, pushed) error { return nil }),
	)
	if got, want := bus.Topics(), []string{"repository.deleted", "repository.push"}; !slices.Equal(got, want) {
		t.Errorf("Topics() = %q, want %q", got, want)
	}
	// New declares the outbox bucket.
	if err := db.View(context.Background(), func(tx *store.Tx) error {
		if !store.Keys(events.OutboxBucket).Exists(tx) {
			return errors.New("no outbox bucket")
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}

// ---------------------------------------------------------------------------
// Delivery

func TestDeliveryAfterCommit(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	rec := newRecorder[pushed]()
	bus := newBus(t, db, rec.sub("test.push"))
	bus.Start()

	want := pushed{Project: 42, Ref: "refs/heads/main", Commits: []string{"a1", "b2"}}
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		if err := bus.Publish(tx, want); err != nil {
			return err
		}
		// Nothing is delivered while the transaction is open: the outbox
		// entry is not committed, and the handler has not run.
		if n := rec.count(); n != 0 {
			return fmt.Errorf("handler ran %d times before commit", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := recv(t, rec.got, "the pushed event")
	if got.Project != want.Project || got.Ref != want.Ref || !slices.Equal(got.Commits, want.Commits) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	drain(t, bus)
	if n := pending(t, bus); n != 0 {
		t.Errorf("Pending = %d, want 0", n)
	}
	if n := rec.count(); n != 1 {
		t.Errorf("handler called %d times, want 1", n)
	}
}

func TestRolledBackTransactionDeliversNothing(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	rec := newRecorder[pushed]()
	bus := newBus(t, db, rec.sub("test.push"))
	bus.Start()

	errAbort := errors.New("abort")
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		if err := bus.Publish(tx, pushed{Project: 1, Ref: "rolled-back"}); err != nil {
			return err
		}
		return errAbort
	})
	if !errors.Is(err, errAbort) {
		t.Fatalf("Update = %v", err)
	}
	if n := pending(t, bus); n != 0 {
		t.Fatalf("Pending after rollback = %d, want 0", n)
	}
	// A later committed event is delivered; the rolled-back one never is.
	publish(t, db, bus, pushed{Project: 2, Ref: "committed"})
	got := recv(t, rec.got, "the committed event")
	if got.Ref != "committed" {
		t.Fatalf("first delivery = %+v, want the committed event", got)
	}
	drain(t, bus)
	if n := rec.count(); n != 1 {
		t.Errorf("handler called %d times, want 1", n)
	}
}

func TestEventWithoutSubscribersIsNotStored(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	bus := newBus(t, db, events.Subscribe("a", func(context.Context, pushed) error { return nil }))
	publish(t, db, bus, orphan{N: 1}, orphan{N: 2})
	if n := pending(t, bus); n != 0 {
		t.Errorf("Pending = %d, want 0", n)
	}
	publish(t, db, bus, pushed{Project: 1}, orphan{N: 3})
	if n := pending(t, bus); n != 1 {
		t.Errorf("Pending = %d, want 1 (only the event with a subscriber)", n)
	}
}

func TestPendingCountsUndeliveredEvents(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	rec := newRecorder[pushed]()
	bus := newBus(t, db, rec.sub("a"))
	publish(t, db, bus, pushed{Project: 1}, pushed{Project: 2})
	publish(t, db, bus, pushed{Project: 3})
	if n := pending(t, bus); n != 3 {
		t.Fatalf("Pending before Start = %d, want 3", n)
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("handler ran %d times before Start", n)
	}
	bus.Start()
	drain(t, bus)
	var got []int64
	for i := 0; i < 3; i++ {
		got = append(got, recv(t, rec.got, "event").Project)
	}
	// One dispatcher delivers in outbox (publish) order.
	if !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("delivered %v, want [1 2 3]", got)
	}
}

func TestTwoSubscribersOneFailing(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	good := newRecorder[pushed]()
	flaky := newRecorder[pushed]()
	flaky.failures = 3
	other := newRecorder[deleted]()
	// flaky comes first: its failure must not hold back good.
	bus := newBus(t, db, flaky.sub("flaky"), good.sub("good"), other.sub("other"))
	bus.Start()

	publish(t, db, bus, pushed{Project: 7})
	if got := recv(t, good.got, "good's event"); got.Project != 7 {
		t.Fatalf("good got %+v", got)
	}
	// After flaky's first failure, other events still flow.
	recv(t, flaky.tried, "flaky's first attempt")
	publish(t, db, bus, deleted{Project: 8})
	if got := recv(t, other.got, "other's event"); got.Project != 8 {
		t.Fatalf("other got %+v", got)
	}
	if got := recv(t, flaky.got, "flaky's event after retries"); got.Project != 7 {
		t.Fatalf("flaky got %+v", got)
	}
	drain(t, bus)
	if n := flaky.count(); n != 4 {
		t.Errorf("flaky called %d times, want 4 (3 failures + 1 success)", n)
	}
	if n := good.count(); n != 1 {
		t.Errorf("good called %d times, want 1 (not again on flaky's retries)", n)
	}
	if n := other.count(); n != 1 {
		t.Errorf("other called %d times, want 1", n)
	}
	if n := pending(t, bus); n != 0 {
		t.Errorf("Pending = %d, want 0", n)
	}
}

func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	flaky := newRecorder[pushed]()
	flaky.failures = 2
	bus, err := events.New(db, zap.NewNop(), []events.Subscriber{flaky.sub("flaky")})
	if err != nil {
		t.Fatal(err)
	}
	if bus.MaxBackoff != 5*time.Minute || bus.Timeout != 30*time.Second {
		t.Errorf("defaults: MaxBackoff %v, Timeout %v", bus.MaxBackoff, bus.Timeout)
	}
	t.Cleanup(func() { _ = bus.Stop(context.Background()) })
	bus.Start()
	publish(t, db, bus, pushed{Project: 1})
	recv(t, flaky.got, "the event after two retries")
	calls := flaky.times()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	// Backoff starts at 100ms and doubles.
	if d := calls[1].Sub(calls[0]); d < 100*time.Millisecond {
		t.Errorf("first retry after %v, want >= 100ms", d)
	}
	if d := calls[2].Sub(calls[1]); d < 200*time.Millisecond {
		t.Errorf("second retry after %v, want >= 200ms", d)
	}
}

func TestMaxBackoffCapsRetryDelay(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	flaky := newRecorder[pushed]()
	flaky.failures = 8 // uncapped this would take 100ms*(2^8-1) = 25.5s
	bus := newBus(t, db, flaky.sub("flaky"))
	bus.MaxBackoff = 20 * time.Millisecond
	bus.Start()
	start := time.Now()
	publish(t, db, bus, pushed{Project: 1})
	recv(t, flaky.got, "the event after 8 retries")
	if n := flaky.count(); n != 9 {
		t.Errorf("%d calls, want 9", n)
	}
	calls := flaky.times()
	for i := 1; i < len(calls); i++ {
		if d := calls[i].Sub(calls[i-1]); d < 20*time.Millisecond {
			t.Errorf("retry %d after %v, want >= MaxBackoff (20ms)", i, d)
		}
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("8 capped retries took %v", d)
	}
}

func TestZeroMaxBackoffStillRetries(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	flaky := newRecorder[pushed]()
	flaky.failures = 1
	bus := newBus(t, db, flaky.sub("flaky"))
	bus.MaxBackoff = 0
	bus.Start()
	publish(t, db, bus, pushed{Project: 1})
	// No Drain here: Drain kicks the dispatcher and would hide the stall.
	recv(t, flaky.got, "the retried event")
}

func TestPanickingHandlerIsAFailure(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	p := newRecorder[pushed]()
	p.failures = 2
	p.panics = true
	calm := newRecorder[pushed]()
	bus := newBus(t, db, p.sub("panicky"), calm.sub("calm"))
	bus.Start()
	publish(t, db, bus, pushed{Project: 1})
	if got := recv(t, p.got, "delivery after two panics"); got.Project != 1 {
		t.Fatalf("got %+v", got)
	}
	recv(t, calm.got, "calm's delivery")
	drain(t, bus)
	if n := p.count(); n != 3 {
		t.Errorf("panicky called %d times, want 3", n)
	}
	// The dispatcher survived: later events are delivered.
	publish(t, db, bus, pushed{Project: 2})
	if got := recv(t, p.got, "the next event"); got.Project != 2 {
		t.Fatalf("got %+v", got)
	}
	if got := recv(t, calm.got, "calm's next event"); got.Project != 2 {
		t.Fatalf("calm got %+v", got)
	}
	drain(t, bus)
	if n := calm.count(); n != 2 {
		t.Errorf("calm called %d times, want 2", n)
	}
}

func TestHandlerTimeout(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	var calls atomic.Int32
	ctxErr := make(chan error, 1)
	done := make(chan struct{})
	bus := newBus(t, db, events.Subscribe("slow", func(ctx context.Context, _ pushed) error {
		if calls.Add(1) == 1 {
			<-ctx.Done() // hangs until the bus's Timeout
			ctxErr <- ctx.Err()
			return ctx.Err()
		}
		close(done)
		return nil
	}))
	bus.Timeout = 50 * time.Millisecond
	bus.Start()
	publish(t, db, bus, pushed{Project: 1})
	if err := recv(t, ctxErr, "the first call's context to end"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("handler ctx ended with %v, want DeadlineExceeded", err)
	}
	recv(t, done, "the retry")
	drain(t, bus)
	if n := calls.Load(); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
}

// ---------------------------------------------------------------------------
// Outbox durability

func TestRedeliveryAfterCrash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fennec.db")

	// Run 1: commit events, "crash" before the dispatcher ever runs.
	db1, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := newRecorder[pushed]()
	bus1, err := events.New(db1, zap.NewNop(), []events.Subscriber{first.sub("webhooks.push")})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, db1, bus1, pushed{Project: 1, Ref: "a"})
	publish(t, db1, bus1, pushed{Project: 2, Ref: "b"})
	if n := pending(t, bus1); n != 2 {
		t.Fatalf("Pending = %d, want 2", n)
	}
	if err := db1.Close(); err != nil {
		t.Fatal(err)
	}
	if n := first.count(); n != 0 {
		t.Fatalf("handler ran %d times without Start", n)
	}

	// Run 2: same subscriber name, new process state.
	db2 := openDB(t, path)
	second := newRecorder[pushed]()
	bus2 := newBus(t, db2, second.sub("webhooks.push"))
	if n := pending(t, bus2); n != 2 {
		t.Fatalf("Pending after reopen = %d, want 2", n)
	}
	bus2.Start()
	a := recv(t, second.got, "first redelivered event")
	b := recv(t, second.got, "second redelivered event")
	if a.Ref != "a" || b.Ref != "b" || a.Project != 1 || b.Project != 2 {
		t.Errorf("redelivered %+v, %+v", a, b)
	}
	drain(t, bus2)
	if n := second.count(); n != 2 {
		t.Errorf("handler called %d times, want 2", n)
	}
}

func TestPartiallyHandledEventSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fennec.db")
	db1, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a1 := newRecorder[pushed]()
	b1 := newRecorder[pushed]()
	b1.failures = 1000
	bus1, err := events.New(db1, zap.NewNop(), []events.Subscriber{a1.sub("a"), b1.sub("b")})
	if err != nil {
		t.Fatal(err)
	}
	bus1.Start()
	publish(t, db1, bus1, pushed{Project: 5})
	recv(t, a1.got, "a's delivery")
	recv(t, b1.tried, "b's first (failing) attempt")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := bus1.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if n := pending(t, bus1); n != 1 {
		t.Fatalf("Pending after Stop = %d, want 1", n)
	}
	if err := db1.Close(); err != nil {
		t.Fatal(err)
	}

	db2 := openDB(t, path)
	a2 := newRecorder[pushed]()
	b2 := newRecorder[pushed]()
	bus2 := newBus(t, db2, a2.sub("a"), b2.sub("b"))
	bus2.Start()
	if got := recv(t, b2.got, "b's redelivery"); got.Project != 5 {
		t.Fatalf("b got %+v", got)
	}
	drain(t, bus2)
	if n := a2.count(); n != 0 {
		t.Errorf("a was called %d times after restart, want 0 (it had handled the event)", n)
	}
	if n := b2.count(); n != 1 {
		t.Errorf("b called %d times after restart, want 1", n)
	}
}

func TestRemovedSubscriberDoesNotBlockEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		keepB    bool
		newTopic bool // the restarted bus has no subscriber for the topic at all
	}{
		{"one of two removed", true, false},
		{"all removed", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "fennec.db")
			db1, err := store.Open(path, store.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			bus1, err := events.New(db1, zap.NewNop(), []events.Subscriber{
				newRecorder[pushed]().sub("retired"), newRecorder[pushed]().sub("b"),
			})
			if err != nil {
				t.Fatal(err)
			}
			publish(t, db1, bus1, pushed{Project: 9})
			db1.Close()

			db2 := openDB(t, path)
			var subs []events.Subscriber
			b := newRecorder[pushed]()
			if tc.keepB {
				subs = append(subs, b.sub("b"))
			}
			other := newRecorder[deleted]()
			if tc.newTopic {
				subs = append(subs, other.sub("other"))
			}
			bus2 := newBus(t, db2, subs...)
			if n := pending(t, bus2); n != 1 {
				t.Fatalf("Pending after restart = %d, want 1", n)
			}
			bus2.Start()
			if tc.keepB {
				if got := recv(t, b.got, "b's delivery"); got.Project != 9 {
					t.Fatalf("b got %+v", got)
				}
			}
			drain(t, bus2) // fails by timeout if "retired" holds the entry
			if tc.keepB && b.count() != 1 {
				t.Errorf("b called %d times, want 1", b.count())
			}
			if other.count() != 0 {
				t.Errorf("a subscriber registered after publishing was called")
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Lifecycle

func TestDrainWaitsForOutbox(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	release := make(chan struct{})
	var handled atomic.Int32
	started := make(chan struct{}, 10)
	bus := newBus(t, db, events.Subscribe("blocking", func(ctx context.Context, _ pushed) error {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		handled.Add(1)
		return nil
	}))
	// An empty outbox drains at once, started or not.
	drain(t, bus)

	bus.Start()
	publish(t, db, bus, pushed{Project: 1}, pushed{Project: 2}, pushed{Project: 3})
	recv(t, started, "the first handler call")

	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := bus.Drain(short)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "3 undelivered") {
		t.Fatalf("Drain while blocked = %v, want DeadlineExceeded with 3 undelivered", err)
	}

	close(release)
	drain(t, bus)
	if n := handled.Load(); n != 3 {
		t.Errorf("handled %d, want 3 when Drain returned", n)
	}
	if n := pending(t, bus); n != 0 {
		t.Errorf("Pending = %d after Drain", n)
	}
}

func TestStopThenStart(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	rec := newRecorder[pushed]()
	bus := newBus(t, db, rec.sub("a"))
	ctx := context.Background()

	if err := bus.Stop(ctx); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
	bus.Start()
	bus.Start() // idempotent
	publish(t, db, bus, pushed{Project: 1})
	recv(t, rec.got, "event 1")
	if err := bus.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := bus.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	// Stopped: events wait in the outbox.
	publish(t, db, bus, pushed{Project: 2})
	if n := pending(t, bus); n != 1 {
		t.Fatalf("Pending while stopped = %d, want 1", n)
	}
	if n := rec.count(); n != 1 {
		t.Fatalf("handler called %d times while stopped, want 1", n)
	}

	bus.Start()
	if got := recv(t, rec.got, "event 2 after restart"); got.Project != 2 {
		t.Fatalf("got %+v", got)
	}
	for i := 3; i <= 20; i++ {
		publish(t, db, bus, pushed{Project: int64(i)})
	}
	drain(t, bus)
	if n := rec.count(); n != 20 {
		t.Errorf("handler called %d times, want 20 (each event once)", n)
	}
}

func TestStopCancelsHandlerAndKeepsEvent(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	inHandler := make(chan struct{})
	bus := newBus(t, db, events.Subscribe("a", func(ctx context.Context, _ pushed) error {
		close(inHandler)
		<-ctx.Done()
		return ctx.Err()
	}))
	bus.Start()
	publish(t, db, bus, pushed{Project: 1})
	recv(t, inHandler, "the handler call")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := bus.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if n := pending(t, bus); n != 1 {
		t.Fatalf("Pending = %d, want 1: an interrupted delivery must be kept", n)
	}

	// A fresh bus (next start) delivers it.
	rec := newRecorder[pushed]()
	bus2 := newBus(t, db, rec.sub("a"))
	bus2.Start()
	if got := recv(t, rec.got, "redelivery"); got.Project != 1 {
		t.Fatalf("got %+v", got)
	}
	drain(t, bus2)
}

func TestConcurrentPublishers(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	var mu sync.Mutex
	seen := map[int64]int{}
	bus := newBus(t, db, events.Subscribe("count", func(_ context.Context, ev pushed) error {
		mu.Lock()
		seen[ev.Project]++
		mu.Unlock()
		return nil
	}))
	bus.Start()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Go(func() {
			for i := 0; i < each; i++ {
				id := int64(w*each + i)
				errs <- db.Update(context.Background(), func(tx *store.Tx) error {
					return bus.Publish(tx, pushed{Project: id})
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	drain(t, bus)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != writers*each {
		t.Fatalf("saw %d distinct events, want %d", len(seen), writers*each)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %d delivered %d times", id, n)
		}
	}
}

// In-transaction handlers of a batch write through the bus's transaction:
// their writes and the outbox's acknowledgement commit together, in one
// commit for the whole batch. One of them failing holds back only its own
// events; the others' writes are kept, and it is retried.
func TestInTxHandlersShareTheBatchTransaction(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	if err := db.EnsureBuckets([]string{"test.seen"}); err != nil {
		t.Fatal(err)
	}
	var failOnce atomic.Bool
	failOnce.Store(true)
	var calls atomic.Int64
	write := func(name string) events.Subscriber {
		return events.SubscribeInTx(name, func(ctx context.Context, ev pushed) error {
			calls.Add(1)
			if name == "picky" && ev.Project == 3 && failOnce.CompareAndSwap(true, false) {
				return errFail
			}
			return db.Update(ctx, func(tx *store.Tx) error {
				return store.Keys("test.seen").Put(tx, []byte(fmt.Sprintf("%s/%d", name, ev.Project)), []byte("x"))
			})
		})
	}
	bus := newBus(t, db, write("plain"), write("picky"))
	var evs []events.Event
	for i := 1; i <= 5; i++ {
		evs = append(evs, pushed{Project: int64(i)})
	}
	publish(t, db, bus, evs...)
	bus.Start()
	drain(t, bus)
	if n := pending(t, bus); n != 0 {
		t.Fatalf("Pending = %d, want 0", n)
	}
	var keys []string
	if err := db.View(context.Background(), func(tx *store.Tx) error {
		return store.Keys("test.seen").ForEach(tx, func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 10 {
		t.Fatalf("writes %v, want every event seen once by both handlers", keys)
	}
	// The failing call dropped the batch's transaction; each handler then
	// ran once more on its own: 10 calls in the batch up to the failure
	// and after, then 10 again one by one.
	if c := calls.Load(); c < 11 {
		t.Fatalf("%d handler calls; the failure was not retried", c)
	}
}

// A subscriber narrowed with Only is never stored nor called for the events
// it refuses; an event nobody wants is not stored at all.
func TestOnlyFiltersAtPublish(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	all := newRecorder[pushed]()
	mainOnly := newRecorder[pushed]()
	bus := newBus(t, db, all.sub("all"),
		events.Only(mainOnly.sub("main-only"), func(ev pushed) bool { return ev.Ref == "main" }))
	publish(t, db, bus, pushed{Project: 1, Ref: "dev"}, pushed{Project: 2, Ref: "main"})
	if n := pending(t, bus); n != 2 {
		t.Fatalf("Pending = %d, want 2", n)
	}
	bus.Start()
	drain(t, bus)
	if all.count() != 2 || mainOnly.count() != 1 {
		t.Fatalf("all got %d, main-only got %d; want 2 and 1", all.count(), mainOnly.count())
	}
	if got := recv(t, mainOnly.got, "main-only's event"); got.Ref != "main" {
		t.Fatalf("main-only got %+v", got)
	}

	lonely := newRecorder[pushed]()
	db2 := newDB(t)
	bus2 := newBus(t, db2, events.Only(lonely.sub("lonely"), func(pushed) bool { return false }))
	publish(t, db2, bus2, pushed{Project: 3})
	if n := pending(t, bus2); n != 0 {
		t.Fatalf("an event nobody wants is stored: Pending = %d", n)
	}
}
