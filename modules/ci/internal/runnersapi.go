package internal

// The runners API for people (GitLab 9.x lib/api/runners.rb): a user's
// runners (those of the projects they administer), every runner for
// administrators, a runner's details, edit and removal, its jobs, and the
// runners of a project with enabling and disabling one there.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// RunnerView is GitLab's Runner entity.
type RunnerView struct {
	ID          uint64  `json:"id"`
	Description string  `json:"description"`
	Active      bool    `json:"active"`
	IsShared    bool    `json:"is_shared"`
	Name        *string `json:"name"`
}

// RunnerProjectView is a project in a runner's details.
type RunnerProjectView struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
}

// RunnerDetailsView is GitLab's RunnerDetails entity (the token is only
// stored hashed, so it is never shown).
type RunnerDetailsView struct {
	RunnerView
	TagList      []string            `json:"tag_list"`
	RunUntagged  bool                `json:"run_untagged"`
	Locked       bool                `json:"locked"`
	Version      *string             `json:"version"`
	Revision     *string             `json:"revision"`
	Platform     *string             `json:"platform"`
	Architecture *string             `json:"architecture"`
	ContactedAt  *api.Time           `json:"contacted_at"`
	Projects     []RunnerProjectView `json:"projects"`
}

func runnerProjectView(info *projects.ProjectInfo) RunnerProjectView {
	return RunnerProjectView{ID: info.ID, Name: info.Name, NameWithNamespace: info.NameWithNamespace,
		Path: info.Path, PathWithNamespace: info.PathWithNamespace}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func runnerView(r *Runner) RunnerView {
	return RunnerView{ID: r.ID, Description: r.Description, Active: r.Active, IsShared: r.IsShared, Name: nullable(r.Name)}
}

// runnerRef is the runner of a job view, nil when none ran it.
func (s *Service) runnerRef(ctx context.Context, id uint64) *RunnerView {
	if id == 0 {
		return nil
	}
	var v *RunnerView
	_ = s.db.View(ctx, func(tx *store.Tx) error {
		r, err := runners.Get(tx, id)
		if err == nil {
			rv := runnerView(r)
			v = &rv
		}
		return nil
	})
	return v
}

func (s *Service) runnerDetails(ctx context.Context, r *Runner) RunnerDetailsView {
	v := RunnerDetailsView{RunnerView: runnerView(r), TagList: r.Tags, RunUntagged: r.RunUntagged, Locked: r.Locked,
		Version: nullable(r.Version), Revision: nullable(r.Revision), Platform: nullable(r.Platform),
		Architecture: nullable(r.Architecture), Projects: []RunnerProjectView{}}
	if v.TagList == nil {
		v.TagList = []string{}
	}
	if r.ContactedAt != nil {
		v.ContactedAt = api.TimePtr(*r.ContactedAt)
	}
	for _, pid := range r.Projects {
		// Only the projects the caller sees (all of them for an admin).
		info, err := s.access.ResolveID(ctx, int64(pid))
		if err != nil {
			continue
		}
		v.Projects = append(v.Projects, runnerProjectView(&info))
	}
	return v
}

// ownsRunner: the caller administers one of the runner's projects.
func (s *Service) ownsRunner(ctx context.Context, r *Runner) bool {
	for _, pid := range r.Projects {
		if _, err := s.access.RequireID(ctx, int64(pid), projects.AdminProject); err == nil {
			return true
		}
	}
	return false
}

// The runners API's refusals, mapped in registerRunners.
var (
	errNoAccess       = errors.New("ci: no access to the runner")
	errRunnerIsShared = errors.New("ci: the runner is shared")
)

// RunnerPath is a runner's :runner_id; exported so that inputs can
// embed it (huma skips unexported embedded structs).
type RunnerPath struct {
	RunnerID uint64 `path:"runner_id"`
}

func (s *Service) loadRunner(ctx context.Context, id uint64) (*Runner, error) {
	var r *Runner
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		r, err = runners.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return errRunnerNotFound
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

func scopeOf(scope string, allowed ...string) (func(*Runner) bool, error) {
	if scope == "" {
		return func(*Runner) bool { return true }, nil
	}
	if !slices.Contains(allowed, scope) {
		return nil, api.NotValidValue("scope")
	}
	return runnerScopes[scope], nil
}

type listRunnersInput struct {
	api.PageParams
	Scope string `query:"scope" doc:"active, paused or online (and specific or shared for /runners/all and a project's runners)"`
}

type runnersOutput struct {
	api.PageHeaders
	Body []RunnerView
}

func (s *Service) listRunners(ctx context.Context, in *listRunnersInput, all bool) (*runnersOutput, error) {
	allowed := []string{"active", "paused", "online"}
	if all {
		allowed = append(allowed, "specific", "shared")
	}
	keep, err := scopeOf(in.Scope, allowed...)
	if err != nil {
		return nil, err
	}
	list, err := s.allRunners(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Runner
	for _, r := range list {
		if keep(r) && (all || !r.IsShared && s.ownsRunner(ctx, r)) {
			out = append(out, r)
		}
	}
	views := []RunnerView{}
	for _, r := range api.Window(out, in.PageParams) {
		views = append(views, runnerView(r))
	}
	return &runnersOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(out)), Body: views}, nil
}

type runnerOutput struct {
	Body *RunnerDetailsView
}

// runnerFor loads a runner the caller may see (show) or change.
func (s *Service) runnerFor(ctx context.Context, id uint64, change bool) (*Runner, error) {
	r, err := s.loadRunner(ctx, id)
	if err != nil {
		return nil, err
	}
	if auth.FromContext(ctx).IsAdmin() {
		return r, nil
	}
	if r.IsShared {
		if change {
			return nil, errRunnerIsShared
		}
		return r, nil
	}
	if !s.ownsRunner(ctx, r) {
		return nil, errNoAccess
	}
	return r, nil
}

func (s *Service) getRunner(ctx context.Context, in *RunnerPath) (*runnerOutput, error) {
	r, err := s.runnerFor(ctx, in.RunnerID, false)
	if err != nil {
		return nil, err
	}
	v := s.runnerDetails(ctx, r)
	return &runnerOutput{Body: &v}, nil
}

type updateRunnerInput struct {
	RunnerPath
	Body struct {
		Description *string   `json:"description,omitempty"`
		Active      *bool     `json:"active,omitempty"`
		TagList     *[]string `json:"tag_list,omitempty"`
		RunUntagged *bool     `json:"run_untagged,omitempty"`
		Locked      *bool     `json:"locked,omitempty"`
	}
}

func (s *Service) updateRunner(ctx context.Context, in *updateRunnerInput) (*runnerOutput, error) {
	b := in.Body
	if b.Description == nil && b.Active == nil && b.TagList == nil && b.RunUntagged == nil && b.Locked == nil {
		return nil, api.AtLeastOne("description", "active", "tag_list", "run_untagged", "locked")
	}
	if _, err := s.runnerFor(ctx, in.RunnerID, true); err != nil {
		return nil, err
	}
	var tags []string
	if b.TagList != nil {
		var split []string
		for _, t := range *b.TagList {
			split = append(split, strings.Split(t, ",")...)
		}
		var err error
		if tags, err = normalizeTags(split); err != nil {
			return nil, api.FieldErrors{"tags_list": {err.Error()}}
		}
	}
	if b.Description != nil && len(*b.Description) > maxRunnerDescription {
		return nil, api.FieldErrors{"description": {"is too long (maximum is 1024 characters)"}}
	}
	var r *Runner
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = runners.Get(tx, in.RunnerID); errors.Is(err, store.ErrNotFound) {
			return errRunnerNotFound
		} else if err != nil {
			return err
		}
		if b.Description != nil {
			r.Description = *b.Description
		}
		if b.Active != nil {
			r.Active = *b.Active
		}
		if b.TagList != nil {
			r.Tags = tags
		}
		if b.RunUntagged != nil {
			r.RunUntagged = *b.RunUntagged
		}
		if b.Locked != nil {
			r.Locked = *b.Locked
		}
		if !r.RunUntagged && len(r.Tags) == 0 {
			return api.FieldErrors{"tags_list": {"can not be empty when runner is not allowed to pick untagged jobs"}}
		}
		return runners.Update(tx, r)
	})
	if err != nil {
		return nil, err
	}
	s.runnerQueue.bump()
	v := s.runnerDetails(ctx, r)
	return &runnerOutput{Body: &v}, nil
}

func (s *Service) removeRunner(ctx context.Context, in *RunnerPath) (*struct{}, error) {
	r, err := s.runnerFor(ctx, in.RunnerID, true)
	if err != nil {
		return nil, err
	}
	if !auth.FromContext(ctx).IsAdmin() && len(r.Projects) > 1 {
		return nil, api.Forbidden("Runner associated with more than one project")
	}
	return nil, s.deleteRunner(ctx, r.ID)
}

type runnerJobsInput struct {
	RunnerPath
	api.PageParams
	Status string `query:"status" doc:"running, success, failed or canceled"`
}

// RunnerJobView is a job in a runner's list: the job with its project.
type RunnerJobView struct {
	JobView
	Project *RunnerProjectView `json:"project"`
}

type runnerJobsOutput struct {
	api.PageHeaders
	Body []RunnerJobView
}

func (s *Service) runnerJobs(ctx context.Context, in *runnerJobsInput) (*runnerJobsOutput, error) {
	switch in.Status {
	case "", StatusRunning, StatusSuccess, StatusFailed, StatusCanceled:
	default:
		return nil, api.NotValidValue("status")
	}
	r, err := s.loadRunner(ctx, in.RunnerID)
	if err != nil {
		return nil, err
	}
	admin := auth.FromContext(ctx).IsAdmin()
	switch {
	case admin:
	case r.IsShared:
		return nil, errRunnerIsShared
	case !s.ownsRunner(ctx, r):
		return nil, errNoAccess
	}
	var list []*Job
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := jobs.IDsBy(tx, "runner", u64(r.ID))
		if err != nil {
			return err
		}
		for i := len(ids) - 1; i >= 0; i-- {
			j, err := jobs.Get(tx, ids[i])
			if err != nil {
				return err
			}
			if in.Status == "" || j.Status == in.Status {
				list = append(list, j)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Only the jobs of projects whose jobs the caller may read.
	infos := map[uint64]*projects.ProjectInfo{}
	var visible []*Job
	for _, j := range list {
		info, seen := infos[j.ProjectID]
		if !seen {
			if got, err := s.access.RequireID(ctx, int64(j.ProjectID), projects.ReadJobs); err == nil {
				info = &got
			}
			infos[j.ProjectID] = info
		}
		if info != nil {
			visible = append(visible, j)
		}
	}
	page := api.Window(visible, in.PageParams)
	var owners map[uint64]*Pipeline
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		owners, err = pipelinesOf(tx, page)
		return err
	}); err != nil {
		return nil, err
	}
	out := &runnerJobsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(visible)), Body: []RunnerJobView{}}
	for _, j := range page {
		project := runnerProjectView(infos[j.ProjectID])
		out.Body = append(out.Body, RunnerJobView{JobView: s.jobView(ctx, jobRecord(j, owners[j.PipelineID]), true), Project: &project})
	}
	return out, nil
}

type projectRunnersInput struct {
	ProjectPath
	api.PageParams
	Scope string `query:"scope" doc:"active, paused, online, specific or shared"`
}

func (s *Service) projectRunners(ctx context.Context, in *projectRunnersInput) (*runnersOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	keep, err := scopeOf(in.Scope, "active", "paused", "online", "specific", "shared")
	if err != nil {
		return nil, err
	}
	list, err := s.allRunners(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Runner
	for _, r := range list {
		if keep(r) && (r.IsShared || slices.Contains(r.Projects, uint64(info.ID))) {
			out = append(out, r)
		}
	}
	views := []RunnerView{}
	for _, r := range api.Window(out, in.PageParams) {
		views = append(views, runnerView(r))
	}
	return &runnersOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(out)), Body: views}, nil
}

type enableRunnerInput struct {
	ProjectPath
	Body struct {
		RunnerID *uint64 `json:"runner_id,omitempty"`
	}
}

type runnerViewOutput struct {
	Body *RunnerView
}

func (s *Service) enableRunner(ctx context.Context, in *enableRunnerInput) (*runnerViewOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	if in.Body.RunnerID == nil {
		return nil, api.Missing("runner_id")
	}
	r, err := s.loadRunner(ctx, *in.Body.RunnerID)
	if err != nil {
		return nil, err
	}
	switch {
	case r.IsShared:
		return nil, errRunnerIsShared
	case r.Locked:
		return nil, api.Forbidden("Runner is locked")
	case !auth.FromContext(ctx).IsAdmin() && !s.ownsRunner(ctx, r):
		return nil, errNoAccess
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := runners.Get(tx, r.ID)
		if errors.Is(err, store.ErrNotFound) {
			return errRunnerNotFound
		} else if err != nil {
			return err
		}
		if slices.Contains(cur.Projects, uint64(info.ID)) {
			return api.Conflict("Runner was already enabled for this project")
		}
		cur.Projects = append(cur.Projects, uint64(info.ID))
		r = cur
		return runners.Update(tx, cur)
	})
	if err != nil {
		return nil, err
	}
	s.runnerQueue.bump()
	s.wakeScheduler()
	v := runnerView(r)
	return &runnerViewOutput{Body: &v}, nil
}

type disableRunnerInput struct {
	ProjectPath
	RunnerID uint64 `path:"runner_id"`
}

func (s *Service) disableRunner(ctx context.Context, in *disableRunnerInput) (*struct{}, error) {
	info, err := s.access.Require(ctx, in.ID, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		r, err := runners.Get(tx, in.RunnerID)
		if errors.Is(err, store.ErrNotFound) || err == nil && !slices.Contains(r.Projects, uint64(info.ID)) {
			return errRunnerNotFound
		} else if err != nil {
			return err
		}
		if len(r.Projects) == 1 {
			return api.Forbidden("Only one project associated with the runner. Please remove the runner instead")
		}
		r.Projects = slices.DeleteFunc(r.Projects, func(p uint64) bool { return p == uint64(info.ID) })
		return runners.Update(tx, r)
	})
	if err == nil {
		s.runnerQueue.bump()
	}
	return nil, err
}

type registrationTokenOutput struct {
	Body struct {
		Token string `json:"token"`
	}
}

// resetRegistrationTokenOp makes a new shared registration token and
// shows it (GitLab's admin endpoint of later versions; the admin command
// `fennec ci runners-token` prints the current one).
func (s *Service) resetRegistrationTokenOp(ctx context.Context, _ *struct{}) (*registrationTokenOutput, error) {
	token, err := s.resetRegistrationToken(ctx, true)
	if err != nil {
		return nil, api.Forbidden(err.Error())
	}
	out := &registrationTokenOutput{}
	out.Body.Token = token
	return out, nil
}

func (s *Service) registerRunners(a *api.API) {
	a.MapError(errRunnerNotFound, func(error) *api.Error { return api.NotFound("Runner") })
	a.MapError(errNoAccess, func(error) *api.Error { return api.Forbidden("No access granted") })
	a.MapError(errRunnerIsShared, func(error) *api.Error { return api.Forbidden("Runner is shared") })
	tags := []string{"runners"}
	api.Register(a, api.Op{ID: "list-runners", Method: http.MethodGet, Path: "/runners", Tags: tags,
		Summary: "The runners of the projects the caller administers", Access: api.SignedIn},
		func(ctx context.Context, in *listRunnersInput) (*runnersOutput, error) {
			return s.listRunners(ctx, in, false)
		})
	api.Register(a, api.Op{ID: "list-all-runners", Method: http.MethodGet, Path: "/runners/all", Tags: tags,
		Summary: "Every runner (administrators)", Access: api.AdminOnly},
		func(ctx context.Context, in *listRunnersInput) (*runnersOutput, error) {
			return s.listRunners(ctx, in, true)
		})
	api.Register(a, api.Op{ID: "reset-runners-registration-token", Method: http.MethodPost, Path: "/runners/reset_registration_token", Tags: tags,
		Summary: "A new shared runners registration token (administrators)", Access: api.AdminOnly}, s.resetRegistrationTokenOp)
	api.Register(a, api.Op{ID: "get-runner", Method: http.MethodGet, Path: "/runners/{runner_id}", Tags: tags,
		Summary: "A runner's details", Access: api.SignedIn}, s.getRunner)
	api.Register(a, api.Op{ID: "update-runner", Method: http.MethodPut, Path: "/runners/{runner_id}", Tags: tags,
		Summary: "Edit a runner", Access: api.SignedIn}, s.updateRunner)
	api.Register(a, api.Op{ID: "delete-runner", Method: http.MethodDelete, Path: "/runners/{runner_id}", Tags: tags,
		Summary: "Remove a runner", Access: api.SignedIn}, s.removeRunner)
	api.Register(a, api.Op{ID: "list-runner-jobs", Method: http.MethodGet, Path: "/runners/{runner_id}/jobs", Tags: tags,
		Summary: "The jobs a runner took, newest first", Access: api.SignedIn}, s.runnerJobs)
	api.Register(a, api.Op{ID: "list-project-runners", Method: http.MethodGet, Path: "/projects/{id}/runners", Tags: tags,
		Summary: "The runners a project's jobs may run on (Master)", Access: api.SignedIn}, s.projectRunners)
	api.Register(a, api.Op{ID: "enable-project-runner", Method: http.MethodPost, Path: "/projects/{id}/runners", Tags: tags,
		Summary: "Enable a runner on a project", Access: api.SignedIn}, s.enableRunner)
	api.Register(a, api.Op{ID: "disable-project-runner", Method: http.MethodDelete, Path: "/projects/{id}/runners/{runner_id}", Tags: tags,
		Summary: "Disable a runner on a project", Access: api.SignedIn}, s.disableRunner)
}

// timeSince is time.Since in UTC terms (contacted_at is stored in UTC).
func timeSince(t time.Time) time.Duration { return time.Now().UTC().Sub(t) }
