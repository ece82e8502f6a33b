package notes

import (
	"context"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/notes/event"
	"github.com/fennec-forge/fennec/modules/notes/internal"
	"github.com/fennec-forge/fennec/modules/notes/noteable"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// The contract's types live in package noteable (internal/ reads them, and
// the root imports internal/); these are the names to use.
type (
	// Noteable is a thing notes are written on, as its owning module
	// describes it to the notes module (noteable.Noteable documents its
	// fields).
	Noteable = noteable.Noteable
	// Kind is a kind of noteable a module owns; the notes module serves
	// /projects/:id/<Path>/:<Param>/notes for each registered kind, so it
	// knows nothing of issues, snippets or merge requests
	// (noteable.Kind documents its fields).
	Kind = noteable.Kind
	// Position is where a line comment sits in a diff
	// (noteable.Position documents its fields).
	Position = noteable.Position
	// Votes are a noteable's upvotes and downvotes, counted from its
	// award emoji (noteable.Votes documents them).
	Votes = noteable.Votes
)

// KindsGroup is the fx value group of the registered noteable kinds.
const KindsGroup = "fennec.notes.kinds"

// ProvideKinds registers a module's noteable kinds; ctor is a constructor of
// []Kind whose parameters fx fills.
func ProvideKinds(ctor any) fx.Option {
	return fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"`+KindsGroup+`,flatten"`)))
}

// Service is what the owners of noteables (and, later, notifications) ask
// of the notes module. Each method called with the context of an open store
// transaction (store.Tx.Context()) joins it, so a system note or a
// subscription changes together with what caused it.
type Service interface {
	// System adds a system note (system: true) by authorID to n: a state
	// change in GitLab's words ("closed", "reopened", "assigned to @bob",
	// "added ~1 label", "mentioned in commit 1a2b3c4d").
	System(ctx context.Context, n Noteable, authorID int64, body string) error
	// UserNotesCounts returns the number of non-system notes of each
	// noteable of one type (user_notes_count), in one read for a page.
	UserNotesCounts(ctx context.Context, noteableType string, ids []int64) (map[int64]int, error)
	// Votes returns the upvotes and downvotes (thumbsup and thumbsdown
	// award emoji) of each noteable of one type, in one read for a page;
	// a noteable without any is absent (zero Votes).
	Votes(ctx context.Context, noteableType string, ids []int64) (map[int64]Votes, error)
	// Mentioned gives a Mentioned todo on n to each user @mentioned in text
	// by authorID who may see n (never the author); issues call it for
	// descriptions, the notes module for note bodies.
	Mentioned(ctx context.Context, n Noteable, authorID int64, text string) error
	// Subscribe sets userID's explicit subscription to n; changed is false
	// when it was already so (the endpoints' 304).
	Subscribe(ctx context.Context, n Noteable, userID int64, subscribed bool) (changed bool, err error)
	// Subscribed is GitLab's subscribed?: the explicit subscription when
	// there is one, otherwise whether the user participates (author,
	// assignee, commenter, mentioned).
	Subscribed(ctx context.Context, n Noteable, userID int64) (bool, error)
	// Subscribers are the users Subscribed answers true for (explicit
	// subscribers and participants who did not unsubscribe), for the
	// notifications module.
	Subscribers(ctx context.Context, n Noteable) ([]int64, error)
	// Subscriptions are the explicit choices made on n with Subscribe (the
	// subscribe and unsubscribe endpoints), by user: true for one who
	// subscribed, false for one who unsubscribed; a user who made none (a
	// participant by taking part alone) is absent. The notifications
	// module mails an explicit subscriber whatever their notification
	// level, and nobody who unsubscribed, watchers included.
	Subscriptions(ctx context.Context, n Noteable) (map[int64]bool, error)
	// UnresolvedDiscussions counts n's threads that can be resolved and
	// are not (a merge request that may merge only when all are).
	UnresolvedDiscussions(ctx context.Context, n Noteable) (int, error)
	// Remove deletes the notes, award emoji and subscriptions of a
	// noteable that is deleted (a project's are removed by the notes module
	// itself when the project goes).
	Remove(ctx context.Context, noteableType string, id int64) error
}

// The events the module publishes; their contract is package event.
type (
	// NoteEvent is published when a note is created or updated.
	NoteEvent  = event.NoteEvent
	NoteAction = event.NoteAction
)

// The actions of NoteEvent.
const (
	NoteCreated = event.NoteCreated
	NoteUpdated = event.NoteUpdated
)

// ErrBadPosition: a Kind's CheckPosition found no line of the diffs at a
// line comment's position.
var ErrBadPosition = noteable.ErrBadPosition

// ErrNotFound: no such note on the noteable (or one on another); answered
// 404 Note Not Found.
var ErrNotFound = internal.ErrNoteNotFound

// Module is the notes module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("notes",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		// The noteable kinds come from the modules that own them (issues,
		// snippets, merge requests), so a new kind needs no change here.
		// They reach the service after it is built (the routes and an
		// invoke hand them over), so an owner's kinds may be built from a
		// service that is itself built from notes.Service.
		fx.Provide(internal.NewService, func(s *internal.Service) Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fx.Invoke(fx.Annotate((*internal.Service).SetKinds, fx.ParamTags("", `group:"`+KindsGroup+`"`))),
		fennec.ProvideSubscribers(internal.Subscribers),
		feed.ProvideKinds(internal.FeedKinds),
	)
}

// Mentions returns the usernames @mentioned in text, each once, in order
// of appearance, by the rules the notes module applies to note bodies (the
// notifications module finds the users a note or a description mentions).
func Mentions(text string) []string { return internal.Mentions(text) }
