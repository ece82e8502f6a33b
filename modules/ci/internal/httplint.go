package internal

// The CI lint API: POST /ci/lint (GitLab 9.x) and GET /projects/:id/ci/lint
// (later GitLab), over cicd.Service's Lint and LintProject (lint.go).

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// LintView is POST /ci/lint's answer, as GitLab 9.x gives it.
type LintView struct {
	Status string   `json:"status" enum:"valid,invalid"`
	Errors []string `json:"errors"`
}

// ProjectLintView is GET /projects/:id/ci/lint's answer (later GitLab).
type ProjectLintView struct {
	Valid    bool     `json:"valid"`
	Errors   []string `json:"errors"`
	Warnings []string `json:"warnings"`
}

type lintInput struct {
	Body struct {
		Content *string `json:"content,omitempty" required:"true" doc:"The .gitlab-ci.yml to check"`
	}
}

type lintOutput struct {
	Body *LintView
}

// lint is POST /ci/lint. GitLab 9.x asks no credentials of it and
// answers 200 whatever the verdict.
func (s *Service) lint(ctx context.Context, in *lintInput) (*lintOutput, error) {
	if in.Body.Content == nil {
		return nil, api.Missing("content")
	}
	errs := s.Lint(ctx, *in.Body.Content)
	v := &LintView{Status: "valid", Errors: errs}
	if len(errs) > 0 {
		v.Status = "invalid"
	}
	return &lintOutput{Body: v}, nil
}

type projectLintInput struct {
	ProjectPath
	Ref string `query:"ref" doc:"The branch or tag whose CI file is checked; the default branch when absent"`
}

type projectLintOutput struct {
	Body *ProjectLintView
}

// projectLint is GET /projects/:id/ci/lint (GitLab 13.x): a ref or a
// file that is not there is a 404.
func (s *Service) projectLint(ctx context.Context, in *projectLintInput) (*projectLintOutput, error) {
	errs, err := s.LintProject(ctx, in.ID, in.Ref)
	switch {
	case errors.Is(err, cicd.ErrRefNotFound):
		return nil, api.NotFound("Commit")
	case errors.Is(err, cicd.ErrNoConfig):
		return nil, api.NotFound("File")
	case err != nil:
		return nil, err
	}
	return &projectLintOutput{Body: &ProjectLintView{Valid: len(errs) == 0, Errors: errs, Warnings: []string{}}}, nil
}

func (s *Service) registerLint(a *api.API) {
	api.Register(a, api.Op{ID: "ci-lint", Method: http.MethodPost, Path: "/ci/lint", Tags: []string{"lint"},
		Summary: "Check a .gitlab-ci.yml as pipeline creation would", Access: api.Public, Status: http.StatusOK}, s.lint)
	api.Register(a, api.Op{ID: "project-ci-lint", Method: http.MethodGet, Path: "/projects/{id}/ci/lint", Tags: []string{"lint"},
		Summary: "Check a project's .gitlab-ci.yml at a ref", Access: api.Public}, s.projectLint)
}
