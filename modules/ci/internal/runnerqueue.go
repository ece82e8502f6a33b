package internal

// The runners' side of the one queue: a runner's POST /jobs/request waits
// here (long polling) until the scheduler hands it a job or its time is up.
// The scheduler (dispatch) walks the pending jobs oldest first and gives
// each to the first waiting runner that may take it, else to a free
// executor: one queue, one dispatcher goroutine, so a job is assigned once
// however many runners poll.

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// runnerWaiter is one runner's request waiting for a job. ch receives
// exactly one value once the waiter was taken from the queue: the job it
// was given, or nil when the assignment did not commit.
type runnerWaiter struct {
	runner Runner
	ch     chan *startedJob
}

// runnerQueue holds the waiting requests in arrival order.
type runnerQueue struct {
	mu      sync.Mutex
	waiting []*runnerWaiter
	// version changes whenever a job may have become available to some
	// runner (a job queued, a runner changed); it is the
	// X-GitLab-Last-Update a runner echoes back.
	version atomic.Uint64
	boot    string
	// draining is closed when the server stops answering: waiting
	// requests answer 204 at once instead of holding up the shutdown.
	draining  chan struct{}
	drainOnce sync.Once
	// served: the server has answered as ready (a server not yet ready
	// is starting, not stopping).
	served atomic.Bool
}

func newRunnerQueue() *runnerQueue {
	return &runnerQueue{boot: strconv.FormatInt(time.Now().UnixNano(), 36), draining: make(chan struct{})}
}

// bump marks that something changed for the runners.
func (q *runnerQueue) bump() { q.version.Add(1) }

// lastUpdate is the current X-GitLab-Last-Update value.
func (q *runnerQueue) lastUpdate() string {
	return q.boot + "-" + strconv.FormatUint(q.version.Load(), 36)
}

// add queues a waiter for r.
func (q *runnerQueue) add(r Runner) *runnerWaiter {
	w := &runnerWaiter{runner: r, ch: make(chan *startedJob, 1)}
	q.mu.Lock()
	q.waiting = append(q.waiting, w)
	q.mu.Unlock()
	return w
}

// remove takes a waiter out of the queue; false means the scheduler took
// it first (its value is on its way on w.ch).
func (q *runnerQueue) remove(w *runnerWaiter) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.waiting, w)
	if i < 0 {
		return false
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	return true
}

// waitingCount is how many requests wait (for tests and benchmarks).
func (q *runnerQueue) waitingCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// empty says whether no runner waits.
func (q *runnerQueue) empty() bool { return q.waitingCount() == 0 }

// take removes and returns the first waiter that may run j, nil when none
// may. sharedOK says whether j's project accepts shared runners (asked
// only when a shared runner is a candidate).
func (q *runnerQueue) take(j *Job, sharedOK func() bool) *runnerWaiter {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, w := range q.waiting {
		if !w.runner.canRun(j, sharedOK) {
			continue
		}
		q.waiting = slices.Delete(q.waiting, i, i+1)
		return w
	}
	return nil
}

// drain makes every waiting and future request answer at once.
func (q *runnerQueue) drain() { q.drainOnce.Do(func() { close(q.draining) }) }

// canRun is GitLab's matching rule: an active runner, shared (and the
// project takes shared runners) or enabled on the job's project, whose
// tags include all the job's, and that takes untagged jobs if the job has
// no tags.
func (r *Runner) canRun(j *Job, sharedOK func() bool) bool {
	if !r.Active {
		return false
	}
	if len(j.Tags) == 0 && !r.RunUntagged {
		return false
	}
	for _, t := range j.Tags {
		if !slices.Contains(r.Tags, t) {
			return false
		}
	}
	if r.IsShared {
		return sharedOK()
	}
	return slices.Contains(r.Projects, j.ProjectID)
}
