package target

import (
	"errors"
	"time"
)

// Note is a note on a target: a user's comment, or a system note that
// records a change.
type Note struct {
	ID           int64
	ProjectID    int64
	NoteableType string
	NoteableID   int64
	NoteableIID  int64 // 0 for a snippet
	AuthorID     int64
	Body         string
	System       bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// Its thread (discussions): the thread's id (40 hex digits); the
	// note's type ("" a note by itself, "DiscussionNote" one of a thread,
	// "DiffNote" one of a line comment's thread, with its Position);
	// whether it can be resolved (a user's note of a thread on a kind whose
	// threads can) and is, by whom and when.
	DiscussionID string
	Type         string
	Position     *Position
	Resolvable   bool
	Resolved     bool
	ResolvedBy   int64
	ResolvedAt   *time.Time
}

// Thread is a discussion: the notes that share a thread id, oldest first;
// Individual for a note by itself.
type Thread struct {
	ID         string
	Individual bool
	Notes      []Note
}

// Award is an award emoji: a user's emoji on a target (AwardableType is
// the target's type) or on one of its notes ("Note").
type Award struct {
	ID            int64
	Name          string
	UserID        int64
	AwardableID   int64
	AwardableType string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// NoteInput is what a new note (or thread, or reply) says. CreatedAt is
// taken from administrators and project owners only (others' is ignored,
// as GitLab 9.x did); BadCreatedAt says the request's was no date, which
// only they are told.
type NoteInput struct {
	Body         *string
	CreatedAt    *time.Time
	BadCreatedAt bool
}

// Posted is what a new note made: the note, or for an emoji-only note on a
// kind with EmojiNotesAward the award given instead (GitLab's "a different
// object is returned").
type Posted struct {
	Note  *Note
	Award *Award
}

// MaxBodyChars bounds a note's body, as GitLab's note validation does
// (1,000,000 characters); a longer one is an *InvalidError of "note".
const MaxBodyChars = 1_000_000

// The answers of the notes, threads and award emoji beyond the
// malformed-input errors (ParamError, BadRequestError, InvalidError).
var (
	// ErrDiscussionNotFound: no such thread on the target; 404
	// Discussion Not Found.
	ErrDiscussionNotFound = errors.New("notes: discussion not found")
	// ErrAwardNotFound: no such award emoji on the awardable, or the
	// caller may not award it; 404 Award Emoji Not Found.
	ErrAwardNotFound = errors.New("notes: award emoji not found")
	// ErrUnknownEmoji: an award's name is no emoji Fennec knows.
	ErrUnknownEmoji = errors.New("notes: unknown emoji")
	// ErrAwardTaken: the caller gave this emoji to the awardable already.
	ErrAwardTaken = errors.New("notes: award already given")
)
