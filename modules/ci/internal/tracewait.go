package internal

// Waiting for a job's trace to grow (issue 30): the job page's live log
// asks trace.json with wait=1, and a request with nothing new to answer
// waits here until the job's trace grows or its status changes, instead
// of the page polling every second.
//
// Broadcast by close: per job someone waits for, one channel; a change
// closes it (every waiter wakes) and forgets it, the next waiter makes a
// new one. Nothing runs per waiter, a job nobody waits for costs a map
// lookup per change, and the last waiter to leave removes its job's
// entry, so nothing stays behind. The number of waiters in the process is
// capped: above it a request answers at once and the page polls.
//
// In process only: another node's appends wake nobody here; its waiters
// answer at their time limit, as a poll would, and on a shared store that
// limit is a second (sharedTraceWait).

import (
	"sync"
	"time"
)

const (
	// traceWaitLimit is how long a trace.json request waits at most.
	traceWaitLimit = 20 * time.Second
	// traceWaitersMax is how many requests may wait at once in the process.
	traceWaitersMax = 1000
)

// traceWaits are the waiting requests by job id.
type traceWaits struct {
	mu    sync.Mutex
	jobs  map[int64]*traceWait
	count int // waiters of all jobs
	max   int
	limit time.Duration
	// stopping is closed when the server stops answering (the runners'
	// queue drains then too): waiting requests answer at once instead of
	// holding up the shutdown, and none waits any more.
	stopping <-chan struct{}
}

// traceWait is one job's channel and how many wait on it.
type traceWait struct {
	changed chan struct{}
	waiters int
}

func newTraceWaits(stopping <-chan struct{}) *traceWaits {
	return &traceWaits{jobs: map[int64]*traceWait{}, max: traceWaitersMax, limit: traceWaitLimit, stopping: stopping}
}

// wake tells the job's waiters that its trace or status changed. It never
// blocks on them: O(1) under a short lock, and nothing when none waits.
func (tw *traceWaits) wake(jobID int64) {
	tw.mu.Lock()
	if w := tw.jobs[jobID]; w != nil {
		close(w.changed)
		delete(tw.jobs, jobID)
	}
	tw.mu.Unlock()
}

// watch registers a waiter for the job's next change, before the caller
// reads the trace (a change between the read and the wait is not lost).
// It returns the channel closed at the change and the release the caller
// must call when done; ok is false when the process has its most waiters.
func (tw *traceWaits) watch(jobID int64) (changed <-chan struct{}, release func(), ok bool) {
	select {
	case <-tw.stopping:
		return nil, func() {}, false
	default:
	}
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.count >= tw.max {
		return nil, func() {}, false
	}
	w := tw.jobs[jobID]
	if w == nil {
		w = &traceWait{changed: make(chan struct{})}
		tw.jobs[jobID] = w
	}
	w.waiters++
	tw.count++
	var once sync.Once
	return w.changed, func() {
		once.Do(func() {
			tw.mu.Lock()
			defer tw.mu.Unlock()
			tw.count--
			w.waiters--
			// The last waiter of a channel not yet closed forgets it.
			if w.waiters == 0 && tw.jobs[jobID] == w {
				delete(tw.jobs, jobID)
			}
		})
	}, true
}

// waiting is how many requests wait now and for how many jobs.
func (tw *traceWaits) waiting() (waiters, jobs int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.count, len(tw.jobs)
}

// SetTraceWait changes how long a trace.json request waits at most and
// how many may wait at once; for tests, which cannot wait 20 s. Call it
// before the app starts (an fx.Invoke does).
func (s *Service) SetTraceWait(limit time.Duration, waiters int) {
	s.traceWaits.limit, s.traceWaits.max = limit, waiters
}

// TraceWaiting is how many trace.json requests wait now and for how many
// jobs (tests check that a request gone frees its place).
func (s *Service) TraceWaiting() (waiters, jobs int) { return s.traceWaits.waiting() }

// traceChanged wakes the job's waiting requests; called after the trace
// grew or the job's status committed.
func (s *Service) traceChanged(jobID int64) { s.traceWaits.wake(jobID) }
