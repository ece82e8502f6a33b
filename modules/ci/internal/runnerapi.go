package internal

// The runner API: what a real GitLab Runner calls (RUNNER-CONTRACT.md and
// GITLAB-FACTS section 11). It is a machine protocol authenticated by
// runner and job tokens, in bodies and headers a user's API call never
// carries (PRIVATE-TOKEN holds a runner's or a job's token), with raw trace
// bodies, chunked multipart uploads, and requests held open for long
// polling: raw handlers, not Huma operations.

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// maxRunnerJSON bounds the JSON bodies of the runner API (a job's state
// update carries no trace with today's runners).
const maxRunnerJSON = 1 << 20

func (s *Service) registerRunnerAPI(a *api.API) {
	p := api.Prefix
	a.Mount("runner-register", "POST "+p+"/runners", http.HandlerFunc(s.handleRegister))
	a.Mount("runner-verify", "POST "+p+"/runners/verify", http.HandlerFunc(s.handleVerify))
	a.Mount("runner-unregister", "DELETE "+p+"/runners", http.HandlerFunc(s.handleUnregister))
	a.Mount("runner-request-job", "POST "+p+"/jobs/request", http.HandlerFunc(s.handleRequestJob))
	a.Mount("runner-update-job", "PUT "+p+"/jobs/{job_id}", http.HandlerFunc(s.handleUpdateJob))
	a.Mount("runner-append-trace", "PATCH "+p+"/jobs/{job_id}/trace", http.HandlerFunc(s.handleTrace))
	a.Mount("runner-upload-artifacts", "POST "+p+"/jobs/{job_id}/artifacts", http.HandlerFunc(s.handleUploadArtifacts))
}

// flexTags is a tag_list: a JSON array or a comma-separated string.
type flexTags []string

func (t *flexTags) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*t = list
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return errors.New("tag_list is invalid")
	}
	*t = strings.Split(one, ",")
	return nil
}

// flexBool is a boolean sent as true/false or "true"/"false".
type flexBool struct{ v *bool }

func (f *flexBool) UnmarshalJSON(b []byte) error {
	var v bool
	if err := json.Unmarshal(b, &v); err == nil {
		f.v = &v
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		if v, err := strconv.ParseBool(str); err == nil {
			f.v = &v
			return nil
		}
	}
	return errors.New("is invalid")
}

// readJSON decodes a JSON body (bounded); a urlencoded or multipart form is
// turned into the same object, strings only.
func readJSON(r *http.Request, v any) *api.Error {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		r.Body = http.MaxBytesReader(nil, r.Body, maxRunnerJSON)
		if err := r.ParseMultipartForm(maxRunnerJSON); err != nil && !errors.Is(err, http.ErrNotMultipart) {
			return api.BadRequest("400 Bad request")
		}
		obj := map[string]any{}
		for k, vs := range r.Form {
			key := strings.TrimSuffix(k, "[]")
			if strings.HasSuffix(k, "[]") {
				obj[key] = vs
			} else if len(vs) > 0 {
				obj[key] = vs[0]
			}
		}
		b, _ := json.Marshal(obj)
		if err := json.Unmarshal(b, v); err != nil {
			return &api.Error{Status: http.StatusBadRequest, Err: "parameters are invalid"}
		}
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRunnerJSON+1))
	if err != nil {
		return api.BadRequest("400 Bad request")
	}
	if len(body) > maxRunnerJSON {
		return api.TooLarge()
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return api.Invalid("body")
	}
	return nil
}

// readTokenBody decodes a runner call's body into in and makes sure of its
// token: *token (a field of in), else the first of headers that is set. It
// answers the error itself and returns false then.
func (s *Service) readTokenBody(w http.ResponseWriter, r *http.Request, in any, token *string, headers ...string) bool {
	if e := readJSON(r, in); e != nil {
		s.http.api.WriteError(w, e)
		return false
	}
	if *token == "" {
		*token = firstHeader(r, headers...)
	}
	if *token == "" {
		s.http.api.WriteError(w, api.Missing("token"))
		return false
	}
	return true
}

type registerBody struct {
	Token       string     `json:"token"`
	Description string     `json:"description"`
	TagList     flexTags   `json:"tag_list"`
	RunUntagged flexBool   `json:"run_untagged"`
	Locked      flexBool   `json:"locked"`
	Active      flexBool   `json:"active"`
	Paused      flexBool   `json:"paused"`
	Info        runnerInfo `json:"info"`
}

func (s *Service) handleRegister(w http.ResponseWriter, r *http.Request) {
	var in registerBody
	if !s.readTokenBody(w, r, &in, &in.Token) {
		return
	}
	if len(in.Description) > maxRunnerDescription {
		s.http.api.WriteError(w, api.Validation(map[string][]string{"description": {fmt.Sprintf("is too long (maximum is %d characters)", maxRunnerDescription)}}))
		return
	}
	// Later runners (gitlab-runner 17) send paused instead of active;
	// given, it wins.
	active := in.Active.v
	if in.Paused.v != nil {
		active = new(bool)
		*active = !*in.Paused.v
	}
	runner, token, err := s.register(r.Context(), registration{Token: in.Token, Description: in.Description, Tags: in.TagList,
		RunUntagged: in.RunUntagged.v, Locked: in.Locked.v, Active: active, Info: in.Info})
	var badTags *invalidTagsError
	switch {
	case errors.Is(err, errRunnerForbidden):
		s.http.api.WriteError(w, api.Forbidden(""))
	case errors.Is(err, errRunnerTagsNeeded):
		s.http.api.WriteError(w, api.Validation(map[string][]string{"tags_list": {"can not be empty when runner is not allowed to pick untagged jobs"}}))
	case errors.As(err, &badTags):
		s.http.api.WriteError(w, api.Validation(map[string][]string{"tags_list": {badTags.reason}}))
	case err != nil:
		s.internalError(w, "registering a runner", err)
	default:
		api.WriteJSON(w, http.StatusCreated, map[string]any{"id": runner.ID, "token": token})
	}
}

func (s *Service) internalError(w http.ResponseWriter, what string, err error) {
	s.log.Error(what, zap.Error(err))
	s.http.api.WriteError(w, api.Internal())
}

type tokenBody struct {
	Token string `json:"token"`
}

func (s *Service) handleVerify(w http.ResponseWriter, r *http.Request) {
	var in tokenBody
	if !s.readTokenBody(w, r, &in, &in.Token) {
		return
	}
	if _, err := s.runnerByToken(r.Context(), in.Token); errors.Is(err, errRunnerForbidden) {
		s.http.api.WriteError(w, api.Forbidden(""))
		return
	} else if err != nil {
		s.internalError(w, "verifying a runner", err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Service) handleUnregister(w http.ResponseWriter, r *http.Request) {
	var in tokenBody
	if !s.readTokenBody(w, r, &in, &in.Token) {
		return
	}
	switch err := s.unregister(r.Context(), in.Token); {
	case errors.Is(err, errRunnerForbidden), errors.Is(err, errRunnerNotFound):
		s.http.api.WriteError(w, api.Forbidden(""))
	case err != nil:
		s.internalError(w, "unregistering a runner", err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// requestBody is what POST /jobs/request reads; the runner's last_update
// is not among it, for every request wakes the scheduler (see below).
type requestBody struct {
	Token string      `json:"token"`
	Info  *runnerInfo `json:"info"`
}

// handleRequestJob is POST /jobs/request: a job for the runner now, or as
// soon as one it may run becomes pending, within the poll timeout (204).
func (s *Service) handleRequestJob(w http.ResponseWriter, r *http.Request) {
	var in requestBody
	if !s.readTokenBody(w, r, &in, &in.Token, "RUNNER-TOKEN", "PRIVATE-TOKEN") {
		return
	}
	ctx := r.Context()
	runner, err := s.runnerByToken(ctx, in.Token)
	if errors.Is(err, errRunnerForbidden) {
		s.http.api.WriteError(w, api.Forbidden(""))
		return
	} else if err != nil {
		s.internalError(w, "authenticating a runner", err)
		return
	}
	s.touchRunner(ctx, runner, in.Info)
	q := s.runnerQueue
	if s.server.Ready() {
		q.served.Store(true)
	}
	noJob := func() {
		w.Header().Set("X-GitLab-Last-Update", q.lastUpdate())
		w.WriteHeader(http.StatusNoContent)
	}
	if !runner.Active {
		noJob()
		return
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
				if ctx.Err() == nil {
					noJob()
				}
				return
			}
			got = <-wt.ch // taken meanwhile: its outcome is on its way
		}
		if got == nil {
			// The assignment did not hold (the job went meanwhile): wait
			// again for the time left, if any.
			if ctx.Err() != nil {
				return
			}
			if expired {
				noJob()
				return
			}
			select {
			case <-timer.C:
				noJob()
				return
			case <-q.draining:
				noJob()
				return
			default:
			}
			// The runner as it is now: removed or paused, it waits no more.
			cur, err := s.loadRunner(ctx, runner.ID)
			if err != nil || !cur.Active {
				noJob()
				return
			}
			runner = cur
			continue
		}
		if ctx.Err() != nil {
			// The runner went while its job was being assigned.
			s.requeue(context.WithoutCancel(ctx), got.job.ID)
			return
		}
		payload, err := s.runnerPayload(ctx, got)
		if err != nil {
			s.failSystem(got.job, "the job could not be prepared: "+err.Error())
			continue
		}
		w.Header().Set("X-GitLab-Last-Update", q.lastUpdate())
		api.WriteJSON(w, http.StatusCreated, payload)
		return
	}
}

// wakeScheduler nudges the scheduler without moving the runners' version.
func (s *Service) wakeScheduler() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// jobToken is the job token of a runner's call: a header, else the
// token parameter.
func jobToken(r *http.Request, headers ...string) string {
	if v := firstHeader(r, headers...); v != "" {
		return v
	}
	return r.URL.Query().Get("token")
}

func firstHeader(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// sharedRunnersEnabled says whether a project takes shared runners.
func (s *Service) sharedRunnersEnabled(ctx context.Context, projectID uint64) bool {
	info, err := s.access.ResolveID(auth.WithPrincipal(ctx, auth.System()), int64(projectID))
	return err == nil && info.Features.SharedRunnersEnabled
}

// requeue puts a job handed to a runner that never started it back in the
// queue, as it was before.
func (s *Service) requeue(ctx context.Context, jobID uint64) {
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
		s.log.Error("queueing a job again", zap.Uint64("job", jobID), zap.Error(err))
	}
	s.nudge()
}

// The job payload of POST /jobs/request (RUNNER-CONTRACT.md).
type (
	runnerJobPayload struct {
		ID            uint64             `json:"id"`
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
		ProjectID   uint64 `json:"project_id"`
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
	}
	runnerDependency struct {
		ID            uint64            `json:"id"`
		Token         string            `json:"token"`
		Name          string            `json:"name"`
		ArtifactsFile ArtifactsFileView `json:"artifacts_file"`
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
		step := runnerStep{Name: string(st.Name), Script: st.Script, Timeout: timeout, When: string(st.When), AllowFailure: st.AllowFailure}
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
		out.Artifacts = []runnerArtifacts{{Name: name, Untracked: a.Untracked, Paths: paths, Exclude: []string{}, When: when,
			ArtifactType: "archive", ArtifactFormat: "zip", ExpireIn: a.ExpireIn}}
	}
	if c := spec.Cache; c != nil {
		paths := c.Paths
		if paths == nil {
			paths = []string{}
		}
		out.Cache = []runnerCache{{Key: c.Key, Untracked: c.Untracked, Policy: c.Policy, Paths: paths, When: "on_success"}}
	}
	deps, err := s.dependencyJobs(ctx, j, &spec)
	if err != nil {
		return nil, err
	}
	for _, d := range deps {
		// The runner downloads with the job's own token, valid while it
		// runs, for any job of its project.
		out.Dependencies = append(out.Dependencies, runnerDependency{ID: d.ID, Token: sj.token, Name: d.Name,
			ArtifactsFile: ArtifactsFileView{Filename: d.Artifacts.Filename, Size: d.Artifacts.Size}})
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

// runnerJob authenticates a runner's call on a job: the job of the path,
// with the token the runner was given for it. It answers the error itself
// and returns nil then.
func (s *Service) runnerJob(w http.ResponseWriter, r *http.Request, token string) *Job {
	id, err := strconv.ParseUint(r.PathValue("job_id"), 10, 64)
	if err != nil {
		s.http.api.WriteError(w, api.NotFound(""))
		return nil
	}
	var j *Job
	err = s.db.View(r.Context(), func(tx *store.Tx) error {
		var err error
		j, err = jobs.Get(tx, id)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		s.http.api.WriteError(w, api.NotFound(""))
		return nil
	}
	if err != nil {
		s.internalError(w, "reading a job", err)
		return nil
	}
	if token == "" || j.RunnerTokenHash == "" ||
		subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(j.RunnerTokenHash)) != 1 {
		s.http.api.WriteError(w, api.Forbidden(""))
		return nil
	}
	return j
}

// jobStatusForRunner is the Job-Status a runner is told: canceling for a
// job canceled in the store (the runner stops it gracefully and reports).
func jobStatusForRunner(j *Job) string {
	if j.Status == StatusCanceled {
		return "canceling"
	}
	return j.Status
}

// notRunning answers a report on a job that no longer runs.
func (s *Service) notRunning(w http.ResponseWriter, j *Job) {
	w.Header().Set("Job-Status", j.Status)
	s.http.api.WriteError(w, api.Forbidden("Job is not running"))
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
			s.log.Warn("recording a runner's first report", zap.Uint64("job", j.ID), zap.Error(err))
		}
	}
	// A report of a runner the job was taken from is no word from the
	// runner that has it now.
	if ours {
		s.runnerSeen.Store(j.ID, now)
	}
	return ours
}

// lost answers a runner whose job was taken back before its first report.
func (s *Service) lost(w http.ResponseWriter, j *Job) {
	s.log.Info("a runner reported on a job re-queued before its first report; told to stop", zap.Uint64("job", j.ID))
	w.Header().Set("Job-Status", StatusPending)
	s.http.api.WriteError(w, api.Forbidden("Job is not running"))
}

func (s *Service) traceLock(jobID uint64) func() {
	mu := &s.traceLocks[jobID%uint64(len(s.traceLocks))]
	mu.Lock()
	return mu.Unlock
}

func (s *Service) traceInterval() string {
	return strconv.Itoa(int(s.cfg.RunnerTraceInterval / time.Second))
}

// parseContentRange reads "<start>-<end>" (a "bytes " prefix and a
// "/<total>" suffix allowed); only start matters.
func parseContentRange(v string) (int64, bool) {
	v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "bytes"))
	v, _, _ = strings.Cut(v, "/")
	startText, endText, ok := strings.Cut(strings.TrimSpace(v), "-")
	if !ok {
		return 0, false
	}
	start, err := strconv.ParseInt(startText, 10, 64)
	if err != nil || start < 0 {
		return 0, false
	}
	if end, err := strconv.ParseInt(endText, 10, 64); err != nil || end < start-1 {
		return 0, false
	}
	return start, true
}

// handleTrace is PATCH /jobs/:id/trace: the next bytes of the trace.
func (s *Service) handleTrace(w http.ResponseWriter, r *http.Request) {
	j := s.runnerJob(w, r, jobToken(r, "JOB-TOKEN", "PRIVATE-TOKEN"))
	if j == nil {
		return
	}
	if j.Status != StatusRunning && j.Status != StatusCanceled {
		s.notRunning(w, j)
		return
	}
	cr := r.Header.Get("Content-Range")
	if cr == "" {
		s.http.api.WriteError(w, api.BadRequest("400 Missing header Content-Range"))
		return
	}
	start, ok := parseContentRange(cr)
	if !ok {
		s.http.api.WriteError(w, api.BadRequest("400 Invalid header Content-Range"))
		return
	}
	if !s.seen(r.Context(), j) {
		s.lost(w, j)
		return
	}
	unlock := s.traceLock(j.ID)
	size, tooLarge, err := s.appendTrace(j.ID, start, r.Body)
	unlock()
	w.Header().Set("Job-Status", jobStatusForRunner(j))
	w.Header().Set("X-GitLab-Trace-Update-Interval", s.traceInterval())
	switch {
	case errors.Is(err, errTraceGap):
		w.Header().Set("Range", "0-"+strconv.FormatInt(size, 10))
		s.http.api.WriteError(w, &api.Error{Status: http.StatusRequestedRangeNotSatisfiable, Message: "416 Range Not Satisfiable"})
		return
	case err != nil:
		s.internalError(w, "appending a trace", err)
		return
	}
	if tooLarge && j.Status == StatusRunning {
		s.appendTraceLine(j.ID, fmt.Sprintf("ERROR: Job failed: the trace is larger than %d bytes", s.cfg.MaxTraceBytes))
		s.complete(context.WithoutCancel(r.Context()), j.ID, StatusFailed, "trace_size_exceeded", nil, nil)
		w.Header().Set("Job-Status", StatusFailed)
		s.http.api.WriteError(w, api.Forbidden("Job is not running"))
		return
	}
	w.Header().Set("Range", "0-"+strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusAccepted)
}

// runnerTraceSlack is how far past MaxTraceBytes a runner's trace may go
// before its job fails. GitLab Runner caps a job's log itself, by default
// at the same 4 MiB: it writes up to its cap, then adds a notice ("Job's
// log exceeded limit ... Job execution will continue") and lets the job go
// on. Without room for that notice (and the runner's closing lines), every
// job that reached the runner's cap would fail here as
// trace_size_exceeded.
const runnerTraceSlack = 64 << 10

// errTraceGap: a chunk that does not start where the trace ends.
var errTraceGap = errors.New("ci: trace chunk out of place")

// appendTrace writes body at start of the trace: start 0 rewrites it (a
// runner resending all after a checksum mismatch), the current length
// appends, anything else is a gap. It returns the trace's length, and
// whether the body went past the trace limit, MaxTraceBytes and the
// runner's slack (the rest is dropped).
func (s *Service) appendTrace(jobID uint64, start int64, body io.Reader) (int64, bool, error) {
	path := s.tracePath(jobID)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return 0, false, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o640)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	size := st.Size()
	switch {
	case start == size:
	case start == 0:
		if err := f.Truncate(0); err != nil {
			return 0, false, err
		}
		size = 0
	default:
		return size, false, errTraceGap
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		return 0, false, err
	}
	room := s.cfg.MaxTraceBytes + runnerTraceSlack - size
	n, err := io.Copy(f, io.LimitReader(body, room))
	size += n
	if err != nil {
		return size, false, err
	}
	// One byte more than the room says the body went past the limit.
	extra, _ := io.Copy(io.Discard, io.LimitReader(body, 1))
	return size, extra > 0, nil
}

type updateBody struct {
	Token         string `json:"token"`
	State         string `json:"state"`
	FailureReason string `json:"failure_reason"`
	ExitCode      *int   `json:"exit_code"`
	Checksum      string `json:"checksum"`
	Output        *struct {
		Checksum string `json:"checksum"`
		Bytesize *int64 `json:"bytesize"`
	} `json:"output"`
}

// handleUpdateJob is PUT /jobs/:id: a keep-alive (running) or the job's
// end (success, failed).
func (s *Service) handleUpdateJob(w http.ResponseWriter, r *http.Request) {
	var in updateBody
	if e := readJSON(r, &in); e != nil {
		s.http.api.WriteError(w, e)
		return
	}
	token := in.Token
	if token == "" {
		token = firstHeader(r, "JOB-TOKEN", "PRIVATE-TOKEN")
	}
	j := s.runnerJob(w, r, token)
	if j == nil {
		return
	}
	switch in.State {
	case StatusRunning, StatusSuccess, StatusFailed:
	case "":
		s.http.api.WriteError(w, api.Missing("state"))
		return
	default:
		s.http.api.WriteError(w, api.NotValidValue("state"))
		return
	}
	w.Header().Set("X-GitLab-Trace-Update-Interval", s.traceInterval())
	ctx := context.WithoutCancel(r.Context())
	switch {
	case j.Status == StatusCanceled && in.State == StatusRunning:
		_ = s.seen(ctx, j) // a report: the runner's silence counts from here (a canceled job is never taken back)
		w.Header().Set("Job-Status", "canceling")
		w.WriteHeader(http.StatusOK)
		return
	case j.Status == StatusCanceled:
		// The runner's last word on a job canceled here: its trace is
		// complete now, and its token is done with.
		s.closeCanceled(ctx, j.ID)
		w.Header().Set("Job-Status", StatusCanceled)
		w.WriteHeader(http.StatusOK)
		return
	case j.Status != StatusRunning:
		s.notRunning(w, j)
		return
	}
	if !s.seen(ctx, j) {
		s.lost(w, j)
		return
	}
	if in.State == StatusRunning {
		w.Header().Set("Job-Status", StatusRunning)
		w.WriteHeader(http.StatusOK)
		return
	}
	if !s.traceMatches(j.ID, in) {
		w.Header().Set("Job-Status", StatusRunning)
		s.http.api.WriteError(w, &api.Error{Status: http.StatusPreconditionFailed, Message: "412 Precondition Failed - trace validation failed"})
		return
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
		coverage = s.coverageOf(j.ID, spec.Coverage)
	}
	s.completeWith(ctx, j.ID, in.State, reason, nil, coverage, func(cur *Job) { cur.ExitCode = in.ExitCode })
	w.Header().Set("Job-Status", in.State)
	w.WriteHeader(http.StatusOK)
}

// traceMatches checks the runner's checksum and size of the trace against
// what was stored; a runner that sends neither is believed.
func (s *Service) traceMatches(jobID uint64, in updateBody) bool {
	sum := in.Checksum
	var size *int64
	if in.Output != nil {
		if in.Output.Checksum != "" {
			sum = in.Output.Checksum
		}
		size = in.Output.Bytesize
	}
	if sum == "" && size == nil {
		return true
	}
	unlock := s.traceLock(jobID)
	defer unlock()
	f, err := os.Open(s.tracePath(jobID))
	if errors.Is(err, os.ErrNotExist) {
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
func (s *Service) closeCanceled(ctx context.Context, jobID uint64) {
	var size int64
	if st, err := os.Stat(s.tracePath(jobID)); err == nil {
		size = st.Size()
	}
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
		s.log.Error("closing a canceled job", zap.Uint64("job", jobID), zap.Error(err))
	}
}

// handleUploadArtifacts is POST /jobs/:id/artifacts: the job's archive as
// the multipart field "file", streamed (chunked) into the data directory.
func (s *Service) handleUploadArtifacts(w http.ResponseWriter, r *http.Request) {
	j := s.runnerJob(w, r, jobToken(r, "JOB-TOKEN"))
	if j == nil {
		return
	}
	if j.Status != StatusRunning {
		s.notRunning(w, j)
		return
	}
	if !s.seen(r.Context(), j) {
		s.lost(w, j)
		return
	}
	max := s.cfg.MaxArtifactsBytes
	if r.ContentLength > max+64<<10 {
		w.Header().Set("Connection", "close")
		s.http.api.WriteError(w, api.TooLarge())
		return
	}
	q := r.URL.Query()
	expireIn, artifactType := q.Get("expire_in"), q.Get("artifact_type")
	mr, err := r.MultipartReader()
	if err != nil {
		s.http.api.WriteError(w, api.BadRequest(`400 (Bad request) "file" not given`))
		return
	}
	var tmpPath, filename string
	var size int64
	defer func() {
		if tmpPath != "" {
			_ = os.Remove(tmpPath)
		}
	}()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.http.api.WriteError(w, api.BadRequest("400 Bad request - malformed multipart body"))
			return
		}
		switch part.FormName() {
		case "file":
			if tmpPath != "" {
				break // one archive per upload
			}
			filename = archiveName(part.FileName())
			tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "upload-*")
			if err != nil {
				s.internalError(w, "storing artifacts", err)
				return
			}
			tmpPath = tmp.Name()
			size, err = io.Copy(tmp, io.LimitReader(part, max+1))
			if err == nil {
				err = tmp.Sync()
			}
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				s.http.api.WriteError(w, api.BadRequest("400 Bad request - the upload was cut short"))
				return
			}
			if size > max {
				w.Header().Set("Connection", "close")
				s.http.api.WriteError(w, api.TooLarge())
				return
			}
		case "expire_in", "artifact_type":
			b, _ := io.ReadAll(io.LimitReader(part, 256))
			if part.FormName() == "expire_in" {
				expireIn = string(b)
			} else {
				artifactType = string(b)
			}
		}
		part.Close()
	}
	if tmpPath == "" {
		s.http.api.WriteError(w, api.BadRequest(`400 (Bad request) "file" not given`))
		return
	}
	var expireAt *time.Time
	if expireIn != "" {
		d, never, err := pipeline.ParseExpireIn(expireIn)
		if err != nil {
			s.http.api.WriteError(w, api.Invalid("expire_in"))
			return
		}
		if !never {
			at := s.now().Add(d)
			expireAt = &at
		}
	}
	if artifactType != "" && artifactType != "archive" {
		// Reports and metadata of later GitLab versions: accepted, not kept.
		w.WriteHeader(http.StatusCreated)
		return
	}
	dst := s.artifactsPath(j.ID)
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		s.internalError(w, "storing artifacts", err)
		return
	}
	// The file first: a row never names an archive that is not there.
	if err := os.Rename(tmpPath, dst); err != nil {
		s.internalError(w, "storing artifacts", err)
		return
	}
	tmpPath = ""
	var saved *Job
	var p *Pipeline
	err = s.db.Update(r.Context(), func(tx *store.Tx) error {
		cur, err := jobs.Get(tx, j.ID)
		if err != nil {
			return err
		}
		if cur.Status != StatusRunning {
			return errJobNotRunning
		}
		cur.Artifacts = &Artifacts{Filename: filename, Size: size, ExpireAt: expireAt}
		if err := jobs.Update(tx, cur); err != nil {
			return err
		}
		saved = cur
		p, err = pipelines.Get(tx, cur.PipelineID)
		return err
	})
	if errors.Is(err, errJobNotRunning) {
		_ = os.Remove(dst)
		s.notRunning(w, j)
		return
	}
	if err != nil {
		s.internalError(w, "storing artifacts", err)
		return
	}
	v := s.jobView(r.Context(), jobRecord(saved, p), true)
	api.WriteJSON(w, http.StatusCreated, v)
}

var errJobNotRunning = errors.New("ci: job is not running")

// archiveName is the stored name of an uploaded archive: its base name,
// printable, or artifacts.zip.
func archiveName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == "" || len(name) > 255 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' || r == ';' }) {
		return "artifacts.zip"
	}
	return name
}
