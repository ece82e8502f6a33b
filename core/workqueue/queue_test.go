package workqueue_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/backoff"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/core/workqueue"
)

const wait = 10 * time.Second // the deadline of every wait for a condition

// fast retries quickly and exactly (no jitter), so tests can bound waits.
var fast = backoff.Policy{Initial: 20 * time.Millisecond, Max: 80 * time.Millisecond}

func openDB(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func newDB(t *testing.T) *store.DB {
	return openDB(t, filepath.Join(t.TempDir(), "fennec.db"))
}

// call is one handler call.
type call struct {
	key, payload string
	attempt      int
	last         bool
	at           time.Time
}

// recorder is a handler that records its calls; fail decides whether a
// call fails.
type recorder struct {
	mu    sync.Mutex
	calls []call
	got   chan call
	fail  func(c call) error
}

func newRecorder() *recorder { return &recorder{got: make(chan call, 1000)} }

func (r *recorder) handle(ctx context.Context, j *workqueue.Job) error {
	c := call{key: j.Key, payload: string(j.Payload), attempt: j.Attempts, last: j.Last, at: time.Now()}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	fail := r.fail
	r.mu.Unlock()
	r.got <- c
	if fail != nil {
		return fail(c)
	}
	return nil
}

func (r *recorder) setFail(f func(c call) error) {
	r.mu.Lock()
	r.fail = f
	r.mu.Unlock()
}

// next waits for the next call.
func (r *recorder) next(t *testing.T, what string) call {
	t.Helper()
	select {
	case c := <-r.got:
		return c
	case <-time.After(wait):
		t.Fatalf("no call for %s within %s", what, wait)
		return call{}
	}
}

// run works q until the test ends; stop ends it early and waits.
func run(t *testing.T, q *workqueue.Queue) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(wait):
				t.Errorf("Run did not return within %s of its context's end", wait)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func enqueue(t *testing.T, db *store.DB, q *workqueue.Queue, key string, payloads ...string) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for _, p := range payloads {
			if err := q.Enqueue(tx, key, []byte(p)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newQueue(t *testing.T, db *store.DB, h workqueue.Handler, opts ...workqueue.Option) *workqueue.Queue {
	t.Helper()
	return workqueue.New(db, "test", fast, h, opts...)
}

// eventually waits for cond, with a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, wait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestOrderPerKey(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := newRecorder()
	q := newQueue(t, db, r.handle)
	// Some before Run (found in the store when it starts), some after
	// (woken by the commit), some in one transaction, some in several.
	enqueue(t, db, q, "a", "a1", "a2")
	enqueue(t, db, q, "b", "b1")
	run(t, q)
	enqueue(t, db, q, "a", "a3", "a4")
	for _, p := range []string{"b2", "b3", "b4"} {
		enqueue(t, db, q, "b", p)
	}
	got := map[string][]string{}
	for range 8 {
		c := r.next(t, "the eight jobs")
		got[c.key] = append(got[c.key], c.payload)
		if c.attempt != 1 {
			t.Errorf("%s: attempt %d, want 1", c.payload, c.attempt)
		}
	}
	if want := []string{"a1", "a2", "a3", "a4"}; !slices.Equal(got["a"], want) {
		t.Errorf("key a: %v, want %v", got["a"], want)
	}
	if want := []string{"b1", "b2", "b3", "b4"}; !slices.Equal(got["b"], want) {
		t.Errorf("key b: %v, want %v", got["b"], want)
	}
	eventually(t, "the queue empties", func() bool {
		a, _ := q.Items(context.Background(), "a")
		b, _ := q.Items(context.Background(), "b")
		return len(a) == 0 && len(b) == 0
	})
}

func TestRolledBackEnqueueDoesNothing(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := newRecorder()
	q := newQueue(t, db, r.handle)
	run(t, q)
	boom := errors.New("the caller's change failed")
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		if err := q.Enqueue(tx, "k", []byte("lost")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update: %v", err)
	}
	enqueue(t, db, q, "k", "kept")
	if c := r.next(t, "the committed job"); c.payload != "kept" {
		t.Errorf("ran %q, want only the committed job", c.payload)
	}
	if items, _ := q.Items(context.Background(), "k"); len(items) > 1 {
		t.Errorf("%d items left", len(items))
	}
	err = db.Update(context.Background(), func(tx *store.Tx) error {
		return q.Enqueue(tx, "bad\x00key", nil)
	})
	if err == nil {
		t.Error("a key with a NUL byte was accepted")
	}
}

func TestRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := newRecorder()
	r.fail = func(c call) error {
		if c.payload == "flaky" && c.attempt < 4 {
			return fmt.Errorf("failure %d", c.attempt)
		}
		return nil
	}
	q := newQueue(t, db, r.handle)
	enqueue(t, db, q, "k", "flaky", "behind")
	run(t, q)
	var calls []call
	for range 5 {
		calls = append(calls, r.next(t, "four tries and the job behind"))
	}
	for i, c := range calls[:4] {
		if c.payload != "flaky" || c.attempt != i+1 || c.last {
			t.Errorf("call %d: %+v, want flaky attempt %d, not last", i, c, i+1)
		}
	}
	// The job behind waited for the flaky one: order holds under retries.
	if calls[4].payload != "behind" || calls[4].attempt != 1 {
		t.Errorf("fifth call %+v, want behind's first", calls[4])
	}
	// The waits follow the policy: 20ms, 40ms, 80ms (the cap).
	for i, want := range []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond} {
		if d := calls[i+1].at.Sub(calls[i].at); d < want {
			t.Errorf("retry %d after %s, want >= %s", i+1, d, want)
		}
	}
}

func TestDeadLetterAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := newRecorder()
	r.fail = func(c call) error {
		if c.payload == "poison" {
			return fmt.Errorf("no good (%d)", c.attempt)
		}
		return nil
	}
	q := newQueue(t, db, r.handle, workqueue.WithMaxAttempts(3))
	enqueue(t, db, q, "k", "poison", "next")
	run(t, q)
	for i := 1; i <= 3; i++ {
		c := r.next(t, "the poison's attempts")
		if c.payload != "poison" || c.attempt != i || c.last != (i == 3) {
			t.Fatalf("call %+v, want poison attempt %d (last %v)", c, i, i == 3)
		}
	}
	// Dead, the job leaves its key's line: the next one runs.
	if c := r.next(t, "the job behind the dead letter"); c.payload != "next" {
		t.Fatalf("ran %q, want next", c.payload)
	}
	dead, err := q.Dead(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dead))
	}
	d := dead[0]
	if d.Key != "k" || string(d.Payload) != "poison" || d.Attempts != 3 || d.LastError != "no good (3)" || d.DeadAt.IsZero() || d.Lease != "" {
		t.Errorf("dead letter %+v", d)
	}
	eventually(t, "the line empties", func() bool {
		items, _ := q.Items(context.Background(), "k")
		return len(items) == 0
	})
	// A dead letter stays dead: no more calls.
	select {
	case c := <-r.got:
		t.Errorf("a dead letter ran again: %+v", c)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestPermanentFailureIsDeadAtOnce(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := newRecorder()
	r.fail = func(c call) error { return workqueue.Permanent(errors.New("refused")) }
	q := newQueue(t, db, r.handle)
	enqueue(t, db, q, "k", "once")
	run(t, q)
	r.next(t, "the one attempt")
	eventually(t, "the dead letter", func() bool {
		dead, _ := q.Dead(context.Background())
		return len(dead) == 1 && dead[0].Attempts == 1 && dead[0].LastError == "refused"
	})
}

func TestRetryFromDeadLetter(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := newRecorder()
	r.fail = func(c call) error { return errors.New("down") }
	q := newQueue(t, db, r.handle, workqueue.WithMaxAttempts(2))
	enqueue(t, db, q, "k", "job")
	run(t, q)
	r.next(t, "attempt 1")
	r.next(t, "attempt 2")
	var dead []workqueue.Item
	eventually(t, "the dead letter", func() bool {
		dead, _ = q.Dead(context.Background())
		return len(dead) == 1
	})
	if err := q.Retry(context.Background(), dead[0].ID+100); !errors.Is(err, workqueue.ErrNotDead) {
		t.Errorf("Retry of no dead letter: %v, want ErrNotDead", err)
	}
	r.setFail(nil) // the receiver is back
	if err := q.Retry(context.Background(), dead[0].ID); err != nil {
		t.Fatal(err)
	}
	c := r.next(t, "the retried dead letter")
	if c.payload != "job" || c.attempt != 1 {
		t.Errorf("retried %+v, want job with a fresh attempt 1", c)
	}
	eventually(t, "done and gone", func() bool {
		dead, _ := q.Dead(context.Background())
		items, _ := q.Items(context.Background(), "k")
		return len(dead) == 0 && len(items) == 0
	})
	if err := q.Retry(context.Background(), dead[0].ID); !errors.Is(err, workqueue.ErrNotDead) {
		t.Errorf("second Retry: %v, want ErrNotDead", err)
	}
}

func TestDifferentKeysRunConcurrently(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	bRan := make(chan struct{})
	aDone := make(chan error, 1)
	h := func(ctx context.Context, j *workqueue.Job) error {
		switch j.Key {
		case "a":
			// Holds key a until key b's job has run: with one worker for
			// all keys this would never end.
			select {
			case <-bRan:
				aDone <- nil
			case <-time.After(wait):
				aDone <- errors.New("key b never ran while key a was busy")
			}
		case "b":
			close(bRan)
		}
		return nil
	}
	q := newQueue(t, db, h)
	enqueue(t, db, q, "a", "a1")
	enqueue(t, db, q, "b", "b1")
	run(t, q)
	select {
	case err := <-aDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * wait):
		t.Fatal("key a's job did not finish")
	}
}

func TestRecordCommitsWithTheOutcome(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	if err := db.EnsureBuckets([]string{"test.log"}); err != nil {
		t.Fatal(err)
	}
	h := func(ctx context.Context, j *workqueue.Job) error {
		j.Record(func(tx *store.Tx) error {
			return store.Keys("test.log").Put(tx, fmt.Appendf(nil, "%s#%d", j.Payload, j.Attempts), nil)
		})
		if j.Attempts == 1 {
			return errors.New("first try fails")
		}
		return nil
	}
	q := newQueue(t, db, h)
	enqueue(t, db, q, "k", "job")
	run(t, q)
	eventually(t, "two recorded attempts and an empty line", func() bool {
		var keys []string
		_ = db.View(context.Background(), func(tx *store.Tx) error {
			keys = nil
			return store.Keys("test.log").ForEach(tx, func(k, _ []byte) error {
				keys = append(keys, string(k))
				return nil
			})
		})
		items, _ := q.Items(context.Background(), "k")
		return slices.Equal(keys, []string{"job#1", "job#2"}) && len(items) == 0
	})
}

func TestStopInterruptsWithoutCountingTheAttempt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fennec.db")
	db := openDB(t, path)
	started := make(chan struct{})
	h := func(ctx context.Context, j *workqueue.Job) error {
		close(started)
		<-ctx.Done() // a long job, cut short by the stop
		return ctx.Err()
	}
	q := newQueue(t, db, h)
	enqueue(t, db, q, "k", "long")
	stop := run(t, q)
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("the job did not start")
	}
	stop()
	items, err := q.Items(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Attempts != 0 || items[0].Lease != "" || items[0].LastError != "" {
		t.Fatalf("after the stop: %+v, want the job as it was enqueued", items)
	}
	// The next run does it, as its first attempt.
	r := newRecorder()
	q2 := newQueue(t, db, r.handle)
	run(t, q2)
	if c := r.next(t, "the interrupted job"); c.payload != "long" || c.attempt != 1 {
		t.Errorf("ran %+v, want long, attempt 1", c)
	}
}

func TestRunTwiceRefused(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := newRecorder()
	q := newQueue(t, db, r.handle)
	run(t, q)
	enqueue(t, db, q, "k", "job")
	r.next(t, "a job, so the first Run is surely running")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // should the refusal fail, the second Run ends at once
	if err := q.Run(ctx); !errors.Is(err, workqueue.ErrRunning) {
		t.Errorf("second Run: %v, want ErrRunning", err)
	}
}

// TestCrashBetweenTakeAndFinish kills a process (kill -9) while its handler
// holds a job it has taken, and works the same bbolt file again: the job
// runs again, the crashed attempt counted, and the job behind it after it.
func TestCrashBetweenTakeAndFinish(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fennec.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WORKQUEUE_CRASH_DB="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	taken := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "taken "); ok {
				taken <- p
				return
			}
		}
		close(taken)
	}()
	select {
	case p, ok := <-taken:
		if !ok || p != "first" {
			t.Fatalf("the child took %q (ok %v), want first", p, ok)
		}
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		t.Fatal("the child took no job")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	_ = cmd.Wait()

	db := openDB(t, path)
	r := newRecorder()
	q := newQueue(t, db, r.handle)
	items, err := q.Items(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Lease == "" || items[0].Attempts != 1 {
		t.Fatalf("after the crash: %+v, want first leased with one attempt, and second", items)
	}
	run(t, q)
	c := r.next(t, "the job the crash interrupted")
	if c.payload != "first" || c.attempt != 2 {
		t.Errorf("ran %+v, want first again as attempt 2", c)
	}
	if c := r.next(t, "the job behind it"); c.payload != "second" || c.attempt != 1 {
		t.Errorf("ran %+v, want second, attempt 1", c)
	}
}

// TestCrashChild is the process TestCrashBetweenTakeAndFinish kills: it
// enqueues two jobs, says when it has taken the first, and hangs.
func TestCrashChild(t *testing.T) {
	path := os.Getenv("WORKQUEUE_CRASH_DB")
	if path == "" {
		t.Skip("run by TestCrashBetweenTakeAndFinish")
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := workqueue.New(db, "test", fast, func(ctx context.Context, j *workqueue.Job) error {
		fmt.Printf("taken %s\n", j.Payload)
		select {} // until killed
	})
	if err := db.Update(context.Background(), func(tx *store.Tx) error {
		if err := q.Enqueue(tx, "k", []byte("first")); err != nil {
			return err
		}
		return q.Enqueue(tx, "k", []byte("second"))
	}); err != nil {
		t.Fatal(err)
	}
	_ = q.Run(context.Background())
}

// TestExpiredLeaseFreesTheJob works one queue from two queue values that
// share the store, as two processes would: a job the first took and never
// finished runs on the second once its lease expires, and the first's
// late outcome is dropped.
func TestExpiredLeaseFreesTheJob(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	const lease = 300 * time.Millisecond
	taken := make(chan struct{}, 1)
	release := make(chan struct{})
	stuck := newQueue(t, db, func(ctx context.Context, j *workqueue.Job) error {
		taken <- struct{}{}
		<-release
		return errors.New("too late to count")
	}, workqueue.WithSharedStore(), workqueue.WithLease(lease))
	workqueue.PauseRenewals(stuck) // as a paused or dead process renews nothing
	enqueue(t, db, stuck, "k", "job")
	stopStuck := run(t, stuck)
	select {
	case <-taken:
	case <-time.After(wait):
		t.Fatal("the first worker took nothing")
	}
	items, err := stuck.Items(context.Background(), "k")
	if err != nil || len(items) != 1 || items[0].Lease == "" {
		t.Fatalf("taken: %+v, %v", items, err)
	}
	firstLease := items[0]
	r := newRecorder()
	proceed := make(chan struct{})
	other := newQueue(t, db, func(ctx context.Context, j *workqueue.Job) error {
		err := r.handle(ctx, j)
		<-proceed
		return err
	}, workqueue.WithSharedStore(), workqueue.WithLease(lease))
	run(t, other)
	c := r.next(t, "the job after the lease expired")
	if c.payload != "job" || c.attempt != 2 {
		t.Errorf("ran %+v, want job as attempt 2", c)
	}
	items, err = other.Items(context.Background(), "k")
	if err != nil || len(items) != 1 {
		t.Fatalf("items %+v, %v", items, err)
	}
	held := items[0]
	if c.at.Before(firstLease.LeaseUntil) || held.Lease == firstLease.Lease {
		t.Errorf("the second worker took the job at %s, within the first lease (%+v)", c.at, firstLease)
	}
	// The first worker fails while the second holds the job: its outcome
	// must change nothing (Run returns once it is recorded or dropped).
	close(release)
	stopStuck()
	if items, _ := other.Items(context.Background(), "k"); len(items) != 1 || items[0].Lease != held.Lease ||
		items[0].Attempts != 2 || items[0].LastError != "" {
		t.Errorf("after the first worker's late failure: %+v, want the job as the second worker holds it", items)
	}
	close(proceed)
	eventually(t, "the job done", func() bool {
		items, _ := other.Items(context.Background(), "k")
		return len(items) == 0
	})
	select {
	case c := <-r.got:
		t.Errorf("the job ran a third time (%+v): the lost lease's failure counted", c)
	case <-time.After(200 * time.Millisecond):
	}
	if dead, _ := other.Dead(context.Background()); len(dead) != 0 {
		t.Errorf("dead letters: %+v", dead)
	}
}

// TestRunningJobKeepsItsLease: on a shared store a handler that runs for
// several leases keeps its job, since its worker renews the lease, so a
// second worker of the queue does not run it again meanwhile.
func TestRunningJobKeepsItsLease(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	const lease = 150 * time.Millisecond
	var runs atomic.Int32
	handler := func(ctx context.Context, j *workqueue.Job) error {
		runs.Add(1)
		select {
		case <-time.After(5 * lease):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	first := newQueue(t, db, handler, workqueue.WithSharedStore(), workqueue.WithLease(lease))
	enqueue(t, db, first, "k", "long")
	run(t, first)
	eventually(t, "the first worker took the job", func() bool { return runs.Load() == 1 })
	second := newQueue(t, db, handler, workqueue.WithSharedStore(), workqueue.WithLease(lease))
	run(t, second)
	eventually(t, "the job done", func() bool {
		items, _ := first.Items(context.Background(), "k")
		return len(items) == 0
	})
	if n := runs.Load(); n != 1 {
		t.Fatalf("the job ran %d times, want once: its lease ran out while its handler ran", n)
	}
}

// TestEnqueueInMovesAnOlderQueue is what a store migration does: rows of
// an older queue enter in their order with their attempts, before any
// Queue value exists (its buckets too are made by the write).
func TestEnqueueInMovesAnOlderQueue(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	// Nothing written yet: the queue reads as empty.
	r := newRecorder()
	q := newQueue(t, db, r.handle)
	if items, err := q.Items(context.Background(), "h1"); err != nil || len(items) != 0 {
		t.Fatalf("a queue never written: %v %v", items, err)
	}
	past := time.Now().Add(-time.Hour)
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		for _, it := range []workqueue.Item{
			{Key: "h1", Payload: []byte("old1"), Attempts: 3, NextTry: past, LastError: "503", EnqueuedAt: past},
			{Key: "h2", Payload: []byte("old2"), NextTry: past, EnqueuedAt: past},
			{Key: "h1", Payload: []byte("old3"), NextTry: past, EnqueuedAt: past},
		} {
			if err := workqueue.EnqueueIn(tx, "test", it); err != nil {
				return err
			}
		}
		keys, err := workqueue.KeysIn(tx, "test")
		if !slices.Equal(keys, []string{"h1", "h2"}) {
			t.Errorf("KeysIn: %v, want [h1 h2]", keys)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	items, err := q.Items(context.Background(), "h1")
	if err != nil || len(items) != 2 || string(items[0].Payload) != "old1" || items[0].Attempts != 3 ||
		items[0].LastError != "503" || !items[0].EnqueuedAt.Equal(past) || string(items[1].Payload) != "old3" {
		t.Fatalf("h1's line: %+v, %v", items, err)
	}
	run(t, q)
	got := map[string]call{}
	for range 3 {
		c := r.next(t, "the moved jobs")
		got[c.payload] = c
	}
	if got["old1"].attempt != 4 || got["old2"].attempt != 1 || got["old3"].attempt != 1 ||
		!got["old1"].at.Before(got["old3"].at) {
		t.Errorf("calls %+v: want old1 as attempt 4 before old3", got)
	}
}

// TestConcurrencyBound: with WithConcurrency(2), no more than two jobs run
// at once however many keys have work, and every job still runs.
func TestConcurrencyBound(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	var mu sync.Mutex
	running, most, done := 0, 0, 0
	release := make(chan struct{})
	h := func(ctx context.Context, j *workqueue.Job) error {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		select { // held until the test has seen the bound reached
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		mu.Lock()
		running--
		done++
		mu.Unlock()
		return nil
	}
	q := newQueue(t, db, h, workqueue.WithConcurrency(2))
	for i := range 8 {
		enqueue(t, db, q, fmt.Sprintf("key%d", i), "job")
	}
	run(t, q)
	eventually(t, "two jobs running", func() bool { mu.Lock(); defer mu.Unlock(); return running == 2 })
	close(release)
	eventually(t, "every job done", func() bool { mu.Lock(); defer mu.Unlock(); return done == 8 })
	if most != 2 {
		t.Fatalf("%d jobs ran at once, want at most 2", most)
	}
}

// A job enqueued for later waits until it is due, and the jobs behind it on
// its key wait for it; one removed before it is due never runs (the way a
// caller that did the work itself cancels its retry).
func TestEnqueueAtWaitsAndRemoveCancels(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	r := newRecorder()
	q := newQueue(t, db, r.handle)
	const grace = 300 * time.Millisecond
	start := time.Now()
	var cancelled int64
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		if _, err := q.EnqueueAt(tx, "k", []byte("late"), start.Add(grace)); err != nil {
			return err
		}
		if err := q.Enqueue(tx, "k", []byte("behind")); err != nil {
			return err
		}
		id, err := q.EnqueueAt(tx, "c", []byte("cancelled"), start.Add(grace))
		cancelled = id
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if cancelled == 0 {
		t.Fatal("EnqueueAt returned no id")
	}
	run(t, q)
	if err := db.Update(context.Background(), func(tx *store.Tx) error {
		if err := q.Remove(tx, cancelled); err != nil {
			return err
		}
		return q.Enqueue(tx, "c", []byte("after"))
	}); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for range 3 {
		c := r.next(t, "three jobs")
		got[c.key] = append(got[c.key], c.payload)
		if c.payload == "late" && c.at.Sub(start) < grace {
			t.Errorf("the late job ran %s after it was enqueued, before its %s", c.at.Sub(start), grace)
		}
	}
	if want := []string{"late", "behind"}; !slices.Equal(got["k"], want) {
		t.Errorf("key k: %v, want %v", got["k"], want)
	}
	if want := []string{"after"}; !slices.Equal(got["c"], want) {
		t.Errorf("key c: %v, want %v (the removed job ran)", got["c"], want)
	}
}
