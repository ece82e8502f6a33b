package internal

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/executors"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// PoolExecutors adapts the executor plugins' pool: asking with a context
// that has already ended takes a free place or none, without queueing
// (the scheduler keeps its own queue, in the store).
type PoolExecutors struct{ Pool *executors.Pool }

// TryAcquire implements cicd.Executors.
func (e PoolExecutors) TryAcquire(tags []string) (cicd.Slot, bool) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slot, err := e.Pool.Acquire(ctx, tags)
	if err != nil {
		return nil, false
	}
	return slot, true
}

// scheduler hands pending jobs to executors and follows them to the end.
type scheduler struct {
	s    *Service
	exec cicd.Executors
	mu   sync.Mutex
	// running are the jobs in progress here, from the moment their start
	// commits: their executor and the context their Run gets, to cancel.
	running map[int64]*runningJob
	wg      sync.WaitGroup
}

// runningJob is a started job as the scheduler follows it. Ending stop is
// the hard stop the executor contract gives (its processes are killed and
// Run ends canceled), and it works before Run has begun, when the
// executor does not know the job yet and a Cancel would find nothing.
type runningJob struct {
	slot cicd.Slot
	ctx  context.Context
	stop context.CancelFunc
	// fenced: stopped because this node lost its liveness lease
	// (stopAll), not because the job was canceled.
	fenced atomic.Bool
}

// hashToken is how job tokens are stored.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func newToken() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// stopRunning tells the executor of a job canceled in the store to stop it:
// a graceful Cancel, and the end of its Run's context (which also stops a
// job whose Run has not begun yet).
func (s *Service) stopRunning(jobID int64) {
	sc := s.sched
	if sc == nil {
		return
	}
	sc.mu.Lock()
	rj := sc.running[jobID]
	sc.mu.Unlock()
	if rj == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rj.slot.Cancel(ctx); err != nil {
		s.log.Warn("cancel failed", zap.Int64("job", jobID), zap.Error(err))
	}
	rj.stop()
}

// stopAll stops every job this node's executors run (Node.OnCutOff): the
// hard stop at once, since the leader may fail them and another node run
// their retries any moment now. They end failed, as a dead node's do.
func (sc *scheduler) stopAll() {
	sc.mu.Lock()
	running := make([]*runningJob, 0, len(sc.running))
	for _, rj := range sc.running {
		running = append(running, rj)
	}
	sc.mu.Unlock()
	if len(running) > 0 {
		sc.s.log.Warn("this node is cut off from the store: stopping the jobs its executors run", zap.Int("jobs", len(running)))
	}
	for _, rj := range running {
		rj.fenced.Store(true)
		rj.stop()
	}
}

// recoverRunning fails the jobs a node that is gone left running on its
// executor (a previous process of this node, or another node of a shared
// store whose liveness lease ended): their executor went with it. Pending
// jobs simply wait for the scheduler.
func (s *Service) recoverRunning(ctx context.Context) error {
	var ids []int64
	err := s.db.View(ctx, func(tx *store.Tx) error {
		running, err := jobs.IDsBy(tx, "queue", StatusRunning)
		if err != nil {
			return err
		}
		for _, id := range running {
			j, err := jobs.Get(tx, id)
			if err != nil {
				return err
			}
			// A runner's job runs elsewhere: the runner reports again once
			// the server is back; the stuck detection fails it if it does not.
			if j.RunnerID != 0 {
				continue
			}
			alive, err := s.nodeAlive(tx.Context(), j.Node) // the leases, read in this transaction
			if err != nil {
				return err
			}
			if !alive {
				ids = append(ids, id)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		// The line first (outside the transaction, which may run twice).
		s.appendTraceLine(id, "ERROR: Job failed: the server stopped while the job was running")
		traceSize, _ := blob.SizeOf(ctx, s.blobs, traceKey(id))
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			j, err := jobs.Get(tx, id)
			if err != nil || j.Status != StatusRunning || j.RunnerID != 0 {
				return err
			}
			// Its trace is on disk (erase looks at the size).
			j.TraceBytes = traceSize
			return s.finish(tx, j, StatusFailed, "runner_system_failure")
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// pendingSignal tells every node that a job may have become pending.
const pendingSignal = "ci.pending"

// nodeName is the name this node marks its executors' jobs with.
func (s *Service) nodeName() string {
	if s.node == nil {
		return ""
	}
	return s.node.Name()
}

// nodeAlive says whether the node that runs a job on its executor lives.
func (s *Service) nodeAlive(ctx context.Context, name string) (bool, error) {
	if s.node == nil {
		return false, nil
	}
	return s.node.Alive(ctx, name)
}

// deadNodesLoop fails, on a shared store, the executor jobs of nodes that
// died while this node leads (recoverRunning at the start of the lead
// covers those that died before).
func (s *Service) deadNodesLoop(ctx context.Context) {
	if s.node == nil {
		return
	}
	s.node.SweepDeadNodes(ctx, func(ctx context.Context) {
		if err := s.recoverRunning(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("failing the jobs of dead nodes", zap.Error(err))
		}
	})
}

// loop dispatches pending jobs whenever one may have become runnable: a
// nudge, or a tick (an executor freed by a job of another process).
func (sc *scheduler) loop(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		sc.dispatch(ctx)
		select {
		case <-ctx.Done():
			return
		case <-sc.s.wake:
		case <-tick.C:
		}
	}
}

// dispatch starts every pending job an executor is free for, oldest first.
func (sc *scheduler) dispatch(ctx context.Context) {
	s := sc.s
	if sc.exec == nil && s.runnerQueue.empty() {
		return // no executor and no runner waiting: nobody to hand a job to
	}
	var pending []*Job
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := jobs.IDsBy(tx, "queue", StatusPending)
		if err != nil {
			return err
		}
		for _, id := range ids {
			j, err := jobs.Get(tx, id)
			if err != nil {
				return err
			}
			pending = append(pending, j)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("reading the job queue", zap.Error(err))
		}
		return
	}
	// Reserve places first (a waiting runner, else a free executor), then
	// start every job that got one in a single transaction: a wide stage
	// costs one commit, not one per job.
	var claims []claim
	shared := map[int64]bool{}
	for _, j := range pending {
		sharedOK := func() bool {
			ok, seen := shared[j.ProjectID]
			if !seen {
				ok = s.sharedRunnersEnabled(ctx, j.ProjectID)
				shared[j.ProjectID] = ok
			}
			return ok
		}
		if w := s.runnerQueue.take(j, sharedOK); w != nil {
			claims = append(claims, claim{jobID: j.ID, token: newToken(), waiter: w})
			continue
		}
		if sc.exec == nil {
			continue
		}
		slot, ok := sc.exec.TryAcquire(j.Tags)
		if !ok {
			continue
		}
		jobCtx, stop := context.WithCancel(ctx)
		claims = append(claims, claim{jobID: j.ID, token: newToken(), run: &runningJob{slot: slot, ctx: jobCtx, stop: stop}})
	}
	if len(claims) == 0 {
		return
	}
	// Known as running before the start commits, so that a cancel that
	// follows the commit at once finds the job here.
	sc.mu.Lock()
	for _, c := range claims {
		if c.run != nil {
			sc.running[c.jobID] = c.run
		}
	}
	sc.mu.Unlock()
	forget := func(c claim) {
		if c.waiter != nil {
			c.waiter.ch <- nil // the request waits again, or answers 204
			return
		}
		sc.mu.Lock()
		delete(sc.running, c.jobID)
		sc.mu.Unlock()
		c.run.stop()
		c.run.slot.Release()
	}
	started, err := sc.start(ctx, claims)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("starting jobs", zap.Int("jobs", len(claims)), zap.Error(err))
		}
		for _, c := range claims {
			forget(c)
		}
		return
	}
	for i, c := range claims {
		st := started[i]
		if st.job == nil { // no longer pending (canceled meanwhile), or the runner went
			forget(c)
			continue
		}
		if c.waiter != nil {
			c.waiter.ch <- &st
			continue
		}
		sc.wg.Add(1)
		go func() {
			defer sc.wg.Done()
			sc.run(ctx, st.job, st.pipeline, c.run, c.token)
		}()
	}
}

// claim is a pending job with the place reserved for it: an executor's
// (run) or a waiting runner's (waiter).
type claim struct {
	jobID  int64
	token  string
	run    *runningJob
	waiter *runnerWaiter
}

// startedJob is a claimed job as start left it: nil when it was no longer
// pending. A runner's job carries its runner as start read it, and the
// job's token.
type startedJob struct {
	job      *Job
	pipeline *Pipeline
	runner   *Runner
	token    string
}

// start moves the claimed jobs that are still pending to running, in one
// transaction, and processes each of their pipelines once.
func (sc *scheduler) start(ctx context.Context, claims []claim) ([]startedJob, error) {
	s := sc.s
	var out []startedJob
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		out = make([]startedJob, len(claims)) // set per run: the function may run again
		var touched []int64
		now := s.now()
		for i, c := range claims {
			j, err := jobs.Get(tx, c.jobID)
			if err != nil {
				return err
			}
			if j.Status != StatusPending {
				continue
			}
			var r *Runner
			if c.waiter != nil {
				// The runner as it is now: it may have been removed or
				// changed while its request waited.
				r, err = runners.Get(tx, c.waiter.runner.ID)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if !r.canRun(j, func() bool { return true }) {
					continue
				}
				j.Status, j.StartedAt, j.TokenHash, j.Executor = StatusRunning, &now, hashToken(c.token), "runner"
				j.RunnerID, j.RunnerTokenHash, j.RunnerStartedAt = r.ID, j.TokenHash, nil
			} else {
				j.Status, j.StartedAt, j.TokenHash, j.Executor = StatusRunning, &now, hashToken(c.token), c.run.slot.Executor()
				j.Node = s.nodeName()
			}
			if err := jobs.Update(tx, j); err != nil {
				return err
			}
			p, err := pipelines.Get(tx, j.PipelineID)
			if err != nil {
				return err
			}
			if err := s.publishJob(tx, j, p); err != nil {
				return err
			}
			out[i] = startedJob{job: j, pipeline: p, runner: r, token: c.token}
			if !slices.Contains(touched, j.PipelineID) {
				touched = append(touched, j.PipelineID)
			}
		}
		for _, id := range touched {
			if err := s.process(tx, id); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// run follows a started job on its executor to the end.
func (sc *scheduler) run(ctx context.Context, j *Job, p *Pipeline, rj *runningJob, token string) {
	s := sc.s
	slot := rj.slot
	defer func() {
		sc.mu.Lock()
		delete(sc.running, j.ID)
		sc.mu.Unlock()
		rj.stop()
		slot.Release()
		s.nudge()
	}()
	var spec pipeline.Job
	if err := json.Unmarshal(j.Spec, &spec); err != nil {
		s.failSystem(j, "the job's definition is unreadable: "+err.Error())
		return
	}
	job, err := s.executorJob(ctx, j, p, &spec, token)
	if err != nil {
		s.failSystem(j, "the job could not be prepared: "+err.Error())
		return
	}
	tw, err := s.openTrace(j.ID)
	if err != nil {
		s.failSystem(j, "the trace could not be written: "+err.Error())
		return
	}
	// Every chunk is masked here, before it is stored, whatever the
	// executor (which never masks: the contract leaves it to the host).
	secrets := jobSecrets(job)
	tw.mask = newMasker(secrets)
	res, err := slot.Run(rj.ctx, job, tw.write)
	tw.close()
	if ctx.Err() != nil {
		return // the server is stopping: recoverRunning fails the job at the next start
	}
	if rj.fenced.Load() {
		// Failed as the leader fails a dead node's jobs, if the store
		// answers by now (if the leader did first, its word stands).
		s.failSystem(j, "the node running the job lost its lease on the store")
		return
	}
	if err != nil && rj.ctx.Err() != nil {
		// Stopped by a cancel (the store says canceled already).
		s.complete(ctx, j.ID, StatusCanceled, "", nil, nil)
		return
	}
	if err != nil {
		s.appendTraceLine(j.ID, maskLine(secrets, "ERROR: Job failed (system failure): "+err.Error()))
		s.complete(ctx, j.ID, StatusFailed, "runner_system_failure", nil, nil)
		return
	}
	status, reason := StatusSuccess, ""
	switch res.Failure {
	case executor.FailureNone:
	case executor.FailureCanceled:
		status = StatusCanceled
	default:
		status, reason = StatusFailed, failureReason(res.Failure)
	}
	if status == StatusSuccess {
		status, reason = s.releaseJob(ctx, j, p, &spec) // release.go
	}
	var arts *Artifacts
	if res.Artifacts.Filename != "" && status != StatusCanceled {
		arts, err = s.storeArtifacts(ctx, slot, j.ID, res.Artifacts.Filename)
		if err != nil {
			s.appendTraceLine(j.ID, maskLine(secrets, "WARNING: the artifacts could not be stored: "+err.Error()))
		}
	}
	if arts != nil && spec.Artifacts != nil && hasKeptReports(spec.Artifacts) {
		// A report GitLab refuses fails the job, as a refused upload
		// fails a runner's. The archive was built for the reports; it is
		// kept only when the job's own artifacts ask for it.
		err := s.collectReports(ctx, j.ID, spec.Artifacts.Reports)
		if !archiveWanted(spec.Artifacts, status) {
			_ = s.blobs.Delete(ctx, artifactsKey(j.ID))
			arts = nil
		}
		if err != nil {
			s.appendTraceLine(j.ID, maskLine(secrets, "ERROR: Uploading artifacts as \"reports\" to coordinator... "+err.Error()))
			status, reason = StatusFailed, "unknown_failure"
		}
	}
	var coverage *float64
	if spec.Coverage != "" {
		coverage = s.coverageOf(ctx, j.ID, spec.Coverage)
	}
	s.complete(ctx, j.ID, status, reason, arts, coverage)
}

func failureReason(k executor.FailureKind) string {
	switch k {
	case executor.FailureScript:
		return "script_failure"
	case executor.FailureTimeout:
		return "job_execution_timeout"
	case executor.FailureSystem, executor.FailurePrepare:
		return "runner_system_failure"
	case executor.FailureDependency:
		return "missing_dependency_failure"
	}
	return string(k)
}

// failSystem ends a job the host could not hand over (to an executor or a
// runner): a scheduler_failure, as GitLab calls a job it could not assign.
func (s *Service) failSystem(j *Job, msg string) {
	s.appendTraceLine(j.ID, "ERROR: Job failed (system failure): "+msg)
	s.complete(context.Background(), j.ID, StatusFailed, "scheduler_failure", nil, nil)
}

// complete records how a running job ended (unless it was canceled in the
// store meanwhile), its deployment and its automatic retry.
func (s *Service) complete(ctx context.Context, jobID int64, status, reason string, arts *Artifacts, coverage *float64) {
	s.completeWith(ctx, jobID, status, reason, arts, coverage, nil)
}

// completeWith is complete with more to record on the job (set, in the
// same transaction, when the job was still running).
func (s *Service) completeWith(ctx context.Context, jobID int64, status, reason string, arts *Artifacts, coverage *float64, set func(*Job)) {
	s.runnerSeen.Delete(jobID)
	traceSize, _ := blob.SizeOf(context.WithoutCancel(ctx), s.blobs, traceKey(jobID))
	err := s.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		j, err := jobs.Get(tx, jobID)
		if err != nil {
			return err
		}
		// A runner uploaded its archive before its final state: nil keeps
		// what is there.
		j.TraceBytes = traceSize
		if arts != nil {
			j.Artifacts = arts
		}
		if coverage != nil {
			j.Coverage = coverage
		}
		if j.Status != StatusRunning {
			// Canceled (or failed by a restart) while the executor was
			// still at it: the store's word stands.
			return jobs.Update(tx, j)
		}
		if set != nil {
			set(j)
		}
		if err := s.finish(tx, j, status, reason); err != nil {
			return err
		}
		var spec pipeline.Job
		if err := json.Unmarshal(j.Spec, &spec); err != nil {
			return err
		}
		if status == StatusSuccess && spec.Environment != nil {
			switch spec.Environment.Action {
			case "", pipeline.EnvironmentStart:
				if err := s.deploy(tx, j, &spec); err != nil {
					return err
				}
			case pipeline.EnvironmentStop:
				if err := s.stoppedByJob(tx, j, &spec); err != nil {
					return err
				}
			}
			// prepare, verify and access touch no deployment.
		}
		if status == StatusFailed && j.Attempt < spec.Retry && retriesFor(spec.RetryWhen, reason) {
			clone, err := s.retry(tx, j, j.UserID)
			if err != nil {
				return err
			}
			clone.Attempt = j.Attempt + 1
			return jobs.Update(tx, clone)
		}
		return nil
	})
	if err != nil {
		s.log.Error("recording a finished job", zap.Int64("job", jobID), zap.Error(err))
	}
	s.nudge()
}

// retriesFor says whether a failure of this reason is retried by
// `retry: {when}` (no list, or always, retries every failure). A failure
// without a reason is GitLab's unknown_failure, and a timeout answers to
// both of its names (stuck_or_timeout_failure covered timeouts before
// job_execution_timeout existed).
func retriesFor(when []string, reason string) bool {
	if len(when) == 0 {
		return true
	}
	if reason == "" {
		reason = "unknown_failure"
	}
	for _, w := range when {
		if w == "always" || w == reason ||
			(w == "stuck_or_timeout_failure" && reason == "job_execution_timeout") {
			return true
		}
	}
	return false
}

// finish moves a job to a final status and processes its pipeline.
func (s *Service) finish(tx *store.Tx, j *Job, status, reason string) error {
	now := s.now()
	j.Status, j.FinishedAt, j.TokenHash, j.RunnerTokenHash, j.FailureReason = status, &now, "", "", reason
	if j.Artifacts != nil && j.Artifacts.ExpireAt == nil && !j.Artifacts.Kept {
		var spec pipeline.Job
		if json.Unmarshal(j.Spec, &spec) == nil && spec.Artifacts != nil {
			if d, ok := spec.Artifacts.Expires(); ok {
				at := now.Add(d)
				j.Artifacts.ExpireAt = &at
			}
		}
	}
	if err := jobs.Update(tx, j); err != nil {
		return err
	}
	if err := s.publishJob(tx, j, nil); err != nil {
		return err
	}
	return s.process(tx, j.PipelineID)
}

// deploy records the deployment a successful job with an environment made.
func (s *Service) deploy(tx *store.Tx, j *Job, spec *pipeline.Job) error {
	name, url := j.Environment, j.EnvironmentURL
	if name == "" {
		name = spec.Environment.Name
	}
	var u *string
	if url != "" {
		u = &url
	}
	env, err := s.ensureEnvironment(tx, j.ProjectID, name, u)
	if err != nil {
		return err
	}
	iid, err := nextIID(tx, "deployment/"+store.IDString(j.ProjectID))
	if err != nil {
		return err
	}
	if err := s.deployed(tx, env, j, spec); err != nil {
		return err
	}
	return deployments.Insert(tx, &Deployment{IID: iid, ProjectID: j.ProjectID, EnvironmentID: env.ID, JobID: j.ID,
		Ref: j.Ref, SHA: j.SHA, Tag: j.Tag, UserID: j.UserID, CreatedAt: s.now()})
}

// coverageOf finds the coverage figure in a job's trace: the last match of
// the job's regular expression, its first number.
func (s *Service) coverageOf(ctx context.Context, jobID int64, expr string) *float64 {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil
	}
	f, err := s.blobs.Open(ctx, traceKey(jobID))
	if err != nil {
		return nil
	}
	defer f.Close()
	number := regexp.MustCompile(`\d+(\.\d+)?`)
	var found *float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if m := re.Find(sc.Bytes()); m != nil {
			if n := number.Find(m); n != nil {
				if v, err := strconv.ParseFloat(string(n), 64); err == nil {
					found = &v
				}
			}
		}
	}
	return found
}

// storeArtifacts streams a job's archive from its executor into its blob
// (one Put: a half-written archive is never served, and a failed fetch
// leaves whatever was there).
func (s *Service) storeArtifacts(ctx context.Context, slot cicd.Slot, jobID int64, filename string) (*Artifacts, error) {
	pr, pw := io.Pipe()
	go func() {
		_, err := slot.Artifacts(ctx, pw)
		pw.CloseWithError(err) // nil: the end of the archive
	}()
	size, err := s.blobs.Put(ctx, artifactsKey(jobID), pr)
	pr.CloseWithError(err) // stops the fetch when the Put failed first
	if errors.Is(err, executor.ErrNoArtifacts) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &Artifacts{Filename: filename, Size: size}, nil
}

// traceWriter appends an executor's chunks to the trace blob in order; a
// chunk sent again (same offset) is written once. Offsets count the
// executor's bytes (in), not the blob's: masking changes lengths.
//
// Chunks are gathered for up to traceFlushDelay or traceFlushBytes and
// appended together: every append is synced, and a step that prints line
// by line sends a chunk per line (one fsync each took 0.4 ms on the
// development machine, a thousand times a buffered write). A live log
// shows them that much later; nothing the server acknowledged waits.
type traceWriter struct {
	blobs blob.Store
	key   string
	// wake tells the job page's waiting requests the trace grew.
	wake func()

	mu      sync.Mutex
	size    int64
	in      int64
	mask    *masker
	pending []byte
	timer   *time.Timer
	err     error // of a flush the timer ran: the next write returns it
}

// How long and how much a trace's chunks are gathered before they are
// appended.
const (
	traceFlushDelay = 100 * time.Millisecond
	traceFlushBytes = 64 << 10
)

func (s *Service) openTrace(jobID int64) (*traceWriter, error) {
	key := traceKey(jobID)
	size, err := blob.SizeOf(context.Background(), s.blobs, key)
	if err != nil {
		return nil, err
	}
	return &traceWriter{blobs: s.blobs, key: key, size: size, in: size, wake: func() { s.traceChanged(jobID) }}, nil
}

// write masks a chunk's new bytes and gathers them.
func (t *traceWriter) write(c executor.TraceChunk) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	end := c.Offset + int64(len(c.Data))
	if end <= t.in {
		return nil // seen already
	}
	if c.Offset > t.in {
		return fmt.Errorf("ci: trace chunk at %d leaves a gap after %d", c.Offset, t.in)
	}
	t.pending = append(t.pending, t.mask.write(c.Data[t.in-c.Offset:])...)
	t.in = end
	if len(t.pending) >= traceFlushBytes {
		return t.flushLocked()
	}
	if t.timer == nil && len(t.pending) > 0 {
		t.timer = time.AfterFunc(traceFlushDelay, func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.timer = nil
			if err := t.flushLocked(); err != nil && t.err == nil {
				t.err = err
			}
		})
	}
	return nil
}

// append adds data at the end of the trace now, after what is gathered.
func (t *traceWriter) append(data []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = append(t.pending, data...)
	return t.flushLocked()
}

// flushLocked appends the gathered bytes; a blob moved by another writer
// (a line of the server's own) is appended after what it holds.
func (t *traceWriter) flushLocked() error {
	if t.timer != nil {
		t.timer.Stop() // a timer that fired already finds nothing to do
		t.timer = nil
	}
	if len(t.pending) == 0 {
		return nil
	}
	size, err := t.blobs.Append(context.Background(), t.key, t.size, t.pending)
	if oe := (*blob.OffsetError)(nil); errors.As(err, &oe) {
		size, err = t.blobs.Append(context.Background(), t.key, oe.Size, t.pending)
	}
	if err != nil {
		return err
	}
	t.size, t.pending = size, t.pending[:0]
	if t.wake != nil {
		t.wake()
	}
	return nil
}

// close writes what is gathered and what the masker still holds (the
// trace has ended, so it is no secret).
func (t *traceWriter) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = append(t.pending, t.mask.close()...)
	_ = t.flushLocked()
}

// appendTraceLine adds a line of the server's own to a job's trace.
func (s *Service) appendTraceLine(jobID int64, line string) {
	tw, err := s.openTrace(jobID)
	if err != nil {
		return
	}
	defer tw.close()
	_ = tw.append([]byte("\n" + line + "\n"))
}

// reapInterval is how often expired artifacts are removed.
const reapInterval = time.Minute

// reapExpired removes the archives whose expire_in has passed (unless
// kept): the row first, then the file, so a crash in between leaves a
// file no row points to, which the next pass does not see and nothing
// serves.
func (s *Service) reapExpired(ctx context.Context) (int, error) {
	now := s.now()
	var expired []int64
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := jobs.IDsBy(tx, "expiring", "expiring")
		if err != nil {
			return err
		}
		for _, id := range ids {
			j, err := jobs.Get(tx, id)
			if err != nil {
				return err
			}
			if a := j.Artifacts; a != nil && !a.Kept && a.ExpireAt != nil && !a.ExpireAt.After(now) {
				expired = append(expired, id)
			}
		}
		return nil
	})
	if err != nil || len(expired) == 0 {
		return 0, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		for _, id := range expired {
			j, err := jobs.Get(tx, id)
			if err != nil {
				return err
			}
			if a := j.Artifacts; a == nil || a.Kept || a.ExpireAt == nil || a.ExpireAt.After(now) {
				continue // kept meanwhile
			}
			j.Artifacts = nil
			if err := jobs.Update(tx, j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, id := range expired {
		_ = s.blobs.Delete(ctx, artifactsKey(id))
		s.removeReports(ctx, id) // they expire with the archive, as GitLab's get its expire_in
	}
	return len(expired), nil
}

// reapLoop runs reapExpired until ctx ends.
func (s *Service) reapLoop(ctx context.Context) {
	t := time.NewTicker(s.reapEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := s.reapExpired(ctx); err != nil && ctx.Err() == nil {
				s.log.Error("removing expired artifacts", zap.Error(err))
			} else if n > 0 {
				s.log.Info("expired artifacts removed", zap.Int("jobs", n))
			}
		}
	}
}
