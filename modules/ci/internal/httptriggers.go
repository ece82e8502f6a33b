package internal

// The API of pipeline triggers: the HTTP adapter over
// cicd.Service.TriggerPipeline (triggers.go).

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

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
