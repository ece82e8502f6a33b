package internal

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/projects"
)

// EnvironmentView is GitLab 9.x's environment.
type EnvironmentView struct {
	ID          uint64  `json:"id"`
	Name        string  `json:"name"`
	Slug        string  `json:"slug"`
	ExternalURL *string `json:"external_url"`
}

func envView(e *Environment) EnvironmentView {
	return EnvironmentView{ID: e.ID, Name: e.Name, Slug: e.Slug, ExternalURL: e.ExternalURL}
}

// DeploymentView is the spec's deployment.
type DeploymentView struct {
	ID          uint64          `json:"id"`
	IID         uint64          `json:"iid"`
	Ref         string          `json:"ref"`
	SHA         string          `json:"sha"`
	CreatedAt   api.Time        `json:"created_at"`
	User        *UserView       `json:"user"`
	Environment EnvironmentView `json:"environment"`
	Deployable  *DeployableView `json:"deployable"`
}

// envNameRule is GitLab's: letters, digits, spaces and - _ / $ { } .,
// neither starting nor ending with a slash.
var envNameRule = regexp.MustCompile(`^[a-zA-Z0-9 \-_/${}.]+$`)

func checkEnvName(name string) error {
	switch {
	case name == "":
		return api.Missing("name")
	case len(name) > 255:
		return api.FieldErrors{"name": {"is too long (maximum is 255 characters)"}}
	case !envNameRule.MatchString(name) || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return api.FieldErrors{"name": {"can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"}}
	}
	return nil
}

func checkExternalURL(u *string) error {
	if u == nil || *u == "" {
		return nil
	}
	if len(*u) > 255 {
		return api.FieldErrors{"external_url": {"is too long (maximum is 255 characters)"}}
	}
	if !strings.HasPrefix(*u, "http://") && !strings.HasPrefix(*u, "https://") {
		return api.FieldErrors{"external_url": {"is blocked: Only allowed protocols are http, https"}}
	}
	return nil
}

// ensureEnvironment finds or creates the environment of that name (a
// deploying job creates it as GitLab does).
func (s *Service) ensureEnvironment(tx *store.Tx, projectID uint64, name string, externalURL *string) (*Environment, error) {
	e, err := environments.GetBy(tx, "name", u64(projectID)+"/"+name)
	if err == nil {
		if externalURL != nil && *externalURL != "" && (e.ExternalURL == nil || *e.ExternalURL != *externalURL) {
			e.ExternalURL, e.UpdatedAt = externalURL, s.now()
			return e, environments.Update(tx, e)
		}
		return e, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	now := s.now()
	e = &Environment{ProjectID: projectID, Name: name, ExternalURL: externalURL, State: "available", CreatedAt: now, UpdatedAt: now}
	// The slug is derived from the name; two names that slug alike (a
	// rare clash) get a numbered suffix, still within 24 characters.
	base := pipeline.EnvironmentSlug(name)
	e.Slug = base
	for i := 2; ; i++ {
		if _, err := environments.GetBy(tx, "slug", u64(projectID)+"/"+e.Slug); errors.Is(err, store.ErrNotFound) {
			break
		}
		suffix := "-" + strconv.Itoa(i)
		e.Slug = strings.TrimRight(base[:min(len(base), 24-len(suffix))], "-") + suffix
	}
	return e, environments.Insert(tx, e)
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
	EnvironmentID uint64 `path:"environment_id"`
}

type envOutput struct {
	Body *EnvironmentView
}

type envBody struct {
	Name        *string `json:"name,omitempty"`
	ExternalURL *string `json:"external_url,omitempty"`
}

func (s *Service) listEnvironments(ctx context.Context, in *listEnvInput) (*envsOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	var list []*Environment
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := environments.IDsBy(tx, "project", u64(uint64(info.ID)))
		if err != nil {
			return err
		}
		for _, id := range ids {
			e, err := environments.Get(tx, id)
			if err != nil {
				return err
			}
			list = append(list, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := &envsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(list)), Body: []EnvironmentView{}}
	for _, e := range api.Window(list, in.PageParams) {
		out.Body = append(out.Body, envView(e))
	}
	return out, nil
}

func (s *Service) createEnvironment(ctx context.Context, in *struct {
	ProjectPath
	Body envBody
}) (*envOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.PushCode)
	if err != nil {
		return nil, err
	}
	name := ""
	if in.Body.Name != nil {
		name = strings.TrimSpace(*in.Body.Name)
	}
	if err := checkEnvName(name); err != nil {
		return nil, err
	}
	if err := checkExternalURL(in.Body.ExternalURL); err != nil {
		return nil, err
	}
	var e *Environment
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := environments.GetBy(tx, "name", u64(uint64(info.ID))+"/"+name); err == nil {
			return api.FieldErrors{"name": {"has already been taken"}}
		}
		var err error
		e, err = s.ensureEnvironment(tx, uint64(info.ID), name, in.Body.ExternalURL)
		return err
	})
	if err != nil {
		return nil, err
	}
	v := envView(e)
	return &envOutput{Body: &v}, nil
}

// envControl loads an environment for a change in a transaction.
func (s *Service) envControl(ctx context.Context, in EnvironmentPath, a projects.Action, op func(tx *store.Tx, e *Environment) error) (*envOutput, error) {
	info, err := s.access.Require(ctx, in.ID, a)
	if err != nil {
		return nil, err
	}
	var e *Environment
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		e, err = environments.Get(tx, in.EnvironmentID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && e.ProjectID != uint64(info.ID)) {
			return api.NotFound("Environment")
		}
		if err != nil {
			return err
		}
		return op(tx, e)
	})
	if err != nil {
		return nil, err
	}
	v := envView(e)
	return &envOutput{Body: &v}, nil
}

func (s *Service) updateEnvironment(ctx context.Context, in *struct {
	EnvironmentPath
	Body envBody
}) (*envOutput, error) {
	if in.Body.Name == nil && in.Body.ExternalURL == nil {
		return nil, api.BadRequest("400 (Bad request) \"name, external_url\" are missing, at least one parameter must be provided")
	}
	if in.Body.Name != nil {
		if err := checkEnvName(strings.TrimSpace(*in.Body.Name)); err != nil {
			return nil, err
		}
	}
	if err := checkExternalURL(in.Body.ExternalURL); err != nil {
		return nil, err
	}
	return s.envControl(ctx, in.EnvironmentPath, projects.PushCode, func(tx *store.Tx, e *Environment) error {
		if in.Body.Name != nil {
			name := strings.TrimSpace(*in.Body.Name)
			if o, err := environments.GetBy(tx, "name", u64(e.ProjectID)+"/"+name); err == nil && o.ID != e.ID {
				return api.FieldErrors{"name": {"has already been taken"}}
			}
			e.Name = name
		}
		if in.Body.ExternalURL != nil {
			e.ExternalURL = in.Body.ExternalURL
			if *e.ExternalURL == "" {
				e.ExternalURL = nil
			}
		}
		e.UpdatedAt = s.now()
		return environments.Update(tx, e)
	})
}

func (s *Service) deleteEnvironment(ctx context.Context, in *EnvironmentPath) (*struct{}, error) {
	_, err := s.envControl(ctx, *in, projects.AdminProject, func(tx *store.Tx, e *Environment) error {
		return environments.Delete(tx, e.ID)
	})
	return nil, err
}

func (s *Service) stopEnvironment(ctx context.Context, in *EnvironmentPath) (*envOutput, error) {
	return s.envControl(ctx, *in, projects.PushCode, func(tx *store.Tx, e *Environment) error {
		e.State, e.UpdatedAt = "stopped", s.now()
		return environments.Update(tx, e)
	})
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
	DeploymentID uint64 `path:"deployment_id"`
}

type deploymentOutput struct {
	Body *DeploymentView
}

// deploymentViews renders deployments with their environment and job.
func (s *Service) deploymentViews(ctx context.Context, list []*Deployment) ([]DeploymentView, error) {
	out := make([]DeploymentView, 0, len(list))
	type loaded struct {
		e *Environment
		j *Job
		p *Pipeline
	}
	rows := make([]loaded, len(list))
	err := s.db.View(ctx, func(tx *store.Tx) error {
		for i, d := range list {
			e, err := environments.Get(tx, d.EnvironmentID)
			if errors.Is(err, store.ErrNotFound) {
				e = &Environment{ID: d.EnvironmentID}
			} else if err != nil {
				return err
			}
			rows[i].e = e
			if j, err := jobs.Get(tx, d.JobID); err == nil {
				rows[i].j = j
				rows[i].p, _ = pipelines.Get(tx, j.PipelineID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, d := range list {
		v := DeploymentView{ID: d.ID, IID: d.IID, Ref: d.Ref, SHA: d.SHA, CreatedAt: api.NewTime(d.CreatedAt),
			User: s.userView(ctx, d.UserID), Environment: envView(rows[i].e)}
		if rows[i].j != nil {
			v.Deployable = deployableView(s.jobView(ctx, jobRecord(rows[i].j, rows[i].p), false))
		}
		out = append(out, v)
	}
	return out, nil
}

func (s *Service) listDeployments(ctx context.Context, in *listDeploymentsInput) (*deploymentsOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	var list []*Deployment
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := deployments.IDsBy(tx, "project", u64(uint64(info.ID)))
		if err != nil {
			return err
		}
		for _, id := range ids {
			d, err := deployments.Get(tx, id)
			if err != nil {
				return err
			}
			list = append(list, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	less := func(a, b *Deployment) bool {
		switch in.OrderBy {
		case "created_at":
			if !a.CreatedAt.Equal(b.CreatedAt) {
				return a.CreatedAt.Before(b.CreatedAt)
			}
		case "ref":
			if a.Ref != b.Ref {
				return a.Ref < b.Ref
			}
		case "iid":
			return a.IID < b.IID
		}
		return a.ID < b.ID
	}
	sort.SliceStable(list, func(i, j int) bool {
		if in.Sort == "desc" {
			return less(list[j], list[i])
		}
		return less(list[i], list[j])
	})
	views, err := s.deploymentViews(ctx, api.Window(list, in.PageParams))
	if err != nil {
		return nil, err
	}
	return &deploymentsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(list)), Body: views}, nil
}

func (s *Service) getDeployment(ctx context.Context, in *deploymentPath) (*deploymentOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadJobs)
	if err != nil {
		return nil, err
	}
	var d *Deployment
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		d, err = deployments.Get(tx, in.DeploymentID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && d.ProjectID != uint64(info.ID)) {
			return api.NotFound("Deployment")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	views, err := s.deploymentViews(ctx, []*Deployment{d})
	if err != nil {
		return nil, err
	}
	return &deploymentOutput{Body: &views[0]}, nil
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
