package internal

// Pipeline schedules (GitLab's /projects/:id/pipeline_schedules): a
// project's cron specs that run a pipeline for a ref as the schedule's
// owner, with the schedule's variables. A schedule's next run is stored
// (next_run_at), and active schedules are also keyed by it in a bucket
// of their own (schedulesDue), so the loop (schedulesloop.go) reads only
// the schedules that are due, never every row. Variables are kept sealed
// in the schedule's row; each run copies them, sealed, into a row of the
// pipeline's (scheduleRuns), written in the transaction that stores the
// pipeline, so that a later edit of the schedule does not change the
// variables of a pipeline already made.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // cron_timezone by IANA name on a host without zoneinfo

	"github.com/robfig/cron/v3"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// SourceSchedule is the source of a scheduled pipeline.
const SourceSchedule = string(pipeline.SourceSchedule)

// What a schedule's variables are sealed for.
const purposeScheduleVariables = "ci.schedule.variables"

// Bounds of what a schedule holds: GitLab's column sizes for the texts,
// and a count of variables no real schedule nears.
const (
	maxScheduleText      = 255
	maxScheduleVariables = 200
	maxScheduleValue     = 10000
)

// The variable types GitLab knows.
const (
	variableTypeEnv  = "env_var"
	variableTypeFile = "file"
)

// Errors of the schedules, mapped in httpschedules.go.
var (
	errScheduleNotFound         = errors.New("ci: no such pipeline schedule")
	errScheduleVariableNotFound = errors.New("ci: no such pipeline schedule variable")
	errScheduleVariableTaken    = errors.New("ci: the schedule has a variable of that key")
	errNotScheduleOwner         = errors.New("ci: only the schedule's owner or a Maintainer may change it")
	errInvalidSchedule          = errors.New("ci: invalid pipeline schedule")
	errScheduleOwnerMayNotRun   = errors.New("ci: the schedule's owner may not run pipelines for its ref")
)

// scheduleInvalid is errInvalidSchedule with GitLab's field messages.
type scheduleInvalid struct{ fields map[string][]string }

func (e *scheduleInvalid) Error() string {
	b, _ := json.Marshal(e.fields)
	return errInvalidSchedule.Error() + ": " + string(b)
}
func (e *scheduleInvalid) Is(target error) bool { return target == errInvalidSchedule }

func invalid(field, text string) error {
	return &scheduleInvalid{fields: map[string][]string{field: {text}}}
}

// Schedule is a project's pipeline schedule.
type Schedule struct {
	ID           int64     `json:"id"`
	ProjectID    int64     `json:"project_id"`
	Description  string    `json:"description"`
	Ref          string    `json:"ref"`
	Cron         string    `json:"cron"`
	CronTimezone string    `json:"cron_timezone"`
	Active       bool      `json:"active"`
	NextRunAt    time.Time `json:"next_run_at"`
	OwnerID      int64     `json:"owner_id"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	// LastPipelineID is the last pipeline it made (0: none yet).
	LastPipelineID int64 `json:"last_pipeline_id,omitempty"`
	// Variables are sealed: a JSON list of ScheduleVariable.
	Variables string `json:"variables,omitempty"`
}

func (s *Schedule) RecordID() int64      { return s.ID }
func (s *Schedule) SetRecordID(id int64) { s.ID = id }

// ScheduleVariable is one variable of a schedule.
type ScheduleVariable struct {
	Key          string `json:"key"`
	Value        string `json:"value"`
	VariableType string `json:"variable_type"`
}

// ScheduleRun is a pipeline a schedule made, with the variables it had
// then, sealed as the schedule's.
type ScheduleRun struct {
	ID         int64     `json:"id"`
	ScheduleID int64     `json:"schedule_id"`
	PipelineID int64     `json:"pipeline_id"`
	Variables  string    `json:"variables,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

func (r *ScheduleRun) RecordID() int64      { return r.ID }
func (r *ScheduleRun) SetRecordID(id int64) { r.ID = id }

var (
	schedules = store.NewTable[int64, Schedule]("ci.schedules",
		store.Index[Schedule]{Name: "project", Keys: func(s *Schedule) []string { return []string{store.IDString(s.ProjectID)} }})
	scheduleRuns = store.NewTable[int64, ScheduleRun]("ci.schedule_runs",
		store.Index[ScheduleRun]{Name: "pipeline", Unique: true, Keys: func(r *ScheduleRun) []string { return []string{store.IDString(r.PipelineID)} }},
		store.Index[ScheduleRun]{Name: "schedule", Keys: func(r *ScheduleRun) []string { return []string{store.IDString(r.ScheduleID)} }})
	// schedulesDue keys each active schedule by its next run
	// (store.TimeKey in scope 0): the loop walks it from the start and
	// stops at the first one not due.
	schedulesDue = []byte("ci.schedules_due")
)

type scheduleBuckets []string

func (b scheduleBuckets) Buckets() []string { return b }

// scheduleTables are the tables and buckets of the schedules.
func scheduleTables() []interface{ Buckets() []string } {
	return []interface{ Buckets() []string }{schedules, scheduleRuns, scheduleBuckets{string(schedulesDue)}}
}

// saveSchedule writes a schedule and keeps its key in schedulesDue: an
// active one under its next run, an inactive one not at all. before is
// the row as stored (nil for a new one).
func saveSchedule(tx *store.Tx, before, after *Schedule) error {
	if before != nil && before.Active {
		if err := store.DeleteTimeKey(tx, schedulesDue, int64(0), before.NextRunAt, before.ID); err != nil {
			return err
		}
	}
	var err error
	if before == nil {
		err = schedules.Insert(tx, after)
	} else {
		err = schedules.Update(tx, after)
	}
	if err != nil || !after.Active {
		return err
	}
	return store.PutTimeKey(tx, schedulesDue, int64(0), after.NextRunAt, after.ID, 0)
}

// deleteSchedule removes a schedule and its key.
func deleteSchedule(tx *store.Tx, sc *Schedule) error {
	if sc.Active {
		if err := store.DeleteTimeKey(tx, schedulesDue, int64(0), sc.NextRunAt, sc.ID); err != nil {
			return err
		}
	}
	return schedules.Delete(tx, sc.ID)
}

// dueSchedules lists up to limit active schedules due at now, soonest
// first, and when the next one after them is due (zero: none).
func dueSchedules(tx *store.Tx, now time.Time, limit int) (ids []int64, next time.Time) {
	ids, _, next = store.DueTimeKeys[int64, int64](tx, schedulesDue, 0, now, limit)
	return ids, next
}

// cronParser reads the standard five fields (minute hour day month
// weekday); descriptors (@hourly, @every 1s) are refused, so nothing
// fires more often than once a minute.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// parseCron checks a spec and its timezone (an IANA name, UTC by
// default) and returns its schedule there.
func parseCron(spec, zone string) (cron.Schedule, *time.Location, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil, invalid("cron", "can't be blank")
	}
	if len(spec) > maxScheduleText || len(strings.Fields(spec)) != 5 {
		return nil, nil, invalid("cron", " is invalid syntax")
	}
	sched, err := cronParser.Parse(spec)
	if err != nil {
		return nil, nil, invalid("cron", " is invalid syntax")
	}
	loc, err := scheduleZone(zone)
	if err != nil {
		return nil, nil, err
	}
	// A spec that never fires (February 31st) has no next run.
	if sched.Next(time.Now().In(loc)).IsZero() {
		return nil, nil, invalid("cron", " is invalid syntax")
	}
	return sched, loc, nil
}

// scheduleZone loads an IANA time zone; "Local" (the server's zone) and
// paths are not zones of a schedule.
func scheduleZone(zone string) (*time.Location, error) {
	if zone == "" {
		return time.UTC, nil
	}
	if len(zone) > 100 || zone == "Local" || strings.ContainsAny(zone, "\\\x00") || strings.Contains(zone, "..") {
		return nil, invalid("cron_timezone", " is invalid syntax")
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, invalid("cron_timezone", " is invalid syntax")
	}
	return loc, nil
}

// nextRun is a schedule's first run after now, in UTC.
func nextRun(spec, zone string, now time.Time) (time.Time, error) {
	sched, loc, err := parseCron(spec, zone)
	if err != nil {
		return time.Time{}, err
	}
	return sched.Next(now.In(loc)).UTC(), nil
}

// checkScheduleText checks a description or a ref.
func checkScheduleText(field, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return invalid(field, "can't be blank")
	case len([]rune(v)) > maxScheduleText:
		return invalid(field, fmt.Sprintf("is too long (maximum is %d characters)", maxScheduleText))
	case strings.ContainsAny(v, "\x00\n\r"):
		return invalid(field, "is invalid")
	}
	return nil
}

// ScheduleInput is what creates or edits a schedule; nil leaves a field
// as it is (or its default on create).
type ScheduleInput struct {
	Description, Ref, Cron, CronTimezone *string
	Active                               *bool
}

// ScheduleRecord is a schedule as the API shows it.
type ScheduleRecord struct {
	Schedule
	// Variables are opened, for those who may read them (nil otherwise).
	Vars         []ScheduleVariable
	LastPipeline *Pipeline
}

// scheduleProject resolves a project for the schedules: reading them is
// a Reporter's (and the public's where jobs are public), as GitLab's
// read_pipeline_schedule.
func (s *Service) scheduleProject(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	return s.access.Require(ctx, ref, projects.ReadJobs)
}

// mayAdminSchedule: a Maintainer, or the owner while a Developer
// (GitLab's admin_pipeline_schedule).
func mayAdminSchedule(ctx context.Context, info projects.ProjectInfo, sc *Schedule) bool {
	uid := auth.FromContext(ctx).UserID()
	return info.Level >= projects.Master || (uid != 0 && uid == sc.OwnerID && info.Level >= projects.Developer)
}

func (s *Service) openScheduleVariables(sealed string) ([]ScheduleVariable, error) {
	if sealed == "" {
		return []ScheduleVariable{}, nil
	}
	plain, err := s.box.Unseal(sealed, purposeScheduleVariables)
	if err != nil {
		return nil, err
	}
	var out []ScheduleVariable
	if err := json.Unmarshal([]byte(plain), &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) sealScheduleVariables(vars []ScheduleVariable) (string, error) {
	if len(vars) == 0 {
		return "", nil
	}
	raw, err := json.Marshal(vars)
	if err != nil {
		return "", err
	}
	return s.box.Seal(string(raw), purposeScheduleVariables), nil
}

// scheduleRecord opens what the caller may see of a schedule.
func (s *Service) scheduleRecord(ctx context.Context, tx *store.Tx, info projects.ProjectInfo, sc *Schedule) (ScheduleRecord, error) {
	r := ScheduleRecord{Schedule: *sc}
	if sc.LastPipelineID != 0 {
		if p, err := pipelines.Get(tx, sc.LastPipelineID); err == nil {
			r.LastPipeline = p
		}
	}
	if mayAdminSchedule(ctx, info, sc) {
		vars, err := s.openScheduleVariables(sc.Variables)
		if err != nil {
			return ScheduleRecord{}, err
		}
		r.Vars = vars
	}
	return r, nil
}

// Schedules lists a project's schedules, active or inactive ones only
// when scope says so.
func (s *Service) Schedules(ctx context.Context, project, scope string, offset, limit int) ([]ScheduleRecord, int, error) {
	info, err := s.scheduleProject(ctx, project)
	if err != nil {
		return nil, 0, err
	}
	var out []ScheduleRecord
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		list, err := schedules.AllBy(tx, "project", store.IDString(info.ID))
		if err != nil {
			return err
		}
		kept := list[:0]
		for _, sc := range list {
			if (scope == "active" && !sc.Active) || (scope == "inactive" && sc.Active) {
				continue
			}
			kept = append(kept, sc)
		}
		total = len(kept)
		for _, sc := range store.Window(kept, offset, limit) {
			r, err := s.scheduleRecord(ctx, tx, info, sc)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, total, err
}

// scheduleOp loads a schedule of the project (a write transaction when
// write) for op, which may refuse, and returns its record as op left it.
func (s *Service) scheduleOp(ctx context.Context, project string, id int64, need projects.Action, write bool,
	op func(tx *store.Tx, info projects.ProjectInfo, sc *Schedule) error) (ScheduleRecord, error) {
	info, err := s.scheduleProject(ctx, project)
	if err != nil {
		return ScheduleRecord{}, err
	}
	if need != projects.ReadJobs {
		if info, err = s.access.RequireID(ctx, info.ID, need); err != nil {
			return ScheduleRecord{}, err
		}
	}
	var rec ScheduleRecord
	fn := func(tx *store.Tx) error {
		sc, err := schedules.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && sc.ProjectID != info.ID) {
			return errScheduleNotFound
		}
		if err != nil {
			return err
		}
		if err := op(tx, info, sc); err != nil {
			return err
		}
		rec, err = s.scheduleRecord(ctx, tx, info, sc)
		return err
	}
	if write {
		err = s.db.Update(ctx, fn)
	} else {
		err = s.db.View(ctx, fn)
	}
	return rec, err
}

// GetSchedule is one schedule.
func (s *Service) GetSchedule(ctx context.Context, project string, id int64) (ScheduleRecord, error) {
	return s.scheduleOp(ctx, project, id, projects.ReadJobs, false, func(*store.Tx, projects.ProjectInfo, *Schedule) error { return nil })
}

// CreateSchedule makes a schedule owned by the caller, a Developer.
func (s *Service) CreateSchedule(ctx context.Context, project string, in ScheduleInput) (ScheduleRecord, error) {
	info, err := s.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return ScheduleRecord{}, err
	}
	sc := &Schedule{ProjectID: info.ID, Active: true, CronTimezone: "UTC", OwnerID: auth.FromContext(ctx).UserID()}
	if err := s.applyScheduleInput(sc, in); err != nil {
		return ScheduleRecord{}, err
	}
	sc.CreatedAt = sc.UpdatedAt
	var rec ScheduleRecord
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if err := saveSchedule(tx, nil, sc); err != nil {
			return err
		}
		rec, err = s.scheduleRecord(ctx, tx, info, sc)
		return err
	})
	if err == nil {
		s.wakeSchedules()
	}
	return rec, err
}

// applyScheduleInput checks and sets what in gives, and the next run.
func (s *Service) applyScheduleInput(sc *Schedule, in ScheduleInput) error {
	if in.Description != nil {
		if err := checkScheduleText("description", *in.Description); err != nil {
			return err
		}
		sc.Description = *in.Description
	}
	if in.Ref != nil {
		if err := checkScheduleText("ref", *in.Ref); err != nil {
			return err
		}
		sc.Ref = strings.TrimSpace(*in.Ref)
	}
	if in.Cron != nil {
		sc.Cron = strings.TrimSpace(*in.Cron)
	}
	if in.CronTimezone != nil {
		sc.CronTimezone = strings.TrimSpace(*in.CronTimezone)
		if sc.CronTimezone == "" {
			sc.CronTimezone = "UTC"
		}
	}
	if in.Active != nil {
		sc.Active = *in.Active
	}
	if err := checkScheduleText("description", sc.Description); err != nil {
		return err
	}
	if err := checkScheduleText("ref", sc.Ref); err != nil {
		return err
	}
	now := s.now()
	next, err := nextRun(sc.Cron, sc.CronTimezone, now)
	if err != nil {
		return err
	}
	sc.NextRunAt, sc.UpdatedAt = next, now
	return nil
}

// UpdateSchedule edits a schedule: its owner or a Maintainer.
func (s *Service) UpdateSchedule(ctx context.Context, project string, id int64, in ScheduleInput) (ScheduleRecord, error) {
	rec, err := s.scheduleOp(ctx, project, id, projects.PushCode, true, func(tx *store.Tx, info projects.ProjectInfo, sc *Schedule) error {
		if !mayAdminSchedule(ctx, info, sc) {
			return errNotScheduleOwner
		}
		before := *sc
		if err := s.applyScheduleInput(sc, in); err != nil {
			return err
		}
		return saveSchedule(tx, &before, sc)
	})
	if err == nil {
		s.wakeSchedules()
	}
	return rec, err
}

// TakeScheduleOwnership makes the caller, a Maintainer, the owner.
func (s *Service) TakeScheduleOwnership(ctx context.Context, project string, id int64) (ScheduleRecord, error) {
	uid := auth.FromContext(ctx).UserID()
	return s.scheduleOp(ctx, project, id, projects.AdminProject, true, func(tx *store.Tx, info projects.ProjectInfo, sc *Schedule) error {
		if sc.OwnerID == uid {
			return nil
		}
		before := *sc
		sc.OwnerID, sc.UpdatedAt = uid, s.now()
		return saveSchedule(tx, &before, sc)
	})
}

// DeleteSchedule removes a schedule: its owner or a Maintainer. The
// pipelines it made stay, with their variables.
func (s *Service) DeleteSchedule(ctx context.Context, project string, id int64) error {
	_, err := s.scheduleOp(ctx, project, id, projects.PushCode, true, func(tx *store.Tx, info projects.ProjectInfo, sc *Schedule) error {
		if !mayAdminSchedule(ctx, info, sc) {
			return errNotScheduleOwner
		}
		return deleteSchedule(tx, sc)
	})
	return err
}

// ScheduleVariableChange is a variable to add, edit or delete.
type ScheduleVariableChange struct {
	Key          string
	Value        *string
	VariableType *string
}

// ChangeScheduleVariable adds (create), edits or deletes (value nil) a
// schedule's variable: its owner or a Maintainer. It returns the
// variable as it is after (before, for a delete).
func (s *Service) ChangeScheduleVariable(ctx context.Context, project string, id int64, create bool, in ScheduleVariableChange) (ScheduleVariable, error) {
	if !variableKeyRule.MatchString(in.Key) {
		return ScheduleVariable{}, invalid("key", "can contain only letters, digits and '_'.")
	}
	if in.Value != nil && len(*in.Value) > maxScheduleValue {
		return ScheduleVariable{}, invalid("value", fmt.Sprintf("is too long (maximum is %d characters)", maxScheduleValue))
	}
	if in.VariableType != nil && *in.VariableType != variableTypeEnv && *in.VariableType != variableTypeFile {
		return ScheduleVariable{}, invalid("variable_type", "is not included in the list")
	}
	var out ScheduleVariable
	_, err := s.scheduleOp(ctx, project, id, projects.PushCode, true, func(tx *store.Tx, info projects.ProjectInfo, sc *Schedule) error {
		if !mayAdminSchedule(ctx, info, sc) {
			return errNotScheduleOwner
		}
		vars, err := s.openScheduleVariables(sc.Variables)
		if err != nil {
			return err
		}
		at := -1
		for i, v := range vars {
			if v.Key == in.Key {
				at = i
			}
		}
		switch {
		case create && at >= 0:
			return errScheduleVariableTaken
		case create:
			if len(vars) >= maxScheduleVariables {
				return invalid("variables", fmt.Sprintf("are too many (maximum is %d)", maxScheduleVariables))
			}
			out = ScheduleVariable{Key: in.Key, VariableType: variableTypeEnv}
			if in.Value != nil {
				out.Value = *in.Value
			}
			if in.VariableType != nil {
				out.VariableType = *in.VariableType
			}
			vars = append(vars, out)
		case at < 0:
			return errScheduleVariableNotFound
		case in.Value == nil && in.VariableType == nil: // delete
			out = vars[at]
			vars = append(vars[:at], vars[at+1:]...)
		default:
			if in.Value != nil {
				vars[at].Value = *in.Value
			}
			if in.VariableType != nil {
				vars[at].VariableType = *in.VariableType
			}
			out = vars[at]
		}
		before := *sc
		if sc.Variables, err = s.sealScheduleVariables(vars); err != nil {
			return err
		}
		sc.UpdatedAt = s.now()
		return saveSchedule(tx, &before, sc)
	})
	return out, err
}

// SchedulePipelines are the pipelines a schedule made, newest first.
func (s *Service) SchedulePipelines(ctx context.Context, project string, id int64, offset, limit int) ([]cicd.Pipeline, int, error) {
	var list []cicd.Pipeline
	total := 0
	_, err := s.scheduleOp(ctx, project, id, projects.ReadJobs, false, func(tx *store.Tx, _ projects.ProjectInfo, sc *Schedule) error {
		runs, err := scheduleRuns.AllBy(tx, "schedule", store.IDString(sc.ID))
		if err != nil {
			return err
		}
		total = len(runs)
		newest := make([]*ScheduleRun, 0, len(runs))
		for i := len(runs) - 1; i >= 0; i-- {
			newest = append(newest, runs[i])
		}
		for _, r := range store.Window(newest, offset, limit) {
			p, err := pipelines.Get(tx, r.PipelineID)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			list = append(list, pipelineRecord(p))
		}
		return nil
	})
	return list, total, err
}

// PlaySchedule runs a schedule's pipeline now, as the caller (GitLab's
// play: a Developer, allowed to push or merge to the ref when it is
// protected); next_run_at does not move.
func (s *Service) PlaySchedule(ctx context.Context, project string, id int64) (cicd.Pipeline, error) {
	info, err := s.access.Require(ctx, project, projects.PushCode)
	if err != nil {
		return cicd.Pipeline{}, err
	}
	var sc *Schedule
	err = s.db.View(ctx, func(tx *store.Tx) error {
		sc, err = schedules.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && sc.ProjectID != info.ID) {
			return errScheduleNotFound
		}
		return err
	})
	if err != nil {
		return cicd.Pipeline{}, err
	}
	if !info.Features.JobsEnabled {
		return cicd.Pipeline{}, cicd.ErrPipelinesDisabled
	}
	return s.runSchedule(ctx, info, sc, auth.FromContext(ctx).UserID())
}

// runSchedule makes the schedule's pipeline as the principal of ctx
// (userID), with the schedule's variables, and records it as the
// schedule's last pipeline.
func (s *Service) runSchedule(ctx context.Context, info projects.ProjectInfo, sc *Schedule, userID int64) (cicd.Pipeline, error) {
	ref := sc.Ref
	if r, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		ref = r
	} else if r, ok := strings.CutPrefix(ref, "refs/tags/"); ok {
		ref = r
	}
	var vars []pipeline.Variable
	if own, err := s.openScheduleVariables(sc.Variables); err == nil {
		for _, v := range own {
			vars = append(vars, pipeline.Variable{Key: v.Key, Value: v.Value})
		}
	}
	return s.runForRef(ctx, pipelineRequest{project: info, ref: ref, source: SourceSchedule, userID: userID, variables: vars,
		inserted: func(tx *store.Tx, p *Pipeline) error {
			cur, err := schedules.Get(tx, sc.ID)
			if errors.Is(err, store.ErrNotFound) {
				return nil // deleted meanwhile: the run was asked before
			}
			if err != nil {
				return err
			}
			if err := scheduleRuns.Insert(tx, &ScheduleRun{ScheduleID: sc.ID, PipelineID: p.ID, Variables: cur.Variables, CreatedAt: s.now()}); err != nil {
				return err
			}
			before := *cur
			cur.LastPipelineID = p.ID
			return saveSchedule(tx, &before, cur)
		}})
}

// actAsOwner is ctx with the schedule owner's principal, who must still
// be an active user allowed to run pipelines in the project.
func (s *Service) actAsOwner(ctx context.Context, projectID, ownerID int64) (context.Context, projects.ProjectInfo, error) {
	owner, err := s.users.UserByID(ctx, ownerID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, projects.ProjectInfo{}, errScheduleOwnerMayNotRun
	}
	if err != nil {
		return nil, projects.ProjectInfo{}, err
	}
	pr, err := auth.ForUser(&auth.User{ID: owner.ID, Username: owner.Username, Admin: owner.Admin,
		Blocked: owner.State != "active", External: owner.External})
	if err != nil {
		return nil, projects.ProjectInfo{}, errScheduleOwnerMayNotRun // blocked
	}
	ctx = auth.WithPrincipal(ctx, pr)
	info, err := s.access.RequireID(ctx, projectID, projects.PushCode)
	if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
		return nil, projects.ProjectInfo{}, errScheduleOwnerMayNotRun
	}
	return ctx, info, err
}

// pipelineRunVariables are the variables a pipeline was run with: a
// trigger's caller's, or its schedule's.
func (s *Service) pipelineRunVariables(ctx context.Context, p *Pipeline) ([]pipeline.Variable, error) {
	if p.Upstream != nil {
		return s.upstreamVariables(p) // bridge.go
	}
	if p.Source != SourceSchedule {
		return s.triggerVariables(ctx, p)
	}
	var r *ScheduleRun
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		r, err = scheduleRuns.GetBy(tx, "pipeline", store.IDString(p.ID))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	vars, err := s.openScheduleVariables(r.Variables)
	if err != nil {
		return nil, err
	}
	out := make([]pipeline.Variable, 0, len(vars))
	for _, v := range vars {
		out = append(out, pipeline.Variable{Key: v.Key, Value: v.Value})
	}
	return out, nil
}

// SetScheduleNextRun moves a schedule's next run, as a restart after a
// long stop would find it; for tests, which cannot wait for a cron's
// minute.
func (s *Service) SetScheduleNextRun(ctx context.Context, id int64, at time.Time) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		sc, err := schedules.Get(tx, id)
		if err != nil {
			return err
		}
		before := *sc
		sc.NextRunAt = at.UTC()
		return saveSchedule(tx, &before, sc)
	})
	if err == nil {
		s.wakeSchedules()
	}
	return err
}
