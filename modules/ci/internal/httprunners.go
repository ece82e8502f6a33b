package internal

// The runners API for people (GitLab 9.x lib/api/runners.rb): the HTTP
// adapter over the runners' commands of cicd.Service (runnermanage.go).

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// RunnerView is GitLab's Runner entity.
type RunnerView struct {
	ID          int64   `json:"id"`
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

func runnerProjectView(p cicd.RunnerProject) RunnerProjectView {
	return RunnerProjectView{ID: p.ID, Name: p.Name, NameWithNamespace: p.NameWithNamespace,
		Path: p.Path, PathWithNamespace: p.PathWithNamespace}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func runnerView(r cicd.Runner) RunnerView {
	return RunnerView{ID: int64(r.ID), Description: r.Description, Active: r.Active, IsShared: r.IsShared, Name: nullable(r.Name)}
}

// runnerRef is the runner of a job view, nil when none ran it.
func (s *Service) runnerRef(ctx context.Context, id int64) *RunnerView {
	r, ok := s.runnerBrief(ctx, id)
	if !ok {
		return nil
	}
	v := runnerView(r)
	return &v
}

func runnerDetailsView(r cicd.Runner) RunnerDetailsView {
	v := RunnerDetailsView{RunnerView: runnerView(r), TagList: r.Tags, RunUntagged: r.RunUntagged, Locked: r.Locked,
		Version: nullable(r.Version), Revision: nullable(r.Revision), Platform: nullable(r.Platform),
		Architecture: nullable(r.Architecture), Projects: []RunnerProjectView{}}
	if v.TagList == nil {
		v.TagList = []string{}
	}
	if r.ContactedAt != nil {
		v.ContactedAt = api.TimePtr(*r.ContactedAt)
	}
	for _, p := range r.Projects {
		v.Projects = append(v.Projects, runnerProjectView(p))
	}
	return v
}

// RunnerPath is a runner's :runner_id; exported so that inputs can
// embed it (huma skips unexported embedded structs).
type RunnerPath struct {
	RunnerID int64 `path:"runner_id"`
}

type listRunnersInput struct {
	api.PageParams
	Scope string `query:"scope" doc:"active, paused or online (and specific or shared for /runners/all and a project's runners)"`
}

type runnersOutput struct {
	api.PageHeaders
	Body []RunnerView
}

// runnersAnswer renders a page of runners.
func runnersAnswer(ctx context.Context, page api.PageParams, list []cicd.Runner, total int, err error) (*runnersOutput, error) {
	if err != nil {
		return nil, err
	}
	views := []RunnerView{}
	for _, r := range list {
		views = append(views, runnerView(r))
	}
	return &runnersOutput{PageHeaders: api.Paginate(ctx, page, total), Body: views}, nil
}

func (s *Service) listRunners(ctx context.Context, in *listRunnersInput, all bool) (*runnersOutput, error) {
	list, total, err := s.Runners(ctx, cicd.RunnerQuery{All: all, Scope: in.Scope, Offset: in.Offset(), Limit: in.Limit()})
	return runnersAnswer(ctx, in.PageParams, list, total, err)
}

type runnerOutput struct {
	Body *RunnerDetailsView
}

func runnerAnswer(r cicd.Runner, err error) (*runnerOutput, error) {
	if err != nil {
		return nil, err
	}
	v := runnerDetailsView(r)
	return &runnerOutput{Body: &v}, nil
}

func (s *Service) getRunner(ctx context.Context, in *RunnerPath) (*runnerOutput, error) {
	return runnerAnswer(s.Runner(ctx, cicd.RunnerID(in.RunnerID)))
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
	fields := cicd.RunnerFields{Description: b.Description, Active: b.Active, RunUntagged: b.RunUntagged, Locked: b.Locked}
	if b.TagList != nil {
		// Each element may itself be a comma-separated list (GitLab's
		// tag_list is an array or "a,b").
		split := []string{}
		for _, t := range *b.TagList {
			split = append(split, strings.Split(t, ",")...)
		}
		fields.Tags = &split
	}
	return runnerAnswer(s.UpdateRunner(ctx, cicd.RunnerID(in.RunnerID), fields))
}

func (s *Service) removeRunner(ctx context.Context, in *RunnerPath) (*struct{}, error) {
	return nil, s.DeleteRunner(ctx, cicd.RunnerID(in.RunnerID))
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
	list, total, err := s.RunnerJobs(ctx, cicd.RunnerID(in.RunnerID), cicd.RunnerJobQuery{Status: in.Status,
		Offset: in.Offset(), Limit: in.Limit()})
	if err != nil {
		return nil, err
	}
	out := &runnerJobsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []RunnerJobView{}}
	for _, j := range list {
		project := runnerProjectView(j.Project)
		out.Body = append(out.Body, RunnerJobView{JobView: s.jobView(ctx, j.Job, true), Project: &project})
	}
	return out, nil
}

type projectRunnersInput struct {
	ProjectPath
	api.PageParams
	Scope string `query:"scope" doc:"active, paused, online, specific or shared"`
}

func (s *Service) projectRunners(ctx context.Context, in *projectRunnersInput) (*runnersOutput, error) {
	list, total, err := s.ProjectRunners(ctx, in.ID, in.Scope, in.Offset(), in.Limit())
	return runnersAnswer(ctx, in.PageParams, list, total, err)
}

type enableRunnerInput struct {
	ProjectPath
	Body struct {
		RunnerID *int64 `json:"runner_id,omitempty"`
	}
}

type runnerViewOutput struct {
	Body *RunnerView
}

func (s *Service) enableRunner(ctx context.Context, in *enableRunnerInput) (*runnerViewOutput, error) {
	var id *cicd.RunnerID
	if in.Body.RunnerID != nil {
		v := cicd.RunnerID(*in.Body.RunnerID)
		id = &v
	}
	r, err := s.EnableProjectRunner(ctx, in.ID, id)
	if err != nil {
		return nil, err
	}
	v := runnerView(r)
	return &runnerViewOutput{Body: &v}, nil
}

type disableRunnerInput struct {
	ProjectPath
	RunnerID int64 `path:"runner_id"`
}

func (s *Service) disableRunner(ctx context.Context, in *disableRunnerInput) (*struct{}, error) {
	return nil, s.DisableProjectRunner(ctx, in.ID, cicd.RunnerID(in.RunnerID))
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
	token, err := s.ResetRegistrationToken(ctx)
	if err != nil {
		return nil, err
	}
	out := &registrationTokenOutput{}
	out.Body.Token = token
	return out, nil
}

// mapRunnerErrors are GitLab's answers to the runners' refusals.
func mapRunnerErrors(a *api.API) {
	forbidden := func(reason string) func(error) *api.Error {
		return func(error) *api.Error { return api.Forbidden(reason) }
	}
	field := func(name, text string) func(error) *api.Error {
		return func(error) *api.Error { return api.Validation(map[string][]string{name: {text}}) }
	}
	a.MapError(cicd.ErrRunnerNotFound, func(error) *api.Error { return api.NotFound("Runner") })
	a.MapError(cicd.ErrNoRunnerAccess, forbidden("No access granted"))
	a.MapError(cicd.ErrRunnerIsShared, forbidden("Runner is shared"))
	a.MapError(cicd.ErrAdminOnly, forbidden(""))
	a.MapError(cicd.ErrRunnerHasProjects, forbidden("Runner associated with more than one project"))
	a.MapError(cicd.ErrRunnerLocked, forbidden("Runner is locked"))
	a.MapError(cicd.ErrRunnerLastProject, forbidden("Only one project associated with the runner. Please remove the runner instead"))
	a.MapError(cicd.ErrRegistrationTokenConfigured, forbidden(cicd.ErrRegistrationTokenConfigured.Error()))
	a.MapError(cicd.ErrRunnerAlreadyEnabled, func(error) *api.Error {
		return api.Conflict("Runner was already enabled for this project")
	})
	a.MapError(cicd.ErrNoRunnerChange, func(error) *api.Error {
		return api.AtLeastOne("description", "active", "tag_list", "run_untagged", "locked")
	})
	a.MapError(cicd.ErrRunnerDescriptionTooLong, field("description", "is too long (maximum is 1024 characters)"))
	a.MapError(cicd.ErrRunnerTagsNeeded, field("tags_list", "can not be empty when runner is not allowed to pick untagged jobs"))
	a.MapError(cicd.ErrInvalidRunnerTags, func(err error) *api.Error {
		var bad *cicd.InvalidTagsError
		if errors.As(err, &bad) {
			return api.Validation(map[string][]string{"tags_list": {bad.Reason}})
		}
		return nil // an ErrInvalidRunnerTags that says nothing: a 500 (a bug)
	})
	a.MapError(cicd.ErrInvalidValue, func(err error) *api.Error {
		var bad *cicd.InvalidValueError
		if errors.As(err, &bad) {
			return api.NotValidValue(bad.Field)
		}
		return nil
	})
}

func (s *Service) registerRunners(a *api.API) {
	mapRunnerErrors(a)
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
