package internal

// The environments and deployments API (GitLab 9.x): the HTTP adapter
// over cicd.Service's environments and deployments (environments.go).

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// EnvironmentView is GitLab 9.x's environment.
// State and AutoStopAt are later GitLab's (10.x, 13.x): what stopping,
// by hand, by a stop job or by auto_stop_in, changes.
type EnvironmentView struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Slug        string    `json:"slug"`
	ExternalURL *string   `json:"external_url"`
	State       string    `json:"state"`
	AutoStopAt  *api.Time `json:"auto_stop_at"`
}

func envView(e cicd.Environment) EnvironmentView {
	v := EnvironmentView{ID: int64(e.ID), Name: e.Name, Slug: e.Slug, ExternalURL: e.ExternalURL, State: e.State}
	if e.AutoStopAt != nil {
		v.AutoStopAt = api.TimePtr(*e.AutoStopAt)
	}
	return v
}

// DeploymentView is the spec's deployment.
type DeploymentView struct {
	ID          int64           `json:"id"`
	IID         int64           `json:"iid"`
	Ref         string          `json:"ref"`
	SHA         string          `json:"sha"`
	CreatedAt   api.Time        `json:"created_at"`
	User        *UserView       `json:"user"`
	Environment EnvironmentView `json:"environment"`
	Deployable  *DeployableView `json:"deployable"`
}

func (s *Service) deploymentView(ctx context.Context, d cicd.Deployment) DeploymentView {
	v := DeploymentView{ID: int64(d.ID), IID: d.IID, Ref: d.Ref, SHA: d.SHA, CreatedAt: api.NewTime(d.CreatedAt),
		User: s.userView(ctx, d.UserID), Environment: envView(d.Environment)}
	if d.Job != nil {
		v.Deployable = deployableView(s.jobView(ctx, *d.Job, false))
	}
	return v
}

type listEnvInput struct {
	ProjectPath
	api.PageParams
}

type envsOutput struct {
	api.PageHeaders
	Body []EnvironmentView
}

// EnvironmentPath is an environment's :id and :environment_id. Exported
// (as VariablePath) because operations embed it: huma reads the
// parameters of exported embedded structs only.
type EnvironmentPath struct {
	ProjectPath
	EnvironmentID int64 `path:"environment_id"`
}

type envOutput struct {
	Body *EnvironmentView
}

type envBody struct {
	Name        *string `json:"name,omitempty"`
	ExternalURL *string `json:"external_url,omitempty"`
}

func (b envBody) fields() cicd.EnvironmentFields {
	return cicd.EnvironmentFields{Name: b.Name, ExternalURL: b.ExternalURL}
}

// envAnswer renders the environment a command returned.
func envAnswer(e cicd.Environment, err error) (*envOutput, error) {
	if err != nil {
		return nil, err
	}
	v := envView(e)
	return &envOutput{Body: &v}, nil
}

func (s *Service) listEnvironments(ctx context.Context, in *listEnvInput) (*envsOutput, error) {
	list, total, err := s.Environments(ctx, in.ID, in.Offset(), in.Limit())
	if err != nil {
		return nil, err
	}
	out := &envsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []EnvironmentView{}}
	for _, e := range list {
		out.Body = append(out.Body, envView(e))
	}
	return out, nil
}

func (s *Service) createEnvironment(ctx context.Context, in *struct {
	ProjectPath
	Body envBody
}) (*envOutput, error) {
	return envAnswer(s.CreateEnvironment(ctx, in.ID, in.Body.fields()))
}

func (s *Service) updateEnvironment(ctx context.Context, in *struct {
	EnvironmentPath
	Body envBody
}) (*envOutput, error) {
	return envAnswer(s.UpdateEnvironment(ctx, in.ID, cicd.EnvironmentID(in.EnvironmentID), in.Body.fields()))
}

func (s *Service) deleteEnvironment(ctx context.Context, in *EnvironmentPath) (*struct{}, error) {
	return nil, s.DeleteEnvironment(ctx, in.ID, cicd.EnvironmentID(in.EnvironmentID))
}

func (s *Service) stopEnvironment(ctx context.Context, in *EnvironmentPath) (*envOutput, error) {
	return envAnswer(s.StopEnvironment(ctx, in.ID, cicd.EnvironmentID(in.EnvironmentID)))
}

type listDeploymentsInput struct {
	ProjectPath
	api.PageParams
	OrderBy string `query:"order_by" enum:"id,iid,created_at,ref" doc:"id (default), iid, created_at or ref"`
	Sort    string `query:"sort" enum:"asc,desc" doc:"asc (default) or desc"`
}

type deploymentsOutput struct {
	api.PageHeaders
	Body []DeploymentView
}

type deploymentPath struct {
	ProjectPath
	DeploymentID int64 `path:"deployment_id"`
}

type deploymentOutput struct {
	Body *DeploymentView
}

func (s *Service) listDeployments(ctx context.Context, in *listDeploymentsInput) (*deploymentsOutput, error) {
	list, total, err := s.Deployments(ctx, in.ID, cicd.DeploymentQuery{OrderBy: in.OrderBy, Descending: in.Sort == "desc",
		Offset: in.Offset(), Limit: in.Limit()})
	if err != nil {
		return nil, err
	}
	views := make([]DeploymentView, 0, len(list))
	for _, d := range list {
		views = append(views, s.deploymentView(ctx, d))
	}
	return &deploymentsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
}

func (s *Service) getDeployment(ctx context.Context, in *deploymentPath) (*deploymentOutput, error) {
	d, err := s.Deployment(ctx, in.ID, cicd.DeploymentID(in.DeploymentID))
	if err != nil {
		return nil, err
	}
	v := s.deploymentView(ctx, d)
	return &deploymentOutput{Body: &v}, nil
}

func (s *Service) registerEnvironments(a *api.API) {
	tags := []string{"environments"}
	api.Register(a, api.Op{ID: "list-environments", Method: http.MethodGet, Path: "/projects/{id}/environments", Tags: tags,
		Summary: "A project's environments", Access: api.Public}, s.listEnvironments)
	api.Register(a, api.Op{ID: "create-environment", Method: http.MethodPost, Path: "/projects/{id}/environments", Tags: tags,
		Summary: "Create an environment", Access: api.SignedIn}, s.createEnvironment)
	api.Register(a, api.Op{ID: "update-environment", Method: http.MethodPut, Path: "/projects/{id}/environments/{environment_id}", Tags: tags,
		Summary: "Edit an environment", Access: api.SignedIn}, s.updateEnvironment)
	api.Register(a, api.Op{ID: "delete-environment", Method: http.MethodDelete, Path: "/projects/{id}/environments/{environment_id}", Tags: tags,
		Summary: "Delete an environment", Access: api.SignedIn}, s.deleteEnvironment)
	api.Register(a, api.Op{ID: "stop-environment", Method: http.MethodPost, Path: "/projects/{id}/environments/{environment_id}/stop", Tags: tags,
		Summary: "Stop an environment", Access: api.SignedIn, Status: http.StatusOK}, s.stopEnvironment)
	tags = []string{"deployments"}
	api.Register(a, api.Op{ID: "list-deployments", Method: http.MethodGet, Path: "/projects/{id}/deployments", Tags: tags,
		Summary: "A project's deployments", Access: api.Public}, s.listDeployments)
	api.Register(a, api.Op{ID: "get-deployment", Method: http.MethodGet, Path: "/projects/{id}/deployments/{deployment_id}", Tags: tags,
		Summary: "A single deployment", Access: api.Public}, s.getDeployment)
}
