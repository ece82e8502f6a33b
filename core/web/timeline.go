package web

// The conversation of an issue, a merge request or a snippet as their
// pages show it: the timeline of notes and threads, a comment form, award
// emoji. The view model is here and its markup is one partial
// (templates/base/timeline.html), so the three owners render it alike;
// what only one owner has (a line comment's place in a diff) is its own
// "thread-head" template, which the partial calls for every thread.

import (
	"errors"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
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

// AwardChoice is an emoji the pages offer to award, by its name in the
// award emoji API and the character shown for it.
type AwardChoice struct {
	Name, Glyph string
}

// AwardChoices are the emoji an award form offers: the two votes first,
// then a few common ones. Each is a name the award emoji API knows.
var AwardChoices = []AwardChoice{
	{"thumbsup", "👍"}, {"thumbsdown", "👎"}, {"smile", "😄"}, {"tada", "🎉"},
	{"confused", "😕"}, {"heart", "❤️"}, {"rocket", "🚀"}, {"eyes", "👀"},
}

// Offered reports whether name is one of the AwardChoices.
func Offered(name string) bool {
	return slices.ContainsFunc(AwardChoices, func(c AwardChoice) bool { return c.Name == name })
}

// Given is one award emoji given: its id, its name and its giver.
type Given struct {
	ID     int64
	Name   string
	UserID int64
}

// MineOf is the id of user me's award of name among given; 0 for none.
// A form toggles: it takes that award back, or gives one.
func MineOf(given []Given, me int64, name string) int64 {
	for _, g := range given {
		if me != 0 && g.UserID == me && g.Name == name {
			return g.ID
		}
	}
	return 0
}

// Awards are the award emoji of one awardable (a target or a note) and
// the form that toggles the visitor's.
type Awards struct {
	// Action is the form's target; "" shows the awards without a form
	// (an anonymous visitor, or one who may not award).
	Action, CSRF string
	// NoteID names the awarded note ("" the target itself).
	NoteID string
	// Authored: the visitor wrote what is awarded, and nobody votes on
	// what they wrote, so the votes are shown but not offered.
	Authored bool
	// Shown are the emoji given (and the votes, always), in the order
	// of AwardChoices, then the others by name; More are the choices not
	// shown, for a visitor who may award.
	Shown, More []AwardButton
}

// AwardButton is one emoji of an Awards: how many gave it, who (the
// button's title) and whether the visitor did (aria-pressed).
type AwardButton struct {
	Name, Glyph string
	Count       int
	Who         string
	Mine        bool
	// Offer: the visitor may toggle it (a button, not a count alone).
	Offer bool
}

// maxAwardNames bounds the names in an award's title.
const maxAwardNames = 10

// NewAwards groups given by emoji for user me (0: anonymous), naming the
// givers with nameOf; form (Action, CSRF, NoteID, Authored) is kept as it
// is, and without an Action no choices are offered. A target shows its
// votes even when nobody gave one; a note shows what was given, and is
// nil when nothing was and nothing may be.
func NewAwards(given []Given, me int64, nameOf func(int64) string, form Awards) *Awards {
	type tally struct {
		names []string
		count int
		mine  bool
	}
	by := map[string]*tally{}
	var others []string
	for _, g := range given {
		t := by[g.Name]
		if t == nil {
			t = &tally{}
			by[g.Name] = t
			if !Offered(g.Name) {
				others = append(others, g.Name)
			}
		}
		t.count++
		t.mine = t.mine || (me != 0 && g.UserID == me)
		if len(t.names) < maxAwardNames {
			t.names = append(t.names, nameOf(g.UserID))
		}
	}
	button := func(name, glyph string) AwardButton {
		vote := name == AwardChoices[0].Name || name == AwardChoices[1].Name
		b := AwardButton{Name: name, Glyph: glyph}
		if t := by[name]; t != nil {
			b.Count, b.Mine = t.count, t.mine
			b.Who = strings.Join(t.names, ", ")
			if t.count > len(t.names) {
				b.Who += " and " + Plural(t.count-len(t.names), "other")
			}
		}
		// An emoji the pages do not offer may still be taken back.
		b.Offer = form.Action != "" && !(vote && form.Authored) && (Offered(name) || b.Mine)
		return b
	}
	a := form
	for i, c := range AwardChoices {
		switch {
		case by[c.Name] != nil || (i < 2 && form.NoteID == ""):
			a.Shown = append(a.Shown, button(c.Name, c.Glyph))
		case form.Action != "" && (i >= 2 || !form.Authored):
			a.More = append(a.More, button(c.Name, c.Glyph))
		}
	}
	slices.Sort(others)
	for _, name := range others {
		a.Shown = append(a.Shown, button(name, ":"+name+":"))
	}
	if a.Action == "" && len(a.Shown) == 0 {
		return nil
	}
	return &a
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
// text: an error of SignIn sends the visitor to sign in, one of Missing
// is the missing page (Missing: sign in, or 404), one of Forbidden the
// 403 page, anything else the 500 page with a log line.
func (s *Site) Fail(w http.ResponseWriter, r *http.Request, err error, rs Refusals) {
	is := func(list []error) bool {
		return slices.ContainsFunc(list, func(e error) bool { return errors.Is(err, e) })
	}
	switch {
	case is(rs.SignIn):
		s.RedirectToSignIn(w, r)
	case is(rs.Missing):
		s.Missing(w, r)
	case is(rs.Forbidden):
		s.Error(w, r, http.StatusForbidden)
	default:
		s.log.Error(rs.Page+" failed", zap.String("path", r.URL.Path), zap.Error(err))
		s.Error(w, r, http.StatusInternalServerError)
	}
}
