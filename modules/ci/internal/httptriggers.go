package internal

// The API of pipeline triggers (GitLab 9.0): the HTTP adapter over
// cicd.Service's triggers and TriggerPipeline (triggers.go).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/identity"
)

// TriggerView is the trigger as GitLab shows it; token as
// cicd.Trigger's. (GitLab 9.x showed it whole to every Master; a Master
// who needs to use a trigger takes ownership of it.)
type TriggerView struct {
	ID          int64               `json:"id"`
	Description string              `json:"description"`
	Token       string              `json:"token"`
	CreatedAt   api.Time            `json:"created_at"`
	UpdatedAt   api.Time            `json:"updated_at"`
	DeletedAt   *api.Time           `json:"deleted_at"`
	LastUsed    *api.Time           `json:"last_used"`
	Owner       *identity.BasicUser `json:"owner"`
}

func (s *Service) triggerView(ctx context.Context, t cicd.Trigger) TriggerView {
	v := TriggerView{ID: int64(t.ID), Description: t.Description, Token: t.Token, CreatedAt: api.NewTime(t.CreatedAt),
		UpdatedAt: api.NewTime(t.UpdatedAt)}
	if t.LastUsed != nil {
		v.LastUsed = api.TimePtr(*t.LastUsed)
	}
	if u, err := s.users.UserByID(ctx, t.OwnerID); err == nil {
		b := identity.NewBasicUser(api.ExternalURLFrom(ctx), u)
		v.Owner = &b
	}
	return v
}

// TriggerPath is a trigger's :id and :trigger_id.
type TriggerPath struct {
	ProjectPath
	TriggerID int64 `path:"trigger_id"`
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

// triggerAnswer renders the trigger a command or reader returned.
func (s *Service) triggerAnswer(ctx context.Context, t cicd.Trigger, err error) (*triggerOutput, error) {
	if err != nil {
		return nil, err
	}
	v := s.triggerView(ctx, t)
	return &triggerOutput{Body: &v}, nil
}

func (s *Service) listTriggers(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
}) (*triggersOutput, error) {
	list, total, err := s.Triggers(ctx, in.ID, in.Offset(), in.Limit())
	if err != nil {
		return nil, err
	}
	out := &triggersOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []TriggerView{}}
	for _, t := range list {
		out.Body = append(out.Body, s.triggerView(ctx, t))
	}
	return out, nil
}

func (s *Service) getTrigger(ctx context.Context, in *TriggerPath) (*triggerOutput, error) {
	t, err := s.Trigger(ctx, in.ID, cicd.TriggerID(in.TriggerID))
	return s.triggerAnswer(ctx, t, err)
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
	t, err := s.CreateTrigger(ctx, in.ID, *in.Body.Description)
	return s.triggerAnswer(ctx, t, err)
}

func (s *Service) updateTrigger(ctx context.Context, in *struct {
	TriggerPath
	Body triggerBody
}) (*triggerOutput, error) {
	t, err := s.UpdateTrigger(ctx, in.ID, cicd.TriggerID(in.TriggerID), in.Body.Description)
	return s.triggerAnswer(ctx, t, err)
}

func (s *Service) takeOwnership(ctx context.Context, in *TriggerPath) (*triggerOutput, error) {
	t, err := s.TakeTriggerOwnership(ctx, in.ID, cicd.TriggerID(in.TriggerID))
	return s.triggerAnswer(ctx, t, err)
}

type noContent struct{}

func (s *Service) deleteTrigger(ctx context.Context, in *TriggerPath) (*noContent, error) {
	if err := s.DeleteTrigger(ctx, in.ID, cicd.TriggerID(in.TriggerID)); err != nil {
		return nil, err
	}
	return &noContent{}, nil
}

// triggerPipelineInput is POST .../trigger/pipeline: the ref, the token
// (in the body or the query) and the variables, as a form
// (variables[KEY]=value) or a JSON object.
type triggerPipelineInput struct {
	ProjectPath
	Body struct {
		Ref       *string        `json:"ref,omitempty" required:"true" doc:"The branch or tag to run the pipeline for"`
		Token     *string        `json:"token,omitempty" required:"true" doc:"The trigger's token"`
		Variables map[string]any `json:"variables,omitempty" doc:"Variables for the pipeline's jobs: variables[KEY]=value, or a JSON object of strings"`
	}
}

// triggerRefPipelineInput is 9.x's form, the ref in the path.
type triggerRefPipelineInput struct {
	ProjectPath
	Ref  string `path:"ref" doc:"The branch or tag to run the pipeline for"`
	Body struct {
		Token     *string        `json:"token,omitempty" required:"true" doc:"The trigger's token"`
		Variables map[string]any `json:"variables,omitempty" doc:"Variables for the pipeline's jobs: variables[KEY]=value, or a JSON object of strings"`
	}
}

// triggerVariableError is GitLab's answer to variables that are not a map
// of strings (made anew for each request: an answer is not shared).
func triggerVariableError() *api.Error {
	return api.BadRequest("variables needs to be a map of key-valued strings")
}

// triggerVariablesOf checks the caller's variables: strings, under keys a
// variable may have; in key order.
func triggerVariablesOf(raw map[string]any) ([]cicd.Variable, error) {
	out := make([]cicd.Variable, 0, len(raw))
	for k, v := range raw {
		value, ok := v.(string)
		if !ok {
			return nil, triggerVariableError()
		}
		if !variableKeyRule.MatchString(k) {
			return nil, api.FieldErrors{"variables": {"key " + strconvQuote(k) + " can contain only letters, digits and '_'."}}
		}
		out = append(out, cicd.Variable{Key: k, Value: value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (s *Service) triggerPipelineAPI(ctx context.Context, in *triggerPipelineInput) (*pipelineOutput, error) {
	ref := ""
	if in.Body.Ref != nil {
		ref = strings.TrimSpace(*in.Body.Ref)
	}
	return s.triggerPipeline(ctx, in.ID, ref, in.Body.Token, in.Body.Variables)
}

func (s *Service) triggerRefPipelineAPI(ctx context.Context, in *triggerRefPipelineInput) (*pipelineOutput, error) {
	return s.triggerPipeline(ctx, in.ID, in.Ref, in.Body.Token, in.Body.Variables)
}

// triggerPipeline answers both forms. GitLab 9.x answered every refusal
// with "No pipeline created"; later GitLab, as here, says why in base
// errors (400), the form POST /pipeline uses; a protected ref is one of
// them here, where POST /pipeline answers 403. An unknown token, or one
// of another project, is 404 whatever the project (later GitLab; 9.x
// said 401 for another project's).
func (s *Service) triggerPipeline(ctx context.Context, projectRef, ref string, token *string, rawVars map[string]any) (*pipelineOutput, error) {
	vars, err := triggerVariablesOf(rawVars)
	if err != nil {
		return nil, err
	}
	if token == nil {
		return nil, api.Missing("token")
	}
	p, err := s.TriggerPipeline(ctx, cicd.TriggerPipelineInput{Project: projectRef, Ref: ref, Token: *token, Variables: vars})
	if errors.Is(err, cicd.ErrProtectedRef) {
		return nil, api.FieldErrors{"base": {"Insufficient permissions for protected ref '" + ref + "'"}}
	}
	return s.pipelineAnswer(ctx, p, err)
}

// The deprecated 9.x form names the ref in the path, where GitLab took
// the rest of it (feature/x unescaped); a ServeMux pattern holds one
// segment, so a longer ref is aliased to the escaped one.
var triggerRefAlias = regexp.MustCompile(`^` + api.Prefix + `/projects/([^/]+)/ref/(.+/.+)/trigger/pipeline$`)

func (s *Service) registerTriggers(a *api.API) {
	a.MapError(cicd.ErrTriggerNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(cicd.ErrNotTriggerOwner, func(error) *api.Error { return api.Forbidden("") })
	a.MapError(cicd.ErrTriggerDescriptionBlank, func(error) *api.Error {
		return api.Validation(map[string][]string{"description": {"can't be blank"}})
	})
	a.MapError(cicd.ErrTriggerDescriptionTooLong, func(error) *api.Error {
		return api.Validation(map[string][]string{"description": {"is too long (maximum is 255 characters)"}})
	})
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
