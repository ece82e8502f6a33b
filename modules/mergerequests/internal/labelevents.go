package internal

import (
	"context"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/issues"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// The resource label events of merge requests (GitLab 11.2). The issues
// module keeps them, as it keeps labels; this module records them in the
// transaction of each label change (create, update) and answers them for
// the merge requests a caller may read.

type labelEventsOutput struct {
	api.PageHeaders
	Body []issues.LabelEventView
}

type labelEventOutput struct {
	Body *issues.LabelEventView
}

type mrLabelEventPath struct {
	MRPath
	EventID uint64 `path:"resource_label_event_id"`
}

// mrForEvents is a merge request the caller may read, for its events.
func (s *Service) mrForEvents(ctx context.Context, in MRPath) (*MR, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	if s.Labels == nil {
		return nil, mergerequest.ErrUnavailable // a bundle without the issues module has no labels
	}
	var m *MR
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		m, err = mrByIID(tx, info.ID, in.IID)
		return err
	})
	return m, err
}

// NewLabelEventRoutes registers the label events of merge requests.
func NewLabelEventRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "mergerequests-label-events", Register: func(a *api.API) {
		tags := []string{"merge requests"}
		base := "/projects/{id}/merge_requests/{merge_request_iid}/resource_label_events"
		api.Register(a, api.Op{ID: "list-merge-request-label-events", Method: http.MethodGet, Path: base, Tags: tags,
			Summary: "The labels added to and removed from a merge request, oldest first"},
			func(ctx context.Context, in *struct {
				MRPath
				api.PageParams
			}) (*labelEventsOutput, error) {
				m, err := s.mrForEvents(ctx, in.MRPath)
				if err != nil {
					return nil, err
				}
				list, total, err := s.Labels.LabelEvents(ctx, "MergeRequest", int64(m.ID), in.Offset(), in.Limit())
				if err != nil {
					return nil, err
				}
				return &labelEventsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: list}, nil
			})
		api.Register(a, api.Op{ID: "get-merge-request-label-event", Method: http.MethodGet, Path: base + "/{resource_label_event_id}",
			Tags: tags, Summary: "One label event of a merge request"},
			func(ctx context.Context, in *mrLabelEventPath) (*labelEventOutput, error) {
				m, err := s.mrForEvents(ctx, in.MRPath)
				if err != nil {
					return nil, err
				}
				v, err := s.Labels.LabelEvent(ctx, "MergeRequest", int64(m.ID), in.EventID)
				if err != nil {
					return nil, err
				}
				return &labelEventOutput{Body: &v}, nil
			})
	}}
}
