package internal

// Release jobs (`release:`): GitLab runs release-cli in the job; Fennec
// makes the release itself, server-side, once the job's script has
// succeeded and before the job is marked successful, on the shell
// executors and on the runner path alike. A refused release fails the job
// (script_failure, as release-cli's exit would) with a trace line saying
// why.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/repository/release"
)

// releaseFailure is the failure reason of a job whose release is refused.
const releaseFailure = "script_failure"

// releaseJob makes the release of a job whose script succeeded; it
// returns the job's status and reason: success, or failed when the
// release is refused (the trace then says why).
func (s *Service) releaseJob(ctx context.Context, j *Job, p *Pipeline, spec *pipeline.Job) (string, string) {
	if spec.Release == nil {
		return StatusSuccess, ""
	}
	if s.releases == nil {
		s.appendTraceLine(j.ID, "ERROR: Job failed: releases are not available on this server")
		return StatusFailed, releaseFailure
	}
	in, warnings := s.releaseInput(p, spec)
	for _, w := range warnings {
		s.appendTraceLine(j.ID, "WARNING: "+w)
	}
	s.appendTraceLine(j.ID, fmt.Sprintf("Creating release of tag %s", in.TagName))
	err := s.createRelease(ctx, j.UserID, p.ProjectID, in)
	if err != nil {
		s.appendTraceLine(j.ID, "ERROR: Job failed: the release could not be created: "+err.Error())
		return StatusFailed, releaseFailure
	}
	s.appendTraceLine(j.ID, fmt.Sprintf("Release %s created", in.TagName))
	return StatusSuccess, ""
}

// releaseInput is a job's release with the variables known when the
// pipeline was made expanded ($CI_COMMIT_TAG, $CI_COMMIT_SHA, the job's
// own), as release-cli sees them in the job's environment; project and
// group variables are not expanded (they are secrets the server does not
// unseal for this). The ref defaults to the pipeline's commit.
func (s *Service) releaseInput(p *Pipeline, spec *pipeline.Job) (release.Input, []string) {
	facts := pipeline.JobFacts{ServerURL: s.server.ExternalURL(), JobName: spec.Name, JobStage: spec.Stage,
		CommitSHA: p.SHA, BeforeSHA: p.BeforeSHA, RefName: p.Ref, IsTag: p.Tag, PipelineID: p.ID,
		ProjectID: p.ProjectID, ProjectPath: p.ProjectPath, UserID: p.UserID}
	vars := pipeline.Layers{Predefined: pipeline.Predefined(facts), YAML: spec.Variables}.Resolve()
	x := func(s string) string { return pipeline.ExpandVariables(s, vars) }
	r := spec.Release
	in := release.Input{TagName: strings.TrimSpace(x(r.TagName)), TagMessage: x(r.TagMessage), Name: x(r.Name),
		Description: x(r.Description), Ref: strings.TrimSpace(x(r.Ref))}
	if in.Ref == "" {
		in.Ref = p.SHA
	}
	var warnings []string
	if r.ReleasedAt != "" {
		if t, err := pipeline.ParseReleasedAt(x(r.ReleasedAt)); err == nil {
			in.ReleasedAt = &t
		} else {
			warnings = append(warnings, "released_at is not a valid datetime once expanded; the release is dated now")
		}
	}
	if len(r.Milestones) > 0 {
		warnings = append(warnings, "milestones are not kept with releases on this server")
	}
	for _, l := range r.Links {
		in.Links = append(in.Links, release.Link{Name: x(l.Name), URL: x(l.URL), LinkType: l.LinkType})
	}
	return in, warnings
}

// createRelease makes the release as the job's user.
func (s *Service) createRelease(ctx context.Context, userID, projectID int64, in release.Input) error {
	if in.TagName == "" {
		return errors.New("tag_name is empty once its variables are expanded")
	}
	u, err := s.users.UserByID(ctx, userID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return errors.New("403 Forbidden")
	}
	if err != nil {
		return err
	}
	pr, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username, Admin: u.Admin,
		Blocked: u.State != "active", External: u.External})
	if err != nil {
		return errors.New("403 Forbidden") // blocked
	}
	_, err = s.releases.Create(auth.WithPrincipal(ctx, pr), projectID, in)
	return err
}
