package internal

// The HTTP adapter: GitLab's routes for a project hook's delivery log and
// the system hooks decode their parameters, call webhook.Service, render
// GitLab's views and leave the service's errors to mapErrors. The
// deliveries' own outgoing HTTP is httpclient.go.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/webhooks/webhook"
)

// handlers serve the routes over the service.
type handlers struct{ svc webhook.Service }

// NewRoutes registers the module's operations.
func NewRoutes(s *Service) fennec.Routes {
	h := handlers{svc: s}
	return fennec.Routes{Name: "webhooks", Register: func(a *api.API) {
		mapErrors(a)
		h.register(a)
	}}
}

// mapErrors is the module's table from its domain errors to GitLab's
// answers (the project and its hooks' errors are the projects module's).
func mapErrors(a *api.API) {
	// find(id) raising RecordNotFound.
	notFound := func(error) *api.Error { return api.RecordNotFound() }
	a.MapError(webhook.ErrAttemptNotFound, notFound)
	a.MapError(webhook.ErrSystemHookNotFound, notFound)
	a.MapError(webhook.ErrAdminOnly, func(error) *api.Error { return api.Forbidden("") })
	a.MapError(webhook.ErrUnknownTrigger, func(error) *api.Error { return api.NotValidValue("trigger") })
	a.MapError(webhook.ErrURLMissing, func(error) *api.Error { return api.Missing("url") })
	a.MapError(webhook.ErrInvalidURL, func(err error) *api.Error {
		var ue *webhook.InvalidURLError
		if !errors.As(err, &ue) {
			return nil
		}
		return api.Validation(api.FieldErrors{"url": {ue.Problem}})
	})
	unprocessable := func(err error) *api.Error {
		return &api.Error{Status: http.StatusUnprocessableEntity, Message: err.Error()}
	}
	a.MapError(webhook.ErrNoSample, unprocessable)
	a.MapError(webhook.ErrNoAnswer, unprocessable)
}

func (h handlers) register(a *api.API) {
	tags := []string{"project hooks"}
	api.Register(a, api.Op{ID: "list-project-hook-events", Method: http.MethodGet, Path: "/projects/{id}/hooks/{hook_id}/events", Tags: tags,
		Summary: "A project hook's delivery log, newest first (Master and up)", Access: api.SignedIn}, h.listEvents)
	api.Register(a, api.Op{ID: "get-project-hook-event", Method: http.MethodGet, Path: "/projects/{id}/hooks/{hook_id}/events/{event_id}", Tags: tags,
		Summary: "One attempt of the delivery log (Master and up)", Access: api.SignedIn}, h.getEvent)
	api.Register(a, api.Op{ID: "resend-project-hook-event", Method: http.MethodPost, Path: "/projects/{id}/hooks/{hook_id}/events/{event_id}/resend", Tags: tags,
		Summary: "Send a logged payload again, now (Master and up); 201 with the new attempt", Access: api.SignedIn}, h.resendEvent)
	api.Register(a, api.Op{ID: "test-project-hook", Method: http.MethodPost, Path: "/projects/{id}/hooks/{hook_id}/test/{trigger}", Tags: tags,
		Summary: "Send a sample payload of a trigger, now (Master and up); 201 with the attempt", Access: api.SignedIn}, h.testHook)

	stags := []string{"system hooks"}
	api.Register(a, api.Op{ID: "list-system-hooks", Method: http.MethodGet, Path: "/hooks", Tags: stags,
		Summary: "System hooks (administrators)", Access: api.AdminOnly}, h.listSystemHooks)
	api.Register(a, api.Op{ID: "add-system-hook", Method: http.MethodPost, Path: "/hooks", Tags: stags,
		Summary: "Add a system hook (administrators)", Access: api.AdminOnly}, h.addSystemHook)
	api.Register(a, api.Op{ID: "test-system-hook", Method: http.MethodGet, Path: "/hooks/{hook_id}", Tags: stags,
		Summary: "Test a system hook: sends a sample project_create and returns it (administrators)", Access: api.AdminOnly}, h.testSystemHook)
	api.Register(a, api.Op{ID: "delete-system-hook", Method: http.MethodDelete, Path: "/hooks/{hook_id}", Tags: stags,
		Summary: "Delete a system hook (administrators); 204", Access: api.AdminOnly}, h.deleteSystemHook)
	api.Register(a, api.Op{ID: "list-system-hook-events", Method: http.MethodGet, Path: "/hooks/{hook_id}/events", Tags: stags,
		Summary: "A system hook's delivery log, newest first (administrators)", Access: api.AdminOnly}, h.listSystemEvents)
}

// EventView is one attempt of a hook's delivery log (GitLab's WebHookLog
// fields, plus the attempt and its outcome).
type EventView struct {
	ID                   int64             `json:"id"`
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

func eventView(e webhook.Attempt) EventView {
	v := EventView{ID: e.ID, HookID: e.HookID, Trigger: e.Trigger, URL: e.URL, RequestHeaders: e.RequestHeaders,
		RequestData: e.RequestBody, ResponseHeaders: e.ResponseHeaders, ResponseBody: e.ResponseBody,
		ExecutionDuration: e.Duration.Seconds(), Attempt: e.Number, Outcome: string(e.Outcome), CreatedAt: api.NewTime(e.CreatedAt)}
	if e.Answered() {
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

func eventViews(list []webhook.Attempt) []EventView {
	out := make([]EventView, 0, len(list))
	for _, e := range list {
		out = append(out, eventView(e))
	}
	return out
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

func (h handlers) listEvents(ctx context.Context, in *listEventsInput) (*listEventsOutput, error) {
	list, total, err := h.svc.ProjectHookAttempts(ctx, in.ID, in.HookID, in.PageParams.Offset(), in.PageParams.Limit())
	if err != nil {
		return nil, err
	}
	return &listEventsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: eventViews(list)}, nil
}

// oneEvent answers an attempt.
func oneEvent(e webhook.Attempt, err error) (*eventOutput, error) {
	if err != nil {
		return nil, err
	}
	v := eventView(e)
	return &eventOutput{Body: &v}, nil
}

func (h handlers) getEvent(ctx context.Context, in *eventInput) (*eventOutput, error) {
	return oneEvent(h.svc.ProjectHookAttempt(ctx, in.ID, in.HookID, in.EventID))
}

// resendEvent and testHook answer 201 with the attempt when the receiver
// answered, whatever its status, and 422 when no answer came
// (webhook.ErrNoAnswer).
func (h handlers) resendEvent(ctx context.Context, in *eventInput) (*eventOutput, error) {
	return oneEvent(h.svc.Resend(ctx, in.ID, in.HookID, in.EventID))
}

func (h handlers) testHook(ctx context.Context, in *testInput) (*eventOutput, error) {
	return oneEvent(h.svc.TestProjectHook(ctx, in.ID, in.HookID, in.Trigger))
}

// --- system hooks ---

// SystemHookView is GitLab 9.x's Hook entity.
type SystemHookView struct {
	ID                     int64    `json:"id"`
	URL                    string   `json:"url"`
	CreatedAt              api.Time `json:"created_at"`
	PushEvents             bool     `json:"push_events"`
	TagPushEvents          bool     `json:"tag_push_events"`
	RepositoryUpdateEvents bool     `json:"repository_update_events"`
	EnableSSLVerification  bool     `json:"enable_ssl_verification"`
}

func systemHookView(h webhook.SystemHook) SystemHookView {
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

func (h handlers) listSystemHooks(ctx context.Context, in *listSystemHooksInput) (*listSystemHooksOutput, error) {
	list, total, err := h.svc.SystemHooks(ctx, in.PageParams.Offset(), in.PageParams.Limit())
	if err != nil {
		return nil, err
	}
	out := &listSystemHooksOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: make([]SystemHookView, 0, len(list))}
	for _, sh := range list {
		out.Body = append(out.Body, systemHookView(sh))
	}
	return out, nil
}

func (h handlers) addSystemHook(ctx context.Context, in *addSystemHookInput) (*systemHookOutput, error) {
	sh, err := h.svc.AddSystemHook(ctx, webhook.SystemHookFields{URL: in.Body.URL, Token: in.Body.Token,
		PushEvents: in.Body.PushEvents, TagPushEvents: in.Body.TagPushEvents, EnableSSLVerification: in.Body.EnableSSLVerification})
	if err != nil {
		return nil, err
	}
	v := systemHookView(sh)
	return &systemHookOutput{Body: &v}, nil
}

type testSystemHookOutput struct{ Body map[string]any }

func (h handlers) testSystemHook(ctx context.Context, in *SystemHookPath) (*testSystemHookOutput, error) {
	data, err := h.svc.TestSystemHook(ctx, in.HookID)
	if err != nil {
		return nil, err
	}
	return &testSystemHookOutput{Body: data}, nil
}

func (h handlers) deleteSystemHook(ctx context.Context, in *SystemHookPath) (*struct{}, error) {
	err := h.svc.DeleteSystemHook(ctx, in.HookID)
	if errors.Is(err, webhook.ErrSystemHookNotFound) {
		// 9.x's DELETE says not_found!('System hook'), unlike the GET's
		// find, whose RecordNotFound is "404 Not found".
		return nil, api.NotFound("System hook")
	}
	return nil, err
}

func (h handlers) listSystemEvents(ctx context.Context, in *listSystemEventsInput) (*listEventsOutput, error) {
	list, total, err := h.svc.SystemHookAttempts(ctx, in.HookID, in.PageParams.Offset(), in.PageParams.Limit())
	if err != nil {
		return nil, err
	}
	return &listEventsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: eventViews(list)}, nil
}
