package internal

// CI lint: the checks a pipeline's creation makes of a .gitlab-ci.yml
// (pipeline.Parse, then the jobs a pipeline would hold against
// ci.max_pipeline_jobs, pipeline.Config.ForPipeline), answered without
// making a pipeline. Lint and creation share those two entry points, so a
// file lint calls valid never gives a pipeline with yaml_errors for a
// reason lint did not see. httplint.go is the API over it.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
	"github.com/fennec-forge/fennec/modules/projects"
)

// blankContent is GitLab's message for a lint of nothing.
const blankContent = "Please provide content of .gitlab-ci.yml"

// lintErrors are the problems pipeline creation would find in src for a
// pipeline of ref: none for a file that makes a pipeline without
// yaml_errors. GitLab reports one problem at a time (the first), and so
// does this.
//
// files reads what `include: local` names: the project's files at the
// linted commit, or nil for content linted alone (an include is then an
// error that says so).
func (s *Service) lintErrors(ctx context.Context, src []byte, files pipeline.Files, ref pipeline.RefInfo) []string {
	if strings.TrimSpace(string(src)) == "" {
		return []string{blankContent}
	}
	cfg, err := pipeline.ParseFiles(ctx, src, files)
	if err == nil {
		_, _, err = cfg.ForPipeline(ref, s.cfg.MaxPipelineJobs)
		if errors.Is(err, ciexpr.ErrWorkflowFiltered) {
			// Not a fault of the file: this ref gets no pipeline.
			err = nil
		}
	}
	if err != nil {
		return []string{err.Error()}
	}
	return []string{}
}

// Lint implements cicd.Service.
//
// The job limit counts the jobs of a pipeline, and which jobs a pipeline
// holds depends on its ref (only/except); a file alone names no ref, so
// lint counts those of a push of a branch that no only/except names: the
// jobs every such branch gets. A file whose jobs exceed the limit only
// for a named branch passes here and fails at that branch's pipeline
// (LintProject checks one ref exactly).
func (s *Service) Lint(ctx context.Context, content string) []string {
	return s.lintErrors(ctx, []byte(content), nil, pipeline.RefInfo{Source: pipeline.SourcePush})
}

// LintProject implements cicd.Service: the project's .gitlab-ci.yml at a
// branch or tag, checked for a push pipeline of that ref, the job limit
// included. Reading the file needs the right to read the code.
func (s *Service) LintProject(ctx context.Context, project, ref string) ([]string, error) {
	info, err := s.access.Require(ctx, project, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	ref = strings.TrimSpace(ref)
	if ref == "" {
		ref = info.DefaultBranch
	}
	sha, tag, err := s.refHead(ctx, info.ID, ref)
	if errors.Is(err, errNotACommit) {
		return nil, fmt.Errorf("%w: %w", cicd.ErrRefNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	src, _, err := s.readConfig(ctx, info.ID, sha)
	if err != nil {
		return nil, err
	}
	return s.lintErrors(ctx, src, s.repoFiles(info.ID, sha, auth.FromContext(ctx)), pipeline.RefInfo{Name: ref, IsTag: tag, Source: pipeline.SourcePush,
		ProjectPath: info.PathWithNamespace}), nil
}
