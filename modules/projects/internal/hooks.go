package internal

// Project hooks: the table, their CRUD operations (Master and up) and the
// Project hook view of the spec. Delivering payloads is the webhooks
// module's business; it reads this table. A hook's token is sent back to the
// hook's URL in X-Gitlab-Token, so it cannot be hashed: it is stored sealed
// (core/sealed, purpose PurposeHookToken) and never rendered.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Hook is a stored project hook.
type Hook struct {
	ID                    uint64    `json:"id"`
	ProjectID             uint64    `json:"project_id"`
	URL                   string    `json:"url"`
	Token                 string    `json:"token,omitempty"` // sealed; Unseal with PurposeHookToken
	PushEvents            bool      `json:"push_events"`
	IssuesEvents          bool      `json:"issues_events"`
	MergeRequestsEvents   bool      `json:"merge_requests_events"`
	TagPushEvents         bool      `json:"tag_push_events"`
	NoteEvents            bool      `json:"note_events"`
	JobEvents             bool      `json:"job_events"`
	PipelineEvents        bool      `json:"pipeline_events"`
	WikiPageEvents        bool      `json:"wiki_page_events"`
	EnableSSLVerification bool      `json:"enable_ssl_verification"`
	CreatedAt             time.Time `json:"created_at"`
}

func (h *Hook) RecordID() uint64      { return h.ID }
func (h *Hook) SetRecordID(id uint64) { h.ID = id }

var hooks = store.NewTable[Hook]("projects.hooks",
	store.Index[Hook]{Name: "project", Keys: func(h *Hook) []string { return []string{u64(h.ProjectID)} }},
)

// HookView is the Project hook resource of the spec; the token is never in it.
type HookView struct {
	ID                    uint64   `json:"id"`
	URL                   string   `json:"url"`
	ProjectID             uint64   `json:"project_id"`
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

func (in *HookInput) apply(h *Hook, box *sealed.Box) {
	set := func(d *bool, v *bool) {
		if v != nil {
			*d = *v
		}
	}
	h.URL = strings.TrimSpace(in.URL)
	if in.Token != nil {
		h.Token = box.Seal(*in.Token, project.HookTokenPurpose)
	}
	set(&h.PushEvents, in.PushEvents)
	set(&h.IssuesEvents, in.IssuesEvents)
	set(&h.MergeRequestsEvents, in.MergeRequestsEvents)
	set(&h.TagPushEvents, in.TagPushEvents)
	set(&h.NoteEvents, in.NoteEvents)
	set(&h.JobEvents, in.JobEvents)
	set(&h.PipelineEvents, in.PipelineEvents)
	set(&h.WikiPageEvents, in.WikiPageEvents)
	set(&h.EnableSSLVerification, in.EnableSSLVerification)
}

// validateHookURL is HookURLProblem for a project hook, whose host may
// moreover not be literally a local, private or metadata address unless the
// administrator allows local requests (later GitLabs' rule: a hook is a
// request the server makes for whoever may edit the project); names are
// checked by the webhooks module's dialer at each connection, which catches
// DNS rebinding too. Every refusal is GitLab's answer for a hook whose url
// does not validate, 422 {"error":"Invalid url given"} (9.x's and later
// versions' project hooks API, local-address refusals included); the
// reason is logged at debug level.
func (s *Service) validateHookURL(raw string) error {
	raw = strings.TrimSpace(raw)
	problem := project.HookURLProblem(raw)
	if problem == "" {
		if err := s.guard.CheckURL(raw); err != nil {
			problem = "is blocked: " + err.Error()
		}
	}
	if problem == "" {
		return nil
	}
	s.log.Debug("project hook url refused", zap.String("reason", problem))
	return &api.Error{Status: http.StatusUnprocessableEntity, Err: "Invalid url given"}
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

func (s *Service) registerHooks(a *api.API) {
	tags := []string{"project hooks"}
	api.Register(a, api.Op{ID: "list-project-hooks", Method: http.MethodGet, Path: "/projects/{id}/hooks", Tags: tags,
		Summary: "A project's hooks (Master and up)", Access: api.SignedIn}, s.listHooks)
	api.Register(a, api.Op{ID: "get-project-hook", Method: http.MethodGet, Path: "/projects/{id}/hooks/{hook_id}", Tags: tags,
		Summary: "One project hook (Master and up)", Access: api.SignedIn}, s.getHook)
	api.Register(a, api.Op{ID: "add-project-hook", Method: http.MethodPost, Path: "/projects/{id}/hooks", Tags: tags,
		Summary: "Add a project hook (Master and up)", Access: api.SignedIn}, s.addHook)
	api.Register(a, api.Op{ID: "edit-project-hook", Method: http.MethodPut, Path: "/projects/{id}/hooks/{hook_id}", Tags: tags,
		Summary: "Edit a project hook (Master and up)", Access: api.SignedIn}, s.editHook)
	api.Register(a, api.Op{ID: "delete-project-hook", Method: http.MethodDelete, Path: "/projects/{id}/hooks/{hook_id}", Tags: tags,
		Summary: "Delete a project hook (Master and up); 204", Access: api.SignedIn}, s.deleteHook)
}

// projectHook loads a hook of project pid inside tx; a hook of another
// project is not found either.
func projectHook(tx *store.Tx, pid uint64, id int64) (*Hook, error) {
	if id <= 0 {
		return nil, project.ErrHookNotFound
	}
	h, err := hooks.Get(tx, uint64(id))
	if errors.Is(err, store.ErrNotFound) || (err == nil && h.ProjectID != pid) {
		return nil, project.ErrHookNotFound
	}
	return h, err
}

func (s *Service) listHooks(ctx context.Context, in *listHooksInput) (*listHooksOutput, error) {
	r, err := s.require(ctx, in.ID, project.AdminProject)
	if err != nil {
		return nil, err
	}
	out := &listHooksOutput{Body: []HookView{}}
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := hooks.IDsBy(tx, "project", u64(r.p.ID))
		if err != nil {
			return err
		}
		total = len(ids)
		for _, id := range api.Window(ids, in.PageParams) {
			h, err := hooks.Get(tx, id)
			if err != nil {
				return err
			}
			out.Body = append(out.Body, hookView(h))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.PageHeaders = api.Paginate(ctx, in.PageParams, total)
	return out, nil
}

func (s *Service) getHook(ctx context.Context, in *hookPath) (*hookOutput, error) {
	r, err := s.require(ctx, in.ID, project.AdminProject)
	if err != nil {
		return nil, err
	}
	var h *Hook
	err = s.db.View(ctx, func(tx *store.Tx) error {
		h, err = projectHook(tx, r.p.ID, in.HookID)
		return err
	})
	if err != nil {
		return nil, err
	}
	v := hookView(h)
	return &hookOutput{Body: &v}, nil
}

func (s *Service) addHook(ctx context.Context, in *addHookInput) (*hookOutput, error) {
	r, err := s.require(ctx, in.ID, project.AdminProject)
	if err != nil {
		return nil, err
	}
	if err := s.validateHookURL(in.Body.URL); err != nil {
		return nil, err
	}
	h := &Hook{ProjectID: r.p.ID, PushEvents: true, EnableSSLVerification: true, CreatedAt: s.now().UTC()}
	in.Body.apply(h, s.box)
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if !projects.Exists(tx, r.p.ID) {
			return project.ErrNotFound // deleted meanwhile
		}
		return hooks.Insert(tx, h)
	})
	if err != nil {
		return nil, err
	}
	v := hookView(h)
	return &hookOutput{Body: &v}, nil
}

func (s *Service) editHook(ctx context.Context, in *editHookInput) (*hookOutput, error) {
	r, err := s.require(ctx, in.ID, project.AdminProject)
	if err != nil {
		return nil, err
	}
	if err := s.validateHookURL(in.Body.URL); err != nil {
		return nil, err
	}
	var h *Hook
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if h, err = projectHook(tx, r.p.ID, in.HookID); err != nil {
			return err
		}
		in.Body.apply(h, s.box)
		return hooks.Update(tx, h)
	})
	if err != nil {
		return nil, err
	}
	v := hookView(h)
	return &hookOutput{Body: &v}, nil
}

func (s *Service) deleteHook(ctx context.Context, in *hookPath) (*struct{}, error) {
	r, err := s.require(ctx, in.ID, project.AdminProject)
	if err != nil {
		return nil, err
	}
	return nil, s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := projectHook(tx, r.p.ID, in.HookID); err != nil {
			return err
		}
		return hooks.Delete(tx, uint64(in.HookID))
	})
}

// hookRecord is a stored hook as the contract gives it.
func hookRecord(h *Hook) project.Hook {
	return project.Hook{ID: int64(h.ID), ProjectID: int64(h.ProjectID), URL: h.URL, Token: h.Token,
		PushEvents: h.PushEvents, IssuesEvents: h.IssuesEvents, MergeRequestsEvents: h.MergeRequestsEvents,
		TagPushEvents: h.TagPushEvents, NoteEvents: h.NoteEvents, JobEvents: h.JobEvents,
		PipelineEvents: h.PipelineEvents, WikiPageEvents: h.WikiPageEvents,
		EnableSSLVerification: h.EnableSSLVerification, CreatedAt: h.CreatedAt}
}

// ProjectHooks are the hooks of a project, by id, in the transaction ctx
// carries if any (the webhooks module enqueues deliveries in the
// transaction of the event that caused them).
func (s *Service) ProjectHooks(ctx context.Context, projectID int64) ([]project.Hook, error) {
	var out []project.Hook
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := hooks.IDsBy(tx, "project", u64(uint64(projectID)))
		if err != nil {
			return err
		}
		for _, id := range ids {
			h, err := hooks.Get(tx, id)
			if err != nil {
				return err
			}
			out = append(out, hookRecord(h))
		}
		return nil
	})
	return out, err
}

// ProjectHook is one hook of a project; project.ErrHookNotFound when the
// project has no such hook. It does not check who asks: callers ask Access
// first.
func (s *Service) ProjectHook(ctx context.Context, projectID, hookID int64) (project.Hook, error) {
	var out project.Hook
	err := s.db.View(ctx, func(tx *store.Tx) error {
		h, err := projectHook(tx, uint64(projectID), hookID)
		if err == nil {
			out = hookRecord(h)
		}
		return err
	})
	return out, err
}
