package internal

// The HTTP adapter: GitLab's notification settings routes decode their
// parameters, call notification.Service, render GitLab's JSON and leave
// the service's errors to mapErrors. Nothing else in the module speaks
// HTTP.

import (
	"context"
	"errors"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/notifications/notification"
)

// EventsView is the events object of a custom level, keys in GitLab's
// order.
type EventsView struct {
	NewNote              bool `json:"new_note"`
	NewIssue             bool `json:"new_issue"`
	ReopenIssue          bool `json:"reopen_issue"`
	CloseIssue           bool `json:"close_issue"`
	ReassignIssue        bool `json:"reassign_issue"`
	NewMergeRequest      bool `json:"new_merge_request"`
	ReopenMergeRequest   bool `json:"reopen_merge_request"`
	CloseMergeRequest    bool `json:"close_merge_request"`
	ReassignMergeRequest bool `json:"reassign_merge_request"`
	MergeMergeRequest    bool `json:"merge_merge_request"`
	FailedPipeline       bool `json:"failed_pipeline"`
	SuccessPipeline      bool `json:"success_pipeline"`
}

func eventsView(m map[string]bool) *EventsView {
	return &EventsView{NewNote: m["new_note"], NewIssue: m["new_issue"], ReopenIssue: m["reopen_issue"],
		CloseIssue: m["close_issue"], ReassignIssue: m["reassign_issue"], NewMergeRequest: m["new_merge_request"],
		ReopenMergeRequest: m["reopen_merge_request"], CloseMergeRequest: m["close_merge_request"],
		ReassignMergeRequest: m["reassign_merge_request"], MergeMergeRequest: m["merge_merge_request"],
		FailedPipeline: m["failed_pipeline"], SuccessPipeline: m["success_pipeline"]}
}

// SettingView is a group's or project's notification setting; events only
// when the level is custom.
type SettingView struct {
	Level  string      `json:"level"`
	Events *EventsView `json:"events,omitempty"`
}

// GlobalSettingView is the user's global setting.
type GlobalSettingView struct {
	Level             string      `json:"level"`
	NotificationEmail string      `json:"notification_email"`
	Events            *EventsView `json:"events,omitempty"`
}

// settingsBody is the parameters of the PUTs (notification_email on the
// global one only).
type settingsBody struct {
	Level                *string `json:"level,omitempty" doc:"disabled, participating, watch, global (not on the global setting), mention or custom"`
	NotificationEmail    *string `json:"notification_email,omitempty" doc:"One of the caller's confirmed addresses; empty: the primary one"`
	NewNote              *bool   `json:"new_note,omitempty"`
	NewIssue             *bool   `json:"new_issue,omitempty"`
	ReopenIssue          *bool   `json:"reopen_issue,omitempty"`
	CloseIssue           *bool   `json:"close_issue,omitempty"`
	ReassignIssue        *bool   `json:"reassign_issue,omitempty"`
	NewMergeRequest      *bool   `json:"new_merge_request,omitempty"`
	ReopenMergeRequest   *bool   `json:"reopen_merge_request,omitempty"`
	CloseMergeRequest    *bool   `json:"close_merge_request,omitempty"`
	ReassignMergeRequest *bool   `json:"reassign_merge_request,omitempty"`
	MergeMergeRequest    *bool   `json:"merge_merge_request,omitempty"`
	FailedPipeline       *bool   `json:"failed_pipeline,omitempty"`
	SuccessPipeline      *bool   `json:"success_pipeline,omitempty"`
}

// change is the service's input: the events given, and the rest.
func (b *settingsBody) change() notification.Change {
	c := notification.Change{Level: (*notification.Level)(b.Level), NotificationEmail: b.NotificationEmail}
	for name, v := range b.events() {
		if v != nil {
			if c.Events == nil {
				c.Events = map[string]bool{}
			}
			c.Events[name] = *v
		}
	}
	return c
}

func (b *settingsBody) events() map[string]*bool {
	return map[string]*bool{"new_note": b.NewNote, "new_issue": b.NewIssue, "reopen_issue": b.ReopenIssue,
		"close_issue": b.CloseIssue, "reassign_issue": b.ReassignIssue, "new_merge_request": b.NewMergeRequest,
		"reopen_merge_request": b.ReopenMergeRequest, "close_merge_request": b.CloseMergeRequest,
		"reassign_merge_request": b.ReassignMergeRequest, "merge_merge_request": b.MergeMergeRequest,
		"failed_pipeline": b.FailedPipeline, "success_pipeline": b.SuccessPipeline}
}

type SourcePath struct {
	ID string `path:"id" doc:"Group or project id, or URL-encoded path"`
}

type globalOutput struct{ Body GlobalSettingView }

type sourceOutput struct{ Body SettingView }

type putGlobalInput struct{ Body settingsBody }

type putSourceInput struct {
	SourcePath
	Body settingsBody
}

// handlers serve the routes over the service.
type handlers struct{ svc notification.Service }

// NewRoutes registers the notification settings operations.
func NewRoutes(s *Service) fennec.Routes {
	h := handlers{svc: s}
	return fennec.Routes{Name: "notifications", Register: func(a *api.API) {
		mapErrors(a)
		h.register(a)
	}}
}

// mapErrors is the module's table from its domain errors to GitLab's
// answers (a group's and a project's are the projects module's).
func mapErrors(a *api.API) {
	a.MapError(notification.ErrInvalidLevel, func(err error) *api.Error {
		var le *notification.LevelError
		if !errors.As(err, &le) {
			return nil
		}
		// As GitLab 9.x answered its enum's ArgumentError.
		return api.BadRequest("'" + string(le.Level) + "' is not a valid level")
	})
	a.MapError(notification.ErrEmailNotOwned, func(error) *api.Error {
		return api.Validation(map[string][]string{"notification_email": {"is not an email you own"}})
	})
}

func (h handlers) register(a *api.API) {
	tags := []string{"notification_settings"}
	api.Register(a, api.Op{ID: "get-global-notification-settings", Method: http.MethodGet, Path: "/notification_settings", Tags: tags,
		Access: api.SignedIn, Summary: "The caller's global notification level and notification e-mail"}, h.getGlobal)
	api.Register(a, api.Op{ID: "update-global-notification-settings", Method: http.MethodPut, Path: "/notification_settings", Tags: tags,
		Access: api.SignedIn, Summary: "Changes the caller's global notification level, e-mail or custom events"}, h.putGlobal)
	for _, source := range []notification.Source{notification.Group, notification.Project} {
		src := string(source)
		path := "/" + src + "s/{id}/notification_settings"
		api.Register(a, api.Op{ID: "get-" + src + "-notification-settings", Method: http.MethodGet, Path: path, Tags: tags,
			Access: api.SignedIn, Summary: "The caller's notification level for a " + src}, func(ctx context.Context, in *SourcePath) (*sourceOutput, error) {
			v, err := h.svc.SourceSetting(ctx, source, in.ID)
			return sourceOutputOf(v, err)
		})
		api.Register(a, api.Op{ID: "update-" + src + "-notification-settings", Method: http.MethodPut, Path: path, Tags: tags,
			Access: api.SignedIn, Summary: "Changes the caller's notification level (and custom events) for a " + src}, func(ctx context.Context, in *putSourceInput) (*sourceOutput, error) {
			v, err := h.svc.UpdateSourceSetting(ctx, source, in.ID, in.Body.change())
			return sourceOutputOf(v, err)
		})
	}
}

func (h handlers) getGlobal(ctx context.Context, _ *struct{}) (*globalOutput, error) {
	v, err := h.svc.GlobalSetting(ctx)
	return globalOutputOf(v, err)
}

func (h handlers) putGlobal(ctx context.Context, in *putGlobalInput) (*globalOutput, error) {
	v, err := h.svc.UpdateGlobalSetting(ctx, in.Body.change())
	return globalOutputOf(v, err)
}

// events is a setting's events object: for a custom level only.
func eventsOf(v notification.Setting) *EventsView {
	if v.Level != notification.Custom {
		return nil
	}
	return eventsView(v.Events)
}

func globalOutputOf(v notification.Setting, err error) (*globalOutput, error) {
	if err != nil {
		return nil, err
	}
	return &globalOutput{Body: GlobalSettingView{Level: string(v.Level), NotificationEmail: v.NotificationEmail, Events: eventsOf(v)}}, nil
}

func sourceOutputOf(v notification.Setting, err error) (*sourceOutput, error) {
	if err != nil {
		return nil, err
	}
	return &sourceOutput{Body: SettingView{Level: string(v.Level), Events: eventsOf(v)}}, nil
}
