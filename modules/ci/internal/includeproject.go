package internal

// include: project and include: remote: a CI file may include files of
// another project of this server, read as the pipeline's user may read
// them, and https URLs when the server allows it (the fetch itself is in
// httpclientinclude.go).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// Project implements pipeline.Projects: the files of project (a full
// path) at ref, its default branch when ref is empty, if the reader may
// read its code. Anything else than a readable project answers
// pipeline.ErrProjectNotFound, so a file cannot tell a private project
// from a missing one.
func (f ciFiles) Project(ctx context.Context, project, ref string) (pipeline.Files, error) {
	if f.reader == nil || !strings.Contains(project, "/") {
		// A number is a project's id to the API, never a path here.
		return nil, fmt.Errorf("ci: include project %s: %w", project, pipeline.ErrProjectNotFound)
	}
	info, err := f.s.access.Require(auth.WithPrincipal(ctx, f.reader), project, projects.ReadCode)
	if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
		return nil, fmt.Errorf("ci: include project %s: %w", project, pipeline.ErrProjectNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("ci: include project %s: %w", project, err)
	}
	sha, err := f.s.git.Resolve(readAsCI(ctx), info.ID, ref)
	if errors.Is(err, gitread.ErrRevisionNotFound) || errors.Is(err, gitread.ErrPathNotFound) {
		return nil, fmt.Errorf("ci: include project %s ref %q: %w", project, ref, pipeline.ErrRefNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("ci: include project %s ref %q: %w", project, ref, err)
	}
	return ciFiles{s: f.s, projectID: info.ID, sha: sha, reader: f.reader}, nil
}

// pipelineReader is who reads the projects a pipeline's CI file includes:
// the user the pipeline runs for, with their rights; nobody (public
// projects only) when it has no user or the user is gone or blocked.
func (s *Service) pipelineReader(ctx context.Context, userID int64) *auth.Principal {
	if userID == 0 {
		return nil
	}
	u, err := s.users.UserByID(ctx, userID)
	if err != nil {
		return nil
	}
	pr, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username, Admin: u.Admin,
		Blocked: u.State != "active", External: u.External})
	if err != nil {
		return nil
	}
	return pr
}

var _ pipeline.Projects = ciFiles{}

// Fetch implements pipeline.Remote: an https URL a CI file includes,
// fetched through the guard when ci.remote_includes allows it.
func (f ciFiles) Fetch(ctx context.Context, url string) ([]byte, error) {
	if f.s.remote == nil {
		return nil, pipeline.ErrRemoteDisabled
	}
	return f.s.remote.fetch(ctx, url, pipeline.MaxConfigBytes)
}

var _ pipeline.Remote = ciFiles{}
