package internal

// The trigger jobs of a pipeline (GitLab 13's GET
// /projects/:id/pipelines/:pipeline_id/bridges): the HTTP adapter over
// cicd.Service's Jobs with JobQuery.Bridges. The jobs lists leave them
// out, as GitLab's do.

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// BridgeView is a trigger job: the job's fields, whether it may fail
// (and why it failed), and the pipeline it made (null until made).
type BridgeView struct {
	JobView
	AllowFailure       bool            `json:"allow_failure"`
	FailureReason      string          `json:"failure_reason,omitempty"`
	DownstreamPipeline *DownstreamView `json:"downstream_pipeline"`
}

// DownstreamView is a trigger job's downstream pipeline, as GitLab's
// basic pipeline entity shows it.
type DownstreamView struct {
	ID        int64    `json:"id"`
	ProjectID int64    `json:"project_id"`
	SHA       string   `json:"sha"`
	Ref       string   `json:"ref"`
	Status    string   `json:"status"`
	Source    string   `json:"source"`
	CreatedAt api.Time `json:"created_at"`
	UpdatedAt api.Time `json:"updated_at"`
	WebURL    string   `json:"web_url"`
}

type bridgesOutput struct {
	api.PageHeaders
	Body []BridgeView
}

func (s *Service) listBridges(ctx context.Context, in *listPipelineJobsInput) (*bridgesOutput, error) {
	list, total, err := s.Jobs(ctx, in.ID, cicd.JobQuery{Pipeline: cicd.PipelineID(in.PipelineID), Scope: in.Scope,
		Bridges: true, Offset: in.Offset(), Limit: in.Limit()})
	if err != nil {
		return nil, err
	}
	views := make([]BridgeView, 0, len(list))
	for _, j := range list {
		v := BridgeView{JobView: s.jobView(ctx, j, true), AllowFailure: j.AllowFailure}
		if j.Status == StatusFailed {
			v.FailureReason = j.FailureReason
		}
		if d := j.Downstream; d != nil {
			v.DownstreamPipeline = &DownstreamView{ID: int64(d.ID), ProjectID: d.ProjectID, SHA: d.SHA, Ref: d.Ref,
				Status: d.Status, Source: d.Source, CreatedAt: api.NewTime(d.CreatedAt), UpdatedAt: api.NewTime(d.UpdatedAt),
				WebURL: d.WebURL}
		}
		views = append(views, v)
	}
	return &bridgesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
}

func (s *Service) registerBridges(a *api.API) {
	api.Register(a, api.Op{ID: "list-pipeline-bridges", Method: http.MethodGet, Path: "/projects/{id}/pipelines/{pipeline_id}/bridges",
		Tags: []string{"jobs"}, Summary: "A pipeline's trigger jobs, newest first, with their downstream pipelines",
		Access: api.Public}, s.listBridges)
}
