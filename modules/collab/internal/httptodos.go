package internal

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// NewTodoRoutes registers the /todos operations; it takes the kinds
// itself, so they are known before anything serves.
func NewTodoRoutes(p RoutesParams) fennec.Routes {
	s := p.Service
	s.SetKinds(p.Kinds)
	return fennec.Routes{Name: "todos", Register: s.registerTodos}
}

type todoListInput struct {
	// The values GitLab 9.x's todos API accepted; others are 400 "... does
	// not have a valid value".
	Action    string `query:"action" enum:"assigned,mentioned,build_failed,marked,unmergeable,directly_addressed" doc:"The action to filter by"`
	AuthorID  int64  `query:"author_id" doc:"Only todos of this author"`
	ProjectID int64  `query:"project_id" doc:"Only todos of this project"`
	State     string `query:"state" enum:"pending,done" doc:"pending (default) or done"`
	Type      string `query:"type" enum:"Issue,MergeRequest" doc:"Issue or MergeRequest"`
	api.PageParams
}

type todoListOutput struct {
	api.PageHeaders
	Body []TodoView
}

type todoIDInput struct {
	ID int64 `path:"id" doc:"The todo's id"`
}

type todoOutput struct {
	Body TodoView
}

func (s *Service) registerTodos(a *api.API) {
	// A todo of someone else is never shown: as one that does not exist.
	a.MapError(ErrTodoNotFound, func(error) *api.Error { return api.NotFound("Todo") })
	tags := []string{"todos"}
	api.Register(a, api.Op{ID: "list-todos", Method: http.MethodGet, Path: "/todos", Tags: tags, Access: api.SignedIn,
		Summary: "The caller's todos, newest first (pending unless state says otherwise)"}, s.listTodos)
	// GitLab 9.x's v4 answered the single mark with the todo and Grape's
	// POST default (201), and the mark-all with no_content! (204).
	api.Register(a, api.Op{ID: "mark-todo-done", Method: http.MethodPost, Path: "/todos/{id}/mark_as_done", Tags: tags, Access: api.SignedIn,
		Summary: "Marks one of the caller's todos done and returns it"}, s.markTodoDone)
	api.Register(a, api.Op{ID: "mark-all-todos-done", Method: http.MethodPost, Path: "/todos/mark_as_done", Tags: tags, Access: api.SignedIn,
		Status: http.StatusNoContent, Summary: "Marks every pending todo of the caller done"}, s.markAllTodosDone)
}

func (s *Service) listTodos(ctx context.Context, in *todoListInput) (*todoListOutput, error) {
	user := auth.FromContext(ctx).UserID()
	state := in.State
	if state == "" {
		state = StatePending
	}
	var list []*Todo
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := todosTable.IDsBy(tx, "user_state", i64(user)+":"+state)
		if err != nil {
			return err
		}
		slices.Reverse(ids)
		all, err := loadTodos(tx, ids)
		if err != nil {
			return err
		}
		list = all[:0]
		for _, t := range all {
			if (in.Action == "" || t.Action == in.Action) && (in.AuthorID == 0 || t.AuthorID == in.AuthorID) &&
				(in.ProjectID == 0 || t.ProjectID == in.ProjectID) && (in.Type == "" || t.TargetType == in.Type) {
				list = append(list, t)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// What the caller can no longer see (a project left, an issue made
	// confidential) is not listed, and not counted.
	list, err = s.shown(ctx, list)
	if err != nil {
		return nil, err
	}
	views, err := s.render(ctx, api.Window(list, in.PageParams))
	if err != nil {
		return nil, err
	}
	return &todoListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(list)), Body: views}, nil
}

func (s *Service) markTodoDone(ctx context.Context, in *todoIDInput) (*todoOutput, error) {
	user := auth.FromContext(ctx).UserID()
	var t *Todo
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		t, err = todosTable.Get(tx, uint64(max(in.ID, 0)))
		if err == store.ErrNotFound || (err == nil && t.UserID != user) {
			return ErrTodoNotFound
		}
		if err != nil || t.State == StateDone {
			return err
		}
		t.State, t.UpdatedAt = StateDone, s.now().UTC()
		return todosTable.Update(tx, t)
	})
	if err != nil {
		return nil, err
	}
	views, err := s.render(ctx, []*Todo{t})
	if err != nil {
		return nil, err
	}
	if len(views) == 0 {
		// Done, but its target is out of the caller's sight now.
		return nil, ErrTodoNotFound
	}
	return &todoOutput{Body: views[0]}, nil
}

func (s *Service) markAllTodosDone(ctx context.Context, _ *struct{}) (*struct{}, error) {
	user := auth.FromContext(ctx).UserID()
	now := s.now().UTC()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		ids, err := todosTable.IDsBy(tx, "user_state", i64(user)+":"+StatePending)
		if err != nil {
			return err
		}
		for _, id := range ids {
			t, err := todosTable.Get(tx, id)
			if err != nil {
				return err
			}
			t.State, t.UpdatedAt = StateDone, now
			if err := todosTable.Update(tx, t); err != nil {
				return err
			}
		}
		return nil
	})
	return nil, err
}

// ProjectView is the Todo resource's project (BasicProjectDetails' first
// fields, as GITLAB-FACTS section 8 lists them).
type ProjectView struct {
	ID                int64  `json:"id"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
}

// TodoView is the Todo resource.
type TodoView struct {
	ID         int64              `json:"id"`
	Project    ProjectView        `json:"project"`
	Author     identity.BasicUser `json:"author"`
	ActionName string             `json:"action_name"`
	TargetType string             `json:"target_type"`
	Target     any                `json:"target"`
	TargetURL  string             `json:"target_url"`
	Body       string             `json:"body"`
	State      string             `json:"state"`
	CreatedAt  api.Time           `json:"created_at"`
}

// render gives the API views of todos as the caller in ctx sees them: a
// todo whose project or target the caller can no longer see, or whose
// kind is not registered, is left out.
func (s *Service) render(ctx context.Context, list []*Todo) ([]TodoView, error) {
	base := api.ExternalURLFrom(ctx)
	out := make([]TodoView, 0, len(list))
	projectsSeen := map[int64]*projects.ProjectInfo{}
	authors := map[int64]identity.BasicUser{}
	for _, t := range list {
		k, ok := s.byType[t.TargetType]
		if !ok || k.Render == nil {
			continue
		}
		p, seen := projectsSeen[t.ProjectID]
		if !seen {
			info, err := s.access.ResolveID(ctx, t.ProjectID)
			switch {
			case errors.Is(err, projects.ErrNotFound):
				p = nil
			case err != nil:
				return nil, err
			default:
				p = &info
			}
			projectsSeen[t.ProjectID] = p
		}
		if p == nil {
			continue
		}
		tg := t.target()
		ok, err := s.kindVisible(ctx, k, t.UserID, tg)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		view, url, err := k.Render(ctx, *p, t.TargetID)
		if err != nil {
			// The target went away between the read and the render (its
			// removal takes its todos with it); not shown.
			s.log.Debug("todos: target not rendered", zap.String("type", t.TargetType), zap.Int64("id", t.TargetID), zap.Error(err))
			continue
		}
		a, known := authors[t.AuthorID]
		if !known {
			u, err := s.users.UserByID(ctx, t.AuthorID)
			switch {
			case errors.Is(err, identity.ErrUserNotFound):
				a = identity.GhostUser(base, t.AuthorID)
			case err != nil:
				return nil, err
			default:
				a = identity.NewBasicUser(base, u)
			}
			authors[t.AuthorID] = a
		}
		out = append(out, TodoView{ID: int64(t.ID), Project: ProjectView{ID: p.ID, Name: p.Name, NameWithNamespace: p.NameWithNamespace,
			Path: p.Path, PathWithNamespace: p.PathWithNamespace}, Author: a, ActionName: t.Action, TargetType: t.TargetType,
			Target: view, TargetURL: url, Body: t.Body, State: t.State, CreatedAt: api.NewTime(t.CreatedAt)})
	}
	return out, nil
}
