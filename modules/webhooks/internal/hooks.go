package internal

// The service's side of webhook.Service: a project hook's delivery log
// (Masters), resending an entry, testing a trigger, and the system hooks
// (administrators). The HTTP adapter is http.go.

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/webhooks/webhook"
)

var _ webhook.Service = (*Service)(nil)

// attempt is the contract's record of a log entry.
func attempt(e *LogEntry) webhook.Attempt {
	return webhook.Attempt{ID: e.ID, HookID: e.HookID, System: e.System, ProjectID: e.ProjectID,
		Trigger: e.Trigger, Event: e.Event, URL: e.URL, RequestHeaders: e.RequestHeaders, RequestBody: e.RequestBody,
		ResponseStatus: e.ResponseStatus, ResponseHeaders: e.ResponseHeaders, ResponseBody: e.ResponseBody,
		Duration: e.Duration, Number: e.Attempt, Error: e.Error, Outcome: webhook.Outcome(e.Outcome), CreatedAt: e.CreatedAt}
}

// projectHook checks that the caller may administer the project (Master)
// and returns the hook.
func (s *Service) projectHook(ctx context.Context, project string, hookID int64) (projects.ProjectInfo, projects.Hook, error) {
	info, err := s.access.Require(ctx, project, projects.AdminProject)
	if err != nil {
		return info, projects.Hook{}, err
	}
	h, err := s.hooks.ProjectHook(ctx, info.ID, hookID)
	return info, h, err
}

// page is a window of hook key's log, newest first.
func (s *Service) page(ctx context.Context, key string, offset, limit int) ([]webhook.Attempt, int, error) {
	out := []webhook.Attempt{}
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := deliveryLog.IDsBy(tx, "hook", key)
		if err != nil {
			return err
		}
		slices.Reverse(ids)
		total = len(ids)
		for _, id := range store.Window(ids, offset, limit) {
			e, err := deliveryLog.Get(tx, id)
			if err != nil {
				return err
			}
			out = append(out, attempt(e))
		}
		return nil
	})
	return out, total, err
}

// ProjectHookAttempts implements webhook.Service.
func (s *Service) ProjectHookAttempts(ctx context.Context, project string, hookID int64, offset, limit int) ([]webhook.Attempt, int, error) {
	_, h, err := s.projectHook(ctx, project, hookID)
	if err != nil {
		return nil, 0, err
	}
	return s.page(ctx, hookKey(false, h.ID), offset, limit)
}

// logEntry is entry id of hook key's log.
func (s *Service) logEntry(ctx context.Context, key string, id int64) (*LogEntry, error) {
	var e *LogEntry
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if id <= 0 {
			return webhook.ErrAttemptNotFound
		}
		var err error
		e, err = deliveryLog.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && e.Hook != key) {
			return webhook.ErrAttemptNotFound
		}
		return err
	})
	return e, err
}

// ProjectHookAttempt implements webhook.Service.
func (s *Service) ProjectHookAttempt(ctx context.Context, project string, hookID, attemptID int64) (webhook.Attempt, error) {
	_, h, err := s.projectHook(ctx, project, hookID)
	if err != nil {
		return webhook.Attempt{}, err
	}
	e, err := s.logEntry(ctx, hookKey(false, h.ID), attemptID)
	if err != nil {
		return webhook.Attempt{}, err
	}
	return attempt(e), nil
}

// Resend implements webhook.Service.
func (s *Service) Resend(ctx context.Context, project string, hookID, attemptID int64) (webhook.Attempt, error) {
	info, h, err := s.projectHook(ctx, project, hookID)
	if err != nil {
		return webhook.Attempt{}, err
	}
	e, err := s.logEntry(ctx, hookKey(false, h.ID), attemptID)
	if err != nil {
		return webhook.Attempt{}, err
	}
	return answered(s.sendNow(ctx, false, info.ID, h.ID, e.Trigger, e.Event, e.RequestBody))
}

// TestProjectHook implements webhook.Service.
func (s *Service) TestProjectHook(ctx context.Context, project string, hookID int64, trigger string) (webhook.Attempt, error) {
	info, h, err := s.projectHook(ctx, project, hookID)
	if err != nil {
		return webhook.Attempt{}, err
	}
	t, ok := triggerNamed(trigger)
	if !ok {
		return webhook.Attempt{}, webhook.ErrUnknownTrigger
	}
	sample, err := t.Sample(s, system(ctx), info.ID, auth.FromContext(ctx).UserID())
	if err != nil {
		return webhook.Attempt{}, err
	}
	body, err := json.Marshal(sample)
	if err != nil {
		return webhook.Attempt{}, err
	}
	return answered(s.sendNow(ctx, false, info.ID, h.ID, t.Name, t.Event, body))
}

// answered is the attempt when the receiver answered, whatever its
// status, or a *NoAnswerError when no answer came.
func answered(e *LogEntry, err error) (webhook.Attempt, error) {
	if err != nil {
		return webhook.Attempt{}, err
	}
	a := attempt(e)
	if !a.Answered() {
		return webhook.Attempt{}, &webhook.NoAnswerError{Attempt: a}
	}
	return a, nil
}

// sendNow makes one attempt outside the queue (a test or a resend, which
// the caller asks for and waits on) and records it.
func (s *Service) sendNow(ctx context.Context, sys bool, projectID, hookID int64, trig, event string, body []byte) (*LogEntry, error) {
	t, err := s.target(ctx, sys, projectID, hookID)
	if errors.Is(err, errHookGone) {
		if sys {
			return nil, webhook.ErrSystemHookNotFound
		}
		return nil, projects.ErrHookNotFound
	}
	if err != nil {
		return nil, err
	}
	e := s.send(context.WithoutCancel(ctx), t, event, body)
	e.Hook, e.HookID, e.System, e.ProjectID, e.Trigger, e.Attempt = hookKey(sys, hookID), hookID, sys, projectID, trig, 1
	if e.Outcome == outcomeRetrying {
		e.Outcome = outcomeFailed // a manual attempt is not retried
	}
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return logAttempt(tx, e) }); err != nil {
		return nil, err
	}
	return e, nil
}

// --- system hooks ---

// requireAdmin refuses all but administrators.
func requireAdmin(ctx context.Context) error {
	if !auth.FromContext(ctx).IsAdmin() {
		return webhook.ErrAdminOnly
	}
	return nil
}

func systemHookRecord(h *SystemHook) webhook.SystemHook {
	return webhook.SystemHook{ID: h.ID, URL: h.URL, PushEvents: h.PushEvents, TagPushEvents: h.TagPushEvents,
		EnableSSLVerification: h.EnableSSLVerification, CreatedAt: h.CreatedAt}
}

// SystemHooks implements webhook.Service.
func (s *Service) SystemHooks(ctx context.Context, offset, limit int) ([]webhook.SystemHook, int, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, 0, err
	}
	out := []webhook.SystemHook{}
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		rows, n, err := systemHooks.Page(tx, false, offset, limit)
		for _, h := range rows {
			out = append(out, systemHookRecord(h))
		}
		total = n
		return err
	})
	return out, total, err
}

// AddSystemHook implements webhook.Service.
func (s *Service) AddSystemHook(ctx context.Context, in webhook.SystemHookFields) (webhook.SystemHook, error) {
	if err := requireAdmin(ctx); err != nil {
		return webhook.SystemHook{}, err
	}
	raw := strings.TrimSpace(in.URL)
	if raw == "" {
		return webhook.SystemHook{}, webhook.ErrURLMissing
	}
	// The projects module's shape rule; local destinations are refused
	// when a delivery connects (core/netguard), as an administrator's
	// system hook may point at the host's own network by design.
	if text := projects.HookURLProblem(raw); text != "" {
		return webhook.SystemHook{}, &webhook.InvalidURLError{Problem: text}
	}
	h := &SystemHook{URL: raw, PushEvents: true, EnableSSLVerification: true, CreatedAt: s.now().UTC()}
	if in.Token != nil && *in.Token != "" {
		h.Token = s.box.Seal(*in.Token, purposeSystemHookToken)
	}
	if in.PushEvents != nil {
		h.PushEvents = *in.PushEvents
	}
	if in.TagPushEvents != nil {
		h.TagPushEvents = *in.TagPushEvents
	}
	if in.EnableSSLVerification != nil {
		h.EnableSSLVerification = *in.EnableSSLVerification
	}
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return systemHooks.Insert(tx, h) }); err != nil {
		return webhook.SystemHook{}, err
	}
	return systemHookRecord(h), nil
}

// systemHook is system hook id, for administrators.
func (s *Service) systemHook(ctx context.Context, id int64) (*SystemHook, error) {
	if err := requireAdmin(ctx); err != nil {
		return nil, err
	}
	var h *SystemHook
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if id <= 0 {
			return webhook.ErrSystemHookNotFound
		}
		var err error
		h, err = systemHooks.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return webhook.ErrSystemHookNotFound
		}
		return err
	})
	return h, err
}

// TestSystemHook implements webhook.Service with 9.x's sample.
func (s *Service) TestSystemHook(ctx context.Context, id int64) (map[string]any, error) {
	h, err := s.systemHook(ctx, id)
	if err != nil {
		return nil, err
	}
	data := map[string]any{
		"event_name": "project_create", "name": "Ruby", "path": "ruby", "project_id": 1,
		"owner_name": "Someone", "owner_email": "example@gitlabhq.com",
	}
	body, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	if _, err := s.sendNow(ctx, true, 0, h.ID, "system_hook_test", systemHookEvent, body); err != nil {
		return nil, err
	}
	return data, nil
}

// DeleteSystemHook implements webhook.Service.
func (s *Service) DeleteSystemHook(ctx context.Context, id int64) error {
	if _, err := s.systemHook(ctx, id); err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if err := systemHooks.Delete(tx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return s.drop(tx, hookKey(true, id))
	})
}

// SystemHookAttempts implements webhook.Service.
func (s *Service) SystemHookAttempts(ctx context.Context, id int64, offset, limit int) ([]webhook.Attempt, int, error) {
	if _, err := s.systemHook(ctx, id); err != nil {
		return nil, 0, err
	}
	return s.page(ctx, hookKey(true, id), offset, limit)
}
