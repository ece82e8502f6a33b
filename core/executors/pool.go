package executors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/executor"
)

var (
	// ErrNoExecutor: no configured executor takes jobs with these tags, so
	// waiting would be forever (GitLab calls such a job stuck).
	ErrNoExecutor = errors.New("executors: no executor takes jobs with these tags")
	// ErrExecutorCrashed: the executor's process died while it ran the
	// job; the plugin host restarts it. The job failed as a system failure.
	ErrExecutorCrashed = errors.New("executors: the executor's process died during the job")
	// ErrStopped: the pool stopped (the server is shutting down).
	ErrStopped = errors.New("executors: the pool is stopped")
)

// Process is what the pool needs to know of a member's process.
type Process struct {
	// PID changes when the process is restarted; the pool then asks its
	// capabilities again.
	PID int
	// Running: it takes calls now. Failed: it never will (refused
	// settings, a missing binary).
	Running, Failed bool
}

// Member is one executor of a pool.
type Member struct {
	Name     string
	Executor executor.Executor
	// Process reports the executor's process; nil for an in-process
	// executor, which is always running.
	Process func() Process
}

// member is a Member and the pool's view of it.
type member struct {
	Member
	pid     int
	known   bool // caps are the current process's
	caps    executor.Capabilities
	running bool
	failed  bool
	busy    int
}

// Pool hands jobs free executors; see the package documentation.
type Pool struct {
	log     *zap.Logger
	members []*member

	mu      sync.Mutex
	waiters []*waiter
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}
}

type waiter struct {
	tags []string
	ch   chan grant // buffered: a grant never blocks the granter
}

type grant struct {
	slot *Slot
	err  error
}

// refreshInterval is how often the pool looks at its members' processes.
const refreshInterval = 200 * time.Millisecond

// New returns a pool of members, in the order they are preferred when
// equally loaded. Start it before use.
func New(log *zap.Logger, members ...Member) *Pool {
	if log == nil {
		log = zap.NewNop()
	}
	p := &Pool{log: log.Named("executors")}
	for _, m := range members {
		p.members = append(p.members, &member{Member: m})
	}
	return p
}

type poolParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	API       *api.API
	Host      *plugin.Host
	InProcess fennec.InProcessExecutors
	Log       *zap.Logger
}

// newPool is the fx constructor: the host's executor plugins, then the
// in-process executors (fennec.WithExecutor), started after the host (its
// hook was appended first).
func newPool(p poolParams) (*Pool, error) {
	members := hostMembers(p.Host)
	seen := map[string]bool{}
	for _, m := range members {
		seen[m.Name] = true
	}
	for _, e := range p.InProcess {
		if e.Name == "" || e.Executor == nil || seen[e.Name] {
			return nil, fmt.Errorf("executors: WithExecutor needs a name no other executor has, and an executor (%q)", e.Name)
		}
		seen[e.Name] = true
		members = append(members, Member{Name: e.Name, Executor: e.Executor})
	}
	pool := New(p.Log, members...)
	p.Lifecycle.Append(fx.Hook{OnStart: pool.Start, OnStop: pool.Stop})
	p.API.AddReadinessReport("executors", func() any { return pool.Readiness() })
	return pool, nil
}

// Start begins learning the members' capabilities and watching their
// processes, in the background until Stop: it returns at once, so the
// server answers while executor processes start. Jobs wait (Acquire) until
// an executor that takes them is ready.
func (p *Pool) Start(context.Context) error {
	loop, cancel := context.WithCancel(context.Background())
	p.mu.Lock()
	p.cancel, p.done = cancel, make(chan struct{})
	done := p.done
	p.mu.Unlock()
	go func() {
		defer close(done)
		p.refresh(loop)
		t := time.NewTicker(refreshInterval)
		defer t.Stop()
		for {
			select {
			case <-loop.Done():
				return
			case <-t.C:
				p.refresh(loop)
			}
		}
	}()
	return nil
}

// Stop ends the watching; waiting Acquires fail with ErrStopped. Jobs
// running keep their slots until released.
func (p *Pool) Stop(ctx context.Context) error {
	p.mu.Lock()
	p.stopped = true
	cancel, done := p.cancel, p.done
	for _, w := range p.waiters {
		w.ch <- grant{err: ErrStopped}
	}
	p.waiters = nil
	p.mu.Unlock()
	if cancel != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// refresh looks at every member's process, asks a new process for its
// capabilities, and hands out what became free.
func (p *Pool) refresh(ctx context.Context) {
	for _, m := range p.members {
		proc := Process{PID: 1, Running: true}
		if m.Process != nil {
			proc = m.Process()
		}
		p.mu.Lock()
		stale := proc.Running && (!m.known || proc.PID != m.pid)
		if !proc.Running && m.running {
			p.log.Warn("executor down; its jobs fail and it is being restarted", zap.String("executor", m.Name))
		}
		m.running, m.failed = proc.Running, proc.Failed
		p.mu.Unlock()
		if !stale {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		caps, err := m.Executor.Capabilities(cctx)
		cancel()
		p.mu.Lock()
		if err != nil {
			p.log.Warn("executor capabilities", zap.String("executor", m.Name), zap.Error(err))
			m.running = false
		} else {
			if !m.known || !slices.Equal(caps.Tags, m.caps.Tags) || caps.Concurrency != m.caps.Concurrency || caps.RunUntagged != m.caps.RunUntagged {
				p.log.Info("executor ready", zap.String("executor", m.Name), zap.Strings("tags", caps.Tags),
					zap.Bool("run_untagged", caps.RunUntagged), zap.Int("concurrency", caps.Concurrency))
			}
			m.caps, m.known, m.pid = caps, true, proc.PID
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.dispatch()
	p.mu.Unlock()
}

// pick is the least loaded member free for tags, or nil. p.mu is held.
func (p *Pool) pick(tags []string) *member {
	var best *member
	for _, m := range p.members {
		if !m.running || !m.known || m.busy >= m.caps.Concurrency || !m.caps.Serves(tags) {
			continue
		}
		if m.Process != nil {
			// Asked now, not at the last refresh: a process that just
			// died (or was replaced, with capabilities not yet asked)
			// must not get a job.
			if now := m.Process(); !now.Running || now.PID != m.pid {
				continue
			}
		}
		// Compare busy/concurrency without division.
		if best == nil || m.busy*best.caps.Concurrency < best.busy*m.caps.Concurrency {
			best = m
		}
	}
	return best
}

// couldServe reports whether some member may ever take tags: one that has
// not failed for good and serves them, or whose capabilities are not known
// yet. p.mu is held.
func (p *Pool) couldServe(tags []string) bool {
	for _, m := range p.members {
		if !m.failed && (!m.known || m.caps.Serves(tags)) {
			return true
		}
	}
	return false
}

// dispatch hands free places to waiters, oldest first. p.mu is held.
func (p *Pool) dispatch() {
	kept := p.waiters[:0]
	for _, w := range p.waiters {
		if m := p.pick(w.tags); m != nil {
			m.busy++
			w.ch <- grant{slot: &Slot{pool: p, m: m}}
			continue
		}
		if !p.couldServe(w.tags) {
			w.ch <- grant{err: fmt.Errorf("%w: %q", ErrNoExecutor, w.tags)}
			continue
		}
		kept = append(kept, w)
	}
	clear(p.waiters[len(kept):])
	p.waiters = kept
}

// Acquire waits for a free executor whose capabilities cover tags (every
// tag among its tags; an untagged job needs one that runs untagged jobs)
// and holds a place on it until the Slot is released. It fails at once
// with ErrNoExecutor when no executor could ever take the tags, and with
// ctx's error when ctx ends first. Jobs waiting get places in the order
// they asked.
func (p *Pool) Acquire(ctx context.Context, tags []string) (*Slot, error) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil, ErrStopped
	}
	if len(p.waiters) == 0 {
		if m := p.pick(tags); m != nil {
			m.busy++
			p.mu.Unlock()
			return &Slot{pool: p, m: m}, nil
		}
	}
	if !p.couldServe(tags) {
		p.mu.Unlock()
		return nil, fmt.Errorf("%w: %q", ErrNoExecutor, tags)
	}
	w := &waiter{tags: slices.Clone(tags), ch: make(chan grant, 1)}
	p.waiters = append(p.waiters, w)
	p.dispatch() // an older waiter may not fit where this one does
	p.mu.Unlock()

	select {
	case g := <-w.ch:
		return g.slot, g.err
	case <-ctx.Done():
		p.mu.Lock()
		p.waiters = slices.DeleteFunc(p.waiters, func(x *waiter) bool { return x == w })
		p.mu.Unlock()
		select {
		case g := <-w.ch: // granted meanwhile: give it back
			if g.slot != nil {
				g.slot.Release()
			}
		default:
		}
		return nil, ctx.Err()
	}
}

// Status is one executor as the pool sees it.
type Status struct {
	Name string
	// Running: its process takes jobs now.
	Running      bool
	Capabilities executor.Capabilities
	// Busy counts the places held by jobs.
	Busy int
}

// Waiting counts the jobs waiting for an executor (Acquire).
func (p *Pool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiters)
}

// Status reports every executor, in configuration order.
func (p *Pool) Status() []Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Status, len(p.members))
	for i, m := range p.members {
		out[i] = Status{Name: m.Name, Running: m.running && m.known, Capabilities: m.caps, Busy: m.busy}
	}
	return out
}

// ExecutorReadiness is one executor in GET /-/readiness.
type ExecutorReadiness struct {
	Name string `json:"name"`
	// Status is "ok" (takes jobs), "starting" (its process has not
	// answered yet), "down" (its process died and is being restarted) or
	// "failed" (it will not run: see the log).
	Status string `json:"status"`
}

// Readiness reports every executor's state, in configuration order.
func (p *Pool) Readiness() []ExecutorReadiness {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ExecutorReadiness, len(p.members))
	for i, m := range p.members {
		status := "down"
		switch {
		case m.failed:
			status = "failed"
		case m.running && m.known:
			status = "ok"
		case !m.known:
			status = "starting"
		}
		out[i] = ExecutorReadiness{Name: m.Name, Status: status}
	}
	return out
}

// Slot is a place on one executor, for one job: Run it once, fetch its
// artifacts, and Release it.
type Slot struct {
	pool     *Pool
	m        *member
	jobID    atomic.Int64 // 0 until Run
	released atomic.Bool
}

// Executor names the executor the slot is on.
func (s *Slot) Executor() string { return s.m.Name }

// Run runs job on the slot's executor (see executor.Executor.Run). When
// the executor's process dies during the job, the error wraps
// ErrExecutorCrashed (and executor.ErrUnavailable) and says so.
func (s *Slot) Run(ctx context.Context, job executor.Job, trace func(executor.TraceChunk) error) (executor.Result, error) {
	if !s.jobID.CompareAndSwap(0, job.ID) {
		return executor.Result{}, fmt.Errorf("executors: a slot runs one job (it ran job %d)", s.jobID.Load())
	}
	before := s.process()
	res, err := s.m.Executor.Run(ctx, job, trace)
	if err != nil && ctx.Err() == nil && (errors.Is(err, plugin.ErrExited) || s.died(before)) {
		return res, fmt.Errorf("%w: executor %s exited while running job %d and is being restarted: %w", ErrExecutorCrashed, s.m.Name, job.ID, err)
	}
	return res, err
}

func (s *Slot) process() Process {
	if s.m.Process == nil {
		return Process{PID: 1, Running: true}
	}
	return s.m.Process()
}

// crashWindow is how long a failed Run waits for the supervisor to notice
// that the process died: the broken stream usually comes first.
const crashWindow = time.Second

// died reports whether the process that ran the job (before) is gone.
func (s *Slot) died(before Process) bool {
	if s.m.Process == nil {
		return false
	}
	for deadline := time.Now().Add(crashWindow); ; time.Sleep(20 * time.Millisecond) {
		now := s.m.Process()
		if !now.Running || now.PID != before.PID {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// Cancel asks the executor to stop the slot's job (within 2 s).
func (s *Slot) Cancel(ctx context.Context) error {
	if id := s.jobID.Load(); id != 0 {
		return s.m.Executor.Cancel(ctx, id)
	}
	return nil
}

// Artifacts writes the job's archive to w; executor.ErrNoArtifacts when
// there is none.
func (s *Slot) Artifacts(ctx context.Context, w io.Writer) (int64, error) {
	id := s.jobID.Load()
	if id == 0 {
		return 0, executor.ErrNoArtifacts
	}
	return s.m.Executor.Artifacts(ctx, id, w)
}

// cleanupTimeout bounds the Cleanup a Release starts.
const cleanupTimeout = time.Minute

// Release frees the place (at once, for the next job) and has the
// executor clean up after the job in the background. Calling it again does
// nothing.
func (s *Slot) Release() {
	if !s.released.CompareAndSwap(false, true) {
		return
	}
	if id := s.jobID.Load(); id != 0 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			defer cancel()
			if err := s.m.Executor.Cleanup(ctx, id); err != nil {
				s.pool.log.Warn("executor cleanup", zap.String("executor", s.m.Name), zap.Int64("job", id), zap.Error(err))
			}
		}()
	}
	p := s.pool
	p.mu.Lock()
	s.m.busy--
	p.dispatch()
	p.mu.Unlock()
}
