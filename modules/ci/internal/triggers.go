package internal

// Pipeline triggers (GitLab 9.0): a project's tokens that run a pipeline
// for a branch or tag without a user's credentials, as the trigger's
// owner, with variables of the caller's. The token must be shown again
// (GitLab lists it), so it is kept sealed with the instance key, and
// found by its hash. A pipeline's trigger variables are kept, sealed,
// in a row of their own written in the transaction that stores the
// pipeline; its jobs get them on top of every other variable.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// SourceTrigger is the source of a triggered pipeline.
const SourceTrigger = string(pipeline.SourceTrigger)

// What trigger tokens and trigger variables are sealed for.
const (
	purposeTriggerToken     = "ci.trigger.token"
	purposeTriggerVariables = "ci.trigger.variables"
)

// Trigger is a project's pipeline trigger.
type Trigger struct {
	ID          int64  `json:"id"`
	ProjectID   int64  `json:"project_id"`
	Description string `json:"description"`
	// Token is sealed (core/sealed); TokenHash finds it.
	Token     string     `json:"token"`
	TokenHash string     `json:"token_hash"`
	OwnerID   int64      `json:"owner_id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	LastUsed  *time.Time `json:"last_used"`
}

func (t *Trigger) RecordID() int64      { return t.ID }
func (t *Trigger) SetRecordID(id int64) { t.ID = id }

// TriggerRequest is what a trigger ran: its pipeline and the caller's
// variables, sealed (a JSON list of {key, value}).
type TriggerRequest struct {
	ID         int64     `json:"id"`
	TriggerID  int64     `json:"trigger_id"`
	PipelineID int64     `json:"pipeline_id"`
	Variables  string    `json:"variables"`
	CreatedAt  time.Time `json:"created_at"`
}

func (r *TriggerRequest) RecordID() int64      { return r.ID }
func (r *TriggerRequest) SetRecordID(id int64) { r.ID = id }

var (
	triggers = store.NewTable[int64, Trigger]("ci.triggers",
		store.Index[Trigger]{Name: "project", Keys: func(t *Trigger) []string { return []string{store.IDString(t.ProjectID)} }},
		store.Index[Trigger]{Name: "token", Unique: true, Keys: func(t *Trigger) []string { return []string{t.TokenHash} }})
	triggerRequests = store.NewTable[int64, TriggerRequest]("ci.trigger_requests",
		store.Index[TriggerRequest]{Name: "pipeline", Unique: true, Keys: func(r *TriggerRequest) []string { return []string{store.IDString(r.PipelineID)} }})
)

// triggerRecord is a trigger as the caller may see it: the token whole
// to its owner only (cicd.Trigger).
func (s *Service) triggerRecord(ctx context.Context, t *Trigger) (cicd.Trigger, error) {
	token, err := s.box.Unseal(t.Token, purposeTriggerToken)
	if err != nil {
		return cicd.Trigger{}, err
	}
	if uid := auth.FromContext(ctx).UserID(); uid == 0 || uid != t.OwnerID {
		token = token[:min(4, len(token))]
	}
	return cicd.Trigger{ID: cicd.TriggerID(t.ID), ProjectID: t.ProjectID, Description: t.Description, Token: token,
		OwnerID: t.OwnerID, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, LastUsed: t.LastUsed}, nil
}

// newTriggerToken is a trigger's token: 30 hex digits (120 random bits),
// GitLab 9.x's form.
func newTriggerToken() string { return newToken()[:30] }

// triggersProject resolves a project for the trigger commands: GitLab
// asks admin_build (Master) of each of them.
func (s *Service) triggersProject(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	return s.access.Require(ctx, ref, projects.AdminProject)
}

// Triggers implements cicd.Service.
func (s *Service) Triggers(ctx context.Context, project string, offset, limit int) ([]cicd.Trigger, int, error) {
	info, err := s.triggersProject(ctx, project)
	if err != nil {
		return nil, 0, err
	}
	var list []*Trigger
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := triggers.IDsBy(tx, "project", store.IDString(info.ID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			t, err := triggers.Get(tx, id)
			if err != nil {
				return err
			}
			list = append(list, t)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	out := []cicd.Trigger{}
	for _, t := range store.Window(list, offset, limit) {
		r, err := s.triggerRecord(ctx, t)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, len(list), nil
}

// triggerOp loads a trigger of the project (in a write transaction when
// write) for op and returns it as op leaves it.
func (s *Service) triggerOp(ctx context.Context, project string, id cicd.TriggerID, write bool, op func(tx *store.Tx, t *Trigger) error) (*Trigger, error) {
	info, err := s.triggersProject(ctx, project)
	if err != nil {
		return nil, err
	}
	var t *Trigger
	fn := func(tx *store.Tx) error {
		var err error
		t, err = triggers.Get(tx, int64(id))
		if errors.Is(err, store.ErrNotFound) || (err == nil && t.ProjectID != info.ID) {
			return cicd.ErrTriggerNotFound
		}
		if err != nil {
			return err
		}
		return op(tx, t)
	}
	if write {
		err = s.db.Update(ctx, fn)
	} else {
		err = s.db.View(ctx, fn)
	}
	return t, err
}

// triggerAfter is the record of a trigger triggerOp returned.
func (s *Service) triggerAfter(ctx context.Context, t *Trigger, err error) (cicd.Trigger, error) {
	if err != nil {
		return cicd.Trigger{}, err
	}
	return s.triggerRecord(ctx, t)
}

// Trigger implements cicd.Service.
func (s *Service) Trigger(ctx context.Context, project string, id cicd.TriggerID) (cicd.Trigger, error) {
	t, err := s.triggerOp(ctx, project, id, false, func(*store.Tx, *Trigger) error { return nil })
	return s.triggerAfter(ctx, t, err)
}

// checkTriggerDescription is a description as GitLab stores it: some
// text.
func checkTriggerDescription(d string) error {
	if strings.TrimSpace(d) == "" {
		return cicd.ErrTriggerDescriptionBlank
	}
	if len([]rune(d)) > 255 {
		return cicd.ErrTriggerDescriptionTooLong
	}
	return nil
}

// CreateTrigger implements cicd.Service.
func (s *Service) CreateTrigger(ctx context.Context, project, description string) (cicd.Trigger, error) {
	info, err := s.triggersProject(ctx, project)
	if err != nil {
		return cicd.Trigger{}, err
	}
	if err := checkTriggerDescription(description); err != nil {
		return cicd.Trigger{}, err
	}
	token := newTriggerToken()
	now := s.now()
	t := &Trigger{ProjectID: info.ID, Description: description, Token: s.box.Seal(token, purposeTriggerToken),
		TokenHash: hashToken(token), OwnerID: auth.FromContext(ctx).UserID(), CreatedAt: now, UpdatedAt: now}
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return triggers.Insert(tx, t) }); err != nil {
		return cicd.Trigger{}, err
	}
	return s.triggerRecord(ctx, t)
}

// UpdateTrigger implements cicd.Service: the description, checked before
// anything else; its owner only (GitLab's admin_trigger), other Masters
// may not.
func (s *Service) UpdateTrigger(ctx context.Context, project string, id cicd.TriggerID, description *string) (cicd.Trigger, error) {
	if description != nil {
		if err := checkTriggerDescription(*description); err != nil {
			return cicd.Trigger{}, err
		}
	}
	uid := auth.FromContext(ctx).UserID()
	t, err := s.triggerOp(ctx, project, id, true, func(tx *store.Tx, t *Trigger) error {
		if t.OwnerID != uid {
			return cicd.ErrNotTriggerOwner
		}
		if description == nil || *description == t.Description {
			return nil
		}
		t.Description, t.UpdatedAt = *description, s.now()
		return triggers.Update(tx, t)
	})
	return s.triggerAfter(ctx, t, err)
}

// TakeTriggerOwnership implements cicd.Service (GitLab 9.x to 12.1).
func (s *Service) TakeTriggerOwnership(ctx context.Context, project string, id cicd.TriggerID) (cicd.Trigger, error) {
	uid := auth.FromContext(ctx).UserID()
	t, err := s.triggerOp(ctx, project, id, true, func(tx *store.Tx, t *Trigger) error {
		if t.OwnerID == uid {
			return nil
		}
		t.OwnerID, t.UpdatedAt = uid, s.now()
		return triggers.Update(tx, t)
	})
	return s.triggerAfter(ctx, t, err)
}

// DeleteTrigger implements cicd.Service.
func (s *Service) DeleteTrigger(ctx context.Context, project string, id cicd.TriggerID) error {
	t, err := s.triggerOp(ctx, project, id, true, func(tx *store.Tx, t *Trigger) error {
		return triggers.Delete(tx, t.ID)
	})
	// As it answered before: the trigger's token is unsealed once more.
	_, err = s.triggerAfter(ctx, t, err)
	return err
}

// TriggerPipeline implements cicd.Service: a pipeline for a ref of the
// project, with a trigger's token, as the trigger's owner, who must still
// be allowed to: the right to run pipelines (Developer) and, on a
// protected branch, to push or merge to it, as for CreatePipeline. An
// unknown token, or one of another project, is ErrUnknownTriggerToken
// whatever the project (the project's existence is not told).
func (s *Service) TriggerPipeline(ctx context.Context, in cicd.TriggerPipelineInput) (cicd.Pipeline, error) {
	var t *Trigger
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		t, err = triggers.GetBy(tx, "token", hashToken(in.Token))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return cicd.Pipeline{}, cicd.ErrUnknownTriggerToken
	}
	if err != nil {
		return cicd.Pipeline{}, err
	}
	info, err := s.access.Require(auth.WithPrincipal(ctx, auth.System()), in.Project, projects.ReadProject)
	if errors.Is(err, projects.ErrNotFound) || (err == nil && info.ID != t.ProjectID) {
		return cicd.Pipeline{}, cicd.ErrUnknownTriggerToken
	}
	if err != nil {
		return cicd.Pipeline{}, err
	}
	if in.Ref == "" {
		return cicd.Pipeline{}, cicd.ErrRefRequired
	}
	// From here on the owner acts: their rights decide, and the pipeline
	// is theirs.
	owner, err := s.users.UserByID(ctx, t.OwnerID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return cicd.Pipeline{}, cicd.ErrTriggerOwnerMayNotRun
	}
	if err != nil {
		return cicd.Pipeline{}, err
	}
	pr, err := auth.ForUser(&auth.User{ID: owner.ID, Username: owner.Username, Admin: owner.Admin,
		Blocked: owner.State != "active", External: owner.External})
	if err != nil {
		return cicd.Pipeline{}, cicd.ErrTriggerOwnerMayNotRun // blocked: not auth's answer
	}
	ctx = auth.WithPrincipal(ctx, pr)
	info, err = s.access.RequireID(ctx, info.ID, projects.PushCode)
	if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
		// Not wrapped: the projects module's answer is not this one.
		return cicd.Pipeline{}, cicd.ErrTriggerOwnerMayNotRun
	}
	if err != nil {
		return cicd.Pipeline{}, err
	}
	if !info.Features.JobsEnabled {
		return cicd.Pipeline{}, cicd.ErrPipelinesDisabled
	}
	sealed := ""
	var vars []pipeline.Variable
	if len(in.Variables) > 0 {
		vars = make([]pipeline.Variable, 0, len(in.Variables))
		for _, v := range in.Variables {
			vars = append(vars, pipeline.Variable{Key: v.Key, Value: v.Value})
		}
		raw, err := json.Marshal(vars)
		if err != nil {
			return cicd.Pipeline{}, err
		}
		sealed = s.box.Seal(string(raw), purposeTriggerVariables)
	}
	return s.runForRef(ctx, pipelineRequest{project: info, ref: in.Ref, source: SourceTrigger,
		userID: owner.ID, variables: vars, inserted: func(tx *store.Tx, p *Pipeline) error {
			now := s.now()
			if err := triggerRequests.Insert(tx, &TriggerRequest{TriggerID: t.ID, PipelineID: p.ID, Variables: sealed, CreatedAt: now}); err != nil {
				return err
			}
			cur, err := triggers.Get(tx, t.ID)
			if errors.Is(err, store.ErrNotFound) {
				return nil // deleted meanwhile: the pipeline was asked before
			}
			if err != nil {
				return err
			}
			cur.LastUsed = &now
			return triggers.Update(tx, cur)
		}})
}

// triggerVariables are the caller's variables of a triggered pipeline,
// nil for any other.
func (s *Service) triggerVariables(ctx context.Context, p *Pipeline) ([]pipeline.Variable, error) {
	// A pipeline run with variables from the API or the web form keeps
	// them as a trigger's are (CreatePipeline).
	if p.Source != SourceTrigger && p.Source != SourceAPI && p.Source != string(pipeline.SourceWeb) {
		return nil, nil
	}
	var r *TriggerRequest
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		r, err = triggerRequests.GetBy(tx, "pipeline", store.IDString(p.ID))
		return err
	})
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.Variables == "") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	plain, err := s.box.Unseal(r.Variables, purposeTriggerVariables)
	if err != nil {
		return nil, err
	}
	var vars []pipeline.Variable
	if err := json.Unmarshal([]byte(plain), &vars); err != nil {
		return nil, err
	}
	return vars, nil
}
