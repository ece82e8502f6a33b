package internal

import (
	"context"
	"errors"
	"net/http"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
)

// NewTodoRoutes registers the /todos operations (the kinds are the
// service's by then, as for NewRoutes).
func NewTodoRoutes(s *Service) fennec.Routes {
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
		Summary: "The caller's todos, newest first (pending unless state says otherwise)"}, s.listTodosOp)
	// GitLab 9.x's v4 answered the single mark with the todo and Grape's
	// POST default (201), and the mark-all with no_content! (204).
	api.Register(a, api.Op{ID: "mark-todo-done", Method: http.MethodPost, Path: "/todos/{id}/mark_as_done", Tags: tags, Access: api.SignedIn,
		Summary: "Marks one of the caller's todos done and returns it"}, s.markTodoDoneOp)
	api.Register(a, api.Op{ID: "mark-all-todos-done", Method: http.MethodPost, Path: "/todos/mark_as_done", Tags: tags, Access: api.SignedIn,
		Status: http.StatusNoContent, Summary: "Marks every pending todo of the caller done"}, s.markAllTodosDoneOp)
}

func (s *Service) listTodosOp(ctx context.Context, in *todoListInput) (*todoListOutput, error) {
	list, total, err := s.Todos(ctx, target.TodoFilter{Action: target.Action(in.Action), AuthorID: in.AuthorID, ProjectID: in.ProjectID,
		State: in.State, Type: in.Type}, page(in.PageParams))
	if err != nil {
		return nil, err
	}
	stored := make([]*Todo, len(list))
	for i, t := range list {
		stored[i] = todoOf(t)
	}
	views, err := s.render(ctx, stored)
	if err != nil {
		return nil, err
	}
	return &todoListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: views}, nil
}

func (s *Service) markTodoDoneOp(ctx context.Context, in *todoIDInput) (*todoOutput, error) {
	t, err := s.MarkTodoDone(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	views, err := s.render(ctx, []*Todo{todoOf(t)})
	if err != nil {
		return nil, err
	}
	if len(views) == 0 {
		// Done, but its target is out of the caller's sight now.
		return nil, ErrTodoNotFound
	}
	return &todoOutput{Body: views[0]}, nil
}

func (s *Service) markAllTodosDoneOp(ctx context.Context, _ *struct{}) (*struct{}, error) {
	return nil, s.MarkAllTodosDone(ctx)
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
// kind is not registered, is left out (visible), and so is one whose
// target went away between the read and the render.
func (s *Service) render(ctx context.Context, list []*Todo) ([]TodoView, error) {
	shown, err := s.visible(ctx, list)
	if err != nil {
		return nil, err
	}
	base := api.ExternalURLFrom(ctx)
	out := make([]TodoView, 0, len(shown))
	authors := map[int64]identity.BasicUser{}
	for _, t := range shown {
		view, url, err := t.kind.Render(ctx, t.project, t.TargetID)
		if err != nil {
			// Its removal takes its todos with it: not shown meanwhile.
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
		p := t.project
		out = append(out, TodoView{ID: t.ID, Project: ProjectView{ID: p.ID, Name: p.Name, NameWithNamespace: p.NameWithNamespace,
			Path: p.Path, PathWithNamespace: p.PathWithNamespace}, Author: a, ActionName: t.Action, TargetType: t.TargetType,
			Target: view, TargetURL: url, Body: t.Body, State: t.State, CreatedAt: api.NewTime(t.CreatedAt)})
	}
	return out, nil
}
