package internal

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// ErrTodoNotFound: no such todo of the caller; answered 404 Not Found.
var ErrTodoNotFound = errors.New("todos: todo not found")

// AddTodos implements target.Service.
func (s *Service) AddTodos(ctx context.Context, todos ...target.NewTodo) error {
	var keep []target.NewTodo
	for _, n := range todos {
		if n.UserID <= 0 || n.Target.ID <= 0 || n.Target.Type == "" || n.Action == "" {
			continue
		}
		// Never a todo for one's own action, except the explicit Marked.
		if n.UserID == n.AuthorID && n.Action != target.Marked {
			continue
		}
		ok, err := s.todoVisible(ctx, n.UserID, n.Target)
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

func newTodo(n target.NewTodo, now time.Time) *Todo {
	return &Todo{UserID: n.UserID, AuthorID: n.AuthorID, ProjectID: n.Target.ProjectID, TargetType: n.Target.Type,
		TargetID: n.Target.ID, Action: string(n.Action), Body: n.Body, State: StatePending, CreatedAt: now, UpdatedAt: now}
}

// todoVisible reports whether userID may see target t: an active user
// who may read its project and whom the target's kind lets see it
// (Kind.Visible, asked as the user). A target of a kind nobody registered,
// or one without todos, is seen by no one (its module is not in the
// bundle, so nobody can vouch for it), as in the feeds.
func (s *Service) todoVisible(ctx context.Context, userID int64, t target.Target) (bool, error) {
	k, known := s.byType[t.Type]
	if !known || k.Render == nil {
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
	asUser := auth.WithPrincipal(ctx, p)
	if _, err := s.access.RequireID(asUser, t.ProjectID, projects.ReadProject); err != nil {
		if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
			return false, nil
		}
		return false, err
	}
	if k.Visible == nil {
		return true, nil
	}
	return k.Visible(asUser, t.ProjectID, t.ID)
}

// MarkTodo implements target.Service: the caller's explicit todo on tg.
func (s *Service) MarkTodo(ctx context.Context, tg target.Target) (any, error) {
	caller := auth.FromContext(ctx)
	if caller.IsAnonymous() || caller.UserID() == 0 {
		return nil, auth.ErrUnauthorized
	}
	user := caller.UserID()
	var t *Todo
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		t = nil
		pending, err := pendingOn(tx, user, tg.Type, tg.ID)
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			return target.ErrTodoExists
		}
		t = newTodo(target.NewTodo{UserID: user, AuthorID: user, Target: tg, Action: target.Marked}, s.now().UTC())
		// GitLab shows a marked todo with its target's title as the body.
		if k, ok := s.byType[tg.Type]; ok && k.Render != nil {
			if v, _, err := k.Render(tx.Context(), tg); err == nil {
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
		return nil, ErrTodoNotFound
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

// TodosDone implements target.Service.
func (s *Service) TodosDone(ctx context.Context, tg target.Target, userID int64) error {
	now := s.now().UTC()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		var ids []uint64
		var err error
		if userID > 0 {
			ids, err = todosTable.IDsBy(tx, "pending", userTargetKey(userID, tg.Type, tg.ID))
		} else {
			ids, err = todosTable.IDsBy(tx, "target", targetKey(tg.Type, tg.ID))
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

// shown keeps the todos the caller in ctx may still see: a registered kind,
// a project the caller may read, and a target the kind lets the todo's
// user see. Projects are resolved once each.
func (s *Service) shown(ctx context.Context, list []*Todo) ([]*Todo, error) {
	readable := map[int64]bool{}
	out := list[:0:0]
	for _, t := range list {
		k, ok := s.byType[t.TargetType]
		if !ok || k.Render == nil {
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
		ok, err := s.kindVisible(ctx, k, t.UserID, t.target())
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// kindVisible asks k whether userID may see t (Kind.Visible), as that
// user: a deleted or blocked user sees nothing.
func (s *Service) kindVisible(ctx context.Context, k target.Kind, userID int64, t target.Target) (bool, error) {
	if k.Visible == nil {
		return true, nil
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
	return k.Visible(auth.WithPrincipal(ctx, p), t.ProjectID, t.ID)
}
