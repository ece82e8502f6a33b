package todos

import (
	"context"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/todos/internal"
	"github.com/fennec-forge/fennec/modules/todos/todo"
)

// The contract's types live in package todo (internal/ builds and reads
// them, and the root imports internal/); these are the names to use.
type (
	// Action is a todo's action_name, in GitLab's words.
	Action = todo.Action
	// Target names what a todo is about: an issue or a merge request
	// (Type is the API's target_type, "Issue", "MergeRequest"; ID its
	// global id).
	Target = todo.Target
	// New is a todo to add: for UserID, because AuthorID did Action on
	// Target. Body is the text shown with it (the note or description that
	// mentioned the user; the target's title otherwise).
	New = todo.New
	// Kind is a kind of todo target a module owns (issues register
	// "Issue", merge requests "MergeRequest"). Render gives the target as
	// the API renders it (the Todo resource's target field) and its web URL
	// (target_url); Visible says whether a user may see it (confidential
	// issues). Both are called with the context of the request being
	// answered.
	Kind = todo.Kind
)

// The actions of GitLab 9.x's todos.
const (
	Assigned          = todo.Assigned
	Mentioned         = todo.Mentioned
	BuildFailed       = todo.BuildFailed
	Marked            = todo.Marked
	Unmergeable       = todo.Unmergeable
	DirectlyAddressed = todo.DirectlyAddressed
)

// ErrExists is Mark's answer when the user already has a pending todo for
// the target: the endpoints answer 304 Not Modified.
var ErrExists = todo.ErrExists

// Service is how the modules that own targets (issues, merge requests) and
// those that find mentions (notes) keep the todo lists. Each method called
// with the context of an open store transaction (store.Tx.Context()) joins
// it, so a todo appears or goes with the change that caused it.
type Service interface {
	// Add adds pending todos. A todo whose user cannot see the target (its
	// kind's Visible), is blocked, or would be the author's own mention
	// (GitLab never gives you a todo for your own action, except Marked) is
	// skipped silently. Adding the same (user, target, action) twice while
	// the first is pending adds nothing.
	Add(ctx context.Context, todos ...New) error
	// Mark is the explicit POST .../todo of a target by the caller in ctx:
	// it adds a Marked todo and returns its API view (the Todo resource,
	// ready to encode), or ErrExists when the caller has any pending todo
	// for the target.
	Mark(ctx context.Context, target Target) (any, error)
	// Done marks the pending todos of userID on target done (a user who
	// closes, merges or comments on a target is done with it, as in GitLab).
	// userID 0: everyone's.
	Done(ctx context.Context, target Target, userID int64) error
	// Remove deletes every todo of a target (the target was deleted).
	Remove(ctx context.Context, target Target) error
}

// KindsGroup is the fx value group of the registered kinds.
const KindsGroup = "fennec.todos.kinds"

// ProvideKinds registers a module's todo target kinds; ctor is a constructor
// of []Kind whose parameters fx fills.
func ProvideKinds(ctor any) fx.Option {
	return fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"`+KindsGroup+`,flatten"`)))
}

// Module is the todos module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("todos",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		// The target kinds come from the modules that own them (issues,
		// merge requests), so a new kind needs no change here. They reach
		// the service after it is built (the routes and an invoke hand them
		// over), so an owner's kinds may be built from a service that is
		// itself built from todos.Service.
		fx.Provide(internal.NewService, func(s *internal.Service) Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fx.Invoke(fx.Annotate((*internal.Service).SetKinds, fx.ParamTags("", `group:"`+KindsGroup+`"`))),
		fennec.ProvideSubscribers(internal.Subscribers),
	)
}
