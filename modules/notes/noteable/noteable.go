package noteable

import (
	"context"
	"errors"

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

// Ref is how the noteable's URL names it: its iid, or for a noteable
// without one (a snippet) its id.
func (n Noteable) Ref() int64 {
	if n.IID > 0 {
		return n.IID
	}
	return n.ID
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
	// "404 Issue Not Found"), made with NotFound so that modules that know
	// no owner (notifications) recognise it; the project has already been
	// resolved.
	Resolve func(ctx context.Context, p projects.ProjectInfo, ref int64) (Noteable, error)
	// CanComment returns nil when the caller in ctx may add a note to n
	// (issues: anyone who may read the issue; merge requests: locked ones
	// refuse), or the error to answer.
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
}

// Votes are a noteable's upvotes and downvotes: its "thumbsup" and
// "thumbsdown" award emoji ("+1" and "-1" are stored under those names).
type Votes struct {
	Up, Down int
}

// ErrBadPosition is what a kind's CheckPosition returns for a position that
// names no line of the noteable's diffs (answered as GitLab does).
var ErrBadPosition = errors.New("noteable: the position names no line of the diff")

// ErrNotFound matches (errors.Is) every owner's not-found error of a
// noteable: a module that reads noteables of every kind tells "gone" from a
// failure without knowing the owning modules.
var ErrNotFound = errors.New("noteable: not found")

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
