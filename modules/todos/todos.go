package todos

import (
	"context"
	"errors"

	"go.uber.org/fx"
)

// Action is a todo's action_name, in GitLab's words.
type Action string

// The actions of GitLab 9.x's todos.
const (
	Assigned          Action = "assigned"
	Mentioned         Action = "mentioned"
	BuildFailed       Action = "build_failed"
	Marked            Action = "marked"
	Unmergeable       Action = "unmergeable"
	DirectlyAddressed Action = "directly_addressed"
)

// Target names what a todo is about: an issue or a merge request (Type is
// the API's target_type, "Issue", "MergeRequest"; ID its global id).
type Target struct {
	Type      string
	ID        int64
	ProjectID int64
}

// New is a todo to add: for UserID, because AuthorID did Action on Target.
// Body is the text shown with it (the note or description that mentioned
// the user; the target's title otherwise).
type New struct {
	UserID   int64
	AuthorID int64
	Target   Target
	Action   Action
	Body     string
}

// ErrExists is Mark's answer when the user already has a pending todo for
// the target: the endpoints answer 304 Not Modified.
var ErrExists = errors.New("todos: a pending todo for this target exists")

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

// Kind is a kind of todo target a module owns (issues register "Issue",
// merge requests "MergeRequest"). Render gives the target as the API
// renders it (the Todo resource's target field) and its web URL
// (target_url); Visible says whether a user may see it (confidential issues).
// Both are called with the context of the request being answered.
type Kind struct {
	Type    string
	Render  func(ctx context.Context, t Target) (view any, webURL string, err error)
	Visible func(ctx context.Context, userID int64, t Target) (bool, error)
}

// KindsGroup is the fx value group of the registered kinds.
const KindsGroup = "fennec.todos.kinds"

// ProvideKinds registers a module's todo target kinds; ctor is a constructor
// of []Kind whose parameters fx fills.
func ProvideKinds(ctor any) fx.Option {
	return fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"`+KindsGroup+`,flatten"`)))
}
