package workqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/store"
)

// sharedRescan is how often a queue on a shared store looks for keys with
// live jobs that no poke announced (a dead node's, once their lease ends).
const sharedRescan = 5 * time.Second

// ErrRunning is returned by a second Run of a queue that is running.
var ErrRunning = errors.New("workqueue: already running")

// Run works the queue until ctx ends: it frees the leases an earlier run
// left (unless WithSharedStore; see the package documentation), starts a worker for each key with
// live jobs, and one for each key enqueued later. When ctx ends it waits
// for the workers (a handler under way sees its context end) and returns
// nil; an error means the queue could not start.
func (q *Queue) Run(ctx context.Context) error {
	q.mu.Lock()
	if q.running {
		q.mu.Unlock()
		return ErrRunning
	}
	q.running = true
	clear(q.poked)
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.running = false
		q.mu.Unlock()
	}()

	keys, err := q.reclaim(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	q.start(ctx, &wg, keys)
	// With other nodes on the store, the jobs a dead node had taken
	// become free when their lease ends: look for live keys now and then.
	var rescan <-chan time.Time
	if q.shared {
		t := time.NewTicker(sharedRescan)
		defer t.Stop()
		rescan = t.C
	}
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-rescan:
			var keys []string
			err := q.db.View(ctx, func(tx *store.Tx) error {
				b, ok, err := q.bucketsIn(tx)
				if err == nil && ok {
					keys = liveKeys(b)
				}
				return err
			})
			if err == nil {
				q.start(ctx, &wg, keys)
			}
		case <-q.kick:
			q.mu.Lock()
			keys := make([]string, 0, len(q.poked))
			for k := range q.poked {
				keys = append(keys, k)
			}
			clear(q.poked)
			q.mu.Unlock()
			slices.Sort(keys)
			q.start(ctx, &wg, keys)
		}
	}
}

// start starts the worker of each key, or wakes the running one.
func (q *Queue) start(ctx context.Context, wg *sync.WaitGroup, keys []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, k := range keys {
		if wake, ok := q.workers[k]; ok {
			select {
			case wake <- struct{}{}:
			default:
			}
			continue
		}
		wake := make(chan struct{}, 1)
		q.workers[k] = wake
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.work(ctx, k, wake)
		}()
	}
}

// reclaim frees every lease of an earlier run and returns the keys with
// live jobs.
func (q *Queue) reclaim(ctx context.Context) ([]string, error) {
	var keys []string
	err := q.db.Update(ctx, func(tx *store.Tx) error {
		keys = nil
		b, err := q.writeBuckets(tx)
		if err != nil {
			return err
		}
		keys = liveKeys(b)
		var leased []*Item
		c := b.order.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			it, err := get(b, int64(store.KeyID(k)))
			if err != nil {
				return err
			}
			if it != nil && it.Lease != "" && !q.ownLease(it.Lease) && !q.shared {
				leased = append(leased, it)
			}
		}
		for _, it := range leased {
			it.Lease, it.LeaseUntil = "", time.Time{}
			if err := put(b, it); err != nil {
				return err
			}
		}
		if len(leased) > 0 {
			q.log.Info("workqueue: taking up jobs an earlier run left unfinished", zap.Int("jobs", len(leased)))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workqueue %s: %w", q.name, err)
	}
	return keys, nil
}

// work does key's jobs in order until key has none or ctx ends.
func (q *Queue) work(ctx context.Context, key string, wake chan struct{}) {
	defer func() {
		q.mu.Lock()
		if q.workers[key] == wake { // not a successor's
			delete(q.workers, key)
		}
		q.mu.Unlock()
	}()
	failures := 0 // of the store, in a row
	for ctx.Err() == nil {
		// A slot is taken before the job, so no lease runs out while the
		// job waits for one.
		if !q.acquire(ctx) {
			return
		}
		job, wait, err := q.take(ctx, key)
		if job == nil {
			q.release()
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			q.log.Error("workqueue: taking a job failed", zap.String("key", key), zap.Error(err))
			if !sleep(ctx, q.pause(failures), wake) {
				return
			}
			continue
		}
		failures = 0
		if job == nil && wait == 0 {
			q.mu.Lock()
			select {
			case <-wake: // enqueued meanwhile
				q.mu.Unlock()
				continue
			default:
			}
			delete(q.workers, key)
			q.mu.Unlock()
			return
		}
		if job == nil {
			if !sleep(ctx, wait, wake) {
				return
			}
			continue
		}
		herr := q.callKeepingLease(ctx, job)
		for {
			err := q.settle(ctx, job, herr)
			if err == nil {
				break
			}
			failures++
			q.log.Error("workqueue: recording a job's outcome failed", zap.String("key", key),
				zap.Int64("job", job.ID), zap.Error(err))
			if !sleep(ctx, q.pause(failures), nil) {
				q.release()
				return // the job stays leased; the next run takes it again
			}
		}
		q.release()
		failures = 0
	}
}

// acquire takes a run slot (WithConcurrency); false when ctx ends first.
func (q *Queue) acquire(ctx context.Context) bool {
	if q.slots == nil {
		return true
	}
	select {
	case q.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release gives a run slot back.
func (q *Queue) release() {
	if q.slots != nil {
		<-q.slots
	}
}

// pause is the wait after the n-th store failure in a row: the policy's,
// but never a busy loop.
func (q *Queue) pause(n int) time.Duration {
	return max(q.policy.Delay(n), 100*time.Millisecond)
}

// call runs the handler, a panic being a failure.
func (q *Queue) call(ctx context.Context, job *Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			q.log.Error("workqueue: handler panicked", zap.Int64("job", job.ID), zap.Any("panic", r), zap.Stack("stack"))
			err = fmt.Errorf("workqueue: handler panicked: %v", r)
		}
	}()
	return q.handler(ctx, job)
}

// callKeepingLease is call that, when other nodes work the queue too,
// renews the job's lease every third of it while the handler runs: a
// handler may run for longer than the lease (a repack), and no other node
// may take the job meanwhile, yet the job of a node that dies must be free
// a lease after its last renewal rather than after the longest run any
// handler might need. Should the lease be lost all the same (this node cut
// off from the store past it), the handler's context is cancelled: its
// outcome would be dropped anyway, and another taker runs the job.
func (q *Queue) callKeepingLease(ctx context.Context, job *Job) error {
	if !q.shared {
		return q.call(ctx, job) // nothing expires while this process lives
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(max(q.lease/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-hctx.Done():
				return
			case <-t.C:
			}
			if q.paused.Load() {
				continue
			}
			held, err := q.renew(hctx, job)
			switch {
			case err != nil:
				if hctx.Err() == nil {
					q.log.Warn("workqueue: renewing a job's lease failed", zap.Int64("job", job.ID), zap.Error(err))
				}
			case !held:
				q.log.Warn("workqueue: a running job's lease was lost; stopping its handler", zap.Int64("job", job.ID))
				cancel()
				return
			}
		}
	}()
	return q.call(hctx, job)
}

// renew extends job's lease by the queue's lease from now; false when the
// lease is no longer the job's (another taker's, or the job removed).
func (q *Queue) renew(ctx context.Context, job *Job) (bool, error) {
	var held bool
	err := q.db.Update(ctx, func(tx *store.Tx) error {
		held = false
		b, err := q.writeBuckets(tx)
		if err != nil {
			return err
		}
		it, err := get(b, job.ID)
		if err != nil || it == nil || it.Lease != job.Lease {
			return err
		}
		held = true
		it.LeaseUntil = q.now().Add(q.lease)
		return put(b, it)
	})
	return held, err
}

// sleep waits d, or a wake-up; false when ctx ends.
func sleep(ctx context.Context, d time.Duration, wake chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	}
	return true
}

// take leases key's next job when it is due: the job, or how long until
// it is (both zero when key has no live job).
func (q *Queue) take(ctx context.Context, key string) (*Job, time.Duration, error) {
	var (
		job  *Job
		wait time.Duration
	)
	lease := q.newLease()
	err := q.db.Update(ctx, func(tx *store.Tx) error {
		job, wait = nil, 0
		b, err := q.writeBuckets(tx)
		if err != nil {
			return err
		}
		for {
			id, ok := head(b, key)
			if !ok {
				return nil
			}
			it, err := get(b, id)
			if err != nil {
				return err
			}
			if it == nil { // an order entry without its job: drop it
				if err := b.order.Delete(orderKey(key, id)); err != nil {
					return err
				}
				continue
			}
			now := q.now()
			if it.NextTry.After(now) {
				wait = it.NextTry.Sub(now)
				return nil
			}
			if it.Lease != "" && !q.ownLease(it.Lease) && it.LeaseUntil.After(now) {
				wait = it.LeaseUntil.Sub(now) // another worker's, until it expires
				return nil
			}
			it.Attempts++
			it.Lease, it.LeaseUntil = lease, now.Add(q.lease)
			if err := put(b, it); err != nil {
				return err
			}
			taken := *it
			taken.Payload = append([]byte(nil), b.payloads.Get(store.Key(id))...)
			job = &Job{Item: taken, Last: taken.Attempts >= q.maxAttempts}
			return nil
		}
	})
	if err != nil {
		return nil, 0, err
	}
	return job, wait, nil
}

// settle records job's outcome herr, if job's lease still holds: done,
// a retry after the policy's delay, or a dead letter. An attempt that
// failed because Run ended (context.Canceled after Run's context ended)
// is put back as it was, uncounted; a handler that finished its attempt
// regardless returns its own outcome, which counts.
func (q *Queue) settle(ctx context.Context, job *Job, herr error) error {
	interrupted := ctx.Err() != nil && errors.Is(herr, context.Canceled)
	// After Run's end the outcome is still recorded: the store outlives
	// the queue's loops.
	return q.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		b, err := q.writeBuckets(tx)
		if err != nil {
			return err
		}
		it, err := get(b, job.ID)
		if err != nil {
			return err
		}
		if it == nil || it.Lease != job.Lease {
			return nil // removed meanwhile, or another taker's now
		}
		now := q.now()
		it.Lease, it.LeaseUntil = "", time.Time{}
		if interrupted {
			it.Attempts--
			return put(b, it)
		}
		for _, fn := range job.records {
			if err := fn(tx); err != nil {
				return err
			}
		}
		if it, err = get(b, job.ID); err != nil || it == nil {
			return err // a record removed it
		}
		it.Lease, it.LeaseUntil = "", time.Time{}
		var permanent permanentError
		switch {
		case herr == nil:
			return remove(b, it)
		case errors.As(herr, &permanent) || it.Attempts >= q.maxAttempts:
			it.LastError, it.DeadAt = herr.Error(), now
			if err := b.order.Delete(orderKey(it.Key, it.ID)); err != nil {
				return err
			}
			if err := b.dead.Put(store.Key(it.ID), nil); err != nil {
				return err
			}
			q.log.Warn("workqueue: job is a dead letter", zap.String("key", it.Key), zap.Int64("job", it.ID),
				zap.Int("attempts", it.Attempts), zap.Error(herr))
			return put(b, it)
		default:
			it.LastError, it.NextTry = herr.Error(), now.Add(q.policy.Delay(it.Attempts))
			return put(b, it)
		}
	})
}
