package internal

import (
	"context"
	"strconv"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/identity"
)

// UserView is the user embedded in jobs, pipelines and deployments: the
// public basic view with created_at, as GitLab's job entity shows it.
type UserView struct {
	identity.BasicUser
	CreatedAt api.Time `json:"created_at"`
}

// CommitView is the spec's embedded commit summary of a job.
type CommitView struct {
	ID          string   `json:"id"`
	ShortID     string   `json:"short_id"`
	Title       string   `json:"title"`
	Message     string   `json:"message"`
	AuthorName  string   `json:"author_name"`
	AuthorEmail string   `json:"author_email"`
	CreatedAt   api.Time `json:"created_at"`
}

// PipelineRef is the pipeline embedded in a job (and the pipeline list's
// entries).
// project_id is not in 9.x's PipelineBasic, but later GitLab sends it and
// clients (python-gitlab's job.pipeline) read it.
type PipelineRef struct {
	ID        int64  `json:"id"`
	ProjectID int64  `json:"project_id"`
	SHA       string `json:"sha"`
	Ref       string `json:"ref"`
	Status    string `json:"status"`
}

// ArtifactsFileView is a job's artifacts_file.
type ArtifactsFileView struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
}

// JobView is the spec's Job resource. Pipeline is omitted from the answers
// of cancel, retry, erase, keep and play, as the spec shows them.
type JobView struct {
	ID            int64              `json:"id"`
	Status        string             `json:"status"`
	Stage         string             `json:"stage"`
	Name          string             `json:"name"`
	Ref           string             `json:"ref"`
	Tag           bool               `json:"tag"`
	Coverage      *float64           `json:"coverage"`
	CreatedAt     api.Time           `json:"created_at"`
	StartedAt     *api.Time          `json:"started_at"`
	FinishedAt    *api.Time          `json:"finished_at"`
	User          *UserView          `json:"user"`
	ArtifactsFile *ArtifactsFileView `json:"artifacts_file"`
	Commit        CommitView         `json:"commit"`
	Runner        *RunnerView        `json:"runner"`
	Pipeline      *PipelineRef       `json:"pipeline,omitempty"`
	// FailureReason is why a failed job failed (script_failure,
	// runner_system_failure, ...), as GitLab shows it on failed jobs only.
	FailureReason string `json:"failure_reason,omitempty"`
}

// DeployableView is a deployment's job: the spec's "Job without
// artifacts_file and pipeline", so both keys are absent (not null).
type DeployableView struct {
	ID         int64       `json:"id"`
	Status     string      `json:"status"`
	Stage      string      `json:"stage"`
	Name       string      `json:"name"`
	Ref        string      `json:"ref"`
	Tag        bool        `json:"tag"`
	Coverage   *float64    `json:"coverage"`
	CreatedAt  api.Time    `json:"created_at"`
	StartedAt  *api.Time   `json:"started_at"`
	FinishedAt *api.Time   `json:"finished_at"`
	User       *UserView   `json:"user"`
	Commit     CommitView  `json:"commit"`
	Runner     *RunnerView `json:"runner"`
}

func deployableView(j JobView) *DeployableView {
	return &DeployableView{ID: j.ID, Status: j.Status, Stage: j.Stage, Name: j.Name, Ref: j.Ref, Tag: j.Tag, Coverage: j.Coverage,
		CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt, User: j.User, Commit: j.Commit, Runner: j.Runner}
}

// JobControlView is a job as the control operations answer it: no
// pipeline, and download_url (null) as the spec's erase and keep samples
// show.
type JobControlView struct {
	JobView
	DownloadURL *string `json:"download_url"`
}

func (s *Service) userView(ctx context.Context, id int64) *UserView {
	if id == 0 {
		return nil
	}
	u, err := s.users.UserByID(ctx, id)
	if err != nil {
		return nil
	}
	return &UserView{BasicUser: identity.NewBasicUser(api.ExternalURLFrom(ctx), u), CreatedAt: api.NewTime(u.CreatedAt)}
}

func commitView(c cicd.Commit) CommitView {
	return CommitView{ID: c.ID, ShortID: c.ShortID, Title: c.Title, Message: c.Message, AuthorName: c.AuthorName,
		AuthorEmail: c.AuthorEmail, CreatedAt: api.NewTime(c.CreatedAt)}
}

// jobView renders a job; withPipeline adds its pipeline (when it was
// read with the job).
func (s *Service) jobView(ctx context.Context, j cicd.Job, withPipeline bool) JobView {
	v := JobView{ID: int64(j.ID), Status: j.Status, Stage: j.Stage, Name: j.Name, Ref: j.Ref, Tag: j.Tag, Coverage: j.Coverage,
		CreatedAt: api.NewTime(j.CreatedAt), User: s.userView(ctx, j.UserID), Runner: s.runnerRef(ctx, j.RunnerID),
		Commit: commitView(j.Commit)}
	if j.StartedAt != nil {
		v.StartedAt = api.TimePtr(*j.StartedAt)
	}
	if j.FinishedAt != nil {
		v.FinishedAt = api.TimePtr(*j.FinishedAt)
	}
	if j.Artifacts != nil {
		v.ArtifactsFile = &ArtifactsFileView{Filename: j.Artifacts.Filename, Size: j.Artifacts.Size}
	}
	if withPipeline && j.PipelineStatus != "" {
		v.Pipeline = &PipelineRef{ID: int64(j.PipelineID), ProjectID: j.ProjectID, SHA: j.SHA, Ref: j.Ref, Status: j.PipelineStatus}
	}
	if j.Status == StatusFailed {
		v.FailureReason = j.FailureReason
	}
	return v
}

// PipelineView is a single pipeline (GitLab 9.x's Pipeline entity).
type PipelineView struct {
	ID          int64     `json:"id"`
	SHA         string    `json:"sha"`
	Ref         string    `json:"ref"`
	Status      string    `json:"status"`
	BeforeSHA   string    `json:"before_sha"`
	Tag         bool      `json:"tag"`
	YAMLErrors  *string   `json:"yaml_errors"`
	User        *UserView `json:"user"`
	CreatedAt   api.Time  `json:"created_at"`
	UpdatedAt   api.Time  `json:"updated_at"`
	StartedAt   *api.Time `json:"started_at"`
	FinishedAt  *api.Time `json:"finished_at"`
	CommittedAt *api.Time `json:"committed_at"`
	Duration    *int64    `json:"duration"`
	Coverage    *string   `json:"coverage"`
	// Source is what made it (push, web, trigger, schedule, api,
	// parent_pipeline, pipeline), as GitLab 13 and later show it.
	Source string `json:"source"`
	// Name is `workflow: name` (GitLab 15.5 and later), null without one.
	Name *string `json:"name"`
}

func (s *Service) pipelineView(ctx context.Context, p cicd.Pipeline) PipelineView {
	v := PipelineView{ID: int64(p.ID), SHA: p.SHA, Ref: p.Ref, Status: p.Status, BeforeSHA: p.BeforeSHA, Tag: p.Tag,
		YAMLErrors: p.YAMLErrors, User: s.userView(ctx, p.UserID), CreatedAt: api.NewTime(p.CreatedAt),
		UpdatedAt: api.NewTime(p.UpdatedAt), Duration: p.Duration, Source: p.Source}
	if p.Name != "" {
		v.Name = &p.Name
	}
	if p.StartedAt != nil {
		v.StartedAt = api.TimePtr(*p.StartedAt)
	}
	if p.FinishedAt != nil {
		v.FinishedAt = api.TimePtr(*p.FinishedAt)
	}
	if p.CommittedAt != nil {
		v.CommittedAt = api.TimePtr(*p.CommittedAt)
	}
	if p.Coverage != nil {
		c := formatCoverage(*p.Coverage)
		v.Coverage = &c
	}
	return v
}

// formatCoverage writes a coverage percentage as GitLab's pipelines do
// ("98.29", no trailing zeros beyond what is needed).
func formatCoverage(c float64) string {
	return strconv.FormatFloat(c, 'f', -1, 64)
}
