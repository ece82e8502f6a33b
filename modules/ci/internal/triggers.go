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
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/api"
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
	ID          uint64 `json:"id"`
	ProjectID   uint64 `json:"project_id"`
	Description string `json:"description"`
	// Token is sealed (core/sealed); TokenHash finds it.
	Token     string     `json:"token"`
	TokenHash string     `json:"token_hash"`
	OwnerID   int64      `json:"owner_id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	LastUsed  *time.Time `json:"last_used"`
}

func (t *Trigger) RecordID() uint64      { return t.ID }
func (t *Trigger) SetRecordID(id uint64) { t.ID = id }

// TriggerRequest is what a trigger ran: its pipeline and the caller's
// variables, sealed (a JSON list of {key, value}).
type TriggerRequest struct {
	ID         uint64    `json:"id"`
	TriggerID  uint64    `json:"trigger_id"`
	PipelineID uint64    `json:"pipeline_id"`
	Variables  string    `json:"variables"`
	CreatedAt  time.Time `json:"created_at"`
}

func (r *TriggerRequest) RecordID() uint64      { return r.ID }
func (r *TriggerRequest) SetRecordID(id uint64) { r.ID = id }

var (
	triggers = store.NewTable[Trigger]("ci.triggers",
		store.Index[Trigger]{Name: "project", Keys: func(t *Trigger) []string { return []string{u64(t.ProjectID)} }},
		store.Index[Trigger]{Name: "token", Unique: true, Keys: func(t *Trigger) []string { return []string{t.TokenHash} }})
	triggerRequests = store.NewTable[TriggerRequest]("ci.trigger_requests",
		store.Index[TriggerRequest]{Name: "pipeline", Unique: true, Keys: func(r *TriggerRequest) []string { return []string{u64(r.PipelineID)} }})
)

// errTriggerNotFound: no such trigger in the project (GitLab's find, 404
// "Not found").
var errTriggerNotFound = errors.New("ci: trigger not found")

// TriggerView is the trigger as GitLab shows it. token is whole to the
// trigger's owner only; anyone else (other Masters, administrators) sees
// its first 4 characters, as later GitLab shows it: the token runs
// pipelines as its owner, with the owner's right to protected branches
// and their protected variables, so another Master who read it could act
// as the owner. (GitLab 9.x showed it whole to every Master; a Master who
// needs to use a trigger takes ownership of it.)
type TriggerView struct {
	ID          uint64              `json:"id"`
	Description string              `json:"description"`
	Token       string              `json:"token"`
	CreatedAt   api.Time            `json:"created_at"`
	UpdatedAt   api.Time            `json:"updated_at"`
	DeletedAt   *api.Time           `json:"deleted_at"`
	LastUsed    *api.Time           `json:"last_used"`
	Owner       *identity.BasicUser `json:"owner"`
}

func (s *Service) triggerView(ctx context.Context, t *Trigger) (TriggerView, error) {
	token, err := s.box.Unseal(t.Token, purposeTriggerToken)
	if err != nil {
		return TriggerView{}, err
	}
	if uid := auth.FromContext(ctx).UserID(); uid == 0 || uid != t.OwnerID {
		token = token[:min(4, len(token))]
	}
	v := TriggerView{ID: t.ID, Description: t.Description, Token: token, CreatedAt: api.NewTime(t.CreatedAt),
		UpdatedAt: api.NewTime(t.UpdatedAt)}
	if t.LastUsed != nil {
		v.LastUsed = api.TimePtr(*t.LastUsed)
	}
	if u, err := s.users.UserByID(ctx, t.OwnerID); err == nil {
		b := identity.NewBasicUser(api.ExternalURLFrom(ctx), u)
		v.Owner = &b
	}
	return v, nil
}

// newTriggerToken is a trigger's token: 30 hex digits (120 random bits),
// GitLab 9.x's form.
func newTriggerToken() string { return newToken()[:30] }

// TriggerPath is a trigger's :id and :trigger_id.
type TriggerPath struct {
	ProjectPath
	TriggerID uint64 `path:"trigger_id"`
}

type triggerOutput struct {
	Body *TriggerView
}

type triggersOutput struct {
	api.PageHeaders
	Body []TriggerView
}

type triggerBody struct {
	Description *string `json:"description,omitempty"`
}

// triggersProject resolves :id for the trigger endpoints: GitLab asks
// admin_build (Master) of each of them.
func (s *Service) triggersProject(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	return s.access.Require(ctx, ref, projects.AdminProject)
}

func (s *Service) listTriggers(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
}) (*triggersOutput, error) {
	info, err := s.triggersProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var list []*Trigger
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := triggers.IDsBy(tx, "project", u64(uint64(info.ID)))
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
		return nil, err
	}
	out := &triggersOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(list)), Body: []TriggerView{}}
	for _, t := range api.Window(list, in.PageParams) {
		v, err := s.triggerView(ctx, t)
		if err != nil {
			return nil, err
		}
		out.Body = append(out.Body, v)
	}
	return out, nil
}

// triggerOp loads a trigger of the project (in a write transaction when
// write) for op and answers it as op leaves it.
func (s *Service) triggerOp(ctx context.Context, in TriggerPath, write bool, op func(tx *store.Tx, t *Trigger) error) (*triggerOutput, error) {
	info, err := s.triggersProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var t *Trigger
	fn := func(tx *store.Tx) error {
		var err error
		t, err = triggers.Get(tx, in.TriggerID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && t.ProjectID != uint64(info.ID)) {
			return errTriggerNotFound
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
	if err != nil {
		return nil, err
	}
	v, err := s.triggerView(ctx, t)
	if err != nil {
		return nil, err
	}
	return &triggerOutput{Body: &v}, nil
}

func (s *Service) getTrigger(ctx context.Context, in *TriggerPath) (*triggerOutput, error) {
	return s.triggerOp(ctx, *in, false, func(*store.Tx, *Trigger) error { return nil })
}

// checkDescription is a description as GitLab stores it: some text.
func checkTriggerDescription(d string) error {
	if strings.TrimSpace(d) == "" {
		return api.FieldErrors{"description": {"can't be blank"}}
	}
	if len([]rune(d)) > 255 {
		return api.FieldErrors{"description": {"is too long (maximum is 255 characters)"}}
	}
	return nil
}

func (s *Service) createTrigger(ctx context.Context, in *struct {
	ProjectPath
	Body struct {
		Description *string `json:"description,omitempty" required:"true" doc:"What the trigger is for"`
	}
}) (*triggerOutput, error) {
	if in.Body.Description == nil {
		return nil, api.Missing("description")
	}
	info, err := s.triggersProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if err := checkTriggerDescription(*in.Body.Description); err != nil {
		return nil, err
	}
	token := newTriggerToken()
	now := s.now()
	t := &Trigger{ProjectID: uint64(info.ID), Description: *in.Body.Description, Token: s.box.Seal(token, purposeTriggerToken),
		TokenHash: hashToken(token), OwnerID: auth.FromContext(ctx).UserID(), CreatedAt: now, UpdatedAt: now}
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return triggers.Insert(tx, t) }); err != nil {
		return nil, err
	}
	v, err := s.triggerView(ctx, t)
	if err != nil {
		return nil, err
	}
	return &triggerOutput{Body: &v}, nil
}

// updateTrigger edits a trigger's description: its owner only (GitLab's
// admin_trigger), 403 for other Masters.
func (s *Service) updateTrigger(ctx context.Context, in *struct {
	TriggerPath
	Body triggerBody
}) (*triggerOutput, error) {
	if in.Body.Description != nil {
		if err := checkTriggerDescription(*in.Body.Description); err != nil {
			return nil, err
		}
	}
	uid := auth.FromContext(ctx).UserID()
	return s.triggerOp(ctx, in.TriggerPath, true, func(tx *store.Tx, t *Trigger) error {
		if t.OwnerID != uid {
			return api.Forbidden("")
		}
		if in.Body.Description == nil || *in.Body.Description == t.Description {
			return nil
		}
		t.Description, t.UpdatedAt = *in.Body.Description, s.now()
		return triggers.Update(tx, t)
	})
}

// takeOwnership makes the caller the trigger's owner (GitLab 9.x to
// 12.1): its pipelines run as them from now on.
func (s *Service) takeOwnership(ctx context.Context, in *TriggerPath) (*triggerOutput, error) {
	uid := auth.FromContext(ctx).UserID()
	return s.triggerOp(ctx, *in, true, func(tx *store.Tx, t *Trigger) error {
		if t.OwnerID == uid {
			return nil
		}
		t.OwnerID, t.UpdatedAt = uid, s.now()
		return triggers.Update(tx, t)
	})
}

type noContent struct{}

func (s *Service) deleteTrigger(ctx context.Context, in *TriggerPath) (*noContent, error) {
	if _, err := s.triggerOp(ctx, *in, true, func(tx *store.Tx, t *Trigger) error {
		return triggers.Delete(tx, t.ID)
	}); err != nil {
		return nil, err
	}
	return &noContent{}, nil
}

// TriggerPipeline implements cicd.Service: a pipeline for a ref of the
// project, with a trigger's token, as the trigger's owner, who must still
// be allowed to: the right to run pipelines (Developer) and, on a
// protected branch, to push or merge to it, as for CreatePipeline. An
// unknown token, or one of another project, is ErrTriggerNotFound
// whatever the project (the project's existence is not told).
func (s *Service) TriggerPipeline(ctx context.Context, in cicd.TriggerPipelineInput) (cicd.Pipeline, error) {
	var t *Trigger
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		t, err = triggers.GetBy(tx, "token", hashToken(in.Token))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return cicd.Pipeline{}, cicd.ErrTriggerNotFound
	}
	if err != nil {
		return cicd.Pipeline{}, err
	}
	info, err := s.access.Require(auth.WithPrincipal(ctx, auth.System()), in.Project, projects.ReadProject)
	if errors.Is(err, projects.ErrNotFound) || (err == nil && info.ID != int64(t.ProjectID)) {
		return cicd.Pipeline{}, cicd.ErrTriggerNotFound
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
	if len(in.Variables) > 0 {
		vars := make([]pipeline.Variable, 0, len(in.Variables))
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
		userID: owner.ID, inserted: func(tx *store.Tx, p *Pipeline) error {
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
	if p.Source != SourceTrigger {
		return nil, nil
	}
	var r *TriggerRequest
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		r, err = triggerRequests.GetBy(tx, "pipeline", u64(p.ID))
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

// The deprecated 9.x form names the ref in the path, where GitLab took
// the rest of it (feature/x unescaped); a ServeMux pattern holds one
// segment, so a longer ref is aliased to the escaped one.
var triggerRefAlias = regexp.MustCompile(`^` + api.Prefix + `/projects/([^/]+)/ref/(.+/.+)/trigger/pipeline$`)

func (s *Service) registerTriggers(a *api.API) {
	a.MapError(errTriggerNotFound, func(error) *api.Error { return api.RecordNotFound() })
	tags := []string{"triggers"}
	base := "/projects/{id}/triggers"
	one := base + "/{trigger_id}"
	api.Register(a, api.Op{ID: "list-project-triggers", Method: http.MethodGet, Path: base, Tags: tags,
		Summary: "A project's pipeline triggers (Master)", Access: api.SignedIn}, s.listTriggers)
	api.Register(a, api.Op{ID: "get-project-trigger", Method: http.MethodGet, Path: one, Tags: tags,
		Summary: "A pipeline trigger", Access: api.SignedIn}, s.getTrigger)
	api.Register(a, api.Op{ID: "create-project-trigger", Method: http.MethodPost, Path: base, Tags: tags,
		Summary: "Create a pipeline trigger owned by the caller", Access: api.SignedIn}, s.createTrigger)
	api.Register(a, api.Op{ID: "update-project-trigger", Method: http.MethodPut, Path: one, Tags: tags,
		Summary: "Edit a trigger's description (its owner)", Access: api.SignedIn}, s.updateTrigger)
	api.Register(a, api.Op{ID: "take-ownership-project-trigger", Method: http.MethodPost, Path: one + "/take_ownership", Tags: tags,
		Summary: "Become the trigger's owner", Access: api.SignedIn}, s.takeOwnership)
	api.Register(a, api.Op{ID: "delete-project-trigger", Method: http.MethodDelete, Path: one, Tags: tags,
		Summary: "Delete a pipeline trigger", Access: api.SignedIn}, s.deleteTrigger)
	api.Register(a, api.Op{ID: "trigger-pipeline", Method: http.MethodPost, Path: "/projects/{id}/trigger/pipeline", Tags: tags,
		Summary: "Run a pipeline with a trigger's token", Access: api.Public}, s.triggerPipelineAPI)
	api.Register(a, api.Op{ID: "trigger-ref-pipeline", Method: http.MethodPost, Path: "/projects/{id}/ref/{ref}/trigger/pipeline", Tags: tags,
		Summary: "Run a pipeline with a trigger's token (9.x's form, the ref in the path)", Access: api.Public}, s.triggerRefPipelineAPI)
	a.Alias(http.MethodPost, triggerRefAlias, func(m []string) string {
		return api.Prefix + "/projects/" + m[1] + "/ref/" + oneSegment(m[2]) + "/trigger/pipeline"
	})
}
