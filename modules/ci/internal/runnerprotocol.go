package internal

// The runner protocol: what a real GitLab Runner asks of the server
// (RUNNER-CONTRACT.md and GITLAB-FACTS section 11): register, verify and
// unregister a runner, take a job (held open for long polling), report on
// it, append its trace and store its archive. Only GitLab Runners speak it,
// over HTTP, so it is no cicd.Service command; but what it decides lives
// here, with no HTTP, and returns domain errors: httprunnerprotocol.go
// decodes the runners' requests, calls these and answers GitLab's way.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// The runner protocol's refusals (errRunnerForbidden is runners.go's).
var (
	// errRunnerJobNotFound: no job of that id.
	errRunnerJobNotFound = errors.New("ci: no such job for a runner")
	// errJobNotRunning: the job a runner reports on is no longer its to
	// run (a *jobNotRunningError says what it is now).
	errJobNotRunning = errors.New("ci: job is not running")
	// errTraceGap: a chunk that does not start where the trace ends.
	errTraceGap = errors.New("ci: trace chunk out of place")
	// errTraceMismatch: the runner's checksum or size of the trace is not
	// that of the stored trace; it sends it all again.
	errTraceMismatch = errors.New("ci: trace validation failed")
	// errArtifactsTooLarge: an archive past MaxArtifactsBytes.
	errArtifactsTooLarge = errors.New("ci: the artifacts are too large")
	// errUploadCutShort: the archive's upload ended before its end.
	errUploadCutShort = errors.New("ci: the upload was cut short")
	// errInvalidExpireIn: an expire_in that is no duration.
	errInvalidExpireIn = errors.New("ci: expire_in is invalid")
)

// jobNotRunningError is errJobNotRunning with the status the runner is
// told (Job-Status): the job's own, or pending for a job taken back from
// this runner, or failed for one the runner's trace failed.
type jobNotRunningError struct {
	Status string
}

func (e *jobNotRunningError) Error() string { return "ci: job is not running (" + e.Status + ")" }
func (e *jobNotRunningError) Unwrap() error { return errJobNotRunning }

// notRunning refuses a report on j, which no longer runs.
func notRunning(j *Job) error { return &jobNotRunningError{Status: j.Status} }

// jobOffer is the answer to a runner's request for a job: the job, or nil
// for none within the poll timeout, and the runners' queue version it was
// decided at (X-GitLab-Last-Update).
type jobOffer struct {
	Job        *runnerJobPayload
	LastUpdate string
}

// requestJob gives the runner of token a job now, or as soon as one it may
// run becomes pending, within the poll timeout. It returns ctx's error when
// the runner went away meanwhile (its job, if one was being handed to it,
// is queued again).
func (s *Service) requestJob(ctx context.Context, token string, info *runnerInfo) (jobOffer, error) {
	runner, err := s.runnerByToken(ctx, token)
	if err != nil {
		return jobOffer{}, err
	}
	s.touchRunner(ctx, runner, info)
	q := s.runnerQueue
	if s.server.Ready() {
		q.served.Store(true)
	}
	noJob := func() (jobOffer, error) { return jobOffer{LastUpdate: q.lastUpdate()}, nil }
	if !runner.Active {
		return noJob()
	}
	timer := time.NewTimer(s.cfg.RunnerPollTimeout)
	defer timer.Stop()
	// Every new request wakes the scheduler, even one that echoes the
	// current X-GitLab-Last-Update: a job queued while this runner was
	// between two requests (its last 204 already carrying the new
	// version) found no one waiting, and would otherwise wait for the
	// scheduler's next tick, up to a second. A dispatch is one read of
	// the pending queue; a long-polling runner asks once per poll timeout.
	nudge := true
	for {
		wt := q.add(*runner)
		if nudge {
			s.wakeScheduler()
		}
		nudge = false
		var got *startedJob
		received, expired := false, false
		select {
		case got = <-wt.ch:
			received = true
		case <-timer.C:
			expired = true
		case <-q.draining:
			expired = true
		case <-ctx.Done():
		}
		if !received {
			if q.remove(wt) {
				if err := ctx.Err(); err != nil {
					return jobOffer{}, err
				}
				return noJob()
			}
			got = <-wt.ch // taken meanwhile: its outcome is on its way
		}
		if got == nil {
			// The assignment did not hold (the job went meanwhile): wait
			// again for the time left, if any.
			if err := ctx.Err(); err != nil {
				return jobOffer{}, err
			}
			if expired {
				return noJob()
			}
			select {
			case <-timer.C:
				return noJob()
			case <-q.draining:
				return noJob()
			default:
			}
			// The runner as it is now: removed or paused, it waits no more.
			cur, err := s.loadRunner(ctx, runner.ID)
			if err != nil || !cur.Active {
				return noJob()
			}
			runner = cur
			continue
		}
		if err := ctx.Err(); err != nil {
			// The runner went while its job was being assigned.
			s.requeue(context.WithoutCancel(ctx), got.job.ID)
			return jobOffer{}, err
		}
		payload, err := s.runnerPayload(ctx, got)
		if err != nil {
			s.failSystem(got.job, "the job could not be prepared: "+err.Error())
			continue
		}
		return jobOffer{Job: payload, LastUpdate: q.lastUpdate()}, nil
	}
}

// jobForRunner authenticates a runner's call on a job: the job of that id,
// with the token the runner was given for it (errRunnerJobNotFound,
// errRunnerForbidden).
func (s *Service) jobForRunner(ctx context.Context, id int64, token string) (*Job, error) {
	var j *Job
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		j, err = jobs.Get(tx, id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, errRunnerJobNotFound
	}
	if err != nil {
		return nil, err
	}
	if token == "" || j.RunnerTokenHash == "" ||
		subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(j.RunnerTokenHash)) != 1 {
		return nil, errRunnerForbidden
	}
	return j, nil
}

// reported records a report from j's runner (seen); a job taken back from
// it before its first report is not its to run any more: the runner is
// told it is pending, and stops.
func (s *Service) reported(ctx context.Context, j *Job) error {
	if s.seen(ctx, j) {
		return nil
	}
	s.log.Info("a runner reported on a job re-queued before its first report; told to stop", zap.Int64("job", j.ID))
	return &jobNotRunningError{Status: StatusPending}
}

// traceAppended is what a runner is told of its trace chunk: the trace's
// length now and the job's status (Job-Status). Status is "" when the
// chunk was refused before it was written.
type traceAppended struct {
	Size   int64
	Status string
}

// appendRunnerTrace writes a trace chunk of j (running or canceled) at
// start: errTraceGap when start is not where the trace ends (Size says
// where), a *jobNotRunningError (failed) when it takes the trace past the
// limit, which fails the job.
func (s *Service) appendRunnerTrace(ctx context.Context, j *Job, start int64, body io.Reader) (traceAppended, error) {
	if err := s.reported(ctx, j); err != nil {
		return traceAppended{}, err
	}
	unlock := s.traceLock(j.ID)
	size, tooLarge, err := s.appendTrace(ctx, j.ID, start, body)
	unlock()
	out := traceAppended{Size: size, Status: jobStatusForRunner(j)}
	if err != nil {
		return out, err
	}
	if tooLarge && j.Status == StatusRunning {
		s.appendTraceLine(j.ID, fmt.Sprintf("ERROR: Job failed: the trace is larger than %d bytes", s.cfg.MaxTraceBytes))
		s.complete(context.WithoutCancel(ctx), j.ID, StatusFailed, "trace_size_exceeded", nil, nil)
		out.Status = StatusFailed
		return out, &jobNotRunningError{Status: StatusFailed}
	}
	return out, nil
}

// jobReport is a runner's word on its job (PUT /jobs/:id): a keep-alive
// (running) or its end (success, failed), with what it knows of the trace.
type jobReport struct {
	State         string
	FailureReason string
	ExitCode      *int
	// Checksum ("crc32:<hex>") and Bytesize of the trace as the runner
	// sent it; "" and nil when it does not say.
	Checksum string
	Bytesize *int64
}

// checkReportState checks a report's state before anything else is.
func checkReportState(state string) error {
	switch state {
	case StatusRunning, StatusSuccess, StatusFailed:
		return nil
	case "":
		return &cicd.MissingError{Fields: []string{"state"}}
	}
	return &cicd.InvalidValueError{Field: "state"}
}

// reportJob records a runner's report on j and returns the status the
// runner is told (Job-Status): canceling while a job canceled here still
// runs there, then canceled once the runner's last word is in; a
// *jobNotRunningError for a job no longer its; errTraceMismatch when the
// final report's trace is not what was stored (the runner sends it again).
func (s *Service) reportJob(ctx context.Context, j *Job, in jobReport) (string, error) {
	ctx = context.WithoutCancel(ctx)
	switch {
	case j.Status == StatusCanceled && in.State == StatusRunning:
		_ = s.seen(ctx, j) // a report: the runner's silence counts from here (a canceled job is never taken back)
		return "canceling", nil
	case j.Status == StatusCanceled:
		// The runner's last word on a job canceled here: its trace is
		// complete now, and its token is done with.
		s.closeCanceled(ctx, j.ID)
		return StatusCanceled, nil
	case j.Status != StatusRunning:
		return "", notRunning(j)
	}
	if err := s.reported(ctx, j); err != nil {
		return "", err
	}
	if in.State == StatusRunning {
		return StatusRunning, nil
	}
	if !s.traceMatches(ctx, j.ID, in.Checksum, in.Bytesize) {
		return "", errTraceMismatch
	}
	reason := ""
	if in.State == StatusFailed {
		reason = "unknown_failure"
		for _, fr := range failureReasons {
			if in.FailureReason == fr {
				reason = fr
			}
		}
	}
	var spec pipeline.Job
	var coverage *float64
	if json.Unmarshal(j.Spec, &spec) == nil && spec.Coverage != "" {
		coverage = s.coverageOf(ctx, j.ID, spec.Coverage)
	}
	state := in.State
	if state == StatusSuccess && spec.Release != nil {
		var p *Pipeline
		if err := s.db.View(ctx, func(tx *store.Tx) error {
			var err error
			p, err = pipelines.Get(tx, j.PipelineID)
			return err
		}); err != nil {
			return "", err
		}
		state, reason = s.releaseJob(ctx, j, p, &spec) // release.go
	}
	s.completeWith(ctx, j.ID, state, reason, nil, coverage, func(cur *Job) { cur.ExitCode = in.ExitCode })
	return state, nil
}

// startUpload checks that j's runner may upload its archive now: the job
// runs, and is still this runner's.
func (s *Service) startUpload(ctx context.Context, j *Job) error {
	if j.Status != StatusRunning {
		return notRunning(j)
	}
	return s.reported(ctx, j)
}

// upload is an archive a runner sent, kept in a temporary file until
// storeUpload keeps it for good (or Discard drops it).
type upload struct {
	path     string
	filename string
	size     int64
}

// receiveArchive copies an archive named name from r into a local
// temporary file (the form's fields, which may follow the file, say
// whether it is the archive or a report): errArtifactsTooLarge past
// MaxArtifactsBytes, errUploadCutShort when r fails. It is no blob: it
// lives as long as the request.
func (s *Service) receiveArchive(name string, r io.Reader) (*upload, error) {
	max := s.cfg.MaxArtifactsBytes
	tmp, err := os.CreateTemp("", "fennec-upload-*")
	if err != nil {
		return nil, err
	}
	u := &upload{path: tmp.Name(), filename: archiveName(name)}
	u.size, err = io.Copy(tmp, io.LimitReader(r, max+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		u.Discard()
		return nil, fmt.Errorf("%w: %w", errUploadCutShort, err)
	}
	if u.size > max {
		u.Discard()
		return nil, errArtifactsTooLarge
	}
	return u, nil
}

// Discard removes the upload's file, unless it was stored.
func (u *upload) Discard() {
	if u != nil && u.path != "" {
		_ = os.Remove(u.path)
		u.path = ""
	}
}

// artifactsExpiry reads an expire_in: nil for none or never.
func (s *Service) artifactsExpiry(expireIn string) (*time.Time, error) {
	if expireIn == "" {
		return nil, nil
	}
	d, never, err := pipeline.ParseExpireIn(expireIn)
	if err != nil {
		return nil, errInvalidExpireIn
	}
	if never {
		return nil, nil
	}
	at := s.now().Add(d)
	return &at, nil
}

// storeUpload keeps u as j's archive, expiring at expireAt, and returns
// the job as it is now; a *jobNotRunningError when the job stopped running
// meanwhile (the archive is dropped).
func (s *Service) storeUpload(ctx context.Context, j *Job, u *upload, expireAt *time.Time) (cicd.Job, error) {
	key := artifactsKey(j.ID)
	// The blob first: a row never names an archive that is not there.
	f, err := os.Open(u.path)
	if err != nil {
		return cicd.Job{}, err
	}
	_, err = s.blobs.Put(ctx, key, f)
	f.Close()
	if err != nil {
		return cicd.Job{}, err
	}
	u.Discard()
	var saved *Job
	var p *Pipeline
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := jobs.Get(tx, j.ID)
		if err != nil {
			return err
		}
		if cur.Status != StatusRunning {
			return errJobNotRunning
		}
		cur.Artifacts = &Artifacts{Filename: u.filename, Size: u.size, ExpireAt: expireAt}
		if err := jobs.Update(tx, cur); err != nil {
			return err
		}
		saved = cur
		p, err = pipelines.Get(tx, cur.PipelineID)
		return err
	})
	if errors.Is(err, errJobNotRunning) {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), key)
		return cicd.Job{}, notRunning(j)
	}
	if err != nil {
		return cicd.Job{}, err
	}
	return jobRecord(saved, p), nil
}

// wakeScheduler nudges the scheduler without moving the runners' version.
func (s *Service) wakeScheduler() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// sharedRunnersEnabled says whether a project takes shared runners.
func (s *Service) sharedRunnersEnabled(ctx context.Context, projectID int64) bool {
	info, err := s.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), projectID)
	return err == nil && info.Features.SharedRunnersEnabled
}

// requeue puts a job handed to a runner that never started it back in the
// queue, as it was before.
func (s *Service) requeue(ctx context.Context, jobID int64) {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		j, err := jobs.Get(tx, jobID)
		if err != nil {
			return err
		}
		if j.Status != StatusRunning || j.RunnerID == 0 || j.RunnerStartedAt != nil {
			return nil
		}
		now := s.now()
		j.Status, j.QueuedAt, j.StartedAt = StatusPending, &now, nil
		j.RunnerID, j.TokenHash, j.RunnerTokenHash, j.Executor = 0, "", "", ""
		if err := jobs.Update(tx, j); err != nil {
			return err
		}
		if err := s.publishJob(tx, j, nil); err != nil {
			return err
		}
		return s.process(tx, j.PipelineID)
	})
	if err != nil {
		s.log.Error("queueing a job again", zap.Int64("job", jobID), zap.Error(err))
	}
	s.nudge()
}

// The job payload of POST /jobs/request (RUNNER-CONTRACT.md).
type (
	runnerJobPayload struct {
		ID            int64              `json:"id"`
		Token         string             `json:"token"`
		AllowGitFetch bool               `json:"allow_git_fetch"`
		JobInfo       runnerJobInfo      `json:"job_info"`
		GitInfo       runnerGitInfo      `json:"git_info"`
		RunnerInfo    runnerTimeout      `json:"runner_info"`
		Variables     []runnerVariable   `json:"variables"`
		Steps         []runnerStep       `json:"steps"`
		Image         *pipeline.Image    `json:"image"`
		Services      []pipeline.Service `json:"services"`
		Artifacts     []runnerArtifacts  `json:"artifacts"`
		Cache         []runnerCache      `json:"cache"`
		Credentials   []struct{}         `json:"credentials"`
		Dependencies  []runnerDependency `json:"dependencies"`
		Features      runnerFeatures     `json:"features"`
	}
	runnerJobInfo struct {
		Name        string `json:"name"`
		Stage       string `json:"stage"`
		ProjectID   int64  `json:"project_id"`
		ProjectName string `json:"project_name"`
	}
	runnerGitInfo struct {
		RepoURL   string   `json:"repo_url"`
		Ref       string   `json:"ref"`
		SHA       string   `json:"sha"`
		BeforeSHA string   `json:"before_sha"`
		RefType   string   `json:"ref_type"`
		Refspecs  []string `json:"refspecs"`
		Depth     int      `json:"depth"`
	}
	runnerTimeout struct {
		Timeout int64 `json:"timeout"`
	}
	runnerVariable struct {
		Key    string `json:"key"`
		Value  string `json:"value"`
		Public bool   `json:"public"`
		Masked bool   `json:"masked"`
		File   bool   `json:"file"`
		Raw    bool   `json:"raw"`
	}
	runnerStep struct {
		Name         string   `json:"name"`
		Script       []string `json:"script"`
		Timeout      int64    `json:"timeout"`
		When         string   `json:"when"`
		AllowFailure bool     `json:"allow_failure"`
	}
	runnerArtifacts struct {
		Name           string   `json:"name"`
		Untracked      bool     `json:"untracked"`
		Paths          []string `json:"paths"`
		Exclude        []string `json:"exclude"`
		When           string   `json:"when"`
		ArtifactType   string   `json:"artifact_type"`
		ArtifactFormat string   `json:"artifact_format"`
		ExpireIn       string   `json:"expire_in"`
	}
	runnerCache struct {
		Key       string   `json:"key"`
		Untracked bool     `json:"untracked"`
		Policy    string   `json:"policy"`
		Paths     []string `json:"paths"`
		When      string   `json:"when"`
		// FallbackKeys are tried in order when Key has no cache.
		FallbackKeys []string `json:"fallback_keys,omitempty"`
	}
	runnerDependency struct {
		ID            int64               `json:"id"`
		Token         string              `json:"token"`
		Name          string              `json:"name"`
		ArtifactsFile runnerArtifactsFile `json:"artifacts_file"`
	}
	runnerArtifactsFile struct {
		Filename string `json:"filename"`
		Size     int64  `json:"size"`
	}
	runnerFeatures struct {
		TraceSections  bool     `json:"trace_sections"`
		FailureReasons []string `json:"failure_reasons"`
	}
)

// failureReasons are the failure_reason values a runner may report.
var failureReasons = []string{"unknown_failure", "script_failure", "api_failure", "stuck_or_timeout_failure",
	"runner_system_failure", "missing_dependency_failure", "runner_unsupported", "job_execution_timeout",
	"archived_failure", "unmet_prerequisites", "scheduler_failure", "data_integrity_failure"}

// runnerPayload is the job as a runner receives it: what an executor
// receives (handover), in the runner's shape.
func (s *Service) runnerPayload(ctx context.Context, sj *startedJob) (*runnerJobPayload, error) {
	j, p := sj.job, sj.pipeline
	var spec pipeline.Job
	if err := json.Unmarshal(j.Spec, &spec); err != nil {
		return nil, err
	}
	job, err := s.handover(ctx, j, p, &spec, sj.token, sj.runner)
	if err != nil {
		return nil, err
	}
	timeout := int64(job.Timeout / time.Second)
	out := &runnerJobPayload{ID: j.ID, Token: sj.token, AllowGitFetch: true,
		JobInfo:     runnerJobInfo{Name: j.Name, Stage: j.Stage, ProjectID: j.ProjectID, ProjectName: lastSegment(p.ProjectPath)},
		GitInfo:     runnerGitInfo{RepoURL: job.Git.RepoURL, Ref: j.Ref, SHA: j.SHA, BeforeSHA: p.BeforeSHA, RefType: "branch"},
		RunnerInfo:  runnerTimeout{Timeout: timeout},
		Image:       spec.Image,
		Services:    spec.Services,
		Credentials: []struct{}{},
		Features:    runnerFeatures{TraceSections: true, FailureReasons: failureReasons},
	}
	if out.GitInfo.BeforeSHA == "" {
		out.GitInfo.BeforeSHA = strings.Repeat("0", 40)
	}
	// Every branch and tag: the job's commit is reachable from its ref,
	// and a retried job's older commit from the ref's history.
	out.GitInfo.Refspecs = []string{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"}
	if j.Tag {
		out.GitInfo.RefType = "tag"
	}
	for _, v := range job.Variables {
		out.Variables = append(out.Variables, runnerVariable{Key: v.Key, Value: v.Value, Public: v.Public, Masked: v.Masked})
	}
	for _, st := range job.Steps {
		step := runnerStep{Name: st.Name, Script: st.Script, Timeout: timeout, When: string(st.When), AllowFailure: st.AllowFailure}
		if st.Timeout > 0 {
			step.Timeout = int64(st.Timeout / time.Second)
		}
		if step.Script == nil {
			step.Script = []string{}
		}
		out.Steps = append(out.Steps, step)
	}
	if a := spec.Artifacts; a != nil {
		name, when := a.Name, a.When
		if name == "" {
			name = "artifacts"
		}
		if when == "" {
			when = pipeline.ArtifactsOnSuccess
		}
		paths := a.Paths
		if paths == nil {
			paths = []string{}
		}
		exclude := a.Exclude
		if exclude == nil {
			exclude = []string{}
		}
		if len(a.Paths) > 0 || a.Untracked || !hasKeptReports(a) {
			out.Artifacts = []runnerArtifacts{{Name: name, Untracked: a.Untracked, Paths: paths, Exclude: exclude, When: when,
				ArtifactType: "archive", ArtifactFormat: "zip", ExpireIn: a.ExpireIn}}
		}
		out.Artifacts = append(out.Artifacts, runnerReports(a)...)
	}
	// Every cache of a `cache:` list, each with its own when and
	// fallback keys.
	caches := spec.Caches
	if caches == nil && spec.Cache != nil {
		caches = []pipeline.Cache{*spec.Cache}
	}
	for _, c := range caches {
		paths := c.Paths
		if paths == nil {
			paths = []string{}
		}
		out.Cache = append(out.Cache, runnerCache{Key: c.Key, Untracked: c.Untracked, Policy: c.Policy, Paths: paths,
			When: cmp.Or(c.When, pipeline.ArtifactsOnSuccess), FallbackKeys: c.FallbackKeys})
	}
	deps, err := s.dependencyJobs(ctx, j, &spec)
	if err != nil {
		return nil, err
	}
	for _, d := range deps {
		// The runner downloads with the job's own token, valid while it
		// runs, for any job of its project.
		out.Dependencies = append(out.Dependencies, runnerDependency{ID: d.ID, Token: sj.token, Name: d.Name,
			ArtifactsFile: runnerArtifactsFile{Filename: d.Artifacts.Filename, Size: d.Artifacts.Size}})
	}
	if out.Services == nil {
		out.Services = []pipeline.Service{}
	}
	if out.Cache == nil {
		out.Cache = []runnerCache{}
	}
	if out.Dependencies == nil {
		out.Dependencies = []runnerDependency{}
	}
	return out, nil
}

func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// jobStatusForRunner is the Job-Status a runner is told: canceling for a
// job canceled in the store (the runner stops it gracefully and reports).
func jobStatusForRunner(j *Job) string {
	if j.Status == StatusCanceled {
		return "canceling"
	}
	return j.Status
}

// seen records a report from a job's runner: the first one starts the job
// for good (it is no longer re-queued), later ones are kept in memory. It
// answers false when the job was taken back from this runner before that
// first report could hold it (the start timeout re-queued it meanwhile):
// the runner must stop, for the job may be running elsewhere already.
func (s *Service) seen(ctx context.Context, j *Job) bool {
	now := s.now()
	ours := true
	if j.RunnerStartedAt == nil && j.Status == StatusRunning {
		err := s.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			cur, err := jobs.Get(tx, j.ID)
			if err != nil {
				return err
			}
			ours = cur.Status == StatusRunning && cur.RunnerTokenHash == j.RunnerTokenHash
			if !ours || cur.RunnerStartedAt != nil {
				return nil
			}
			cur.RunnerStartedAt = &now
			return jobs.Update(tx, cur)
		})
		if err != nil {
			s.log.Warn("recording a runner's first report", zap.Int64("job", j.ID), zap.Error(err))
		}
	}
	// A report of a runner the job was taken from is no word from the
	// runner that has it now.
	if ours {
		s.runnerSeen.Store(j.ID, now)
	}
	return ours
}

func (s *Service) traceLock(jobID int64) func() {
	mu := &s.traceLocks[jobID%int64(len(s.traceLocks))]
	mu.Lock()
	return mu.Unlock
}

// runnerTraceSlack is how far past MaxTraceBytes a runner's trace may go
// before its job fails. GitLab Runner caps a job's log itself, by default
// at the same 4 MiB: it writes up to its cap, then adds a notice ("Job's
// log exceeded limit ... Job execution will continue") and lets the job go
// on. Without room for that notice (and the runner's closing lines), every
// job that reached the runner's cap would fail here as
// trace_size_exceeded.
const runnerTraceSlack = 64 << 10

// appendTrace writes body at start of the trace: start 0 rewrites it (a
// runner resending all after a checksum mismatch), the current length
// appends, anything else is a gap. It returns the trace's length, and
// whether the body went past the trace limit, MaxTraceBytes and the
// runner's slack (the rest is dropped). The body goes to the blob in
// pieces of at most traceAppendChunk, each durable when written.
func (s *Service) appendTrace(ctx context.Context, jobID int64, start int64, body io.Reader) (int64, bool, error) {
	key := traceKey(jobID)
	size, err := blob.SizeOf(ctx, s.blobs, key)
	if err != nil {
		return 0, false, err
	}
	rewrite := false
	switch {
	case start == size:
	case start == 0:
		rewrite = true
	default:
		return size, false, errTraceGap
	}
	room := s.cfg.MaxTraceBytes + runnerTraceSlack - start
	lr := io.LimitReader(body, room)
	buf := make([]byte, min(room, traceAppendChunk))
	size = start
	for {
		n, rerr := io.ReadFull(lr, buf)
		if n > 0 || rewrite {
			var err error
			if rewrite {
				size, err = s.blobs.Put(ctx, key, bytes.NewReader(buf[:n]))
				rewrite = false
			} else {
				size, err = s.blobs.Append(ctx, key, size, buf[:n])
			}
			if oe := (*blob.OffsetError)(nil); errors.As(err, &oe) {
				// Another writer moved the trace meanwhile.
				return oe.Size, false, errTraceGap
			}
			if err != nil {
				return size, false, err
			}
			s.traceChanged(jobID) // the bytes are in the blob: a reader sees them
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF || len(buf) == 0 {
			break // the body's end, or no room left
		}
		if rerr != nil {
			return size, false, rerr
		}
	}
	// One byte more than the room says the body went past the limit.
	extra, _ := io.Copy(io.Discard, io.LimitReader(body, 1))
	return size, extra > 0, nil
}

// traceAppendChunk bounds what one request holds in memory of a trace
// chunk, and so the pieces an object store would keep.
const traceAppendChunk = 256 << 10

// traceMatches checks the runner's checksum and size of the trace against
// what was stored; a runner that sends neither is believed.
func (s *Service) traceMatches(ctx context.Context, jobID int64, sum string, size *int64) bool {
	if sum == "" && size == nil {
		return true
	}
	unlock := s.traceLock(jobID)
	defer unlock()
	f, err := s.blobs.Open(ctx, traceKey(jobID))
	if errors.Is(err, blob.ErrNotFound) {
		return (size == nil || *size == 0) && (sum == "" || sum == "crc32:00000000")
	}
	if err != nil {
		return false
	}
	defer f.Close()
	h := crc32.NewIEEE()
	n, err := io.Copy(h, f)
	if err != nil {
		return false
	}
	if size != nil && *size != n {
		return false
	}
	if sum != "" {
		algo, hexSum, ok := strings.Cut(sum, ":")
		if !ok || algo != "crc32" {
			return true // a checksum of a kind not known here
		}
		want, err := strconv.ParseUint(hexSum, 16, 32)
		if err != nil || uint32(want) != h.Sum32() {
			return false
		}
	}
	return true
}

// closeCanceled ends a canceled job's runner reports: its trace's size is
// recorded and its runner token dropped.
func (s *Service) closeCanceled(ctx context.Context, jobID int64) {
	size, _ := blob.SizeOf(ctx, s.blobs, traceKey(jobID))
	s.runnerSeen.Delete(jobID)
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		j, err := jobs.Get(tx, jobID)
		if err != nil || j.Status != StatusCanceled {
			return err
		}
		j.TraceBytes, j.RunnerTokenHash = size, ""
		return jobs.Update(tx, j)
	})
	if err != nil {
		s.log.Error("closing a canceled job", zap.Int64("job", jobID), zap.Error(err))
	}
}

// archiveName is the stored name of an uploaded archive: its base name,
// printable, or artifacts.zip.
func archiveName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == "" || len(name) > 255 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' || r == ';' }) {
		return "artifacts.zip"
	}
	return name
}
