package internal

// The runners' commands of cicd.Service (GitLab 9.x lib/api/runners.rb):
// a user's runners (those of the projects they administer), every runner
// for administrators, a runner's details, edit and removal, its jobs, the
// runners of a project with enabling and disabling one there, and the
// shared registration token. No HTTP here (httprunners.go is the API over
// them).

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// runnerRecord is a runner as the contract shows it (without projects).
func runnerRecord(r *Runner) cicd.Runner {
	return cicd.Runner{ID: cicd.RunnerID(r.ID), Description: r.Description, Active: r.Active, IsShared: r.IsShared,
		Locked: r.Locked, RunUntagged: r.RunUntagged, Tags: r.Tags, Name: r.Name, Version: r.Version,
		Revision: r.Revision, Platform: r.Platform, Architecture: r.Architecture, ContactedAt: r.ContactedAt}
}

func runnerProject(info *projects.ProjectInfo) cicd.RunnerProject {
	return cicd.RunnerProject{ID: info.ID, Name: info.Name, NameWithNamespace: info.NameWithNamespace,
		Path: info.Path, PathWithNamespace: info.PathWithNamespace}
}

// runnerBrief is the runner of a job, false when none ran it or it is
// gone.
func (s *Service) runnerBrief(ctx context.Context, id int64) (cicd.Runner, bool) {
	if id == 0 {
		return cicd.Runner{}, false
	}
	var out cicd.Runner
	found := false
	_ = s.db.View(ctx, func(tx *store.Tx) error {
		if r, err := runners.Get(tx, id); err == nil {
			out, found = runnerRecord(r), true
		}
		return nil
	})
	return out, found
}

// runnerDetails is the runner with the projects of it the caller sees
// (all of them for an administrator).
func (s *Service) runnerDetails(ctx context.Context, r *Runner) cicd.Runner {
	out := runnerRecord(r)
	out.Projects = []cicd.RunnerProject{}
	for _, pid := range r.Projects {
		info, err := s.access.ResolveID(ctx, pid)
		if err != nil {
			continue
		}
		out.Projects = append(out.Projects, runnerProject(&info))
	}
	return out
}

// ownsRunner: the caller administers one of the runner's projects.
func (s *Service) ownsRunner(ctx context.Context, r *Runner) bool {
	for _, pid := range r.Projects {
		if _, err := s.access.RequireID(ctx, pid, projects.AdminProject); err == nil {
			return true
		}
	}
	return false
}

func (s *Service) loadRunner(ctx context.Context, id int64) (*Runner, error) {
	var r *Runner
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		r, err = runners.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return cicd.ErrRunnerNotFound
		}
		return err
	})
	return r, err
}

// allRunners loads every runner, oldest first.
func (s *Service) allRunners(ctx context.Context) ([]*Runner, error) {
	var out []*Runner
	err := s.db.View(ctx, func(tx *store.Tx) error {
		return runners.Scan(tx, false, 0, func(r *Runner) (bool, error) {
			out = append(out, r)
			return true, nil
		})
	})
	return out, err
}

// runnerScopes are the scope values of the runner lists.
var runnerScopes = map[string]func(*Runner) bool{
	"active":   func(r *Runner) bool { return r.Active },
	"paused":   func(r *Runner) bool { return !r.Active },
	"online":   func(r *Runner) bool { return r.online() },
	"specific": func(r *Runner) bool { return !r.IsShared },
	"shared":   func(r *Runner) bool { return r.IsShared },
}

func (r *Runner) online() bool {
	return r.ContactedAt != nil && timeSince(*r.ContactedAt) < onlineWithin
}

// timeSince is time.Since in UTC terms (contacted_at is stored in UTC).
func timeSince(t time.Time) time.Duration { return time.Now().UTC().Sub(t) }

func scopeOf(scope string, allowed ...string) (func(*Runner) bool, error) {
	if scope == "" {
		return func(*Runner) bool { return true }, nil
	}
	if !slices.Contains(allowed, scope) {
		return nil, &cicd.InvalidValueError{Field: "scope"}
	}
	return runnerScopes[scope], nil
}

// runnerPage is the part of list from offset, as records.
func runnerPage(list []*Runner, offset, limit int) []cicd.Runner {
	out := []cicd.Runner{}
	for _, r := range store.Window(list, offset, limit) {
		out = append(out, runnerRecord(r))
	}
	return out
}

// Runners implements cicd.Service.
func (s *Service) Runners(ctx context.Context, q cicd.RunnerQuery) ([]cicd.Runner, int, error) {
	allowed := []string{"active", "paused", "online"}
	if q.All {
		allowed = append(allowed, "specific", "shared")
	}
	keep, err := scopeOf(q.Scope, allowed...)
	if err != nil {
		return nil, 0, err
	}
	if q.All && !auth.FromContext(ctx).IsAdmin() {
		return nil, 0, cicd.ErrAdminOnly
	}
	list, err := s.allRunners(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []*Runner
	for _, r := range list {
		if keep(r) && (q.All || !r.IsShared && s.ownsRunner(ctx, r)) {
			out = append(out, r)
		}
	}
	return runnerPage(out, q.Offset, q.Limit), len(out), nil
}

// runnerFor loads a runner the caller may see (show) or change.
func (s *Service) runnerFor(ctx context.Context, id int64, change bool) (*Runner, error) {
	r, err := s.loadRunner(ctx, id)
	if err != nil {
		return nil, err
	}
	if auth.FromContext(ctx).IsAdmin() {
		return r, nil
	}
	if r.IsShared {
		if change {
			return nil, cicd.ErrRunnerIsShared
		}
		return r, nil
	}
	if !s.ownsRunner(ctx, r) {
		return nil, cicd.ErrNoRunnerAccess
	}
	return r, nil
}

// Runner implements cicd.Service.
func (s *Service) Runner(ctx context.Context, id cicd.RunnerID) (cicd.Runner, error) {
	r, err := s.runnerFor(ctx, int64(id), false)
	if err != nil {
		return cicd.Runner{}, err
	}
	return s.runnerDetails(ctx, r), nil
}

// UpdateRunner implements cicd.Service.
func (s *Service) UpdateRunner(ctx context.Context, id cicd.RunnerID, in cicd.RunnerFields) (cicd.Runner, error) {
	if in.Description == nil && in.Active == nil && in.Tags == nil && in.RunUntagged == nil && in.Locked == nil {
		return cicd.Runner{}, cicd.ErrNoRunnerChange
	}
	if _, err := s.runnerFor(ctx, int64(id), true); err != nil {
		return cicd.Runner{}, err
	}
	var tags []string
	if in.Tags != nil {
		var err error
		if tags, err = normalizeTags(*in.Tags); err != nil {
			return cicd.Runner{}, err
		}
	}
	if in.Description != nil && len(*in.Description) > maxRunnerDescription {
		return cicd.Runner{}, cicd.ErrRunnerDescriptionTooLong
	}
	var r *Runner
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = runners.Get(tx, int64(id)); errors.Is(err, store.ErrNotFound) {
			return cicd.ErrRunnerNotFound
		} else if err != nil {
			return err
		}
		if in.Description != nil {
			r.Description = *in.Description
		}
		if in.Active != nil {
			r.Active = *in.Active
		}
		if in.Tags != nil {
			r.Tags = tags
		}
		if in.RunUntagged != nil {
			r.RunUntagged = *in.RunUntagged
		}
		if in.Locked != nil {
			r.Locked = *in.Locked
		}
		if !r.RunUntagged && len(r.Tags) == 0 {
			return cicd.ErrRunnerTagsNeeded
		}
		return runners.Update(tx, r)
	})
	if err != nil {
		return cicd.Runner{}, err
	}
	s.runnerQueue.bump()
	return s.runnerDetails(ctx, r), nil
}

// DeleteRunner implements cicd.Service.
func (s *Service) DeleteRunner(ctx context.Context, id cicd.RunnerID) error {
	r, err := s.runnerFor(ctx, int64(id), true)
	if err != nil {
		return err
	}
	if !auth.FromContext(ctx).IsAdmin() && len(r.Projects) > 1 {
		return cicd.ErrRunnerHasProjects
	}
	return s.deleteRunner(ctx, r.ID)
}

// RunnerJobs implements cicd.Service.
func (s *Service) RunnerJobs(ctx context.Context, id cicd.RunnerID, q cicd.RunnerJobQuery) ([]cicd.RunnerJob, int, error) {
	switch q.Status {
	case "", StatusRunning, StatusSuccess, StatusFailed, StatusCanceled:
	default:
		return nil, 0, &cicd.InvalidValueError{Field: "status"}
	}
	r, err := s.loadRunner(ctx, int64(id))
	if err != nil {
		return nil, 0, err
	}
	admin := auth.FromContext(ctx).IsAdmin()
	switch {
	case admin:
	case r.IsShared:
		return nil, 0, cicd.ErrRunnerIsShared
	case !s.ownsRunner(ctx, r):
		return nil, 0, cicd.ErrNoRunnerAccess
	}
	var list []*Job
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := jobs.IDsBy(tx, "runner", store.IDString(r.ID))
		if err != nil {
			return err
		}
		for i := len(ids) - 1; i >= 0; i-- {
			j, err := jobs.Get(tx, ids[i])
			if err != nil {
				return err
			}
			if q.Status == "" || j.Status == q.Status {
				list = append(list, j)
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	// Only the jobs of projects whose jobs the caller may read.
	infos := map[int64]*projects.ProjectInfo{}
	var visible []*Job
	for _, j := range list {
		info, seen := infos[j.ProjectID]
		if !seen {
			if got, err := s.access.RequireID(ctx, j.ProjectID, projects.ReadJobs); err == nil {
				info = &got
			}
			infos[j.ProjectID] = info
		}
		if info != nil {
			visible = append(visible, j)
		}
	}
	page := store.Window(visible, q.Offset, q.Limit)
	var owners map[int64]*Pipeline
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		owners, err = pipelinesOf(tx, page)
		return err
	}); err != nil {
		return nil, 0, err
	}
	out := []cicd.RunnerJob{}
	for _, j := range page {
		out = append(out, cicd.RunnerJob{Job: jobRecord(j, owners[j.PipelineID]), Project: runnerProject(infos[j.ProjectID])})
	}
	return out, len(visible), nil
}

// ProjectRunners implements cicd.Service.
func (s *Service) ProjectRunners(ctx context.Context, project, scope string, offset, limit int) ([]cicd.Runner, int, error) {
	info, err := s.access.Require(ctx, project, projects.AdminProject)
	if err != nil {
		return nil, 0, err
	}
	keep, err := scopeOf(scope, "active", "paused", "online", "specific", "shared")
	if err != nil {
		return nil, 0, err
	}
	list, err := s.allRunners(ctx)
	if err != nil {
		return nil, 0, err
	}
	var out []*Runner
	for _, r := range list {
		if keep(r) && (r.IsShared || slices.Contains(r.Projects, info.ID)) {
			out = append(out, r)
		}
	}
	return runnerPage(out, offset, limit), len(out), nil
}

// EnableProjectRunner implements cicd.Service.
func (s *Service) EnableProjectRunner(ctx context.Context, project string, runner *cicd.RunnerID) (cicd.Runner, error) {
	info, err := s.access.Require(ctx, project, projects.AdminProject)
	if err != nil {
		return cicd.Runner{}, err
	}
	if runner == nil {
		return cicd.Runner{}, &cicd.MissingError{Fields: []string{"runner_id"}}
	}
	r, err := s.loadRunner(ctx, int64(*runner))
	if err != nil {
		return cicd.Runner{}, err
	}
	switch {
	case r.IsShared:
		return cicd.Runner{}, cicd.ErrRunnerIsShared
	case r.Locked:
		return cicd.Runner{}, cicd.ErrRunnerLocked
	case !auth.FromContext(ctx).IsAdmin() && !s.ownsRunner(ctx, r):
		return cicd.Runner{}, cicd.ErrNoRunnerAccess
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := runners.Get(tx, r.ID)
		if errors.Is(err, store.ErrNotFound) {
			return cicd.ErrRunnerNotFound
		} else if err != nil {
			return err
		}
		if slices.Contains(cur.Projects, info.ID) {
			return cicd.ErrRunnerAlreadyEnabled
		}
		cur.Projects = append(cur.Projects, info.ID)
		r = cur
		return runners.Update(tx, cur)
	})
	if err != nil {
		return cicd.Runner{}, err
	}
	s.runnerQueue.bump()
	s.wakeScheduler()
	return runnerRecord(r), nil
}

// DisableProjectRunner implements cicd.Service.
func (s *Service) DisableProjectRunner(ctx context.Context, project string, runner cicd.RunnerID) error {
	info, err := s.access.Require(ctx, project, projects.AdminProject)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		r, err := runners.Get(tx, int64(runner))
		if errors.Is(err, store.ErrNotFound) || err == nil && !slices.Contains(r.Projects, info.ID) {
			return cicd.ErrRunnerNotFound
		} else if err != nil {
			return err
		}
		if len(r.Projects) == 1 {
			return cicd.ErrRunnerLastProject
		}
		r.Projects = slices.DeleteFunc(r.Projects, func(p int64) bool { return p == info.ID })
		return runners.Update(tx, r)
	})
	if err == nil {
		s.runnerQueue.bump()
	}
	return err
}

// RegistrationToken implements cicd.Service.
func (s *Service) RegistrationToken(ctx context.Context) (string, error) {
	if !auth.FromContext(ctx).IsAdmin() {
		return "", cicd.ErrAdminOnly
	}
	return s.registrationToken(ctx)
}

// ResetRegistrationToken implements cicd.Service.
func (s *Service) ResetRegistrationToken(ctx context.Context) (string, error) {
	if !auth.FromContext(ctx).IsAdmin() {
		return "", cicd.ErrAdminOnly
	}
	return s.resetRegistrationToken(ctx, true)
}
