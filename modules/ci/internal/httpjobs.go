package internal

// The jobs API (GitLab 9.x's /projects/:id/jobs): the HTTP adapter over
// the job commands and readers of cicd.Service (jobs.go, artifacts.go).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// ProjectPath is a project's :id.
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

type jobPath struct {
	ProjectPath
	JobID int64 `path:"job_id"`
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
	PipelineID int64    `path:"pipeline_id"`
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

// listJobs answers GET /projects/:id/jobs and a pipeline's jobs, newest
// first.
func (s *Service) listJobs(ctx context.Context, projectRef string, pipelineID int64, page api.PageParams, scope []string) (*jobsOutput, error) {
	list, total, err := s.Jobs(ctx, projectRef, cicd.JobQuery{Pipeline: cicd.PipelineID(pipelineID), Scope: scope,
		Offset: page.Offset(), Limit: page.Limit()})
	if err != nil {
		return nil, err
	}
	views := make([]JobView, 0, len(list))
	for _, j := range list {
		views = append(views, s.jobView(ctx, j, true))
	}
	return &jobsOutput{PageHeaders: api.Paginate(ctx, page, total), Body: views}, nil
}

func (s *Service) getJob(ctx context.Context, in *jobPath) (*jobOutput, error) {
	j, err := s.Job(ctx, in.ID, cicd.JobID(in.JobID))
	if err != nil {
		return nil, err
	}
	v := s.jobView(ctx, j, true)
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

// serveFile streams f with out's headers: its length, nosniff.
func serveFile(f cicd.File, err error, out fileOutput) (*fileOutput, error) {
	if err != nil {
		return nil, err
	}
	out.ContentLength = strconv.FormatInt(f.Size, 10)
	out.NoSniff = "nosniff"
	out.Body = func(ctx huma.Context) {
		defer f.Content.Close()
		_, _ = io.Copy(ctx.BodyWriter(), f.Content)
	}
	return &out, nil
}

// serveArchive streams an artifacts archive as GitLab sends it.
func serveArchive(f cicd.File, err error) (*fileOutput, error) {
	return serveFile(f, err, fileOutput{ContentType: "application/octet-stream",
		ContentDisposition: "attachment; filename=" + f.Name, TransferEncoding: "binary"})
}

func (s *Service) artifacts(ctx context.Context, in *jobPath) (*fileOutput, error) {
	f, err := s.Artifacts(ctx, in.ID, cicd.JobID(in.JobID))
	return serveArchive(f, err)
}

type artifactsByRefInput struct {
	ProjectPath
	RefName string `path:"ref_name"`
	Job     string `query:"job" required:"true" doc:"The job's name"`
}

// artifactsByRef serves the archive of the latest successful job of that
// name on that ref.
func (s *Service) artifactsByRef(ctx context.Context, in *artifactsByRefInput) (*fileOutput, error) {
	f, err := s.LatestArtifacts(ctx, in.ID, in.RefName, in.Job)
	return serveArchive(f, err)
}

func (s *Service) trace(ctx context.Context, in *jobPath) (*fileOutput, error) {
	f, err := s.Trace(ctx, in.ID, cicd.JobID(in.JobID))
	return serveFile(f, err, fileOutput{ContentType: "text/plain", ContentDisposition: fmt.Sprintf("infile; filename=%q", f.Name)})
}

// controlled answers a job control operation: the job without its
// pipeline, with download_url.
func (s *Service) controlled(ctx context.Context, j cicd.Job, err error) (*jobControlOutput, error) {
	if err != nil {
		return nil, err
	}
	v := JobControlView{JobView: s.jobView(ctx, j, false)}
	return &jobControlOutput{Body: &v}, nil
}

func (s *Service) cancelJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	j, err := s.CancelJob(ctx, in.ID, cicd.JobID(in.JobID))
	return s.controlled(ctx, j, err)
}

func (s *Service) retryJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	j, err := s.RetryJob(ctx, in.ID, cicd.JobID(in.JobID))
	return s.controlled(ctx, j, err)
}

func (s *Service) eraseJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	j, err := s.EraseJob(ctx, in.ID, cicd.JobID(in.JobID))
	return s.controlled(ctx, j, err)
}

func (s *Service) keepArtifacts(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	j, err := s.KeepArtifacts(ctx, in.ID, cicd.JobID(in.JobID))
	return s.controlled(ctx, j, err)
}

func (s *Service) playJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	j, err := s.PlayJob(ctx, in.ID, cicd.JobID(in.JobID))
	out, err := s.controlled(ctx, j, err)
	if err != nil {
		return nil, err
	}
	// The spec's play answer shows the job as "started"; GET shows its real
	// status (pending, then running).
	out.Body.Status = "started"
	return out, nil
}

func (s *Service) unscheduleJob(ctx context.Context, in *jobPath) (*jobControlOutput, error) {
	j, err := s.UnscheduleJob(ctx, in.ID, cicd.JobID(in.JobID))
	return s.controlled(ctx, j, err)
}

type jobTokenArtifactsInput struct {
	JobID    int64  `path:"job_id"`
	JobToken string `header:"JOB-TOKEN"`
	Token    string `query:"token"`
}

// artifactsForJob is the runner API's artifacts download: a running job's
// token fetches the archive of a job of the same project (its
// dependencies).
func (s *Service) artifactsForJob(ctx context.Context, in *jobTokenArtifactsInput) (*fileOutput, error) {
	token := in.JobToken
	if token == "" {
		token = in.Token
	}
	f, err := s.dependencyArchive(ctx, token, in.JobID)
	return serveArchive(f, err)
}

func (s *Service) registerRunnerDownloads(a *api.API) {
	api.Register(a, api.Op{ID: "runner-download-artifacts", Method: http.MethodGet, Path: "/jobs/{job_id}/artifacts", Tags: []string{"jobs"},
		Summary: "A job's artifacts, for the jobs that depend on it (JOB-TOKEN)", Access: api.Public}, s.artifactsForJob)
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
		Summary: "Run a manual job, or a scheduled one now", Access: api.SignedIn}, s.playJob)
	api.Register(a, api.Op{ID: "unschedule-job", Method: http.MethodPost, Path: "/projects/{id}/jobs/{job_id}/unschedule", Tags: tags,
		Summary: "Make a scheduled (delayed) job manual", Access: api.SignedIn}, s.unscheduleJob)
}
