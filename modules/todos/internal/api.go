package internal

import (
	"context"
	"net/http"
	"slices"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/todos/todo"
)

// RoutesParams are what the routes need: the service and the registered
// kinds (the value group todos.KindsGroup names; a struct tag must spell it).
type RoutesParams struct {
	fx.In
	Service *Service
	Kinds   []todo.Kind `group:"fennec.todos.kinds"`
}

// NewRoutes registers the /todos operations; it takes the kinds itself,
// so they are known before anything serves.
func NewRoutes(p RoutesParams) fennec.Routes {
	s := p.Service
	s.SetKinds(p.Kinds)
	return fennec.Routes{Name: "todos", Register: s.register}
}

type listInput struct {
	// The values GitLab 9.x's todos API accepted; others are 400 "... does
	// not have a valid value".
	Action    string `query:"action" enum:"assigned,mentioned,build_failed,marked,unmergeable,directly_addressed" doc:"The action to filter by"`
	AuthorID  int64  `query:"author_id" doc:"Only todos of this author"`
	ProjectID int64  `query:"project_id" doc:"Only todos of this project"`
	State     string `query:"state" enum:"pending,done" doc:"pending (default) or done"`
	Type      string `query:"type" enum:"Issue,MergeRequest" doc:"Issue or MergeRequest"`
	api.PageParams
}

type listOutput struct {
	api.PageHeaders
	Body []TodoView
}

type idInput struct {
	ID int64 `path:"id" doc:"The todo's id"`
}

type todoOutput struct {
	Body TodoView
}

func (s *Service) register(a *api.API) {
	// A todo of someone else is never shown: as one that does not exist.
	a.MapError(ErrNotFound, func(error) *api.Error { return api.NotFound("Todo") })
	tags := []string{"todos"}
	api.Register(a, api.Op{ID: "list-todos", Method: http.MethodGet, Path: "/todos", Tags: tags, Access: api.SignedIn,
		Summary: "The caller's todos, newest first (pending unless state says otherwise)"}, s.list)
	// GitLab 9.x's v4 answered the single mark with the todo and Grape's
	// POST default (201), and the mark-all with no_content! (204).
	api.Register(a, api.Op{ID: "mark-todo-done", Method: http.MethodPost, Path: "/todos/{id}/mark_as_done", Tags: tags, Access: api.SignedIn,
		Summary: "Marks one of the caller's todos done and returns it"}, s.markDone)
	api.Register(a, api.Op{ID: "mark-all-todos-done", Method: http.MethodPost, Path: "/todos/mark_as_done", Tags: tags, Access: api.SignedIn,
		Status: http.StatusNoContent, Summary: "Marks every pending todo of the caller done"}, s.markAllDone)
}

func (s *Service) list(ctx context.Context, in *listInput) (*listOutput, error) {
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
		all, err := load(tx, ids)
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
	return &listOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(list)), Body: views}, nil
}

func (s *Service) markDone(ctx context.Context, in *idInput) (*todoOutput, error) {
	user := auth.FromContext(ctx).UserID()
	var t *Todo
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		t, err = todosTable.Get(tx, uint64(max(in.ID, 0)))
		if err == store.ErrNotFound || (err == nil && t.UserID != user) {
			return ErrNotFound
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
		return nil, ErrNotFound
	}
	return &todoOutput{Body: views[0]}, nil
}

func (s *Service) markAllDone(ctx context.Context, _ *struct{}) (*struct{}, error) {
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
