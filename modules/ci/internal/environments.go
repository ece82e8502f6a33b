package internal

// Environments and deployments (cicd.Service): a project's deployment
// targets, made by hand or by a deploying job (ensureEnvironment), and the
// record of each job that deployed. httpenvironments.go is the API over
// them.

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/projects"
)

// envNameRule is GitLab's: letters, digits, spaces and - _ / $ { } .,
// neither starting nor ending with a slash.
var envNameRule = regexp.MustCompile(`^[a-zA-Z0-9 \-_/${}.]+$`)

func checkEnvName(name string) error {
	switch {
	case name == "":
		return &cicd.MissingError{Fields: []string{"name"}}
	case len(name) > 255:
		return cicd.ErrEnvironmentNameTooLong
	case !envNameRule.MatchString(name) || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return cicd.ErrInvalidEnvironmentName
	}
	return nil
}

func checkExternalURL(u *string) error {
	if u == nil || *u == "" {
		return nil
	}
	if len(*u) > 255 {
		return cicd.ErrExternalURLTooLong
	}
	if !strings.HasPrefix(*u, "http://") && !strings.HasPrefix(*u, "https://") {
		return cicd.ErrExternalURLBlocked
	}
	return nil
}

// ensureEnvironment finds or creates the environment of that name (a
// deploying job creates it as GitLab does).
func (s *Service) ensureEnvironment(tx *store.Tx, projectID int64, name string, externalURL *string) (*Environment, error) {
	e, err := environments.GetBy(tx, "name", store.IDString(projectID)+"/"+name)
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
		if _, err := environments.GetBy(tx, "slug", store.IDString(projectID)+"/"+e.Slug); errors.Is(err, store.ErrNotFound) {
			break
		}
		suffix := "-" + strconv.Itoa(i)
		e.Slug = strings.TrimRight(base[:min(len(base), 24-len(suffix))], "-") + suffix
	}
	return e, environments.Insert(tx, e)
}

func environmentRecord(e *Environment) cicd.Environment {
	return cicd.Environment{ID: cicd.EnvironmentID(e.ID), ProjectID: e.ProjectID, Name: e.Name, Slug: e.Slug,
		ExternalURL: e.ExternalURL, State: e.State, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, AutoStopAt: e.AutoStopAt}
}

// Environment implements cicd.Service.
func (s *Service) Environment(ctx context.Context, project string, id cicd.EnvironmentID) (cicd.Environment, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return cicd.Environment{}, err
	}
	var e *Environment
	err = s.db.View(ctx, func(tx *store.Tx) error {
		e, err = environments.Get(tx, int64(id))
		return err
	})
	if errors.Is(err, store.ErrNotFound) || (err == nil && e.ProjectID != info.ID) {
		return cicd.Environment{}, cicd.ErrEnvironmentNotFound
	}
	if err != nil {
		return cicd.Environment{}, err
	}
	return environmentRecord(e), nil
}

// Environments implements cicd.Service.
func (s *Service) Environments(ctx context.Context, project string, offset, limit int) ([]cicd.Environment, int, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return nil, 0, err
	}
	var list []*Environment
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := environments.IDsBy(tx, "project", store.IDString(info.ID))
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
		return nil, 0, err
	}
	out := []cicd.Environment{}
	for _, e := range store.Window(list, offset, limit) {
		out = append(out, environmentRecord(e))
	}
	return out, len(list), nil
}

// CreateEnvironment implements cicd.Service.
func (s *Service) CreateEnvironment(ctx context.Context, project string, in cicd.EnvironmentFields) (cicd.Environment, error) {
	info, err := s.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return cicd.Environment{}, err
	}
	name := ""
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
	}
	if err := checkEnvName(name); err != nil {
		return cicd.Environment{}, err
	}
	if err := checkExternalURL(in.ExternalURL); err != nil {
		return cicd.Environment{}, err
	}
	var e *Environment
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := environments.GetBy(tx, "name", store.IDString(info.ID)+"/"+name); err == nil {
			return cicd.ErrEnvironmentNameTaken
		}
		var err error
		e, err = s.ensureEnvironment(tx, info.ID, name, in.ExternalURL)
		return err
	})
	if err != nil {
		return cicd.Environment{}, err
	}
	return environmentRecord(e), nil
}

// envControl loads an environment for a change in a transaction.
func (s *Service) envControl(ctx context.Context, project string, id cicd.EnvironmentID, a projects.Action, op func(tx *store.Tx, e *Environment) error) (cicd.Environment, error) {
	info, err := s.access.Require(ctx, project, a)
	if err != nil {
		return cicd.Environment{}, err
	}
	var e *Environment
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		e, err = environments.Get(tx, int64(id))
		if errors.Is(err, store.ErrNotFound) || (err == nil && e.ProjectID != info.ID) {
			return cicd.ErrEnvironmentNotFound
		}
		if err != nil {
			return err
		}
		return op(tx, e)
	})
	if err != nil {
		return cicd.Environment{}, err
	}
	return environmentRecord(e), nil
}

// UpdateEnvironment implements cicd.Service: what is given is checked
// before anything else.
func (s *Service) UpdateEnvironment(ctx context.Context, project string, id cicd.EnvironmentID, in cicd.EnvironmentFields) (cicd.Environment, error) {
	if in.Name == nil && in.ExternalURL == nil {
		return cicd.Environment{}, cicd.ErrNoEnvironmentChange
	}
	if in.Name != nil {
		if err := checkEnvName(strings.TrimSpace(*in.Name)); err != nil {
			return cicd.Environment{}, err
		}
	}
	if err := checkExternalURL(in.ExternalURL); err != nil {
		return cicd.Environment{}, err
	}
	return s.envControl(ctx, project, id, projects.PushCode, func(tx *store.Tx, e *Environment) error {
		if in.Name != nil {
			name := strings.TrimSpace(*in.Name)
			if o, err := environments.GetBy(tx, "name", store.IDString(e.ProjectID)+"/"+name); err == nil && o.ID != e.ID {
				return cicd.ErrEnvironmentNameTaken
			}
			e.Name = name
		}
		if in.ExternalURL != nil {
			e.ExternalURL = in.ExternalURL
			if *e.ExternalURL == "" {
				e.ExternalURL = nil
			}
		}
		e.UpdatedAt = s.now()
		return environments.Update(tx, e)
	})
}

// DeleteEnvironment implements cicd.Service.
func (s *Service) DeleteEnvironment(ctx context.Context, project string, id cicd.EnvironmentID) error {
	_, err := s.envControl(ctx, project, id, projects.AdminProject, func(tx *store.Tx, e *Environment) error {
		before := e.AutoStopAt
		e.AutoStopAt = nil
		if err := s.setAutoStop(tx, before, e); err != nil {
			return err
		}
		return environments.Delete(tx, e.ID)
	})
	return err
}

// StopEnvironment implements cicd.Service: the environment is stopped,
// and the job its last deployment's on_stop names is played as the
// caller when it waits to be.
func (s *Service) StopEnvironment(ctx context.Context, project string, id cicd.EnvironmentID) (cicd.Environment, error) {
	uid := auth.FromContext(ctx).UserID()
	env, err := s.envControl(ctx, project, id, projects.PushCode, func(tx *store.Tx, e *Environment) error {
		return s.stopEnv(tx, e, uid)
	})
	if err == nil {
		s.nudge()
	}
	return env, err
}

// deploymentRecords are deployments with their environment and job.
func (s *Service) deploymentRecords(ctx context.Context, list []*Deployment) ([]cicd.Deployment, error) {
	out := make([]cicd.Deployment, 0, len(list))
	err := s.db.View(ctx, func(tx *store.Tx) error {
		for _, d := range list {
			r := cicd.Deployment{ID: cicd.DeploymentID(d.ID), IID: d.IID, ProjectID: d.ProjectID, Ref: d.Ref,
				SHA: d.SHA, Tag: d.Tag, UserID: d.UserID, CreatedAt: d.CreatedAt}
			e, err := environments.Get(tx, d.EnvironmentID)
			if errors.Is(err, store.ErrNotFound) {
				e = &Environment{ID: d.EnvironmentID}
			} else if err != nil {
				return err
			}
			r.Environment = environmentRecord(e)
			if j, err := jobs.Get(tx, d.JobID); err == nil {
				p, _ := pipelines.Get(tx, j.PipelineID)
				job := jobRecord(j, p)
				r.Job = &job
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// Deployments implements cicd.Service.
func (s *Service) Deployments(ctx context.Context, project string, q cicd.DeploymentQuery) ([]cicd.Deployment, int, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return nil, 0, err
	}
	var list []*Deployment
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := deployments.IDsBy(tx, "project", store.IDString(info.ID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			d, err := deployments.Get(tx, id)
			if err != nil {
				return err
			}
			if q.Environment == 0 || d.EnvironmentID == int64(q.Environment) {
				list = append(list, d)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	less := func(a, b *Deployment) bool {
		switch q.OrderBy {
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
		if q.Descending {
			return less(list[j], list[i])
		}
		return less(list[i], list[j])
	})
	out, err := s.deploymentRecords(ctx, store.Window(list, q.Offset, q.Limit))
	if err != nil {
		return nil, 0, err
	}
	return out, len(list), nil
}

// Deployment implements cicd.Service.
func (s *Service) Deployment(ctx context.Context, project string, id cicd.DeploymentID) (cicd.Deployment, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return cicd.Deployment{}, err
	}
	var d *Deployment
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		d, err = deployments.Get(tx, int64(id))
		if errors.Is(err, store.ErrNotFound) || (err == nil && d.ProjectID != info.ID) {
			return cicd.ErrDeploymentNotFound
		}
		return err
	})
	if err != nil {
		return cicd.Deployment{}, err
	}
	out, err := s.deploymentRecords(ctx, []*Deployment{d})
	if err != nil {
		return cicd.Deployment{}, err
	}
	return out[0], nil
}
