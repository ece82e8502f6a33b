package internal

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// Limits of a snippet's fields. Titles and file names are GitLab's 255
// characters. Content is bounded so that a snippet stays a snippet (and a
// raw answer is one read): 1 MiB, well inside the API's body limit even
// JSON-escaped, so the client gets this module's 400 naming the limit
// rather than the generic 413.
const (
	maxTitle       = 255
	maxFileName    = 255
	maxContent     = 1 << 20
	maxDescription = 1 << 20
)

// check validates the given fields. Errors name the content "content", as
// GitLab's model does, whichever parameter carried it. Every problem is
// reported at once, as a record's validation is.
func check(f snippet.Fields) error {
	if f.Visibility != nil && !f.Visibility.Valid() {
		return snippet.ErrInvalidVisibility
	}
	errs := &snippet.InvalidError{}
	if f.Title != nil {
		checkTitle(errs, *f.Title)
	}
	if f.FileName != nil {
		checkFileName(errs, *f.FileName)
	}
	if f.Content != nil {
		checkText(errs, "content", *f.Content, maxContent, true)
	}
	if f.Description != nil {
		checkText(errs, "description", *f.Description, maxDescription, false)
	}
	if len(errs.Fields) > 0 {
		return errs
	}
	return nil
}

// param is a parameter of GitLab's API and whether it was given.
type param struct {
	name  string
	given bool
}

// missing is snippet.ErrMissing naming the params not given, nil when
// every one was.
func missing(params ...param) error {
	var names []string
	for _, p := range params {
		if !p.given {
			names = append(names, p.name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &snippet.ParamsError{Err: snippet.ErrMissing, Params: names}
}

// nothingGiven is snippet.ErrNothingGiven, naming params, when an update
// gives none of f's fields.
func nothingGiven(f snippet.Fields, params ...string) error {
	if f.Title == nil && f.FileName == nil && f.Content == nil && f.Visibility == nil && f.Description == nil {
		return &snippet.ParamsError{Err: snippet.ErrNothingGiven, Params: params}
	}
	return nil
}

// badText is what the parameter decoding leaves of invalid UTF-8: the API
// replaces each invalid byte with U+FFFD before a handler sees it, so the
// replacement character is the only trace of it. Text holding one is
// refused rather than stored altered; the price is that a snippet cannot
// hold a literal U+FFFD, which no real text needs.
const badText = string(utf8.RuneError)

func checkTitle(errs *snippet.InvalidError, title string) {
	switch {
	case strings.TrimSpace(title) == "":
		errs.Add("title", "can't be blank")
	case utf8.RuneCountInString(title) > maxTitle:
		errs.Add("title", fmt.Sprintf("is too long (maximum is %d characters)", maxTitle))
	case !utf8.ValidString(title) || strings.Contains(title, badText):
		errs.Add("title", "is not valid UTF-8")
	case strings.IndexFunc(title, hostileRune) >= 0:
		errs.Add("title", "must not contain control characters")
	}
}

// checkFileName allows one file name, not a path: no separator ('/' or
// '\'), not "." or "..", no control or invisible formatting characters
// (NUL, newlines, bidirectional overrides), no leading or trailing blanks.
// The name is shown in Content-Disposition and in the web UI's paths, so
// anything that could climb a directory or fake another name is refused,
// not cleaned.
func checkFileName(errs *snippet.InvalidError, name string) {
	switch {
	case strings.TrimSpace(name) == "":
		errs.Add("file_name", "can't be blank")
	case utf8.RuneCountInString(name) > maxFileName:
		errs.Add("file_name", fmt.Sprintf("is too long (maximum is %d characters)", maxFileName))
	case !utf8.ValidString(name) || strings.Contains(name, badText):
		errs.Add("file_name", "is not valid UTF-8")
	case strings.ContainsAny(name, `/\`), name == ".", name == "..",
		strings.IndexFunc(name, hostileRune) >= 0, strings.TrimSpace(name) != name:
		errs.Add("file_name", `must be a file name: no '/' or '\', not '.' or '..', no control characters, no leading or trailing spaces`)
	}
}

// checkText checks a content or a description: valid UTF-8 text (see
// badText) without NUL bytes, within max bytes; required text may not be
// blank.
func checkText(errs *snippet.InvalidError, field, text string, max int, required bool) {
	switch {
	case required && strings.TrimSpace(text) == "":
		errs.Add(field, "can't be blank")
	case len(text) > max:
		errs.Add(field, fmt.Sprintf("is too long (%d bytes; the maximum is %d bytes)", len(text), max))
	case !utf8.ValidString(text) || strings.Contains(text, badText) || strings.ContainsRune(text, 0):
		errs.Add(field, "must be valid UTF-8 text without NUL bytes")
	}
}

// hostileRune is a character no title or file name needs: control
// characters (C0, DEL, C1) and invisible format characters (bidirectional
// overrides, zero-width joiners...), which can make a name look like
// another.
func hostileRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}
