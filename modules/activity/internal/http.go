package internal

// The HTTP adapter: GitLab's routes decode their parameters, call
// entry.Service, render GitLab's Event resource (httpviews.go) and leave
// the service's errors to mapErrors. Nothing else in the module speaks
// HTTP.

import (
	"context"
	"errors"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/activity/entry"
	"github.com/fennec-forge/fennec/modules/identity"
)

// handlers serve the routes over the service; users render the authors.
type handlers struct {
	svc   entry.Service
	users identity.Users
}

// NewRoutes registers the feed operations.
func NewRoutes(s *Service) fennec.Routes {
	h := handlers{svc: s, users: s.users}
	return fennec.Routes{Name: "activity", Register: func(a *api.API) {
		mapErrors(a)
		h.register(a)
	}}
}

// mapErrors is the module's table from its domain errors to GitLab's
// answers (a project's and a user's errors are their modules').
func mapErrors(a *api.API) {
	a.MapError(entry.ErrInvalidDate, func(err error) *api.Error {
		var de *entry.DateError
		if !errors.As(err, &de) {
			return nil
		}
		return api.Invalid(de.Param) // as GitLab's Date parameters answer
	})
}

// EventFilter is GitLab's filter of the event lists (GET /events,
// /users/:id/events and /projects/:id/events): an action, a target type,
// a window of dates and the order.
type EventFilter struct {
	Action     string `query:"action" enum:"created,updated,closed,reopened,pushed,commented,merged,joined,left,destroyed,expired," doc:"Only events of this action"`
	TargetType string `query:"target_type" enum:"issue,milestone,merge_request,note,project,snippet,user," doc:"Only events on this kind of target"`
	Before     string `query:"before" doc:"Only events created before this date (YYYY-MM-DD)"`
	After      string `query:"after" doc:"Only events created after this date (YYYY-MM-DD)"`
	Sort       string `query:"sort" enum:"asc,desc," doc:"Order by creation: desc (default) or asc"`
}

// filter is the service's input.
func (f *EventFilter) filter() entry.Filter {
	return entry.Filter{Action: f.Action, TargetType: f.TargetType, Before: f.Before, After: f.After, Ascending: f.Sort == "asc"}
}

// ProjectPath is the :id of a project (number or URL-encoded full path).
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

// UserPath is the :id of a user; a username works too, as in GitLab.
type UserPath struct {
	ID string `path:"id" doc:"User id or username"`
}

type projectEventsInput struct {
	ProjectPath
	api.PageParams
	EventFilter
}

type userEventsInput struct {
	UserPath
	api.PageParams
	EventFilter
}

type ownEventsInput struct {
	api.PageParams
	EventFilter
}

type eventsOutput struct {
	api.PageHeaders
	Body []EventView
}

func (h handlers) register(a *api.API) {
	api.Register(a, api.Op{ID: "list-project-events", Method: http.MethodGet, Path: "/projects/{id}/events", Tags: []string{"events"},
		Summary: "A project's events, newest first", Access: api.Public}, h.projectEvents)
	api.Register(a, api.Op{ID: "list-user-events", Method: http.MethodGet, Path: "/users/{id}/events", Tags: []string{"events", "users"},
		Summary: "A user's contribution events in projects the caller can see, newest first", Access: api.Public,
		Scopes: []string{auth.ScopeAPI, auth.ScopeReadUser}}, h.userEvents)
	api.Register(a, api.Op{ID: "list-own-events", Method: http.MethodGet, Path: "/events", Tags: []string{"events"},
		Summary: "The caller's own events, newest first", Access: api.SignedIn,
		Scopes: []string{auth.ScopeAPI, auth.ScopeReadUser}}, h.ownEvents)
}

// ownEvents is GET /events: the signed-in caller's events, as their
// /users/:id/events shows them to themselves.
func (h handlers) ownEvents(ctx context.Context, in *ownEventsInput) (*eventsOutput, error) {
	list, total, err := h.svc.OwnEntries(ctx, in.filter(), in.Offset(), in.Limit())
	return h.output(ctx, in.PageParams, list, total, err)
}

func (h handlers) projectEvents(ctx context.Context, in *projectEventsInput) (*eventsOutput, error) {
	list, total, err := h.svc.ProjectEntries(ctx, in.ID, in.filter(), in.Offset(), in.Limit())
	return h.output(ctx, in.PageParams, list, total, err)
}

func (h handlers) userEvents(ctx context.Context, in *userEventsInput) (*eventsOutput, error) {
	list, total, err := h.svc.UserEntries(ctx, in.ID, in.filter(), in.Offset(), in.Limit())
	return h.output(ctx, in.PageParams, list, total, err)
}

func (h handlers) output(ctx context.Context, p api.PageParams, page []entry.Entry, total int, err error) (*eventsOutput, error) {
	if err != nil {
		return nil, err
	}
	out := &eventsOutput{PageHeaders: api.Paginate(ctx, p, total), Body: make([]EventView, 0, len(page))}
	base := api.ExternalURLFrom(ctx)
	authors := map[int64]identity.BasicUser{}
	for _, e := range page {
		a, ok := authors[e.AuthorID]
		if !ok {
			u, err := h.users.UserByID(ctx, e.AuthorID)
			switch {
			case errors.Is(err, identity.ErrUserNotFound):
				// Deleted a moment ago; the cleanup of their entries is on
				// its way. Shown as GitLab shows the authors of deleted users.
				a = identity.GhostUser(base, e.AuthorID)
			case err != nil:
				return nil, err
			default:
				a = identity.NewBasicUser(base, u)
			}
			authors[e.AuthorID] = a
		}
		out.Body = append(out.Body, view(e, a))
	}
	return out, nil
}
