package internal

// Project hooks: the table, their CRUD operations (Master and up) and the
// Project hook view of the spec. Delivering payloads is the webhooks
// module's business; it reads this table. A hook's token is sent back to the
// hook's URL in X-Gitlab-Token, so it cannot be hashed: it is stored sealed
// (core/sealed, purpose PurposeHookToken) and never rendered.

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/sealed"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Hook is a stored project hook.
type Hook struct {
	ID                    int64     `json:"id"`
	ProjectID             int64     `json:"project_id"`
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

func (h *Hook) RecordID() int64      { return h.ID }
func (h *Hook) SetRecordID(id int64) { h.ID = id }

var hooks = store.NewTable[int64, Hook]("projects.hooks",
	store.Index[Hook]{Name: "project", Keys: func(h *Hook) []string { return []string{store.IDString(h.ProjectID)} }},
)

// applyHook sets what in gives on h: the URL (trimmed), the token
// (sealed) and the switches given.
func applyHook(h *Hook, in project.HookFields, box *sealed.Box) {
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
// DNS rebinding too. Every refusal is project.ErrInvalidHookURL, GitLab's
// answer for a hook whose url does not validate (422 {"error":"Invalid url
// given"}); the reason is logged at debug level.
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
	return project.ErrInvalidHookURL
}

// projectHook loads a hook of project pid inside tx; a hook of another
// project is not found either.
func projectHook(tx *store.Tx, pid int64, id int64) (*Hook, error) {
	if id <= 0 {
		return nil, project.ErrHookNotFound
	}
	h, err := hooks.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && h.ProjectID != pid) {
		return nil, project.ErrHookNotFound
	}
	return h, err
}

// listHooks is a page of the project's hooks (Master) and how many there
// are.
func (s *Service) listHooks(ctx context.Context, ref string, offset, limit int) ([]*Hook, int, error) {
	r, err := s.require(ctx, ref, project.AdminProject)
	if err != nil {
		return nil, 0, err
	}
	var out []*Hook
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := hooks.IDsBy(tx, "project", store.IDString(r.p.ID))
		if err != nil {
			return err
		}
		total = len(ids)
		for _, id := range store.Window(ids, offset, limit) {
			h, err := hooks.Get(tx, id)
			if err != nil {
				return err
			}
			out = append(out, h)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// getHook is one of the project's hooks (Master).
func (s *Service) getHook(ctx context.Context, ref string, hookID int64) (*Hook, error) {
	r, err := s.require(ctx, ref, project.AdminProject)
	if err != nil {
		return nil, err
	}
	var h *Hook
	err = s.db.View(ctx, func(tx *store.Tx) error {
		h, err = projectHook(tx, r.p.ID, hookID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// addHook adds a hook to the project (Master).
func (s *Service) addHook(ctx context.Context, ref string, in project.HookFields) (*Hook, error) {
	r, err := s.require(ctx, ref, project.AdminProject)
	if err != nil {
		return nil, err
	}
	if err := s.validateHookURL(in.URL); err != nil {
		return nil, err
	}
	h := &Hook{ProjectID: r.p.ID, PushEvents: true, EnableSSLVerification: true, CreatedAt: s.now().UTC()}
	applyHook(h, in, s.box)
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if !projects.Exists(tx, r.p.ID) {
			return project.ErrNotFound // deleted meanwhile
		}
		return hooks.Insert(tx, h)
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// editHook changes one of the project's hooks (Master).
func (s *Service) editHook(ctx context.Context, ref string, hookID int64, in project.HookFields) (*Hook, error) {
	r, err := s.require(ctx, ref, project.AdminProject)
	if err != nil {
		return nil, err
	}
	if err := s.validateHookURL(in.URL); err != nil {
		return nil, err
	}
	var h *Hook
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if h, err = projectHook(tx, r.p.ID, hookID); err != nil {
			return err
		}
		applyHook(h, in, s.box)
		return hooks.Update(tx, h)
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// DeleteHook deletes one of the project's hooks (Master; project.Service).
func (s *Service) DeleteHook(ctx context.Context, ref string, hookID int64) error {
	r, err := s.require(ctx, ref, project.AdminProject)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := projectHook(tx, r.p.ID, hookID); err != nil {
			return err
		}
		return hooks.Delete(tx, hookID)
	})
}

// AddHook adds a project hook (project.Service).
func (s *Service) AddHook(ctx context.Context, ref string, in project.HookFields) (project.Hook, error) {
	return hookRecordOf(s.addHook(ctx, ref, in))
}

// UpdateHook changes a project hook (project.Service).
func (s *Service) UpdateHook(ctx context.Context, ref string, hookID int64, in project.HookFields) (project.Hook, error) {
	return hookRecordOf(s.editHook(ctx, ref, hookID, in))
}

func hookRecordOf(h *Hook, err error) (project.Hook, error) {
	if err != nil {
		return project.Hook{}, err
	}
	return hookRecord(h), nil
}

// hookRecord is a stored hook as the contract gives it.
func hookRecord(h *Hook) project.Hook {
	return project.Hook{ID: h.ID, ProjectID: h.ProjectID, URL: h.URL, Token: h.Token,
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
		ids, err := hooks.IDsBy(tx, "project", store.IDString(projectID))
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
		h, err := projectHook(tx, projectID, hookID)
		if err == nil {
			out = hookRecord(h)
		}
		return err
	})
	return out, err
}
