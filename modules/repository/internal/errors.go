package internal

// The module's domain errors. Services return them (wrapped with %w where
// context helps) and never an HTTP answer; mapErrors tells the API, once,
// which GitLab body each one gets. The exported ones are re-exported by the
// root package for other modules, which decide with errors.Is.
// ErrRefMoved (storage.go) is not mapped: what a lost compare-and-set means
// to the client depends on the operation, so each handler words it.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fennec-forge/fennec/modules/repository/gitrepo"
)

var (
	// The contract's sentinels (gitrepo), under the names internal/ and
	// its tests use.
	ErrBranchNotFound = gitrepo.ErrBranchNotFound
	ErrTagNotFound    = gitrepo.ErrTagNotFound
	ErrCommitNotFound = gitrepo.ErrCommitNotFound

	// errCannotPick: a cherry-pick does not apply cleanly (a conflict,
	// nothing left to apply, or a merge commit).
	errCannotPick = errors.New("repository: the commit cannot be cherry-picked")

	// errTagRefused: the tags API refuses a new tag (a bad name or target,
	// a taken name, a name that would hide a protected branch); a
	// *tagRefusal carries GitLab's reason.
	errTagRefused = errors.New("repository: tag refused")
	// errReleaseTagRefused: the tag a release was to create is refused
	// (a *releaseTagRefusal carries the reason).
	errReleaseTagRefused = errors.New("repository: the release's tag refused")
	// errReleaseMissing and errTagMissing: an update or delete of a
	// release that does not exist, or for a tag that does not.
	errReleaseMissing = errors.New("repository: release does not exist")
	errTagMissing     = errors.New("repository: tag does not exist")
	// errCommitDiscussionNotFound: no such thread on the commit.
	errCommitDiscussionNotFound = errors.New("repository: commit discussion not found")
	// errCommitNoteNotFound: no such note in the commit's thread.
	errCommitNoteNotFound = errors.New("repository: commit note not found")
	// errCommitBadPosition: a line comment's position names no line of
	// the commit.
	errCommitBadPosition = errors.New("repository: the position names no line of the commit")
)

// errInvalid: the request is refused as it is (GitLab's 400); an
// *invalidError carries GitLab's words for it.
var errInvalid = errors.New("repository: invalid request")

// invalidError is a refused request, with GitLab's message.
type invalidError struct{ msg string }

func (e *invalidError) Error() string { return "repository: " + e.msg }
func (e *invalidError) Unwrap() error { return errInvalid }

// invalid refuses a request with GitLab's message msg.
func invalid(msg string) error { return &invalidError{msg: msg} }

// errRefused: the caller may not do this (GitLab's 403); a *refusedError
// carries the reason.
var errRefused = errors.New("repository: refused")

// refusedError is a refusal with GitLab's reason.
type refusedError struct{ reason string }

func (e *refusedError) Error() string { return "repository: refused: " + e.reason }
func (e *refusedError) Unwrap() error { return errRefused }

// refused refuses the caller with GitLab's reason.
func refused(reason string) error { return &refusedError{reason: reason} }

// errNotAllowed: the operation is not allowed on this object (GitLab's
// 405: the default branch, a protected branch); errRaced: the object
// moved meanwhile (GitLab's 409). Their typed errors carry the message.
var (
	errNotAllowed = errors.New("repository: not allowed")
	errRaced      = errors.New("repository: the object moved")
)

type notAllowedError struct{ msg string }

func (e *notAllowedError) Error() string { return "repository: not allowed: " + e.msg }
func (e *notAllowedError) Unwrap() error { return errNotAllowed }

type racedError struct{ msg string }

func (e *racedError) Error() string { return "repository: " + e.msg }
func (e *racedError) Unwrap() error { return errRaced }

func notAllowed(msg string) error { return &notAllowedError{msg: msg} }
func raced(msg string) error      { return &racedError{msg: msg} }

// tagRefusal is why a new tag is refused, in GitLab's words.
type tagRefusal struct{ reason string }

func (e *tagRefusal) Error() string { return "repository: tag refused: " + e.reason }
func (e *tagRefusal) Unwrap() error { return errTagRefused }

// releaseTagRefusal is a tagRefusal met while creating a release.
type releaseTagRefusal struct{ reason string }

func (e *releaseTagRefusal) Error() string {
	return "repository: the release's tag refused: " + e.reason
}
func (e *releaseTagRefusal) Unwrap() error { return errReleaseTagRefused }

// The releases' refusals.
var (
	// errReleaseExists: the tag has a release already.
	errReleaseExists = errors.New("repository: release already exists")
	// errReleaseNotFound: the tag has no release notes to replace.
	errReleaseNotFound = errors.New("repository: release not found")
	// errReleaseLinkNotFound: the releases API's links find no release of
	// the tag, or no such link of it (GitLab's record-not-found).
	errReleaseLinkNotFound = errors.New("repository: release or link not found")
	// errRefNotSpecified: a release of a tag that does not exist names no
	// ref to make it from.
	errRefNotSpecified = errors.New("repository: ref is not specified")
	// errLinkNothingGiven: a link's update changes neither name nor url.
	errLinkNothingGiven = errors.New("repository: neither name nor url given")
	// errLinksInvalid: links the model refuses; a *linksInvalidError
	// carries the record's messages.
	errLinksInvalid = errors.New("repository: invalid links")
	// errFieldsInvalid: a record that fails validation; a
	// *fieldsInvalidError carries field -> texts.
	errFieldsInvalid = errors.New("repository: invalid fields")
)

type linksInvalidError struct{ msgs []string }

func (e *linksInvalidError) Error() string {
	return "repository: invalid links: " + strings.Join(e.msgs, ", ")
}
func (e *linksInvalidError) Unwrap() error { return errLinksInvalid }

type fieldsInvalidError struct{ fields map[string][]string }

func (e *fieldsInvalidError) Error() string {
	return fmt.Sprintf("repository: invalid fields: %v", e.fields)
}
func (e *fieldsInvalidError) Unwrap() error { return errFieldsInvalid }

// fieldsInvalid refuses a record whose field fails with text.
func fieldsInvalid(field, text string) error {
	return &fieldsInvalidError{fields: map[string][]string{field: {text}}}
}

// errMissing: a required parameter is missing or blank; a *missingError
// names it. errNotValidValue: a parameter has a value it cannot have; a
// *notValidValueError names it.
var (
	errMissing       = errors.New("repository: a parameter is missing")
	errNotValidValue = errors.New("repository: a parameter has no valid value")
)

type missingError struct{ param string }

func (e *missingError) Error() string { return "repository: " + e.param + " is missing" }
func (e *missingError) Unwrap() error { return errMissing }

type notValidValueError struct{ param string }

func (e *notValidValueError) Error() string {
	return "repository: " + e.param + " does not have a valid value"
}
func (e *notValidValueError) Unwrap() error { return errNotValidValue }

func missing(param string) error       { return &missingError{param: param} }
func notValidValue(param string) error { return &notValidValueError{param: param} }

// errProtectionNameBlank: a new protection names no branch.
// errProtectionExists: the branch or wildcard is protected already; a
// *protectionExistsError names it.
var (
	errProtectionNameBlank = errors.New("repository: the protected branch's name is blank")
	errProtectionExists    = errors.New("repository: the branch is protected already")
)

type protectionExistsError struct{ name string }

func (e *protectionExistsError) Error() string {
	return "repository: protected branch " + e.name + " already exists"
}
func (e *protectionExistsError) Unwrap() error { return errProtectionExists }
