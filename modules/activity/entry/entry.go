package entry

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// ID is a feed entry's id. Ids grow with time: newest first is descending
// id order.
type ID int64

// Entry is one entry of a feed as the Service returns it.
type Entry struct {
	ID ID
	// ProjectID is 0 for an entry outside any project (a deleted project's
	// tombstone in its author's feed).
	ProjectID int64
	AuthorID  int64
	Action    feed.Action
	// TargetID is 0 and TargetType "" for an entry without a target (a
	// push, a project created, a member joined).
	TargetID    int64
	TargetType  string // in GitLab's words: "Issue", "MergeRequest", "DiffNote"
	TargetTitle string
	// TargetIID is the target's number in its project (a note's: its
	// noteable's), for links to its page; 0 when unknown (entries
	// recorded before it was kept).
	TargetIID int64
	Title     string
	// Data is the push of a push entry (GitLab's push data), Note the note
	// of a "commented on" entry; nil when none.
	Data      json.RawMessage
	Note      json.RawMessage
	CreatedAt time.Time
}

// Filter is GitLab's filter of the event lists; the zero Filter keeps
// everything, newest first.
type Filter struct {
	// Action is one of GitLab's filter values (created, updated, closed,
	// reopened, pushed, commented, merged, joined, left, destroyed,
	// expired): created takes an issue's "opened" too, pushed the three
	// push actions.
	Action string
	// TargetType is the target's type in snake case (issue, merge_request,
	// milestone, note, project, snippet, user); every kind of note is a
	// note.
	TargetType string
	// Before and After are dates as GitLab's API spells them
	// (YYYY-MM-DD): entries created before the first day, and after the
	// whole second day. A date that is not one is ErrInvalidDate.
	Before, After string
	// Ascending lists oldest first.
	Ascending bool
}

// Service reads the feeds. The caller is the principal in ctx. Lists are
// newest first (unless Filter.Ascending): limit of them from the
// offset-th on, and how many the filter keeps in all. An entry is shown to
// callers who may read its project and, when it has a target, whom the
// target's kind lets see it; an entry outside any project to its author
// and administrators. That last check runs on the page only, as GitLab's
// does, so a page may come out shorter than limit.
type Service interface {
	// ProjectEntries is a project's feed. project is a project as the
	// API's :id gives it (its id or its full path); one the caller may not
	// read is the projects module's error.
	ProjectEntries(ctx context.Context, project string, f Filter, offset, limit int) ([]Entry, int, error)
	// UserEntries is a user's contributions in the projects the caller may
	// read. user is an id or a username; an unknown one is the identity
	// module's identity.ErrUserNotFound.
	UserEntries(ctx context.Context, user string, f Filter, offset, limit int) ([]Entry, int, error)
	// OwnEntries is the signed-in caller's own feed, as UserEntries shows
	// it to them.
	OwnEntries(ctx context.Context, f Filter, offset, limit int) ([]Entry, int, error)
}

// ErrInvalidDate: a Filter's Before or After is not a date (a *DateError
// names which).
var ErrInvalidDate = errors.New("activity: not a date (YYYY-MM-DD)")

// DateError is ErrInvalidDate with the parameter it is about ("before",
// "after").
type DateError struct {
	Param string
}

func (e *DateError) Error() string { return ErrInvalidDate.Error() + ": " + e.Param }
func (e *DateError) Unwrap() error { return ErrInvalidDate }
