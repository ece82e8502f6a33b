package target

import (
	"errors"
	"strings"
)

// Where names a target as a request does: its kind's type ("Issue"), its
// project (an id or a full path, as the API's :id) and its reference as
// written in the path (an iid; a snippet's id), read by the service so
// that a malformed one is told after a missing project, as GitLab does.
type Where struct {
	Type    string
	Project string
	Ref     string
}

// The answers to malformed input of the notes, threads and award emoji,
// each a *ParamError naming the parameter (or a *BadRequestError).
var (
	// ErrMissing: a required parameter is absent or blank; 400 "<param>
	// is missing".
	ErrMissing = errors.New("collab: missing parameter")
	// ErrNothingGiven: a change gives none of the parameters it may (a
	// *ParamsError names them); 400 "<a>, <b> are missing, at least one
	// parameter must be provided".
	ErrNothingGiven = errors.New("collab: no parameter given")
	// ErrBadParam: a parameter's value is malformed; 400 "<param> is
	// invalid".
	ErrBadParam = errors.New("collab: invalid parameter")
	// ErrBadRequest: GitLab's bad_request! with a reason; 400 "400 Bad
	// request - <reason>".
	ErrBadRequest = errors.New("collab: bad request")
)

// ParamError is ErrMissing or ErrBadParam with the parameter's name.
type ParamError struct {
	Err   error
	Param string
}

func (e *ParamError) Error() string { return e.Err.Error() + ": " + e.Param }
func (e *ParamError) Unwrap() error { return e.Err }

// Missing is a *ParamError of ErrMissing.
func Missing(param string) error { return &ParamError{ErrMissing, param} }

// ParamsError is ErrMissing or ErrNothingGiven with several parameters,
// named as GitLab's API names them (the owners' creates and updates).
type ParamsError struct {
	Err    error
	Params []string
}

func (e *ParamsError) Error() string { return e.Err.Error() + ": " + strings.Join(e.Params, ", ") }
func (e *ParamsError) Unwrap() error { return e.Err }

// MissingParams is a *ParamsError of ErrMissing.
func MissingParams(params ...string) error { return &ParamsError{ErrMissing, params} }

// NothingGiven is a *ParamsError of ErrNothingGiven.
func NothingGiven(params ...string) error { return &ParamsError{ErrNothingGiven, params} }

// ParamsOf are the parameters a *ParamError or a *ParamsError in err's
// chain names (nil for none).
func ParamsOf(err error) []string {
	var one *ParamError
	if errors.As(err, &one) {
		return []string{one.Param}
	}
	var many *ParamsError
	if errors.As(err, &many) {
		return many.Params
	}
	return nil
}

// BadParam is a *ParamError of ErrBadParam.
func BadParam(param string) error { return &ParamError{ErrBadParam, param} }

// BadRequestError is ErrBadRequest with GitLab's reason ("Discussion can
// not be replied to.").
type BadRequestError struct{ Reason string }

func (e *BadRequestError) Error() string { return "bad request: " + e.Reason }
func (e *BadRequestError) Unwrap() error { return ErrBadRequest }

// BadRequest is a *BadRequestError.
func BadRequest(reason string) error { return &BadRequestError{reason} }
