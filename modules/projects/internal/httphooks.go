package internal

// The HTTP adapter of project hooks (hooks.go).

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// HookView is the Project hook resource of the spec; the token is never in it.
type HookView struct {
	ID                    int64    `json:"id"`
	URL                   string   `json:"url"`
	ProjectID             int64    `json:"project_id"`
	PushEvents            bool     `json:"push_events"`
	IssuesEvents          bool     `json:"issues_events"`
	MergeRequestsEvents   bool     `json:"merge_requests_events"`
	TagPushEvents         bool     `json:"tag_push_events"`
	NoteEvents            bool     `json:"note_events"`
	JobEvents             bool     `json:"job_events"`
	PipelineEvents        bool     `json:"pipeline_events"`
	WikiPageEvents        bool     `json:"wiki_page_events"`
	EnableSSLVerification bool     `json:"enable_ssl_verification"`
	CreatedAt             api.Time `json:"created_at"`
}

func hookView(h *Hook) HookView {
	return HookView{
		ID: h.ID, URL: h.URL, ProjectID: h.ProjectID,
		PushEvents: h.PushEvents, IssuesEvents: h.IssuesEvents, MergeRequestsEvents: h.MergeRequestsEvents,
		TagPushEvents: h.TagPushEvents, NoteEvents: h.NoteEvents, JobEvents: h.JobEvents,
		PipelineEvents: h.PipelineEvents, WikiPageEvents: h.WikiPageEvents,
		EnableSSLVerification: h.EnableSSLVerification, CreatedAt: api.NewTime(h.CreatedAt),
	}
}

// HookInput carries the parameters of add and edit. url is required on both
// (as in GitLab 9); the switches keep their value when absent on edit.
type HookInput struct {
	URL                   string  `json:"url" required:"true" doc:"http or https URL the payloads are posted to"`
	Token                 *string `json:"token,omitempty" doc:"Sent back in X-Gitlab-Token; never returned"`
	PushEvents            *bool   `json:"push_events,omitempty" doc:"Default true"`
	IssuesEvents          *bool   `json:"issues_events,omitempty"`
	MergeRequestsEvents   *bool   `json:"merge_requests_events,omitempty"`
	TagPushEvents         *bool   `json:"tag_push_events,omitempty"`
	NoteEvents            *bool   `json:"note_events,omitempty"`
	JobEvents             *bool   `json:"job_events,omitempty"`
	PipelineEvents        *bool   `json:"pipeline_events,omitempty"`
	WikiPageEvents        *bool   `json:"wiki_page_events,omitempty"`
	EnableSSLVerification *bool   `json:"enable_ssl_verification,omitempty" doc:"Default true"`
}

// fields are the service's input.
func (in *HookInput) fields() project.HookFields {
	return project.HookFields{URL: in.URL, Token: in.Token, PushEvents: in.PushEvents, IssuesEvents: in.IssuesEvents,
		MergeRequestsEvents: in.MergeRequestsEvents, TagPushEvents: in.TagPushEvents, NoteEvents: in.NoteEvents,
		JobEvents: in.JobEvents, PipelineEvents: in.PipelineEvents, WikiPageEvents: in.WikiPageEvents,
		EnableSSLVerification: in.EnableSSLVerification}
}

type hookPath struct {
	ProjectPath
	HookID int64 `path:"hook_id" doc:"Hook id"`
}

type listHooksInput struct {
	ProjectPath
	api.PageParams
}

type listHooksOutput struct {
	api.PageHeaders
	Body []HookView
}

type hookOutput struct{ Body *HookView }

type addHookInput struct {
	ProjectPath
	Body HookInput
}

type editHookInput struct {
	ProjectPath
	HookID int64 `path:"hook_id" doc:"Hook id"`
	Body   HookInput
}

func (h handlers) registerHooks(a *api.API) {
	tags := []string{"project hooks"}
	api.Register(a, api.Op{ID: "list-project-hooks", Method: http.MethodGet, Path: "/projects/{id}/hooks", Tags: tags,
		Summary: "A project's hooks (Master and up)", Access: api.SignedIn},
		func(ctx context.Context, in *listHooksInput) (*listHooksOutput, error) {
			list, total, err := h.listHooks(ctx, in.ID, in.Offset(), in.Limit())
			if err != nil {
				return nil, err
			}
			out := &listHooksOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []HookView{}}
			for _, hk := range list {
				out.Body = append(out.Body, hookView(hk))
			}
			return out, nil
		})
	api.Register(a, api.Op{ID: "get-project-hook", Method: http.MethodGet, Path: "/projects/{id}/hooks/{hook_id}", Tags: tags,
		Summary: "One project hook (Master and up)", Access: api.SignedIn},
		func(ctx context.Context, in *hookPath) (*hookOutput, error) {
			return oneHook(h.getHook(ctx, in.ID, in.HookID))
		})
	api.Register(a, api.Op{ID: "add-project-hook", Method: http.MethodPost, Path: "/projects/{id}/hooks", Tags: tags,
		Summary: "Add a project hook (Master and up)", Access: api.SignedIn},
		func(ctx context.Context, in *addHookInput) (*hookOutput, error) {
			return oneHook(h.addHook(ctx, in.ID, in.Body.fields()))
		})
	api.Register(a, api.Op{ID: "edit-project-hook", Method: http.MethodPut, Path: "/projects/{id}/hooks/{hook_id}", Tags: tags,
		Summary: "Edit a project hook (Master and up)", Access: api.SignedIn},
		func(ctx context.Context, in *editHookInput) (*hookOutput, error) {
			return oneHook(h.editHook(ctx, in.ID, in.HookID, in.Body.fields()))
		})
	api.Register(a, api.Op{ID: "delete-project-hook", Method: http.MethodDelete, Path: "/projects/{id}/hooks/{hook_id}", Tags: tags,
		Summary: "Delete a project hook (Master and up); 204", Access: api.SignedIn},
		func(ctx context.Context, in *hookPath) (*struct{}, error) {
			return nil, h.DeleteHook(ctx, in.ID, in.HookID)
		})
}

// oneHook answers one hook.
func oneHook(hk *Hook, err error) (*hookOutput, error) {
	if err != nil {
		return nil, err
	}
	v := hookView(hk)
	return &hookOutput{Body: &v}, nil
}
