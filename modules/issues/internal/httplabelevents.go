package internal

import (
	"context"
	"errors"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/issues/issue"
)

// The label events' views and the issues' label event endpoints; merge
// requests get the same views through target.Labels (httpseams.go).

// LabelEventView is a label event as GitLab shows it; label is null once
// the label is deleted.
type LabelEventView struct {
	ID           int64               `json:"id"`
	User         *identity.BasicUser `json:"user"`
	CreatedAt    api.Time            `json:"created_at"`
	ResourceType string              `json:"resource_type"`
	ResourceID   int64               `json:"resource_id"`
	Label        *EventLabelView     `json:"label"`
	Action       string              `json:"action" enum:"add,remove"`
}

// EventLabelView is the label of a label event (GitLab's LabelBasic).
type EventLabelView struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Color       string  `json:"color"`
	Description *string `json:"description"`
}

// labelEventViews render label events, their users read in tx.
func (s *Service) labelEventViews(ctx context.Context, tx *store.Tx, list []issue.LabelEvent) ([]LabelEventView, error) {
	out := make([]LabelEventView, 0, len(list))
	for _, e := range list {
		v := LabelEventView{ID: e.ID, CreatedAt: api.NewTime(e.CreatedAt), ResourceType: e.ResourceType, ResourceID: e.ResourceID,
			Action: e.Action}
		if u, err := s.users.UserByID(tx.Context(), e.UserID); err == nil {
			b := identity.NewBasicUser(api.ExternalURLFrom(ctx), u)
			v.User = &b
		} else if errors.Is(err, identity.ErrUserNotFound) {
			g := identity.GhostUser(api.ExternalURLFrom(ctx), e.UserID)
			v.User = &g
		} else {
			return nil, err
		}
		if l := e.Label; l != nil {
			v.Label = &EventLabelView{ID: int64(l.ID), Name: l.Name, Color: l.Color, Description: strPtr(l.Description)}
		}
		out = append(out, v)
	}
	return out, nil
}

// labelEventPage reads label events with list and renders them in one read.
func (s *Service) labelEventPage(ctx context.Context, list func(ctx context.Context) ([]issue.LabelEvent, int, error)) ([]LabelEventView, int, error) {
	var out []LabelEventView
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		recs, n, err := list(tx.Context())
		if err != nil {
			return err
		}
		total = n
		out, err = s.labelEventViews(ctx, tx, recs)
		return err
	})
	return out, total, err
}

type labelEventsOutput struct {
	api.PageHeaders
	Body []LabelEventView
}

type labelEventOutput struct {
	Body *LabelEventView
}

type issueLabelEventPath struct {
	IssuePath
	EventID int64 `path:"resource_label_event_id"`
}

// NewLabelEventRoutes registers the label events of issues.
func NewLabelEventRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "issues-label-events", Register: func(a *api.API) {
		a.MapError(ErrLabelEventNotFound, func(error) *api.Error { return api.RecordNotFound() })
		tags := []string{"issues"}
		base := "/projects/{id}/issues/{issue_iid}/resource_label_events"
		api.Register(a, api.Op{ID: "list-issue-label-events", Method: http.MethodGet, Path: base, Tags: tags,
			Summary: "The labels added to and removed from an issue, oldest first"},
			func(ctx context.Context, in *struct {
				IssuePath
				api.PageParams
			}) (*labelEventsOutput, error) {
				list, total, err := s.labelEventPage(ctx, func(ctx context.Context) ([]issue.LabelEvent, int, error) {
					return s.LabelEvents(ctx, in.ref(), in.Offset(), in.Limit())
				})
				if err != nil {
					return nil, err
				}
				return &labelEventsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: list}, nil
			})
		api.Register(a, api.Op{ID: "get-issue-label-event", Method: http.MethodGet, Path: base + "/{resource_label_event_id}", Tags: tags,
			Summary: "One label event of an issue"},
			func(ctx context.Context, in *issueLabelEventPath) (*labelEventOutput, error) {
				list, _, err := s.labelEventPage(ctx, func(ctx context.Context) ([]issue.LabelEvent, int, error) {
					e, err := s.LabelEvent(ctx, in.ref(), in.EventID)
					return []issue.LabelEvent{e}, 1, err
				})
				if err != nil {
					return nil, err
				}
				return &labelEventOutput{Body: &list[0]}, nil
			})
	}}
}
