package internal

// The settings pages' side of the service: a project's hooks as its
// Masters manage them (the records are the projects module's, changed
// through its service with the caller's rights), and what the system
// hooks' pages need beyond the API (one log entry, a resend).

import (
	"context"

	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/project"
	"github.com/fennec-forge/fennec/modules/webhooks/webhook"
)

// ProjectHooks are the project's hooks, for its Masters, with the
// caller's view of the project.
func (s *Service) ProjectHooks(ctx context.Context, ref string) (projects.ProjectInfo, []projects.Hook, error) {
	info, err := s.access.Require(ctx, ref, projects.AdminProject)
	if err != nil {
		return info, nil, err
	}
	list, err := s.hooks.ProjectHooks(ctx, info.ID)
	return info, list, err
}

// ProjectHookSettings is one of the project's hooks, for its Masters
// (projects.ErrHookNotFound when the project has no such hook). Its
// Token is still sealed and is for no page to show.
func (s *Service) ProjectHookSettings(ctx context.Context, ref string, hookID int64) (projects.ProjectInfo, projects.Hook, error) {
	return s.projectHook(ctx, ref, hookID)
}

// AddProjectHook adds a hook to the project (Master), as POST
// /projects/:id/hooks does.
func (s *Service) AddProjectHook(ctx context.Context, ref string, in project.HookFields) (projects.Hook, error) {
	return s.proj.AddHook(ctx, ref, in)
}

// UpdateProjectHook changes one of the project's hooks (Master); a nil
// token keeps the one it has.
func (s *Service) UpdateProjectHook(ctx context.Context, ref string, hookID int64, in project.HookFields) (projects.Hook, error) {
	return s.proj.UpdateHook(ctx, ref, hookID, in)
}

// DeleteProjectHook removes one of the project's hooks (Master); its
// queued deliveries are dropped when the queue next reaches them.
func (s *Service) DeleteProjectHook(ctx context.Context, ref string, hookID int64) error {
	return s.proj.DeleteHook(ctx, ref, hookID)
}

// SystemHook is one system hook, for administrators.
func (s *Service) SystemHook(ctx context.Context, id int64) (webhook.SystemHook, error) {
	h, err := s.systemHook(ctx, id)
	if err != nil {
		return webhook.SystemHook{}, err
	}
	return systemHookRecord(h), nil
}

// SystemHookAttempt is one entry of a system hook's delivery log
// (ErrAttemptNotFound), for administrators.
func (s *Service) SystemHookAttempt(ctx context.Context, id, attemptID int64) (webhook.Attempt, error) {
	if _, err := s.systemHook(ctx, id); err != nil {
		return webhook.Attempt{}, err
	}
	e, err := s.logEntry(ctx, hookKey(true, id), attemptID)
	if err != nil {
		return webhook.Attempt{}, err
	}
	return attempt(e), nil
}

// ResendSystemHook sends a logged payload of a system hook again, now,
// once, and logs the new attempt, as Resend does for a project hook.
func (s *Service) ResendSystemHook(ctx context.Context, id, attemptID int64) (webhook.Attempt, error) {
	if _, err := s.systemHook(ctx, id); err != nil {
		return webhook.Attempt{}, err
	}
	e, err := s.logEntry(ctx, hookKey(true, id), attemptID)
	if err != nil {
		return webhook.Attempt{}, err
	}
	return answered(s.sendNow(ctx, true, 0, id, e.Trigger, e.Event, e.RequestBody))
}
