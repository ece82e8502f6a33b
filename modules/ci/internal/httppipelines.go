package internal

// The pipelines API (GitLab 9.x's /projects/:id/pipelines): the HTTP
// adapter over the pipeline commands and readers of cicd.Service
// (pipelines.go).

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

type listPipelinesInput struct {
	ProjectPath
	api.PageParams
	Scope      string `query:"scope" enum:"running,pending,finished,branches,tags" doc:"running, pending, finished, branches or tags"`
	Status     string `query:"status" enum:"created,pending,running,success,failed,canceled,skipped,manual"`
	Ref        string `query:"ref"`
	YAMLErrors string `query:"yaml_errors" enum:"true,false" doc:"Only pipelines with (true) or without (false) YAML errors"`
	Username   string `query:"username"`
	OrderBy    string `query:"order_by" enum:"id,status,ref,user_id" doc:"id (default), status, ref or user_id"`
	Sort       string `query:"sort" enum:"asc,desc" doc:"desc (default) or asc"`
}

type pipelinesOutput struct {
	api.PageHeaders
	Body []PipelineRef
}

type pipelineListOutput struct {
	api.PageHeaders
	Body []PipelineListView
}

// PipelineListView is an entry of the pipelines list: the embedded
// pipeline's fields and, as GitLab 13 and later list it, its source.
type PipelineListView struct {
	PipelineRef
	Source string `json:"source"`
}

type pipelinePath struct {
	ProjectPath
	PipelineID int64 `path:"pipeline_id"`
}

type pipelineOutput struct {
	Body *PipelineView
}

func (s *Service) listPipelines(ctx context.Context, in *listPipelinesInput) (*pipelineListOutput, error) {
	q := cicd.PipelineQuery{Scope: in.Scope, Status: in.Status, Ref: in.Ref, Username: in.Username, OrderBy: in.OrderBy,
		Ascending: in.Sort == "asc", Offset: in.Offset(), Limit: in.Limit()}
	if in.YAMLErrors != "" {
		with := in.YAMLErrors == "true"
		q.YAMLErrors = &with
	}
	list, total, err := s.Pipelines(ctx, in.ID, q)
	if err != nil {
		return nil, err
	}
	out := &pipelineListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []PipelineListView{}}
	for _, p := range list {
		out.Body = append(out.Body, PipelineListView{PipelineRef: PipelineRef{ID: int64(p.ID), ProjectID: p.ProjectID, SHA: p.SHA,
			Ref: p.Ref, Status: p.Status}, Source: p.Source})
	}
	return out, nil
}

// pipelineAnswer renders the pipeline a command or reader returned.
func (s *Service) pipelineAnswer(ctx context.Context, p cicd.Pipeline, err error) (*pipelineOutput, error) {
	if err != nil {
		return nil, err
	}
	v := s.pipelineView(ctx, p)
	return &pipelineOutput{Body: &v}, nil
}

func (s *Service) getPipeline(ctx context.Context, in *pipelinePath) (*pipelineOutput, error) {
	p, err := s.Pipeline(ctx, in.ID, cicd.PipelineID(in.PipelineID))
	return s.pipelineAnswer(ctx, p, err)
}

type createPipelineInput struct {
	ProjectPath
	Body struct {
		Ref string `json:"ref" doc:"The branch or tag to run the pipeline for"`
		// Variables (GitLab 10.6 and later) go to every job, over every
		// other variable, as a trigger's do.
		Variables []pipelineVariableInput `json:"variables,omitempty" maxItems:"200" doc:"Variables every job of the pipeline gets"`
	}
}

// pipelineVariableInput is a variable of POST /pipeline; variable_type
// is taken and only env_var is known.
type pipelineVariableInput struct {
	Key          string `json:"key"`
	Value        string `json:"value"`
	VariableType string `json:"variable_type,omitempty" enum:"env_var"`
}

// createPipelineAPI is POST /projects/:id/pipeline?ref=.
func (s *Service) createPipelineAPI(ctx context.Context, in *createPipelineInput) (*pipelineOutput, error) {
	var vars []cicd.Variable
	for _, v := range in.Body.Variables {
		vars = append(vars, cicd.Variable{Key: v.Key, Value: v.Value})
	}
	p, err := s.CreatePipeline(ctx, cicd.CreatePipelineInput{Project: in.ID, Ref: in.Body.Ref, Variables: vars})
	return s.pipelineAnswer(ctx, p, err)
}

func (s *Service) retryPipeline(ctx context.Context, in *pipelinePath) (*pipelineOutput, error) {
	p, err := s.RetryPipeline(ctx, in.ID, cicd.PipelineID(in.PipelineID))
	return s.pipelineAnswer(ctx, p, err)
}

func (s *Service) cancelPipeline(ctx context.Context, in *pipelinePath) (*pipelineOutput, error) {
	p, err := s.CancelPipeline(ctx, in.ID, cicd.PipelineID(in.PipelineID))
	return s.pipelineAnswer(ctx, p, err)
}

func (s *Service) registerPipelines(a *api.API) {
	tags := []string{"pipelines"}
	api.Register(a, api.Op{ID: "list-pipelines", Method: http.MethodGet, Path: "/projects/{id}/pipelines", Tags: tags,
		Summary: "A project's pipelines", Access: api.Public}, s.listPipelines)
	api.Register(a, api.Op{ID: "get-pipeline", Method: http.MethodGet, Path: "/projects/{id}/pipelines/{pipeline_id}", Tags: tags,
		Summary: "A single pipeline", Access: api.Public}, s.getPipeline)
	api.Register(a, api.Op{ID: "create-pipeline", Method: http.MethodPost, Path: "/projects/{id}/pipeline", Tags: tags,
		Summary: "Run a pipeline for a branch or tag", Access: api.SignedIn}, s.createPipelineAPI)
	api.Register(a, api.Op{ID: "retry-pipeline", Method: http.MethodPost, Path: "/projects/{id}/pipelines/{pipeline_id}/retry", Tags: tags,
		Summary: "Retry a pipeline's failed and canceled jobs", Access: api.SignedIn}, s.retryPipeline)
	api.Register(a, api.Op{ID: "cancel-pipeline", Method: http.MethodPost, Path: "/projects/{id}/pipelines/{pipeline_id}/cancel", Tags: tags,
		Summary: "Cancel a pipeline's unfinished jobs", Access: api.SignedIn, Status: http.StatusOK}, s.cancelPipeline)
}
