package notes

import (
	"context"

	"go.uber.org/fx"

	"github.com/fennec-forge/fennec/modules/projects"
)

// Noteable is a thing notes are written on, as its owning module describes
// it to the notes module.
type Noteable struct {
	Type        string // noteable_type: "Issue", "MergeRequest", "Snippet"
	ID          int64  // global id: the notes' noteable_id
	IID         int64  // per-project iid (0 for snippets)
	ProjectID   int64
	Title       string
	AuthorID    int64
	AssigneeIDs []int64
	// Confidential: only Reporter+ members, the author and the assignees
	// may see it (and so be mentioned, notified or given a todo).
	Confidential bool
	WebURL       string
}

// Kind is a kind of noteable a module owns; the notes module serves
// /projects/:id/<Path>/:<Param>/notes for each registered kind, so it knows
// nothing of issues, snippets or merge requests.
type Kind struct {
	Type  string // "Issue"
	Path  string // the URL segment: "issues"
	Param string // the path parameter's name: "issue_iid"
	// Resolve finds the noteable of project p that ref names (an iid; a
	// snippet's id) as the caller in ctx sees it. A missing or hidden one is
	// the owning module's not-found error (mapped by that module to its 404,
	// "404 Issue Not Found"); the project has already been resolved.
	Resolve func(ctx context.Context, p projects.ProjectInfo, ref int64) (Noteable, error)
	// CanComment returns nil when the caller in ctx may add a note to n
	// (issues: anyone who may read the issue; merge requests: locked ones
	// refuse), or the error to answer.
	CanComment func(ctx context.Context, p projects.ProjectInfo, n Noteable) error
	// NoteView, when set, renders GET .../notes/:note_id instead of the Note
	// resource (the spec's snippet-note quirk); note is the Note resource.
	NoteView func(ctx context.Context, n Noteable, note any) (any, error)
}

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
	// Remove deletes the notes and subscriptions of a noteable that is
	// deleted (a project's are removed by the notes module itself when the
	// project goes).
	Remove(ctx context.Context, noteableType string, id int64) error
}
