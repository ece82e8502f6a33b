package internal

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/projects"
)

// ErrTodoNotFound: no such todo of the caller (the contract's).
var ErrTodoNotFound = target.ErrTodoNotFound

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
		TargetID: n.Target.ID, Action: string(n.Action), Body: n.Body, NoteID: n.NoteID, State: StatePending, CreatedAt: now, UpdatedAt: now}
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
	k, ok := s.byType[typ]
	if !ok || k.Render == nil || k.Resolve == nil {
		return target.Todo{}, target.ErrUnknownKind
	}
	caller := auth.FromContext(ctx)
	if caller.IsAnonymous() || caller.UserID() == 0 {
		return target.Todo{}, auth.ErrUnauthorized
	}
	_, n, err := s.resolveRef(ctx, k, projectRef, ref)
	if err != nil {
		return target.Todo{}, err
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
	if err != nil {
		return target.Todo{}, err
	}
	return t.record(), nil
}

// TodosDone implements target.Service.
func (s *Service) TodosDone(ctx context.Context, tg target.Target, userID int64) error {
	now := s.now().UTC()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		var ids []int64
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

// Todos implements target.Service.
func (s *Service) Todos(ctx context.Context, f target.TodoFilter, page target.Page) ([]target.Todo, int, error) {
	list, err := s.todos(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	shown := store.Window(list, page.Offset, page.Limit)
	out := make([]target.Todo, len(shown))
	for i, t := range shown {
		out[i] = t.record()
	}
	return out, len(list), nil
}

// todos are the caller's todos, newest first, as f narrows them, that
// they may still see (shown).
func (s *Service) todos(ctx context.Context, f target.TodoFilter) ([]*Todo, error) {
	user := auth.FromContext(ctx).UserID()
	state := f.State
	if state == "" {
		state = StatePending
	}
	var list []*Todo
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := todosTable.IDsBy(tx, "user_state", store.IDString(user)+":"+state)
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
			if (f.Action == "" || t.Action == string(f.Action)) && (f.AuthorID == 0 || t.AuthorID == f.AuthorID) &&
				(f.ProjectID == 0 || t.ProjectID == f.ProjectID) && (f.Type == "" || t.TargetType == f.Type) {
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
	return s.shown(ctx, list)
}

// MarkTodoDone implements target.Service.
func (s *Service) MarkTodoDone(ctx context.Context, id int64) (target.Todo, error) {
	user := auth.FromContext(ctx).UserID()
	var t *Todo
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		t, err = todosTable.Get(tx, max(id, 0))
		if errors.Is(err, store.ErrNotFound) || (err == nil && t.UserID != user) {
			return ErrTodoNotFound
		}
		if err != nil || t.State == StateDone {
			return err
		}
		t.State, t.UpdatedAt = StateDone, s.now().UTC()
		return todosTable.Update(tx, t)
	})
	if err != nil {
		return target.Todo{}, err
	}
	return t.record(), nil
}

// MarkAllTodosDone implements target.Service.
func (s *Service) MarkAllTodosDone(ctx context.Context) error {
	user := auth.FromContext(ctx).UserID()
	now := s.now().UTC()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		ids, err := todosTable.IDsBy(tx, "user_state", store.IDString(user)+":"+StatePending)
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
}

// shownTodo is a todo the caller may see, with its project as they see it
// and its target's kind.
type shownTodo struct {
	*Todo
	project projects.ProjectInfo
	kind    target.Kind
}

// visible keeps the todos the caller in ctx may still see, each with its
// project and kind: a registered kind with todos, a project the caller may
// read, and a target the kind lets the todo's user see. Projects are
// resolved once each.
func (s *Service) visible(ctx context.Context, list []*Todo) ([]shownTodo, error) {
	projectsSeen := map[int64]*projects.ProjectInfo{}
	out := make([]shownTodo, 0, len(list))
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
		ok, err := s.kindVisible(ctx, k, t.UserID, t.target())
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, shownTodo{Todo: t, project: *p, kind: k})
		}
	}
	return out, nil
}

// shown keeps the todos the caller in ctx may still see (visible).
func (s *Service) shown(ctx context.Context, list []*Todo) ([]*Todo, error) {
	v, err := s.visible(ctx, list)
	if err != nil {
		return nil, err
	}
	out := make([]*Todo, len(v))
	for i, t := range v {
		out[i] = t.Todo
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
