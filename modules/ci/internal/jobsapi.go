package internal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// ProjectPath is a project's :id.
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

type jobPath struct {
	ProjectPath
	JobID uint64 `path:"job_id"`
}

type listJobsInput struct {
	ProjectPath
	api.PageParams
	Scope []string `query:"scope" doc:"created, pending, running, failed, success, canceled, skipped or manual; one or several (scope[]=...)"`
}

type listPipelineJobsInput struct {
	ProjectPath
	api.PageParams
	Scope      []string `query:"scope" doc:"created, pending, running, failed, success, canceled, skipped or manual; one or several (scope[]=...)"`
	PipelineID uint64   `path:"pipeline_id"`
}

type jobsOutput struct {
	api.PageHeaders
	Body []JobView
}

type jobOutput struct {
	Body *JobView
}

type jobControlOutput struct {
	Body *JobControlView
}

var jobScopes = map[string]bool{StatusCreated: true, StatusPending: true, StatusRunning: true, StatusFailed: true,
	StatusSuccess: true, StatusCanceled: true, StatusSkipped: true, StatusManual: true}

// scopeFilter checks scope values; nil means every job.
func scopeFilter(scope []string) (map[string]bool, error) {
	if len(scope) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, s := range scope {
		if !jobScopes[s] {
			return nil, api.BadRequest("Scope contains invalid value(s)")
		}
		want[s] = true
	}
	return want, nil
}

// listJobs answers GET /projects/:id/jobs and a pipeline's jobs, newest
// first.
func (s *Service) listJobs(ctx context.Context, projectRef string, pipelineID uint64, page api.PageParams, scope []string) (*jobsOutput, error) {
	info, err := s.access.Require(ctx, projectRef, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	want, err := scopeFilter(scope)
	if err != nil {
		return nil, err
	}
	var list []*Job
	var owners map[uint64]*Pipeline
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var ids []uint64
		if pipelineID != 0 {
			if _, err := pipelineIn(tx, info.ID, pipelineID); err != nil {
				return err
			}
			ids, err = jobs.IDsBy(tx, "pipeline", u64(pipelineID))
		} else {
			ids, err = jobs.IDsBy(tx, "project", u64(uint64(info.ID)))
		}
		if err != nil {
			return err
		}
		for i := len(ids) - 1; i >= 0; i-- {
			j, err := jobs.Get(tx, ids[i])
			if err != nil {
				return err
			}
			if want == nil || want[j.Status] {
				list = append(list, j)
			}
		}
		owners, err = pipelinesOf(tx, api.Window(list, page))
		return err
	})
	if err != nil {
		return nil, err
	}
	views := make([]JobView, 0, len(list))
	for _, j := range api.Window(list, page) {
		views = append(views, s.jobView(ctx, j, owners[j.PipelineID], true))
	}
	return &jobsOutput{PageHeaders: api.Paginate(ctx, page, len(list)), Body: views}, nil
}

// loadJob checks the caller may do a on the project and loads the job with
// its pipeline.
func (s *Service) loadJob(ctx context.Context, in jobPath, a projects.Action) (projects.ProjectInfo, *Job, *Pipeline, error) {
	info, err := s.access.Require(ctx, in.ID, a)
	if err != nil {
		return info, nil, nil, err
	}
	var j *Job
	var p *Pipeline
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if j, err = jobIn(tx, info.ID, in.JobID); err != nil {
			return err
		}
		p, err = pipelines.Get(tx, j.PipelineID)
		return err
	})
	return info, j, p, err
}

func (s *Service) getJob(ctx context.Context, in *jobPath) (*jobOutput, error) {
	_, j, p, err := s.loadJob(ctx, *in, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	v := s.jobView(ctx, j, p, true)
	return &jobOutput{Body: &v}, nil
}

// fileOutput streams a file with the headers GitLab sends.
type fileOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentLength      string `header:"Content-Length"`
	ContentDisposition string `header:"Content-Disposition"`
	TransferEncoding   string `header:"Content-Transfer-Encoding"`
	NoSniff            string `header:"X-Content-Type-Options"`
	Body               func(huma.Context)
}

// serveFile opens path and streams it; a missing file is notFound.
func serveFile(path string, notFound error, out fileOutput) (*fileOutput, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	// The size as it is now: a trace that grows while it is sent is sent
	// up to here (the next request sees the rest).
	size := st.Size()
	out.ContentLength = strconv.FormatInt(size, 10)
	out.NoSniff = "nosniff"
	out.Body = func(ctx huma.Context) {
		defer f.Close()
		_, _ = io.Copy(ctx.BodyWriter(), io.LimitReader(f, size))
	}
	return &out, nil
}

func (s *Service) artifacts(ctx context.Context, in *jobPath) (*fileOutput, error) {
	_, j, _, err := s.loadJob(ctx, *in, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	return s.serveArtifacts(j)
}

func (s *Service) serveArtifacts(j *Job) (*fileOutput, error) {
	if j.Artifacts == nil {
		return nil, api.NotFound("")
	}
	return serveFile(s.artifactsPath(j.ID), api.NotFound(""), fileOutput{ContentType: "application/octet-stream",
		ContentDisposition: "attachment; filename=" + j.Artifacts.Filename, TransferEncoding: "binary"})
}

type artifactsByRefInput struct {
	ProjectPath
	RefName string `path:"ref_name"`
	Job     string `query:"job" required:"true" doc:"The job's name"`
}

// artifactsByRef serves the archive of the latest successful job of that
// name on that ref.
func (s *Service) artifactsByRef(ctx context.Context, in *artifactsByRefInput) (*fileOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	if in.Job == "" {
		return nil, api.Missing("job")
	}
	var found *Job
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := jobs.IDsBy(tx, "ref_name", u64(uint64(info.ID))+"/"+in.RefName+"\x00"+in.Job)
		if err != nil || len(ids) == 0 {
			return err
		}
		found, err = jobs.Get(tx, ids[len(ids)-1])
		return err
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, api.NotFound("")
	}
	return s.serveArtifacts(found)
}

func (s *Service) trace(ctx context.Context, in *jobPath) (*fileOutput, error) {
	_, j, _, err := s.loadJob(ctx, *in, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	if j.ErasedAt != nil {
		return nil, api.NotFound("")
	}
	return serveFile(s.tracePath(j.ID), api.NotFound(""), fileOutput{ContentType: "text/plain",
		ContentDisposition: fmt.Sprintf("infile; filename=%q", strconv.FormatUint(j.ID, 10)+".log")})
}

// mayControlRef is GitLab's rule for acting on the jobs and pipelines of
// a protected branch (play, retry, cancel, keep, erase, run a pipeline):
// the caller must be allowed to push or merge to it, as a Developer is to
// any other branch. A job of a protected branch gets the protected
// variables (a production deploy's credentials), and a job played or
// retried runs as whoever did it. Tags are never protected here (their
// jobs get no protected variables, see handover).
func (s *Service) mayControlRef(ctx context.Context, projectID int64, ref string, tag bool) error {
	if tag {
		return nil
	}
	ok, err := s.merges.MayMerge(ctx, projectID, ref)
	if err != nil {
		return err
	}
	if !ok {
		return errProtectedRef
	}
	return nil
}

// eraser says who may erase jobs: Masters, and the job's own user (who
// pushed, played or retried it), as in GitLab; other Developers may not
// destroy someone else's log and artifacts.
func eraser(ctx context.Context, info projects.ProjectInfo, j *Job) error {
	if info.Level >= projects.Master || (j.UserID != 0 && j.UserID == auth.FromContext(ctx).UserID()) {
		return nil
	}
	return api.Forbidden("")
}

// control runs one of the job operations (cancel, retry, erase, keep,
// play) in a transaction and answers the job it leaves. Each needs
// Developer and the right to push or merge to the job's ref when it is
// protected (mayControlRef); allow, when given, adds the operation's own
// rule.
func (s *Service) control(ctx context.Context, in jobPath, allow func(context.Context, projects.ProjectInfo, *Job) error,
	op func(tx *store.Tx, j *Job) (*Job, error)) (*jobControlOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	// Checked before the write transaction (the protection is read from
	// the repository module's store): a job's ref and user, which the
	// checks read, never change.
	var before *Job
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		before, err = jobIn(tx, info.ID, in.JobID)
		return err
	}); err != nil {
		return nil, err
	}
	if err := s.mayControlRef(ctx, info.ID, before.Ref, before.Tag); err != nil {
		return nil, err
	}
	if allow != nil {
		if err := allow(ctx, info, before); err != nil {
			return nil, err
		}
	}
	var out *Job
	var p *Pipeline
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		j, err := jobIn(tx, info.ID, in.JobID)
		if err != nil {
			return err
		}
		if out, err = op(tx, j); err != nil {
			return err
		}
		p, err = pipelines.Get(tx, out.PipelineID)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.nudge()
	v := JobControlView{JobView: s.jobView(ctx, out, p, false)}
	return &jobControlOutput{Body: &v}, nil
}

func (s *Service) cancelJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	return s.control(ctx, *in, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if !active(j.Status) {
			return j, nil // nothing to stop: the job as it is
		}
		return j, s.cancel(tx, j)
	})
}

func (s *Service) retryJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	pr := auth.FromContext(ctx)
	return s.control(ctx, *in, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if !retryable(j) {
			return nil, api.Forbidden("Job is not retryable")
		}
		return s.retry(tx, j, pr.UserID())
	})
}

func (s *Service) eraseJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	pr := auth.FromContext(ctx)
	return s.control(ctx, *in, eraser, func(tx *store.Tx, j *Job) (*Job, error) {
		if !finished(j.Status) || j.ErasedAt != nil || (j.Artifacts == nil && j.TraceBytes == 0) {
			return nil, api.Forbidden("Job is not erasable!")
		}
		now := s.now()
		j.ErasedAt, j.ErasedBy, j.Artifacts, j.TraceBytes = &now, pr.UserID(), nil, 0
		// The files go once the row says so, outside the group commit's
		// leader that runs commit hooks.
		if err := jobs.Update(tx, j); err != nil {
			return nil, err
		}
		id := j.ID
		tx.OnCommit(func() {
			go func() {
				_ = os.Remove(s.artifactsPath(id))
				_ = os.Remove(s.tracePath(id))
			}()
		})
		return j, nil
	})
}

func (s *Service) keepArtifacts(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	return s.control(ctx, *in, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if j.Artifacts == nil {
			return nil, api.NotFound("")
		}
		j.Artifacts.Kept, j.Artifacts.ExpireAt = true, nil
		return j, jobs.Update(tx, j)
	})
}

func (s *Service) playJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	pr := auth.FromContext(ctx)
	out, err := s.control(ctx, *in, nil, func(tx *store.Tx, j *Job) (*Job, error) {
		if j.Status != StatusManual {
			// GitLab 9.x answers its quirky 400 here.
			return nil, &api.Error{Status: http.StatusBadRequest, Message: `400 (Bad request) "Unplayable Job" not given`}
		}
		return j, s.play(tx, j, pr.UserID())
	})
	if err != nil {
		return nil, err
	}
	// The spec's play answer shows the job as "started"; GET shows its real
	// status (pending, then running).
	out.Body.Status = "started"
	return out, nil
}

// retryable: a finished job that ran (or could run) a script.
func retryable(j *Job) bool {
	return slices.Contains([]string{StatusSuccess, StatusFailed, StatusCanceled}, j.Status) && !j.Retried
}

func (s *Service) registerJobs(a *api.API) {
	tags := []string{"jobs"}
	api.Register(a, api.Op{ID: "list-project-jobs", Method: http.MethodGet, Path: "/projects/{id}/jobs", Tags: tags,
		Summary: "A project's jobs, newest first", Access: api.Public},
		func(ctx context.Context, in *listJobsInput) (*jobsOutput, error) {
			return s.listJobs(ctx, in.ID, 0, in.PageParams, in.Scope)
		})
	for _, spelling := range []string{"pipelines", "pipeline"} {
		api.Register(a, api.Op{ID: "list-" + spelling + "-jobs", Method: http.MethodGet, Path: "/projects/{id}/" + spelling + "/{pipeline_id}/jobs", Tags: tags,
			Summary: "A pipeline's jobs, newest first", Access: api.Public},
			func(ctx context.Context, in *listPipelineJobsInput) (*jobsOutput, error) {
				return s.listJobs(ctx, in.ID, in.PipelineID, in.PageParams, in.Scope)
			})
	}
	api.Register(a, api.Op{ID: "get-job", Method: http.MethodGet, Path: "/projects/{id}/jobs/{job_id}", Tags: tags,
		Summary: "A single job", Access: api.Public}, s.getJob)
	api.Register(a, api.Op{ID: "get-job-artifacts", Method: http.MethodGet, Path: "/projects/{id}/jobs/{job_id}/artifacts", Tags: tags,
		Summary: "Download a job's artifacts archive", Access: api.Public}, s.artifacts)
	api.Register(a, api.Op{ID: "get-job-artifacts-by-ref", Method: http.MethodGet, Path: "/projects/{id}/jobs/artifacts/{ref_name}/download", Tags: tags,
		Summary: "Download the artifacts of the latest successful job of a name on a ref", Access: api.Public}, s.artifactsByRef)
	api.Register(a, api.Op{ID: "get-job-trace", Method: http.MethodGet, Path: "/projects/{id}/jobs/{job_id}/trace", Tags: tags,
		Summary: "A job's log, live while it runs", Access: api.Public}, s.trace)
	api.Register(a, api.Op{ID: "cancel-job", Method: http.MethodPost, Path: "/projects/{id}/jobs/{job_id}/cancel", Tags: tags,
		Summary: "Cancel a job", Access: api.SignedIn}, s.cancelJob)
	api.Register(a, api.Op{ID: "retry-job", Method: http.MethodPost, Path: "/projects/{id}/jobs/{job_id}/retry", Tags: tags,
		Summary: "Retry a job (a new job)", Access: api.SignedIn}, s.retryJob)
	api.Register(a, api.Op{ID: "erase-job", Method: http.MethodPost, Path: "/projects/{id}/jobs/{job_id}/erase", Tags: tags,
		Summary: "Erase a job's trace and artifacts", Access: api.SignedIn}, s.eraseJob)
	api.Register(a, api.Op{ID: "keep-job-artifacts", Method: http.MethodPost, Path: "/projects/{id}/jobs/{job_id}/artifacts/keep", Tags: tags,
		Summary: "Keep a job's artifacts past their expiry", Access: api.SignedIn, Status: http.StatusOK}, s.keepArtifacts)
	api.Register(a, api.Op{ID: "play-job", Method: http.MethodPost, Path: "/projects/{id}/jobs/{job_id}/play", Tags: tags,
		Summary: "Run a manual job", Access: api.SignedIn}, s.playJob)
}
