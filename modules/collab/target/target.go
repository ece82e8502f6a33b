package target

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Noteable is a target as its owning module describes it to the collab
// module: what notes are written on, what is subscribed to and awarded.
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

// Ref is how the noteable's URL names it: its iid, or for a noteable
// without one (a snippet) its id.
func (n Noteable) Ref() int64 {
	if n.IID > 0 {
		return n.IID
	}
	return n.ID
}

// Target names the noteable as a todo names its target.
func (n Noteable) Target() Target {
	return Target{Type: n.Type, ID: n.ID, ProjectID: n.ProjectID}
}

// Target names a target by its type and global id: what a todo is about
// (Type is the API's target_type, "Issue", "MergeRequest").
type Target struct {
	Type      string
	ID        int64
	ProjectID int64
}

// Kind is a kind of target a module owns, registered once
// (collab.ProvideKinds): the one registry of target types that the notes,
// discussions, award emoji, participants, subscriptions, todos and the
// activity feeds share, so the collab module knows nothing of issues,
// snippets or merge requests. Every field but Type is optional; a kind
// serves what it fills.
type Kind struct {
	Type string // "Issue"
	// OpName names the target in the operation ids of its subscribe,
	// unsubscribe and todo endpoints ("project-issue": subscribe-project-issue).
	OpName string
	// Read is what the caller must be allowed on the project to see any
	// target of the kind (projects.ReadIssues: the issues feature is on
	// and the caller may read it); the collab module asks it before
	// Resolve and Visible. Zero: reading the project is enough.
	Read projects.Action

	// Path and Param name the target in URLs: the collab module serves
	// /projects/:id/<Path>/:<Param>/notes (discussions, award emoji,
	// participants) for a kind that has them and Resolve.
	Path  string // the URL segment: "issues"
	Param string // the path parameter's name: "issue_iid"
	// Resolve finds the noteable of project p that ref names (an iid; a
	// snippet's id) as the caller in ctx sees it; the caller may read p and
	// do Read on it. A missing or hidden one is the owning module's
	// not-found error (mapped by that module to its 404, "404 Issue Not
	// Found"), made with NotFound so that modules that know no owner
	// (notifications) recognise it.
	Resolve func(ctx context.Context, p projects.ProjectInfo, ref int64) (Noteable, error)
	// CanComment returns nil when the caller in ctx may add a note to n or
	// award it (merge requests: locked ones refuse), or the error to
	// answer; an archived project refuses before it is asked. nil: whoever
	// may see n.
	CanComment func(ctx context.Context, p projects.ProjectInfo, n Noteable) error
	// NoteView, when set, renders GET .../notes/:note_id instead of the Note
	// resource (the spec's snippet-note quirk); note is the Note resource.
	NoteView func(ctx context.Context, n Noteable, note any) (any, error)
	// Resolvable: the threads on n (discussions started as such, line
	// comments) can be resolved, as GitLab's merge request threads can.
	Resolvable bool
	// CheckPosition, when set, allows line comments (DiffNote) on n: it
	// returns nil when pos names a line of n's diffs, else the error to
	// answer.
	CheckPosition func(ctx context.Context, p projects.ProjectInfo, n Noteable, pos Position) error
	// EmojiNotesAward: a note on n whose body is only an award emoji
	// (":+1:") awards that emoji to n instead of being stored, and the
	// award emoji is the answer (the spec's Note: "a different object is
	// returned"). GitLab did so for issues and merge requests only.
	EmojiNotesAward bool
	// Participants: serve GET .../:<Param>/participants, the people n's
	// conversation involves who may see it (GitLab has it for issues and
	// merge requests).
	Participants bool
	// View renders n as the API shows it to the caller in ctx (the
	// owner's single resource, with subscribed): with it, the collab
	// module serves POST .../:<Param>/subscribe and .../unsubscribe, which
	// answer with it.
	View func(ctx context.Context, p projects.ProjectInfo, n Noteable) (any, error)

	// Visible reports whether the caller in ctx, who may read project p and
	// do Read on it, may see target id of the kind (a confidential
	// issue). The activity feeds ask it for the caller, the todos for the
	// todo's user. nil: whoever may do Read.
	Visible func(ctx context.Context, p projects.ProjectInfo, id int64) (bool, error)
	// Render gives target id of project p as the API renders it in a todo
	// (the Todo resource's target field) and its web URL (target_url);
	// the todo's user may see it. With it the kind has todos, and the
	// collab module serves POST .../:<Param>/todo.
	Render func(ctx context.Context, p projects.ProjectInfo, id int64) (view any, webURL string, err error)
}

// Votes are a noteable's upvotes and downvotes: its "thumbsup" and
// "thumbsdown" award emoji ("+1" and "-1" are stored under those names).
type Votes struct {
	Up, Down int
}

// Tally is what a target's view counts of its conversation: its user
// notes (user_notes_count) and its votes (upvotes, downvotes).
type Tally struct {
	Notes int
	Votes
}

// ErrBadPosition is what a kind's CheckPosition returns for a position that
// names no line of the noteable's diffs (answered as GitLab does).
var ErrBadPosition = errors.New("noteable: the position names no line of the diff")

// ErrNotFound matches (errors.Is) every owner's not-found error of a
// noteable: a module that reads noteables of every kind tells "gone" from a
// failure without knowing the owning modules.
var ErrNotFound = errors.New("noteable: not found")

// ErrNoteNotFound: no such note on the noteable (or one on another);
// answered 404 Note Not Found.
var ErrNoteNotFound = errors.New("notes: note not found")

// ErrUnknownKind: no module registered a kind of that type (its module is
// not in the bundle).
var ErrUnknownKind = errors.New("collab: no such kind of target")

// ErrTodoNotFound: no such todo of the caller; answered 404 Todo Not Found.
var ErrTodoNotFound = errors.New("todos: todo not found")

// ErrUnchanged: the caller's subscription is already so (the subscribe and
// unsubscribe endpoints' 304).
var ErrUnchanged = errors.New("collab: unchanged")

// NotFound is an owner's not-found error of its noteables: its message is
// text, and errors.Is matches it as itself and as ErrNotFound.
func NotFound(text string) error { return &notFound{text} }

type notFound struct{ text string }

func (e *notFound) Error() string { return e.text }

// Is makes errors.Is(err, ErrNotFound) hold.
func (e *notFound) Is(target error) bool { return target == ErrNotFound }

// Position is where a line comment (a DiffNote) sits in a diff, as GitLab's
// discussions API takes it: the diff from base_sha (the merge base) or
// start_sha (the target branch) to head_sha; a line only new_line has is
// an added one, only old_line a removed one, both an unchanged one.
type Position struct {
	BaseSHA      string `json:"base_sha"`
	StartSHA     string `json:"start_sha"`
	HeadSHA      string `json:"head_sha"`
	PositionType string `json:"position_type"`
	OldPath      string `json:"old_path"`
	NewPath      string `json:"new_path"`
	OldLine      *int   `json:"old_line"`
	NewLine      *int   `json:"new_line"`
}

// Service is what the owners of targets (issues, snippets, merge
// requests), the notifications and the activity feeds ask of the collab
// module. Each method called with the context of an open store
// transaction (store.Tx.Context()) joins it, so a system note, a todo or a
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
	// Tallies returns the Tally of each noteable of one type, in one read
	// for a page (UserNotesCounts and Votes together).
	Tallies(ctx context.Context, noteableType string, ids []int64) (map[int64]Tally, error)
	// Mentioned gives a Mentioned todo on n to each user @mentioned in text
	// by authorID who may see n (never the author); issues call it for
	// descriptions, the collab module for note bodies.
	Mentioned(ctx context.Context, n Noteable, authorID int64, text string) error
	// Subscribe sets userID's explicit subscription to n; changed is false
	// when it was already so (the endpoints' 304).
	Subscribe(ctx context.Context, n Noteable, userID int64, subscribed bool) (changed bool, err error)
	// Subscribed is GitLab's subscribed?: the explicit subscription when
	// there is one, otherwise whether the user participates (author,
	// assignee, commenter, mentioned).
	Subscribed(ctx context.Context, n Noteable, userID int64) (bool, error)
	// The notes of the target w names, as the caller sees it (Where: a
	// malformed reference is ErrBadParam once the project is there):
	// Notes is a page of them, oldest first, and how many; Note one of them
	// (ErrNoteNotFound for another's) with the target. CreateNote posts
	// one (ErrMissing, ErrBadParam or an *InvalidError for a bad body;
	// CanComment's refusal), or, for an emoji-only body on a kind with
	// EmojiNotesAward, gives the award (ErrUnknownEmoji, ErrAwardTaken).
	// UpdateNote and DeleteNote are for its author, a Master or an
	// administrator; system notes are nobody's to change.
	Notes(ctx context.Context, w Where, page Page) ([]Note, int, error)
	Note(ctx context.Context, w Where, noteID string) (Note, Noteable, error)
	CreateNote(ctx context.Context, w Where, in NoteInput) (Posted, error)
	UpdateNote(ctx context.Context, w Where, noteID string, body *string) (Note, error)
	DeleteNote(ctx context.Context, w Where, noteID string) error

	// The threads of the target w names: a page of them (Threads), one
	// (Thread; ErrDiscussionNotFound) or a note of one (ThreadNote).
	// StartThread starts one, a line comment with pos on a kind with
	// CheckPosition (ErrBadPosition); Reply joins one (a system note's is
	// a *BadRequestError); UpdateThreadNote changes a note's body or,
	// with resolved, resolves it; ResolveThread resolves a whole thread of
	// a Resolvable kind (projects.ErrForbidden for a caller who may not).
	Threads(ctx context.Context, w Where, page Page) ([]Thread, int, error)
	Thread(ctx context.Context, w Where, id string) (Thread, error)
	ThreadNote(ctx context.Context, w Where, id, noteID string) (Note, error)
	StartThread(ctx context.Context, w Where, in NoteInput, pos *Position) (Thread, error)
	Reply(ctx context.Context, w Where, id string, in NoteInput) (Note, error)
	UpdateThreadNote(ctx context.Context, w Where, id, noteID string, body *string, resolved *bool) (Note, error)
	DeleteThreadNote(ctx context.Context, w Where, id, noteID string) error
	ResolveThread(ctx context.Context, w Where, id string, resolved bool) (Thread, error)

	// The award emoji of the target w names, or of its note noteRef
	// (nil: the target's own): a page of them, one (ErrAwardNotFound),
	// the caller's new one (ErrUnknownEmoji, ErrAwardTaken; nobody votes
	// on what they wrote), and taking one back (its user or an
	// administrator; auth.ErrUnauthorized for others).
	Awards(ctx context.Context, w Where, noteRef *string, page Page) ([]Award, int, error)
	Award(ctx context.Context, w Where, noteRef *string, awardID string) (Award, error)
	AddAward(ctx context.Context, w Where, noteRef *string, name string) (Award, error)
	RemoveAward(ctx context.Context, w Where, noteRef *string, awardID string) error

	// Participants are the people the conversation of the target w names
	// involves (author, assignees, commenters, the mentioned) who may see
	// it, as the caller sees the target: a page of them and how many.
	Participants(ctx context.Context, w Where, page Page) ([]identity.UserInfo, int, error)
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

	// AddTodos adds pending todos. A todo whose user cannot see the target
	// (its kind's Visible), is blocked, or would be the author's own
	// mention (GitLab never gives you a todo for your own action, except
	// Marked) is skipped silently. Adding the same (user, target, action)
	// twice while the first is pending adds nothing.
	AddTodos(ctx context.Context, todos ...NewTodo) error
	// SubscribeTo sets the caller's explicit subscription to the target of
	// kind typ that ref names in project projectRef, as the caller sees it
	// (POST .../subscribe and .../unsubscribe), and returns the project
	// and the target; ErrUnchanged when it was so already.
	SubscribeTo(ctx context.Context, typ, projectRef string, ref int64, subscribed bool) (projects.ProjectInfo, Noteable, error)
	// MarkTodo is the explicit POST .../todo of the target of kind typ that
	// ref names in project projectRef, by the caller in ctx: it adds a
	// Marked todo (with the target's title as its body) and returns it, or
	// ErrTodoExists when the caller has any pending todo for the target.
	MarkTodo(ctx context.Context, typ, projectRef string, ref int64) (Todo, error)
	// Todos are the caller's todos, newest first, that they may still see
	// (a project left, an issue made confidential hide a todo), as f
	// narrows them: a page of them, and how many there are.
	Todos(ctx context.Context, f TodoFilter, page Page) ([]Todo, int, error)
	// MarkTodoDone marks one of the caller's todos done and returns it;
	// ErrTodoNotFound for another's (or none).
	MarkTodoDone(ctx context.Context, id int64) (Todo, error)
	// MarkAllTodosDone marks every pending todo of the caller done.
	MarkAllTodosDone(ctx context.Context) error
	// TodosDone marks the pending todos of userID on t done (a user who
	// closes, merges or comments on a target is done with it, as in
	// GitLab). userID 0: everyone's.
	TodosDone(ctx context.Context, t Target, userID int64) error

	// Remove deletes what a deleted target had here: its notes, award
	// emoji, subscriptions and todos (a project's are removed by the
	// collab module itself when the project goes).
	Remove(ctx context.Context, t Target) error
	// Resolve finds the noteable of project p that ref names through its
	// kind, as the caller in ctx sees it (Kind.Resolve); ErrUnknownKind
	// when no module registered the type.
	Resolve(ctx context.Context, noteableType string, p projects.ProjectInfo, ref int64) (Noteable, error)
	// Visible reports whether the caller in ctx may see target id of
	// project projectID, of type typ ("Issue", "MergeRequest", or "Note":
	// a note is seen by whoever may see its noteable), as the target's kind
	// says; false for a type nobody registered (its module is not in the
	// bundle, so nobody can vouch for it). The caller may read the project
	// already (the activity feeds check it first).
	Visible(ctx context.Context, typ string, projectID, id int64) (bool, error)
}

// Closed is an issue that texts would close, as Closer.ClosedBy finds it.
type Closed struct {
	// Ref is how a text of the asking project names it: "#1", or
	// "group/project#3" for an issue of another project.
	Ref string
	// View is the issue as the API renders it (closes_issues).
	View any
}

// Closer answers which open issues texts would close (GitLab's issue
// closing pattern: "Closes #1, #2 and group/p#3"), for a module whose
// targets close issues when they land (merge requests: closes_issues, the
// merge commit's message). The issues module provides it
// (collab.ProvideCloser); the asking module then needs no import of it,
// and closing itself goes through the event.Merged it publishes.
type Closer interface {
	// ClosedBy returns the open issues texts would close, relative to
	// project p, among those the caller in ctx may see, in the order the
	// texts name them.
	ClosedBy(ctx context.Context, p projects.ProjectInfo, texts ...string) ([]Closed, error)
}
