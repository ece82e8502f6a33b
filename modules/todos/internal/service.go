package internal

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/todos/todo"
)

// ErrNotFound: no such todo of the caller; answered 404 Not Found.
var ErrNotFound = errors.New("todos: todo not found")

// Service keeps the todo lists (todos.Service) and serves /todos.
type Service struct {
	db     *store.DB
	log    *zap.Logger
	access projects.Access
	users  identity.Users
	kinds  map[string]todo.Kind // by target_type
	// kindsOnce guards SetKinds, called by the routes' constructor and
	// by an invoke, whichever fx runs first.
	kindsOnce sync.Once
	now       func() time.Time
}

// NewService builds the service. The kinds come later (SetKinds): the
// modules that register them build their own services from this one, so a
// kind's constructor may depend on what depends on todos.Service.
func NewService(db *store.DB, log *zap.Logger, access projects.Access, users identity.Users) *Service {
	return &Service{db: db, log: log, access: access, users: users, kinds: map[string]todo.Kind{}, now: time.Now}
}

// SetKinds takes the target kinds the modules registered
// (todos.ProvideKinds), once, while the app is assembled (before it serves;
// nothing reads them concurrently then).
func (s *Service) SetKinds(kinds []todo.Kind) {
	s.kindsOnce.Do(func() {
		for _, k := range kinds {
			if _, dup := s.kinds[k.Type]; dup || k.Type == "" {
				s.log.Warn("todos: a target kind is registered twice or has no type; left out", zap.String("type", k.Type))
				continue
			}
			s.kinds[k.Type] = k
		}
	})
}

// Add implements todos.Service.
func (s *Service) Add(ctx context.Context, todos ...todo.New) error {
	var keep []todo.New
	for _, n := range todos {
		if n.UserID <= 0 || n.Target.ID <= 0 || n.Target.Type == "" || n.Action == "" {
			continue
		}
		// Never a todo for one's own action, except the explicit Marked.
		if n.UserID == n.AuthorID && n.Action != todo.Marked {
			continue
		}
		ok, err := s.Visible(ctx, n.UserID, n.Target)
		if err != nil {
			return err
		}
		if ok {
			keep = append(keep, n)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	now := s.now().UTC()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		for _, n := range keep {
			pending, err := pendingOn(tx, n.UserID, n.Target.Type, n.Target.ID)
			if err != nil {
				return err
			}
			dup := false
			for _, p := range pending {
				dup = dup || p.Action == string(n.Action)
			}
			if dup {
				continue
			}
			if err := todosTable.Insert(tx, newTodo(n, now)); err != nil {
				return err
			}
		}
		return nil
	})
}

func newTodo(n todo.New, now time.Time) *Todo {
	return &Todo{UserID: n.UserID, AuthorID: n.AuthorID, ProjectID: n.Target.ProjectID, TargetType: n.Target.Type,
		TargetID: n.Target.ID, Action: string(n.Action), Body: n.Body, State: StatePending, CreatedAt: now, UpdatedAt: now}
}

// Visible reports whether userID may see target: an active user who may
// read its project and whom the target's kind lets see it. A target of a
// kind nobody registered is seen by no one (its module is not in the
// bundle, so nobody can vouch for it), as in the feeds.
func (s *Service) Visible(ctx context.Context, userID int64, t todo.Target) (bool, error) {
	k, known := s.kinds[t.Type]
	if !known {
		return false, nil
	}
	u, err := s.users.UserByID(ctx, userID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	p, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username, Admin: u.Admin, Blocked: u.State != "active", External: u.External})
	if err != nil {
		return false, nil // blocked
	}
	if _, err := s.access.RequireID(auth.WithPrincipal(ctx, p), t.ProjectID, projects.ReadProject); err != nil {
		if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
			return false, nil
		}
		return false, err
	}
	if k.Visible == nil {
		return true, nil
	}
	return k.Visible(ctx, userID, t)
}

// Mark implements todos.Service: the caller's explicit todo on target.
func (s *Service) Mark(ctx context.Context, target todo.Target) (any, error) {
	caller := auth.FromContext(ctx)
	if caller.IsAnonymous() || caller.UserID() == 0 {
		return nil, auth.ErrUnauthorized
	}
	user := caller.UserID()
	var t *Todo
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		t = nil
		pending, err := pendingOn(tx, user, target.Type, target.ID)
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			return todo.ErrExists
		}
		t = newTodo(todo.New{UserID: user, AuthorID: user, Target: target, Action: todo.Marked}, s.now().UTC())
		// GitLab shows a marked todo with its target's title as the body.
		if k, ok := s.kinds[target.Type]; ok && k.Render != nil {
			if v, _, err := k.Render(tx.Context(), target); err == nil {
				t.Body = titleOf(v)
			}
		}
		return todosTable.Insert(tx, t)
	})
	if err != nil {
		return nil, err
	}
	views, err := s.render(ctx, []*Todo{t})
	if err != nil {
		return nil, err
	}
	if len(views) == 0 {
		return nil, ErrNotFound
	}
	return views[0], nil
}

// titleOf reads the title of a rendered target (issues and merge requests
// have one), "" when it has none.
func titleOf(view any) string {
	raw, err := json.Marshal(view)
	if err != nil {
		return ""
	}
	var v struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.Title
}

// Done implements todos.Service.
func (s *Service) Done(ctx context.Context, target todo.Target, userID int64) error {
	now := s.now().UTC()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		var ids []uint64
		var err error
		if userID > 0 {
			ids, err = todosTable.IDsBy(tx, "pending", userTargetKey(userID, target.Type, target.ID))
		} else {
			ids, err = todosTable.IDsBy(tx, "target", targetKey(target.Type, target.ID))
		}
		if err != nil {
			return err
		}
		for _, id := range ids {
			t, err := todosTable.Get(tx, id)
			if err != nil {
				return err
			}
			if t.State != StatePending {
				continue
			}
			t.State, t.UpdatedAt = StateDone, now
			if err := todosTable.Update(tx, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// Remove implements todos.Service.
func (s *Service) Remove(ctx context.Context, target todo.Target) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		_, err := todosTable.DeleteBy(tx, "target", targetKey(target.Type, target.ID))
		return err
	})
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
		k, ok := s.kinds[t.TargetType]
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
		target := todo.Target{Type: t.TargetType, ID: t.TargetID, ProjectID: t.ProjectID}
		if k.Visible != nil {
			ok, err := k.Visible(ctx, t.UserID, target)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		view, url, err := k.Render(ctx, target)
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

// shown keeps the todos the caller in ctx may still see: a registered kind,
// a project the caller may read, and a target the kind lets the todo's
// user see. Projects are resolved once each.
func (s *Service) shown(ctx context.Context, list []*Todo) ([]*Todo, error) {
	readable := map[int64]bool{}
	out := list[:0:0]
	for _, t := range list {
		k, ok := s.kinds[t.TargetType]
		if !ok {
			continue
		}
		can, seen := readable[t.ProjectID]
		if !seen {
			_, err := s.access.ResolveID(ctx, t.ProjectID)
			switch {
			case errors.Is(err, projects.ErrNotFound):
			case err != nil:
				return nil, err
			default:
				can = true
			}
			readable[t.ProjectID] = can
		}
		if !can {
			continue
		}
		if k.Visible != nil {
			ok, err := k.Visible(ctx, t.UserID, todo.Target{Type: t.TargetType, ID: t.TargetID, ProjectID: t.ProjectID})
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, t)
	}
	return out, nil
}
