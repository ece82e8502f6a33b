package internal

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// The operations on a target itself that every kind shares: subscribe,
// unsubscribe (kinds with a View) and todo (kinds with todos), once for
// all of them; the owners' modules serve none of it.

type targetOutput struct {
	Body any
}

type markTodoOutput struct {
	Body TodoView
}

// registerTargetOps serves POST .../:ref/subscribe, .../unsubscribe and
// .../todo of one kind. As in GitLab, each answers 304 when there is
// nothing to change.
func (s *Service) registerTargetOps(a *api.API, k target.Kind) {
	one := "/projects/{id}/" + k.Path + "/{" + k.Param + "}"
	tags := []string{k.Path}
	name := k.OpName
	if name == "" {
		name = k.Path
	}
	if k.View != nil {
		api.Register(a, api.Op{ID: "subscribe-" + name, Method: http.MethodPost, Path: one + "/subscribe", Tags: tags, Access: api.SignedIn,
			Summary: "Subscribes the caller to a " + k.Type + " (304 when subscribed)"}, func(ctx context.Context, in *ProjectPath) (*targetOutput, error) {
			return s.subscription(ctx, k, in.ID, true)
		})
		api.Register(a, api.Op{ID: "unsubscribe-" + name, Method: http.MethodPost, Path: one + "/unsubscribe", Tags: tags, Access: api.SignedIn,
			Summary: "Unsubscribes the caller from a " + k.Type + " (304 when not subscribed)"}, func(ctx context.Context, in *ProjectPath) (*targetOutput, error) {
			return s.subscription(ctx, k, in.ID, false)
		})
	}
	if k.Render != nil {
		api.Register(a, api.Op{ID: "todo-" + name, Method: http.MethodPost, Path: one + "/todo", Tags: tags, Access: api.SignedIn,
			Summary: "Adds the " + k.Type + " to the caller's todos (304 when there is one)"}, func(ctx context.Context, in *ProjectPath) (*markTodoOutput, error) {
			return s.markTodoOp(ctx, k, in.ID)
		})
	}
}

// subscription answers subscribe and unsubscribe with the target as the
// caller sees it now.
func (s *Service) subscription(ctx context.Context, k target.Kind, projectRef string, subscribed bool) (*targetOutput, error) {
	ref, err := refOf(ctx, k)
	if err != nil {
		return nil, err
	}
	info, n, err := s.SubscribeTo(ctx, k.Type, projectRef, ref, subscribed)
	if err != nil {
		return nil, unchanged(err)
	}
	v, err := k.View(ctx, info, n)
	if err != nil {
		return nil, err
	}
	return &targetOutput{Body: v}, nil
}

func (s *Service) markTodoOp(ctx context.Context, k target.Kind, projectRef string) (*markTodoOutput, error) {
	ref, err := refOf(ctx, k)
	if err != nil {
		return nil, err
	}
	t, err := s.MarkTodo(ctx, k.Type, projectRef, ref)
	if err != nil {
		return nil, unchanged(err)
	}
	views, err := s.render(ctx, []*Todo{todoOf(t)})
	if err != nil {
		return nil, err
	}
	if len(views) == 0 {
		return nil, ErrTodoNotFound
	}
	return &markTodoOutput{Body: views[0]}, nil
}

// refOf is the target's reference in the path, read as the owners' typed
// path parameters read it: not a number is 400 before anything else, a
// number that names nothing is the kind's 404.
func refOf(ctx context.Context, k target.Kind) (int64, error) {
	raw := ""
	if r := api.Request(ctx); r != nil {
		raw = r.PathValue(k.Param)
	}
	ref, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, api.Invalid(k.Param)
	}
	return ref, nil
}

// unchanged answers 304 for nothing to change: subscribed already, a
// pending todo already.
func unchanged(err error) error {
	if errors.Is(err, target.ErrUnchanged) || errors.Is(err, target.ErrTodoExists) {
		return api.NotModified
	}
	return err
}
