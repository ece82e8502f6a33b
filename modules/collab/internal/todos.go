package internal

import (
	"context"
	"errors"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
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
// whom the target's kind lets see it (visibleTo, asked as the user). A
// target of a kind nobody registered, or one without todos, is seen by no
// one (its module is not in the bundle, so nobody can vouch for it), as in
// the feeds.
func (s *Service) todoVisible(ctx context.Context, userID int64, t target.Target) (bool, error) {
	k, known := s.byType[t.Type]
	if !known || k.Render == nil {
		return false, nil
	}
	asUser, ok, err := s.asUser(ctx, userID)
	if err != nil || !ok {
		return false, err
	}
	return s.visibleTo(asUser, k, t.ProjectID, t.ID)
}

// MarkTodo implements target.Service.
func (s *Service) MarkTodo(ctx context.Context, typ, projectRef string, ref int64) (target.Todo, error) {
	t, err := s.markTodo(ctx, typ, projectRef, ref)
	if err != nil {
		return target.Todo{}, err
	}
	return t.record(), nil
}

// markTodo is MarkTodo, with the stored todo.
func (s *Service) markTodo(ctx context.Context, typ, projectRef string, ref int64) (*Todo, error) {
	k, ok := s.byType[typ]
	if !ok || k.Render == nil || k.Resolve == nil {
		return nil, target.ErrUnknownKind
	}
	caller := auth.FromContext(ctx)
	if caller.IsAnonymous() || caller.UserID() == 0 {
		return nil, auth.ErrUnauthorized
	}
	_, n, err := s.resolveRef(ctx, k, projectRef, ref)
	if err != nil {
		return nil, err
	}
	user := caller.UserID()
	var t *Todo
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		pending, err := pendingOn(tx, user, n.Type, n.ID)
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			return target.ErrTodoExists
		}
		// GitLab shows a marked todo with its target's title as the body.
		t = newTodo(target.NewTodo{UserID: user, AuthorID: user, Target: n.Target(), Action: target.Marked, Body: n.Title}, s.now().UTC())
		return todosTable.Insert(tx, t)
	})
	return t, err
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

// kindVisible reports whether userID may see target t of kind k, as
// that user (visibleTo): a deleted or blocked user sees nothing. A kind
// that asks no more than reading the project needs no user (the caller,
// the todos' owner, may read it already).
func (s *Service) kindVisible(ctx context.Context, k target.Kind, userID int64, t target.Target) (bool, error) {
	if k.Visible == nil && k.Read == projects.ReadProject {
		return true, nil
	}
	asUser, ok, err := s.asUser(ctx, userID)
	if err != nil || !ok {
		return false, err
	}
	return s.visibleTo(asUser, k, t.ProjectID, t.ID)
}
