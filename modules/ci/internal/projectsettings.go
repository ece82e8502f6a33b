package internal

// What a project's CI/CD settings page needs beyond the API's commands:
// the project as its Masters see it, its runners registration token
// (kept by the projects module) and its shared runners switch. Each asks
// Access for AdminProject first, as the API's project settings do.

import (
	"context"
	"slices"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// CISettings is the project as its Masters see it (projects.ErrForbidden
// for anyone else who sees it).
func (s *Service) CISettings(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	return s.access.Require(ctx, ref, projects.AdminProject)
}

// GroupCISettings is the group as its Masters and Owners see it, for
// its CI/CD settings (projects.ErrForbidden for anyone else who sees it).
func (s *Service) GroupCISettings(ctx context.Context, ref string) (projects.GroupInfo, error) {
	g, err := s.teams.ResolveGroup(ctx, ref)
	if err == nil && g.Level < projects.Master {
		err = projects.ErrForbidden
	}
	return g, err
}

// ProjectRunnersToken is the project's runners registration token, for
// its Masters.
func (s *Service) ProjectRunnersToken(ctx context.Context, ref string) (string, error) {
	info, err := s.access.Require(ctx, ref, projects.AdminProject)
	if err != nil {
		return "", err
	}
	return s.runnersTokens.RunnersToken(ctx, info.ID)
}

// ResetProjectRunnersToken gives the project a new runners registration
// token (Masters); runners registered with the old one keep working.
func (s *Service) ResetProjectRunnersToken(ctx context.Context, ref string) (string, error) {
	info, err := s.access.Require(ctx, ref, projects.AdminProject)
	if err != nil {
		return "", err
	}
	return s.runnersTokens.ResetRunnersToken(ctx, info.ID)
}

// SetSharedRunners turns the project's shared runners on or off, as PUT
// /projects/:id with shared_runners_enabled does (Masters).
func (s *Service) SetSharedRunners(ctx context.Context, ref string, on bool) error {
	_, err := s.projects.UpdateProject(ctx, ref, project.Fields{Switches: project.Switches{SharedRunnersEnabled: &on}})
	if err == nil {
		s.runnerQueue.bump()
		s.wakeScheduler()
	}
	return err
}

// AvailableRunners are the specific runners the caller may enable on the
// project: those of the other projects they administer (every specific
// runner for an administrator), not locked, not enabled there yet.
func (s *Service) AvailableRunners(ctx context.Context, ref string) ([]cicd.Runner, error) {
	info, err := s.access.Require(ctx, ref, projects.AdminProject)
	if err != nil {
		return nil, err
	}
	list, err := s.allRunners(ctx)
	if err != nil {
		return nil, err
	}
	admin := auth.FromContext(ctx).IsAdmin()
	out := []cicd.Runner{}
	for _, r := range list {
		if r.IsShared || r.Locked || slices.Contains(r.Projects, info.ID) {
			continue
		}
		if admin || s.ownsRunner(ctx, r) {
			out = append(out, runnerRecord(r))
		}
	}
	return out, nil
}
