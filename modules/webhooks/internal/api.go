package internal

// The API: a project hook's delivery log (Masters), resending an entry,
// testing a trigger, and the system hooks (administrators).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// NewRoutes registers the module's operations.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "webhooks", Register: s.register}
}

var (
	// errEventNotFound: no such entry in the hook's delivery log.
	errEventNotFound = errors.New("webhooks: hook event not found")
	// errSystemHookNotFound: no system hook of that id.
	errSystemHookNotFound = errors.New("webhooks: system hook not found")
	// errUnknownTrigger: :trigger names no trigger.
	errUnknownTrigger = errors.New("webhooks: unknown trigger")
)

func (s *Service) register(a *api.API) {
	// find(id) raising RecordNotFound.
	notFound := func(error) *api.Error { return api.RecordNotFound() }
	a.MapError(errEventNotFound, notFound)
	a.MapError(errSystemHookNotFound, notFound)
	a.MapError(errUnknownTrigger, func(error) *api.Error { return api.NotValidValue("trigger") })

	tags := []string{"project hooks"}
	api.Register(a, api.Op{ID: "list-project-hook-events", Method: http.MethodGet, Path: "/projects/{id}/hooks/{hook_id}/events", Tags: tags,
		Summary: "A project hook's delivery log, newest first (Master and up)", Access: api.SignedIn}, s.listEvents)
	api.Register(a, api.Op{ID: "get-project-hook-event", Method: http.MethodGet, Path: "/projects/{id}/hooks/{hook_id}/events/{event_id}", Tags: tags,
		Summary: "One attempt of the delivery log (Master and up)", Access: api.SignedIn}, s.getEvent)
	api.Register(a, api.Op{ID: "resend-project-hook-event", Method: http.MethodPost, Path: "/projects/{id}/hooks/{hook_id}/events/{event_id}/resend", Tags: tags,
		Summary: "Send a logged payload again, now (Master and up); 201 with the new attempt", Access: api.SignedIn}, s.resendEvent)
	api.Register(a, api.Op{ID: "test-project-hook", Method: http.MethodPost, Path: "/projects/{id}/hooks/{hook_id}/test/{trigger}", Tags: tags,
		Summary: "Send a sample payload of a trigger, now (Master and up); 201 with the attempt", Access: api.SignedIn}, s.testHook)

	stags := []string{"system hooks"}
	api.Register(a, api.Op{ID: "list-system-hooks", Method: http.MethodGet, Path: "/hooks", Tags: stags,
		Summary: "System hooks (administrators)", Access: api.AdminOnly}, s.listSystemHooks)
	api.Register(a, api.Op{ID: "add-system-hook", Method: http.MethodPost, Path: "/hooks", Tags: stags,
		Summary: "Add a system hook (administrators)", Access: api.AdminOnly}, s.addSystemHook)
	api.Register(a, api.Op{ID: "test-system-hook", Method: http.MethodGet, Path: "/hooks/{hook_id}", Tags: stags,
		Summary: "Test a system hook: sends a sample project_create and returns it (administrators)", Access: api.AdminOnly}, s.testSystemHook)
	api.Register(a, api.Op{ID: "delete-system-hook", Method: http.MethodDelete, Path: "/hooks/{hook_id}", Tags: stags,
		Summary: "Delete a system hook (administrators); 204", Access: api.AdminOnly}, s.deleteSystemHook)
	api.Register(a, api.Op{ID: "list-system-hook-events", Method: http.MethodGet, Path: "/hooks/{hook_id}/events", Tags: stags,
		Summary: "A system hook's delivery log, newest first (administrators)", Access: api.AdminOnly}, s.listSystemEvents)
}

// EventView is one attempt of a hook's delivery log (GitLab's WebHookLog
// fields, plus the attempt and its outcome).
type EventView struct {
	ID                   uint64            `json:"id"`
	HookID               int64             `json:"hook_id"`
	Trigger              string            `json:"trigger"`
	URL                  string            `json:"url"`
	RequestHeaders       map[string]string `json:"request_headers"`
	RequestData          json.RawMessage   `json:"request_data"`
	ResponseStatus       *int              `json:"response_status"`
	ResponseHeaders      map[string]string `json:"response_headers"`
	ResponseBody         string            `json:"response_body"`
	ExecutionDuration    float64           `json:"execution_duration"`
	Attempt              int               `json:"attempt"`
	Outcome              string            `json:"outcome"`
	InternalErrorMessage *string           `json:"internal_error_message"`
	CreatedAt            api.Time          `json:"created_at"`
}

func eventView(e *LogEntry) EventView {
	v := EventView{ID: e.ID, HookID: e.HookID, Trigger: e.Trigger, URL: e.URL, RequestHeaders: e.RequestHeaders,
		RequestData: e.RequestBody, ResponseHeaders: e.ResponseHeaders, ResponseBody: e.ResponseBody,
		ExecutionDuration: e.Duration.Seconds(), Attempt: e.Attempt, Outcome: e.Outcome, CreatedAt: api.NewTime(e.CreatedAt)}
	if e.ResponseStatus != 0 {
		st := e.ResponseStatus
		v.ResponseStatus = &st
	}
	if e.Error != "" {
		msg := e.Error
		v.InternalErrorMessage = &msg
	}
	if v.ResponseHeaders == nil {
		v.ResponseHeaders = map[string]string{}
	}
	return v
}

// ProjectHookPath names a project hook.
type ProjectHookPath struct {
	ID     string `path:"id" doc:"Project id or URL-encoded full path"`
	HookID int64  `path:"hook_id" doc:"Hook id"`
}

type listEventsInput struct {
	ProjectHookPath
	api.PageParams
}

type listEventsOutput struct {
	api.PageHeaders
	Body []EventView
}

type eventInput struct {
	ProjectHookPath
	EventID int64 `path:"event_id" doc:"Delivery log entry id"`
}

type eventOutput struct{ Body *EventView }

type testInput struct {
	ProjectHookPath
	Trigger string `path:"trigger" doc:"push_events, tag_push_events, issues_events, note_events, merge_requests_events, job_events or pipeline_events"`
}

// projectHook checks that the caller may administer the project (Master)
// and returns the hook.
func (s *Service) projectHook(ctx context.Context, p ProjectHookPath) (projects.ProjectInfo, projects.Hook, error) {
	info, err := s.access.Require(ctx, p.ID, projects.AdminProject)
	if err != nil {
		return info, projects.Hook{}, err
	}
	h, err := s.hooks.ProjectHook(ctx, info.ID, p.HookID)
	return info, h, err
}

// page is a window of hook key's log, newest first.
func (s *Service) page(ctx context.Context, key string, pp api.PageParams) ([]EventView, int, error) {
	out := []EventView{}
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := deliveryLog.IDsBy(tx, "hook", key)
		if err != nil {
			return err
		}
		slices.Reverse(ids)
		total = len(ids)
		for _, id := range api.Window(ids, pp) {
			e, err := deliveryLog.Get(tx, id)
			if err != nil {
				return err
			}
			out = append(out, eventView(e))
		}
		return nil
	})
	return out, total, err
}

func (s *Service) listEvents(ctx context.Context, in *listEventsInput) (*listEventsOutput, error) {
	_, h, err := s.projectHook(ctx, in.ProjectHookPath)
	if err != nil {
		return nil, err
	}
	body, total, err := s.page(ctx, hookKey(false, int64(h.ID)), in.PageParams)
	if err != nil {
		return nil, err
	}
	return &listEventsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: body}, nil
}

// logEntry is entry id of hook key's log.
func (s *Service) logEntry(ctx context.Context, key string, id int64) (*LogEntry, error) {
	var e *LogEntry
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if id <= 0 {
			return errEventNotFound
		}
		var err error
		e, err = deliveryLog.Get(tx, uint64(id))
		if errors.Is(err, store.ErrNotFound) || (err == nil && e.Hook != key) {
			return errEventNotFound
		}
		return err
	})
	return e, err
}

func (s *Service) getEvent(ctx context.Context, in *eventInput) (*eventOutput, error) {
	_, h, err := s.projectHook(ctx, in.ProjectHookPath)
	if err != nil {
		return nil, err
	}
	e, err := s.logEntry(ctx, hookKey(false, int64(h.ID)), in.EventID)
	if err != nil {
		return nil, err
	}
	v := eventView(e)
	return &eventOutput{Body: &v}, nil
}

func (s *Service) resendEvent(ctx context.Context, in *eventInput) (*eventOutput, error) {
	info, h, err := s.projectHook(ctx, in.ProjectHookPath)
	if err != nil {
		return nil, err
	}
	e, err := s.logEntry(ctx, hookKey(false, int64(h.ID)), in.EventID)
	if err != nil {
		return nil, err
	}
	return answered(s.sendNow(ctx, false, info.ID, int64(h.ID), e.Trigger, e.Event, e.RequestBody))
}

func (s *Service) testHook(ctx context.Context, in *testInput) (*eventOutput, error) {
	info, h, err := s.projectHook(ctx, in.ProjectHookPath)
	if err != nil {
		return nil, err
	}
	t, ok := triggerNamed(in.Trigger)
	if !ok {
		return nil, errUnknownTrigger
	}
	sample, err := t.Sample(s, system(ctx), info.ID, auth.FromContext(ctx).UserID())
	var none noSampleError
	if errors.As(err, &none) {
		return nil, &api.Error{Status: http.StatusUnprocessableEntity, Message: string(none)}
	}
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(sample)
	if err != nil {
		return nil, err
	}
	return answered(s.sendNow(ctx, false, info.ID, int64(h.ID), t.Name, t.Event, body))
}

// answered is 201 with the attempt when the receiver answered, whatever
// its status, or 422 when no answer came (a refused destination, a
// connection error).
func answered(e *LogEntry, err error) (*eventOutput, error) {
	if err != nil {
		return nil, err
	}
	if e.ResponseStatus == 0 {
		return nil, &api.Error{Status: http.StatusUnprocessableEntity, Message: "Hook execution failed: " + e.Error}
	}
	v := eventView(e)
	return &eventOutput{Body: &v}, nil
}

// sendNow makes one attempt outside the queue (a test or a resend, which
// the caller asks for and waits on) and records it.
func (s *Service) sendNow(ctx context.Context, sys bool, projectID, hookID int64, trig, event string, body []byte) (*LogEntry, error) {
	t, err := s.target(ctx, sys, projectID, hookID)
	if errors.Is(err, errHookGone) {
		if sys {
			return nil, errSystemHookNotFound
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
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return deliveryLog.Insert(tx, e) }); err != nil {
		return nil, err
	}
	return e, nil
}

// --- system hooks ---

// SystemHookView is GitLab 9.x's Hook entity.
type SystemHookView struct {
	ID                     uint64   `json:"id"`
	URL                    string   `json:"url"`
	CreatedAt              api.Time `json:"created_at"`
	PushEvents             bool     `json:"push_events"`
	TagPushEvents          bool     `json:"tag_push_events"`
	RepositoryUpdateEvents bool     `json:"repository_update_events"`
	EnableSSLVerification  bool     `json:"enable_ssl_verification"`
}

func systemHookView(h *SystemHook) SystemHookView {
	return SystemHookView{ID: h.ID, URL: h.URL, CreatedAt: api.NewTime(h.CreatedAt), PushEvents: h.PushEvents,
		TagPushEvents: h.TagPushEvents, EnableSSLVerification: h.EnableSSLVerification}
}

type listSystemHooksInput struct{ api.PageParams }

type listSystemHooksOutput struct {
	api.PageHeaders
	Body []SystemHookView
}

// SystemHookInput is POST /hooks.
type SystemHookInput struct {
	URL                   string  `json:"url" required:"true" doc:"http or https URL the payloads are posted to"`
	Token                 *string `json:"token,omitempty" doc:"Sent back in X-Gitlab-Token; never returned"`
	PushEvents            *bool   `json:"push_events,omitempty" doc:"Default true"`
	TagPushEvents         *bool   `json:"tag_push_events,omitempty" doc:"Default false"`
	EnableSSLVerification *bool   `json:"enable_ssl_verification,omitempty" doc:"Default true"`
}

type addSystemHookInput struct{ Body SystemHookInput }

type systemHookOutput struct{ Body *SystemHookView }

type SystemHookPath struct {
	HookID int64 `path:"hook_id" doc:"System hook id"`
}

type listSystemEventsInput struct {
	SystemHookPath
	api.PageParams
}

func (s *Service) listSystemHooks(ctx context.Context, in *listSystemHooksInput) (*listSystemHooksOutput, error) {
	out := &listSystemHooksOutput{Body: []SystemHookView{}}
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		rows, n, err := systemHooks.Page(tx, false, in.PageParams.Offset(), in.PageParams.Limit())
		for _, h := range rows {
			out.Body = append(out.Body, systemHookView(h))
		}
		total = n
		return err
	})
	if err != nil {
		return nil, err
	}
	out.PageHeaders = api.Paginate(ctx, in.PageParams, total)
	return out, nil
}

func (s *Service) addSystemHook(ctx context.Context, in *addSystemHookInput) (*systemHookOutput, error) {
	raw := strings.TrimSpace(in.Body.URL)
	if raw == "" {
		return nil, api.Missing("url")
	}
	// The projects module's shape rule; local destinations are refused
	// when a delivery connects (core/netguard), as an administrator's
	// system hook may point at the host's own network by design.
	if text := projects.HookURLProblem(raw); text != "" {
		return nil, api.FieldErrors{"url": {text}}
	}
	h := &SystemHook{URL: raw, PushEvents: true, EnableSSLVerification: true, CreatedAt: s.now().UTC()}
	if in.Body.Token != nil && *in.Body.Token != "" {
		h.Token = s.box.Seal(*in.Body.Token, purposeSystemHookToken)
	}
	if in.Body.PushEvents != nil {
		h.PushEvents = *in.Body.PushEvents
	}
	if in.Body.TagPushEvents != nil {
		h.TagPushEvents = *in.Body.TagPushEvents
	}
	if in.Body.EnableSSLVerification != nil {
		h.EnableSSLVerification = *in.Body.EnableSSLVerification
	}
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return systemHooks.Insert(tx, h) }); err != nil {
		return nil, err
	}
	v := systemHookView(h)
	return &systemHookOutput{Body: &v}, nil
}

func (s *Service) systemHook(ctx context.Context, id int64) (*SystemHook, error) {
	var h *SystemHook
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if id <= 0 {
			return errSystemHookNotFound
		}
		var err error
		h, err = systemHooks.Get(tx, uint64(id))
		if errors.Is(err, store.ErrNotFound) {
			return errSystemHookNotFound
		}
		return err
	})
	return h, err
}

type testSystemHookOutput struct{ Body map[string]any }

// testSystemHook sends 9.x's sample and answers it, whatever the receiver
// said (the attempt is in the hook's delivery log).
func (s *Service) testSystemHook(ctx context.Context, in *SystemHookPath) (*testSystemHookOutput, error) {
	h, err := s.systemHook(ctx, in.HookID)
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
	if _, err := s.sendNow(ctx, true, 0, int64(h.ID), "system_hook_test", systemHookEvent, body); err != nil {
		return nil, err
	}
	return &testSystemHookOutput{Body: data}, nil
}

func (s *Service) deleteSystemHook(ctx context.Context, in *SystemHookPath) (*struct{}, error) {
	if _, err := s.systemHook(ctx, in.HookID); err != nil {
		if errors.Is(err, errSystemHookNotFound) {
			// 9.x's DELETE says not_found!('System hook'), unlike the
			// GET's find, whose RecordNotFound is "404 Not found".
			return nil, api.NotFound("System hook")
		}
		return nil, err
	}
	return nil, s.db.Update(ctx, func(tx *store.Tx) error {
		if err := systemHooks.Delete(tx, uint64(in.HookID)); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return drop(tx, hookKey(true, in.HookID))
	})
}

type listSystemEventsOutput = listEventsOutput

func (s *Service) listSystemEvents(ctx context.Context, in *listSystemEventsInput) (*listSystemEventsOutput, error) {
	if _, err := s.systemHook(ctx, in.HookID); err != nil {
		return nil, err
	}
	body, total, err := s.page(ctx, hookKey(true, in.HookID), in.PageParams)
	if err != nil {
		return nil, err
	}
	return &listEventsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: body}, nil
}
