package project

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// The module's domain errors, for callers to test with errors.Is. The
// module's HTTP adapter maps each to its GitLab answer once, so a handler of
// any module may return them (wrapped or not) as they come.
var (
	// ErrNotFound: no such project, or one the caller may not see (the two
	// are never told apart); answered 404 Project Not Found.
	ErrNotFound = errors.New("projects: project not found")
	// ErrForbidden: the caller sees the project (or group) but may not do
	// what was asked; answered 403 Forbidden.
	ErrForbidden = errors.New("projects: forbidden")
	// ErrGroupNotFound: no such group, or one the caller may not see;
	// answered 404 Group Not Found.
	ErrGroupNotFound = errors.New("projects: group not found")
	// ErrHookNotFound: the project has no such hook (or it is gone);
	// answered GitLab's 404 Not found.
	ErrHookNotFound = errors.New("projects: hook not found")
	// ErrNamespaceNotFound: no such namespace, or one the caller may not
	// see or create projects in.
	ErrNamespaceNotFound = errors.New("projects: namespace not found")
	// ErrMemberNotFound: the user is no (unexpired) member of the project
	// or group.
	ErrMemberNotFound = errors.New("projects: member not found")
	// ErrLastOwner: the change would leave a group without an Owner.
	ErrLastOwner = errors.New("projects: a group must keep at least one Owner")
	// ErrUserNotFound: the user a command names does not exist.
	ErrUserNotFound = errors.New("projects: user not found")
	// ErrExternalUser: external users may not create top-level groups.
	ErrExternalUser = errors.New("projects: external users cannot create groups")
	// ErrMemberExists: the user is a member already.
	ErrMemberExists = errors.New("projects: member already exists")
	// ErrAlreadyShared: the project is shared with the group already.
	ErrAlreadyShared = errors.New("projects: already shared with this group")
	// ErrShareOwnGroup: the project belongs to the group, or to a group
	// below it.
	ErrShareOwnGroup = errors.New("projects: a project cannot be shared with its own group or its ancestors")
	// ErrShareNotFound: the project is not shared with the group.
	ErrShareNotFound = errors.New("projects: not shared with this group")
	// ErrInvalidHookURL: a hook URL that is malformed, not http(s), or
	// (unless local requests are allowed) a local address.
	ErrInvalidHookURL = errors.New("projects: invalid hook url")
	// ErrUnchanged: a star or unstar that changes nothing.
	ErrUnchanged = errors.New("projects: unchanged")

	// ErrMissing: a command lacks required parameters (a *ParamsError names
	// them).
	ErrMissing = errors.New("projects: required parameters missing")
	// ErrNothingGiven: an update or create gives none of the parameters it
	// needs at least one of (a *ParamsError names them).
	ErrNothingGiven = errors.New("projects: none of the parameters given")
	// ErrInvalidValue: a parameter outside its values (a visibility, an
	// access level; a *ParamsError names it).
	ErrInvalidValue = errors.New("projects: parameter has no valid value")
	// ErrInvalidParam: a parameter that does not parse (a date; a
	// *ParamsError names it).
	ErrInvalidParam = errors.New("projects: parameter is invalid")
	// ErrInvalid: fields a record may not have (FieldErrors says which and
	// why).
	ErrInvalid = errors.New("projects: invalid fields")
	// ErrTaken: a fork's name or path is taken in the target namespace
	// (a *TakenError says which).
	ErrTaken = errors.New("projects: name or path already taken")
	// ErrTransferRefused: a transfer the rules refuse (a *TransferError
	// says why, in GitLab's words).
	ErrTransferRefused = errors.New("projects: transfer refused")
)

// ParamsError is ErrMissing, ErrNothingGiven, ErrInvalidValue or
// ErrInvalidParam with the parameters it is about, named as GitLab's API
// names them.
type ParamsError struct {
	Err    error
	Params []string
}

func (e *ParamsError) Error() string { return e.Err.Error() + ": " + strings.Join(e.Params, ", ") }
func (e *ParamsError) Unwrap() error { return e.Err }

// Params is err with the parameters it is about.
func Params(err error, params ...string) error { return &ParamsError{Err: err, Params: params} }

// FieldErrors is ErrInvalid with every problem: field -> what is wrong with
// it, in GitLab's words ("has already been taken").
type FieldErrors map[string][]string

func (f FieldErrors) Error() string {
	return ErrInvalid.Error() + ": " + strings.Join(slices.Sorted(maps.Keys(f)), ", ")
}

// Is makes FieldErrors an ErrInvalid.
func (f FieldErrors) Is(target error) bool { return target == ErrInvalid }

// Add appends a problem with field.
func (f FieldErrors) Add(field, text string) { f[field] = append(f[field], text) }

// TakenError is ErrTaken with the fields taken ("name", "path") and GitLab's
// text for each.
type TakenError struct {
	Fields map[string][]string
}

func (e *TakenError) Error() string {
	return ErrTaken.Error() + ": " + strings.Join(slices.Sorted(maps.Keys(e.Fields)), ", ")
}
func (e *TakenError) Is(target error) bool { return target == ErrTaken }

// TransferError is ErrTransferRefused with the reason, in GitLab's words
// ("Please select a new namespace for your project.").
type TransferError struct {
	Reason string
}

func (e *TransferError) Error() string        { return ErrTransferRefused.Error() + ": " + e.Reason }
func (e *TransferError) Is(target error) bool { return target == ErrTransferRefused }
