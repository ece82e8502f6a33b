package web

// The conversation of an issue, a merge request or a snippet as their
// pages show it: the timeline of notes and threads, a comment form, award
// emoji (awards.go). The view model is here and its markup is one partial
// (templates/base/timeline.html), so the three owners render it alike;
// what only one owner has (a line comment's place in a diff) is its own
// "thread-head" template, which the partial calls for every thread.

import (
	"errors"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
)

// Person is a user as the pages show one: a name, a username and the
// link to their profile.
type Person struct {
	Name, Username, Href string
}

// Timeline is a target's notes and threads, oldest first, one page of
// them, with the comment form under them.
type Timeline struct {
	Entries []Entry
	// Noun names what the pages hold ("activity", "comments"): the
	// links read "Earlier activity".
	Noun string
	// EarlierHref and LaterHref are the neighbouring pages of a long
	// timeline ("" for none).
	EarlierHref, LaterHref string
	// Comment is the comment form; nil when the visitor may not comment.
	Comment *CommentForm
	// SignInHref, for an anonymous visitor, leads to sign in and back.
	SignInHref string
}

// Entry is one entry of a timeline: a note by itself (a comment or a
// system note), or a thread of notes with its reply and resolve forms.
type Entry struct {
	// ID is the thread's id (its anchor is "discussion_<ID>").
	ID     string
	Thread bool
	Notes  []Note
	// Resolvable threads show whether they are resolved, and a resolved
	// one is collapsed under "Resolved by <ResolvedBy>".
	Resolvable, Resolved bool
	ResolvedBy           string
	// Resolve is the form that resolves or unresolves the thread, for a
	// visitor the service lets; Reply the reply form.
	Resolve *ResolveForm
	Reply   *ReplyForm
	// Head is the owner's own data for its "thread-head" template (a line
	// comment's place); nil for none.
	Head any
}

// Note is one note of a timeline.
type Note struct {
	ID        int64
	Anchor    string // "note_12"
	Author    Person
	System    bool
	Body      template.HTML
	CreatedAt time.Time
	Edited    bool
	// Awards are the note's award emoji; nil where notes have none.
	Awards *Awards
}

// NoteAnchor is a note's anchor in its page ("note_12").
func NoteAnchor(id int64) string { return "note_" + strconv.FormatInt(id, 10) }

// CommentForm is the form that posts a comment (Markdown, with a Preview
// button that needs no JavaScript), filled in again when refused.
type CommentForm struct {
	Action, CSRF string
	Draft        string
	Problem      string
	Preview      template.HTML
	// Threads offers "Start a thread" beside Comment (the form posts
	// thread=1): a thread that can be resolved, where the kind has them.
	Threads bool
}

// ReplyForm answers a thread; Return is the tab it comes back to.
type ReplyForm struct {
	Action, CSRF, Return string
}

// ResolveForm resolves a thread, or unresolves a resolved one.
type ResolveForm struct {
	Action, CSRF, Return string
	Resolved             bool // the thread is resolved: the form unresolves it
}

// Resolution counts a target's resolvable threads and how many are
// resolved ("2 of 3 threads resolved").
type Resolution struct {
	Resolved, Total int
}

// Count adds the threads of entries that can be resolved.
func (r *Resolution) Count(entries []Entry) {
	for _, e := range entries {
		if e.Resolvable {
			r.Total++
			if e.Resolved {
				r.Resolved++
			}
		}
	}
}

// Refusals sort the errors of a page's service call: those that mean the
// subject is missing (or hidden from the visitor), refused, or needs a
// signed-in visitor. Fail answers by them.
type Refusals struct {
	Missing, Forbidden, SignIn []error
	// Page names the pages in the log line of an unexpected error.
	Page string
}

// Fail answers a page whose service call failed, never with the error's
// text: an error of SignIn sends the visitor to sign in, an award's name
// the pages do not offer is a 400 page, one of Missing
// is the missing page (Missing: sign in, or 404), one of Forbidden the
// 403 page, anything else the 500 page with a log line.
func (s *Site) Fail(w http.ResponseWriter, r *http.Request, err error, rs Refusals) {
	is := func(list []error) bool {
		return slices.ContainsFunc(list, func(e error) bool { return errors.Is(err, e) })
	}
	switch {
	case is(rs.SignIn):
		s.RedirectToSignIn(w, r)
	case errors.Is(err, ErrNotOffered):
		s.ErrorMessage(w, r, http.StatusBadRequest, "Unknown emoji", "This page offers no such emoji.")
	case errors.Is(err, ErrBadNote):
		s.NotFound(w, r)
	case is(rs.Missing):
		s.Missing(w, r)
	case is(rs.Forbidden):
		s.Error(w, r, http.StatusForbidden)
	default:
		s.log.Error(rs.Page+" failed", zap.String("path", r.URL.Path), zap.Error(err))
		s.Error(w, r, http.StatusInternalServerError)
	}
}
