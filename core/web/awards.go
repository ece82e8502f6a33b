package web

// Award emoji on the pages: the view of one awardable's awards (NewAwards)
// and the toggle its form posts (ToggleAward), over the owner's binding
// of the collab service's award emoji calls (AwardCalls), so that the
// issues and merge requests pages give and take back awards alike.

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
)

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

// noteChoices is how many of the AwardChoices a note's form offers: a page
// of 500 comments carries each note's buttons, so a note gets the first
// few, its target all.
const noteChoices = 4

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

// mineOf is the id of user me's award of name among given; 0 for none.
func mineOf(given []Given, me int64, name string) int64 {
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
		case form.Action != "" && (i >= 2 || !form.Authored) && (form.NoteID == "" || i < noteChoices):
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

// AwardCalls are the collab service's award emoji calls (Awards,
// AddAward, RemoveAward: the award emoji API's) bound by an owner to one
// of its targets; note names one of its notes, nil the target itself.
type AwardCalls struct {
	List func(ctx context.Context, note *string) ([]Given, error)
	// Add gives the caller's award; one given already is no error.
	Add    func(ctx context.Context, note *string, name string) error
	Remove func(ctx context.Context, note *string, awardID string) error
}

// ErrNotOffered: an award form named an emoji the pages do not offer
// (and the visitor had not given); Fail answers it with a 400 page.
var ErrNotOffered = errors.New("web: no such emoji offered")

// ErrBadNote: an award form named no note (note_id is not an id); Fail
// answers it with the 404 page.
var ErrBadNote = errors.New("web: no such note")

// MaxAwardsRead bounds the awards of one awardable a page reads (an
// AwardCalls.List binding asks for at most so many).
const MaxAwardsRead = 1000

// Read is the Awards of the target (noteID 0) or of its note noteID, as
// NewAwards shows them to user me.
func (c AwardCalls) Read(ctx context.Context, noteID, me int64, nameOf func(int64) string, form Awards) (*Awards, error) {
	given, err := c.List(ctx, noteRef(noteID))
	if err != nil {
		return nil, err
	}
	if noteID != 0 {
		form.NoteID = strconv.FormatInt(noteID, 10)
	}
	return NewAwards(given, me, nameOf, form), nil
}

// ToggleAward toggles user me's award of name on the target or on its note
// noteID (a form's note_id, "" for the target): it takes back the award
// me gave, or gives one of the AwardChoices (else ErrNotOffered). It
// returns the anchor of what was awarded ("#awards", "#note_12").
func ToggleAward(ctx context.Context, c AwardCalls, me int64, noteID, name string) (string, error) {
	var id int64
	if noteID != "" {
		n, err := strconv.ParseInt(noteID, 10, 64)
		if err != nil || n <= 0 {
			return "", ErrBadNote
		}
		id = n
	}
	note, anchor := noteRef(id), "#awards"
	if id != 0 {
		anchor = "#" + NoteAnchor(id)
	}
	given, err := c.List(ctx, note)
	if err != nil {
		return "", err
	}
	if mine := mineOf(given, me, name); mine != 0 {
		return anchor, c.Remove(ctx, note, strconv.FormatInt(mine, 10))
	}
	if !Offered(name) {
		return "", ErrNotOffered
	}
	return anchor, c.Add(ctx, note, name)
}

func noteRef(id int64) *string {
	if id == 0 {
		return nil
	}
	s := strconv.FormatInt(id, 10)
	return &s
}

// Awarder reads the awards of a target and of its notes for one visitor's
// page.
type Awarder struct {
	Calls AwardCalls
	Me    int64 // the visitor; 0 when anonymous
	// Form is the toggle form of every awardable (no Action: the visitor
	// may not award).
	Form Awards
	// Authors are the awardables' authors by note id, 0 the target's:
	// nobody votes on what they wrote.
	Authors map[int64]int64
	// NameOf names a giver in an award's title.
	NameOf func(ctx context.Context, userID int64) string
}

// Awards are the awards of the target (noteID 0) or of its note.
func (a Awarder) Awards(ctx context.Context, noteID int64) (*Awards, error) {
	form := a.Form
	form.Authored = a.Me != 0 && a.Authors[noteID] == a.Me
	return a.Calls.Read(ctx, noteID, a.Me, func(id int64) string { return a.NameOf(ctx, id) }, form)
}
