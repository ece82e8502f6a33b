package internal

// CI lint: the checks a pipeline's creation makes of a .gitlab-ci.yml
// (pipeline.Parse, then the jobs a pipeline would hold against
// ci.max_pipeline_jobs, pipeline.Config.ForPipeline), answered without
// making a pipeline. Lint and creation share those two entry points, so a
// file lint calls valid never gives a pipeline with yaml_errors for a
// reason lint did not see.

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/projects"
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

// blankContent is GitLab's message for a lint of nothing.
const blankContent = "Please provide content of .gitlab-ci.yml"

// lintErrors are the problems pipeline creation would find in src for a
// pipeline of ref: none for a file that makes a pipeline without
// yaml_errors. GitLab reports one problem at a time (the first), and so
// does this.
func (s *Service) lintErrors(src []byte, ref pipeline.RefInfo) []string {
	if strings.TrimSpace(string(src)) == "" {
		return []string{blankContent}
	}
	cfg, err := pipeline.Parse(src)
	if err == nil {
		_, _, err = cfg.ForPipeline(ref, s.cfg.MaxPipelineJobs)
	}
	if err != nil {
		return []string{err.Error()}
	}
	return []string{}
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
//
// The job limit counts the jobs of a pipeline, and which jobs a pipeline
// holds depends on its ref (only/except); a file alone names no ref, so
// lint counts those of a push of a branch that no only/except names: the
// jobs every such branch gets. A file whose jobs exceed the limit only
// for a named branch passes here and fails at that branch's pipeline (GET
// /projects/:id/ci/lint?ref= checks one ref exactly).
func (s *Service) lint(_ context.Context, in *lintInput) (*lintOutput, error) {
	if in.Body.Content == nil {
		return nil, api.Missing("content")
	}
	errs := s.lintErrors([]byte(*in.Body.Content), pipeline.RefInfo{Source: pipeline.SourcePush})
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

// projectLint is GET /projects/:id/ci/lint (GitLab 13.x): the project's
// .gitlab-ci.yml at a branch or tag, checked for a push pipeline of that
// ref, the job limit included. Reading the file needs the right to read
// the code; a ref or file that is not there is a 404.
func (s *Service) projectLint(ctx context.Context, in *projectLintInput) (*projectLintOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	ref := strings.TrimSpace(in.Ref)
	if ref == "" {
		ref = info.DefaultBranch
	}
	repo, err := s.repos.Open(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	var sha string
	tag := false
	if r, err := repo.Reference(plumbing.NewBranchReferenceName(ref), true); err == nil {
		sha = r.Hash().String()
	} else if r, err := repo.Reference(plumbing.NewTagReferenceName(ref), true); err == nil {
		tag = true
		if sha, err = peelTag(repo, r.Hash()); err != nil {
			return nil, api.NotFound("Commit")
		}
	} else {
		return nil, api.NotFound("Commit")
	}
	src, _, err := s.readConfig(ctx, info.ID, sha)
	if errors.Is(err, cicd.ErrNoConfig) {
		return nil, api.NotFound("File")
	}
	if err != nil {
		return nil, err
	}
	errs := s.lintErrors(src, pipeline.RefInfo{Name: ref, IsTag: tag, Source: pipeline.SourcePush,
		ProjectPath: info.PathWithNamespace})
	return &projectLintOutput{Body: &ProjectLintView{Valid: len(errs) == 0, Errors: errs, Warnings: []string{}}}, nil
}

func (s *Service) registerLint(a *api.API) {
	api.Register(a, api.Op{ID: "ci-lint", Method: http.MethodPost, Path: "/ci/lint", Tags: []string{"lint"},
		Summary: "Check a .gitlab-ci.yml as pipeline creation would", Access: api.Public, Status: http.StatusOK}, s.lint)
	api.Register(a, api.Op{ID: "project-ci-lint", Method: http.MethodGet, Path: "/projects/{id}/ci/lint", Tags: []string{"lint"},
		Summary: "Check a project's .gitlab-ci.yml at a ref", Access: api.Public}, s.projectLint)
}
