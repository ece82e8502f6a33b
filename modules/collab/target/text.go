package target

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The rules of text that the targets' modules share: what a title and a
// description may hold, and how a label change reads in a system note.

// The limits of GitLab's validations of a target's title and description.
const (
	MaxTitle       = 255
	MaxDescription = 1_000_000
)

// ErrInvalid: a field breaks a rule of text (*InvalidError says which and
// why); answered 400 {"message":{"title":["is invalid"]}}.
var ErrInvalid = errors.New("collab: invalid field")

// InvalidError is ErrInvalid with the field ("title", "description") and
// what is wrong with it, in GitLab's words.
type InvalidError struct {
	Field, Text string
}

func (e *InvalidError) Error() string { return e.Field + " " + e.Text }

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Fields are the failed field and its text, as a failed validation lists
// them (the API's error table answers any error that has Fields with a 400
// listing them).
func (e *InvalidError) Fields() map[string][]string { return map[string][]string{e.Field: {e.Text}} }

// InvalidText says whether v is no text: invalid UTF-8, or the
// replacement character the API's parameter merging turns invalid UTF-8
// into (nobody types U+FFFD on purpose).
func InvalidText(v string) bool {
	return !utf8.ValidString(v) || strings.ContainsRune(v, utf8.RuneError)
}

// CheckTitle is the model's validation of a title (already trimmed): not
// blank, at most MaxTitle characters, and one line of text: a control
// character (C0, DEL, C1) makes it invalid, as a NUL or an escape sequence
// in it would reach every page, feed, mail and terminal that shows it.
func CheckTitle(t string) error {
	switch {
	case InvalidText(t) || strings.IndexFunc(t, unicode.IsControl) >= 0:
		return &InvalidError{"title", "is invalid"}
	case t == "":
		return &InvalidError{"title", "can't be blank"}
	case utf8.RuneCountInString(t) > MaxTitle:
		return &InvalidError{"title", "is too long (maximum is " + strconv.Itoa(MaxTitle) + " characters)"}
	}
	return nil
}

// CheckDescription is the model's validation of a description: text, at
// most MaxDescription bytes.
func CheckDescription(d string) error {
	switch {
	case InvalidText(d):
		return &InvalidError{"description", "is invalid"}
	case len(d) > MaxDescription:
		return &InvalidError{"description", "is too long (maximum is " + strconv.Itoa(MaxDescription) + " characters)"}
	}
	return nil
}

// LabelNote is GitLab's system note of a label change, the labels named
// by id: "added ~1 label", "added ~1 ~2 labels and removed ~3 label".
func LabelNote(before, after []int64) string {
	var added, removed []string
	for _, id := range after {
		if !slices.Contains(before, id) {
			added = append(added, "~"+strconv.FormatInt(id, 10))
		}
	}
	for _, id := range before {
		if !slices.Contains(after, id) {
			removed = append(removed, "~"+strconv.FormatInt(id, 10))
		}
	}
	part := func(verb string, refs []string) string {
		noun := " label"
		if len(refs) > 1 {
			noun = " labels"
		}
		return verb + " " + strings.Join(refs, " ") + noun
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, part("added", added))
	}
	if len(removed) > 0 {
		parts = append(parts, part("removed", removed))
	}
	return strings.Join(parts, " and ")
}

// CheckText is the rules of what a create or an update of a target gives
// of its title and description (nil: not given): the title trimmed and
// checked (CheckTitle), then the description (CheckDescription). It
// returns them ("" for one not given).
func CheckText(title, description *string) (t, d string, err error) {
	if title != nil {
		t = strings.TrimSpace(*title)
		if err := CheckTitle(t); err != nil {
			return "", "", err
		}
	}
	if description != nil {
		if err := CheckDescription(*description); err != nil {
			return "", "", err
		}
		d = *description
	}
	return t, d, nil
}
