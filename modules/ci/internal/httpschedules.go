package internal

// The API of pipeline schedules: the HTTP adapter over schedules.go, in
// GitLab's shapes (the list without last_pipeline and variables; a
// schedule's variables only to whoever may edit it).

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/identity"
)

// ScheduleView is a schedule as GitLab's list shows it.
type ScheduleView struct {
	ID           int64               `json:"id"`
	Description  string              `json:"description"`
	Ref          string              `json:"ref"`
	Cron         string              `json:"cron"`
	CronTimezone string              `json:"cron_timezone"`
	NextRunAt    *api.Time           `json:"next_run_at"`
	Active       bool                `json:"active"`
	CreatedAt    api.Time            `json:"created_at"`
	UpdatedAt    api.Time            `json:"updated_at"`
	Owner        *identity.BasicUser `json:"owner"`
}

// ScheduleDetails is one schedule: its last pipeline and, to those who
// may edit it, its variables.
type ScheduleDetails struct {
	ScheduleView
	LastPipeline *PipelineRefShort      `json:"last_pipeline"`
	Variables    []ScheduleVariableView `json:"variables,omitempty"`
}

// PipelineRefShort is a schedule's last_pipeline.
type PipelineRefShort struct {
	ID     int64  `json:"id"`
	SHA    string `json:"sha"`
	Ref    string `json:"ref"`
	Status string `json:"status"`
}

// ScheduleVariableView is a schedule's variable.
type ScheduleVariableView struct {
	Key          string `json:"key"`
	VariableType string `json:"variable_type"`
	Value        string `json:"value"`
}

func scheduleVariableView(v ScheduleVariable) ScheduleVariableView {
	return ScheduleVariableView{Key: v.Key, VariableType: v.VariableType, Value: v.Value}
}

func (s *Service) scheduleView(ctx context.Context, r ScheduleRecord) ScheduleView {
	v := ScheduleView{ID: r.ID, Description: r.Description, Ref: r.Ref, Cron: r.Cron, CronTimezone: r.CronTimezone,
		Active: r.Active, CreatedAt: api.NewTime(r.CreatedAt), UpdatedAt: api.NewTime(r.UpdatedAt)}
	if !r.NextRunAt.IsZero() {
		v.NextRunAt = api.TimePtr(r.NextRunAt)
	}
	if u, err := s.users.UserByID(ctx, r.OwnerID); err == nil {
		b := identity.NewBasicUser(api.ExternalURLFrom(ctx), u)
		v.Owner = &b
	}
	return v
}

func (s *Service) scheduleDetails(ctx context.Context, r ScheduleRecord) ScheduleDetails {
	d := ScheduleDetails{ScheduleView: s.scheduleView(ctx, r)}
	if p := r.LastPipeline; p != nil {
		d.LastPipeline = &PipelineRefShort{ID: p.ID, SHA: p.SHA, Ref: p.Ref, Status: p.Status}
	}
	if r.Vars != nil {
		d.Variables = []ScheduleVariableView{}
		for _, v := range r.Vars {
			d.Variables = append(d.Variables, scheduleVariableView(v))
		}
	}
	return d
}

// SchedulePath is a schedule's :id and :pipeline_schedule_id.
type SchedulePath struct {
	ProjectPath
	ScheduleID int64 `path:"pipeline_schedule_id"`
}

// ScheduleVariablePath adds a variable's :key.
type ScheduleVariablePath struct {
	SchedulePath
	Key string `path:"key"`
}

type scheduleOutput struct {
	Body *ScheduleDetails
}

type schedulesOutput struct {
	api.PageHeaders
	Body []ScheduleView
}

type scheduleVariableOutput struct {
	Body *ScheduleVariableView
}

type scheduleBody struct {
	Description  *string `json:"description,omitempty" doc:"What the schedule is for"`
	Ref          *string `json:"ref,omitempty" doc:"The branch or tag to run pipelines for"`
	Cron         *string `json:"cron,omitempty" doc:"A five-field cron spec (minute hour day month weekday)"`
	CronTimezone *string `json:"cron_timezone,omitempty" doc:"An IANA time zone (Europe/Paris); UTC by default"`
	Active       *bool   `json:"active,omitempty" doc:"Whether the schedule runs; true by default"`
}

func (b scheduleBody) input() ScheduleInput {
	return ScheduleInput{Description: b.Description, Ref: b.Ref, Cron: b.Cron, CronTimezone: b.CronTimezone, Active: b.Active}
}

func (s *Service) scheduleAnswer(ctx context.Context, r ScheduleRecord, err error) (*scheduleOutput, error) {
	if err != nil {
		return nil, err
	}
	d := s.scheduleDetails(ctx, r)
	return &scheduleOutput{Body: &d}, nil
}

func (s *Service) listSchedules(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
	Scope string `query:"scope" enum:"active,inactive" doc:"active or inactive"`
}) (*schedulesOutput, error) {
	list, total, err := s.Schedules(ctx, in.ID, in.Scope, in.Offset(), in.Limit())
	if err != nil {
		return nil, err
	}
	out := &schedulesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []ScheduleView{}}
	for _, r := range list {
		out.Body = append(out.Body, s.scheduleView(ctx, r))
	}
	return out, nil
}

func (s *Service) getSchedule(ctx context.Context, in *SchedulePath) (*scheduleOutput, error) {
	r, err := s.GetSchedule(ctx, in.ID, in.ScheduleID)
	return s.scheduleAnswer(ctx, r, err)
}

func (s *Service) createSchedule(ctx context.Context, in *struct {
	ProjectPath
	Body scheduleBody
}) (*scheduleOutput, error) {
	var missing []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"description", in.Body.Description}, {"ref", in.Body.Ref}, {"cron", in.Body.Cron}} {
		if f.v == nil {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, api.Missing(missing...)
	}
	r, err := s.CreateSchedule(ctx, in.ID, in.Body.input())
	return s.scheduleAnswer(ctx, r, err)
}

func (s *Service) updateSchedule(ctx context.Context, in *struct {
	SchedulePath
	Body scheduleBody
}) (*scheduleOutput, error) {
	r, err := s.UpdateSchedule(ctx, in.ID, in.ScheduleID, in.Body.input())
	return s.scheduleAnswer(ctx, r, err)
}

func (s *Service) takeScheduleOwnership(ctx context.Context, in *SchedulePath) (*scheduleOutput, error) {
	r, err := s.TakeScheduleOwnership(ctx, in.ID, in.ScheduleID)
	return s.scheduleAnswer(ctx, r, err)
}

func (s *Service) deleteSchedule(ctx context.Context, in *SchedulePath) (*noContent, error) {
	if err := s.DeleteSchedule(ctx, in.ID, in.ScheduleID); err != nil {
		return nil, err
	}
	return &noContent{}, nil
}

type createdMessage struct {
	Body struct {
		Message string `json:"message"`
	}
}

// playSchedule answers GitLab's 201 {"message":"201 Created"}; the
// pipeline is made before the answer (GitLab queues it).
func (s *Service) playSchedule(ctx context.Context, in *SchedulePath) (*createdMessage, error) {
	if _, err := s.PlaySchedule(ctx, in.ID, in.ScheduleID); err != nil {
		return nil, err
	}
	out := &createdMessage{}
	out.Body.Message = "201 Created"
	return out, nil
}

func (s *Service) listSchedulePipelines(ctx context.Context, in *struct {
	SchedulePath
	api.PageParams
}) (*pipelinesOutput, error) {
	list, total, err := s.SchedulePipelines(ctx, in.ID, in.ScheduleID, in.Offset(), in.Limit())
	if err != nil {
		return nil, err
	}
	out := &pipelinesOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []PipelineRef{}}
	for _, p := range list {
		out.Body = append(out.Body, PipelineRef{ID: int64(p.ID), ProjectID: p.ProjectID, SHA: p.SHA, Ref: p.Ref, Status: p.Status})
	}
	return out, nil
}

type scheduleVariableBody struct {
	Value        *string `json:"value,omitempty" doc:"The variable's value"`
	VariableType *string `json:"variable_type,omitempty" enum:"env_var,file" doc:"env_var (default) or file"`
}

func scheduleVariableAnswer(v ScheduleVariable, err error) (*scheduleVariableOutput, error) {
	if err != nil {
		return nil, err
	}
	view := scheduleVariableView(v)
	return &scheduleVariableOutput{Body: &view}, nil
}

func (s *Service) createScheduleVariable(ctx context.Context, in *struct {
	SchedulePath
	Body struct {
		Key          *string `json:"key,omitempty" doc:"The variable's key"`
		Value        *string `json:"value,omitempty" doc:"The variable's value"`
		VariableType *string `json:"variable_type,omitempty" enum:"env_var,file" doc:"env_var (default) or file"`
	}
}) (*scheduleVariableOutput, error) {
	var missing []string
	if in.Body.Key == nil {
		missing = append(missing, "key")
	}
	if in.Body.Value == nil {
		missing = append(missing, "value")
	}
	if len(missing) > 0 {
		return nil, api.Missing(missing...)
	}
	return scheduleVariableAnswer(s.ChangeScheduleVariable(ctx, in.ID, in.ScheduleID, true,
		ScheduleVariableChange{Key: *in.Body.Key, Value: in.Body.Value, VariableType: in.Body.VariableType}))
}

func (s *Service) updateScheduleVariable(ctx context.Context, in *struct {
	ScheduleVariablePath
	Body scheduleVariableBody
}) (*scheduleVariableOutput, error) {
	value := in.Body.Value
	if value == nil && in.Body.VariableType == nil {
		return nil, api.Missing("value")
	}
	return scheduleVariableAnswer(s.ChangeScheduleVariable(ctx, in.ID, in.ScheduleID, false,
		ScheduleVariableChange{Key: in.Key, Value: value, VariableType: in.Body.VariableType}))
}

func (s *Service) deleteScheduleVariable(ctx context.Context, in *ScheduleVariablePath) (*scheduleVariableOutput, error) {
	return scheduleVariableAnswer(s.ChangeScheduleVariable(ctx, in.ID, in.ScheduleID, false, ScheduleVariableChange{Key: in.Key}))
}

func (s *Service) registerSchedules(a *api.API) {
	a.MapError(errScheduleNotFound, func(error) *api.Error { return api.NotFound("Pipeline Schedule") })
	a.MapError(errScheduleVariableNotFound, func(error) *api.Error { return api.NotFound("Pipeline Schedule Variable") })
	a.MapError(errScheduleVariableTaken, func(error) *api.Error {
		return api.Validation(map[string][]string{"key": {"has already been taken"}})
	})
	a.MapError(errNotScheduleOwner, func(error) *api.Error { return api.Forbidden("") })
	a.MapError(errScheduleOwnerMayNotRun, func(error) *api.Error {
		return api.Validation(map[string][]string{"base": {"Insufficient permissions to create a new pipeline"}})
	})
	a.MapError(errInvalidSchedule, func(err error) *api.Error {
		var e *scheduleInvalid
		if errors.As(err, &e) {
			return api.Validation(e.fields)
		}
		return nil
	})
	tags := []string{"pipeline_schedules"}
	base := "/projects/{id}/pipeline_schedules"
	one := base + "/{pipeline_schedule_id}"
	vars := one + "/variables"
	api.Register(a, api.Op{ID: "list-pipeline-schedules", Method: http.MethodGet, Path: base, Tags: tags,
		Summary: "A project's pipeline schedules (Reporter)", Access: api.Public}, s.listSchedules)
	api.Register(a, api.Op{ID: "get-pipeline-schedule", Method: http.MethodGet, Path: one, Tags: tags,
		Summary: "A pipeline schedule", Access: api.Public}, s.getSchedule)
	api.Register(a, api.Op{ID: "list-pipeline-schedule-pipelines", Method: http.MethodGet, Path: one + "/pipelines", Tags: tags,
		Summary: "The pipelines a schedule made, newest first", Access: api.Public}, s.listSchedulePipelines)
	api.Register(a, api.Op{ID: "create-pipeline-schedule", Method: http.MethodPost, Path: base, Tags: tags,
		Summary: "Create a pipeline schedule owned by the caller (Developer)", Access: api.SignedIn}, s.createSchedule)
	api.Register(a, api.Op{ID: "update-pipeline-schedule", Method: http.MethodPut, Path: one, Tags: tags,
		Summary: "Edit a pipeline schedule (its owner or a Maintainer)", Access: api.SignedIn}, s.updateSchedule)
	api.Register(a, api.Op{ID: "take-ownership-pipeline-schedule", Method: http.MethodPost, Path: one + "/take_ownership", Tags: tags,
		Summary: "Become the schedule's owner (Maintainer)", Access: api.SignedIn}, s.takeScheduleOwnership)
	api.Register(a, api.Op{ID: "delete-pipeline-schedule", Method: http.MethodDelete, Path: one, Tags: tags,
		Summary: "Delete a pipeline schedule (its owner or a Maintainer)", Access: api.SignedIn}, s.deleteSchedule)
	api.Register(a, api.Op{ID: "play-pipeline-schedule", Method: http.MethodPost, Path: one + "/play", Tags: tags,
		Summary: "Run the schedule's pipeline now, as the caller (Developer)", Access: api.SignedIn}, s.playSchedule)
	api.Register(a, api.Op{ID: "create-pipeline-schedule-variable", Method: http.MethodPost, Path: vars, Tags: tags,
		Summary: "Add a variable to a schedule", Access: api.SignedIn}, s.createScheduleVariable)
	api.Register(a, api.Op{ID: "update-pipeline-schedule-variable", Method: http.MethodPut, Path: vars + "/{key}", Tags: tags,
		Summary: "Edit a schedule's variable", Access: api.SignedIn}, s.updateScheduleVariable)
	api.Register(a, api.Op{ID: "delete-pipeline-schedule-variable", Method: http.MethodDelete, Path: vars + "/{key}", Tags: tags,
		Summary: "Delete a schedule's variable", Access: api.SignedIn, Status: http.StatusAccepted}, s.deleteScheduleVariable)
}
