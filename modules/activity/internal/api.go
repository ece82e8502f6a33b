package internal

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// NewRoutes registers the feed operations.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "activity", Register: s.register}
}

// EventView is the Event resource of the spec. note appears only on
// "commented on" entries that carry one.
type EventView struct {
	Title          *string            `json:"title"`
	ProjectID      *uint64            `json:"project_id"`
	ActionName     string             `json:"action_name"`
	TargetID       *uint64            `json:"target_id"`
	TargetType     *string            `json:"target_type"`
	TargetTitle    *string            `json:"target_title"`
	AuthorID       uint64             `json:"author_id"`
	Author         identity.BasicUser `json:"author"`
	AuthorUsername string             `json:"author_username"`
	Data           json.RawMessage    `json:"data"`
	PushData       *PushDataView      `json:"push_data,omitempty"`
	Note           json.RawMessage    `json:"note,omitempty"`
	CreatedAt      api.Time           `json:"created_at"`
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

func (s *Service) register(a *api.API) {
	api.Register(a, api.Op{ID: "list-project-events", Method: http.MethodGet, Path: "/projects/{id}/events", Tags: []string{"events"},
		Summary: "A project's events, newest first", Access: api.Public}, s.projectEvents)
	api.Register(a, api.Op{ID: "list-user-events", Method: http.MethodGet, Path: "/users/{id}/events", Tags: []string{"events", "users"},
		Summary: "A user's contribution events in projects the caller can see, newest first", Access: api.Public,
		Scopes: []string{auth.ScopeAPI, auth.ScopeReadUser}}, s.userEvents)
	api.Register(a, api.Op{ID: "list-own-events", Method: http.MethodGet, Path: "/events", Tags: []string{"events"},
		Summary: "The caller's own events, newest first", Access: api.SignedIn,
		Scopes: []string{auth.ScopeAPI, auth.ScopeReadUser}}, s.ownEvents)
}

// ownEvents is GET /events: the signed-in caller's events, as their
// /users/:id/events shows them to themselves.
func (s *Service) ownEvents(ctx context.Context, in *ownEventsInput) (*eventsOutput, error) {
	return s.userEvents(ctx, &userEventsInput{UserPath: UserPath{ID: strconv.FormatInt(auth.FromContext(ctx).UserID(), 10)},
		PageParams: in.PageParams, EventFilter: in.EventFilter})
}

func (s *Service) projectEvents(ctx context.Context, in *projectEventsInput) (*eventsOutput, error) {
	info, err := s.access.Resolve(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var page []*Entry
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := entries.IDsBy(tx, "project", strconv.FormatInt(info.ID, 10))
		if err != nil {
			return err
		}
		slices.Reverse(ids)
		if ids, err = in.EventFilter.apply(tx, ids); err != nil {
			return err
		}
		total = len(ids)
		page, err = load(tx, api.Window(ids, in.PageParams))
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.output(ctx, in.PageParams, total, page)
}

func (s *Service) userEvents(ctx context.Context, in *userEventsInput) (*eventsOutput, error) {
	var u identity.UserInfo
	var err error
	if id, name := api.ParseID(in.ID); id > 0 {
		u, err = s.users.UserByID(ctx, id)
	} else {
		u, err = s.users.UserByUsername(ctx, name)
	}
	if err != nil {
		return nil, err // ErrUserNotFound is 404 User Not Found
	}
	var items []item
	err = s.db.View(ctx, func(tx *store.Tx) error {
		items = authorItems(tx, uint64(u.ID))
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Keep what the caller may see, newest first. Visibility is asked once
	// per project (the Access service, under the caller's own context).
	caller := auth.FromContext(ctx)
	seen := map[uint64]bool{}
	ids := make([]uint64, 0, len(items))
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		visible, known := seen[it.project]
		if !known {
			if visible, err = s.canSee(ctx, caller, u.ID, it.project); err != nil {
				return nil, err
			}
			seen[it.project] = visible
		}
		if visible {
			ids = append(ids, it.entry)
		}
	}
	var page []*Entry
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if ids, err = in.EventFilter.apply(tx, ids); err != nil {
			return err
		}
		page, err = load(tx, api.Window(ids, in.PageParams))
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.output(ctx, in.PageParams, len(ids), page)
}

// canSee: entries of a project go to those who may read the project;
// entries outside any project (tombstones) to their author and
// administrators only.
func (s *Service) canSee(ctx context.Context, caller *auth.Principal, author int64, project uint64) (bool, error) {
	if project == 0 {
		return caller.IsAdmin() || caller.UserID() == author, nil
	}
	ok, err := s.access.Can(ctx, strconv.FormatUint(project, 10), projects.ReadProject)
	if errors.Is(err, projects.ErrNotFound) {
		return false, nil // hidden from the caller, or deleted since
	}
	return ok, err
}

// load reads entries by id; one removed since the ids were read (a project
// deleted meanwhile) is skipped.
func load(tx *store.Tx, ids []uint64) ([]*Entry, error) {
	out := make([]*Entry, 0, len(ids))
	for _, id := range ids {
		e, err := entries.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// shown keeps the entries whose target the caller may see, as the target's
// kind says (target.Service.Visible: the collab module's registry of
// target kinds); the caller may read every entry's project already. Entries outside any project (tombstones) are their author's and
// were checked by canSee. The check runs on the page only, as GitLab's
// does, so a page may come out shorter than per_page.
func (s *Service) shown(ctx context.Context, page []*Entry) ([]*Entry, error) {
	out := page[:0:0]
	for _, e := range page {
		if e.ProjectID != 0 && e.TargetType != "" {
			if s.targets == nil {
				continue // no module in this bundle can vouch for any target
			}
			ok, err := s.targets.Visible(ctx, e.TargetType, int64(e.ProjectID), int64(e.TargetID))
			if err != nil {
				return nil, err
			}
			if !ok {
				continue // hidden, or of a kind nobody registered
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *Service) output(ctx context.Context, p api.PageParams, total int, page []*Entry) (*eventsOutput, error) {
	page, err := s.shown(ctx, page)
	if err != nil {
		return nil, err
	}
	out := &eventsOutput{PageHeaders: api.Paginate(ctx, p, total), Body: make([]EventView, 0, len(page))}
	base := api.ExternalURLFrom(ctx)
	authors := map[uint64]identity.BasicUser{}
	for _, e := range page {
		a, ok := authors[e.AuthorID]
		if !ok {
			u, err := s.users.UserByID(ctx, int64(e.AuthorID))
			switch {
			case errors.Is(err, identity.ErrUserNotFound):
				// Deleted a moment ago; the cleanup of their entries is on
				// its way. Shown as GitLab shows the authors of deleted users.
				a = identity.GhostUser(base, int64(e.AuthorID))
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

func view(e *Entry, a identity.BasicUser) EventView {
	v := EventView{
		ActionName: e.ActionName, AuthorID: e.AuthorID, Author: a, AuthorUsername: a.Username,
		Title: nonEmpty(e.Title), TargetType: nonEmpty(e.TargetType), TargetTitle: nonEmpty(e.TargetTitle),
		Data: e.Data, Note: e.Note, CreatedAt: api.NewTime(e.CreatedAt),
	}
	if e.ProjectID != 0 {
		v.ProjectID = &e.ProjectID
	}
	if e.TargetID != 0 {
		v.TargetID = &e.TargetID
	}
	if len(v.Data) == 0 {
		v.Data = nil
	}
	v.PushData = pushData(e)
	return v
}

// PushDataView summarises a push entry as later GitLab versions do beside
// data (client-go reads it as push_data).
type PushDataView struct {
	CommitCount int     `json:"commit_count"`
	Action      string  `json:"action"`
	RefType     string  `json:"ref_type"`
	CommitFrom  *string `json:"commit_from"`
	CommitTo    *string `json:"commit_to"`
	Ref         string  `json:"ref"`
	CommitTitle *string `json:"commit_title"`
}

func pushData(e *Entry) *PushDataView {
	switch feed.Action(e.ActionName) {
	case feed.PushedTo, feed.PushedNew, feed.Deleted:
	default:
		return nil
	}
	var d struct {
		Before, After, Ref string
		Commits            []struct{ Message string }
		Total              int `json:"total_commits_count"`
	}
	if len(e.Data) == 0 || json.Unmarshal(e.Data, &d) != nil || d.Ref == "" {
		return nil
	}
	const zero = "0000000000000000000000000000000000000000"
	pd := &PushDataView{CommitCount: d.Total, Action: "pushed", RefType: "branch", Ref: strings.TrimPrefix(d.Ref, "refs/heads/")}
	if strings.HasPrefix(d.Ref, "refs/tags/") {
		pd.RefType, pd.Ref = "tag", strings.TrimPrefix(d.Ref, "refs/tags/")
	}
	if d.Before != zero && d.Before != "" {
		pd.CommitFrom = &d.Before
	} else {
		pd.Action = "created"
	}
	if d.After != zero && d.After != "" {
		pd.CommitTo = &d.After
	} else {
		pd.Action = "removed"
	}
	if n := len(d.Commits); n > 0 {
		title, _, _ := strings.Cut(d.Commits[n-1].Message, "\n")
		pd.CommitTitle = &title
	}
	return pd
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
