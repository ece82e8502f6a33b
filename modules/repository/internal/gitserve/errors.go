package gitserve

import (
	"errors"
	"fmt"
)

// ErrBadRequest is wrapped by every error caused by the client's request
// (a malformed body, a want of an object that was not advertised, an
// invalid shallow request). UploadPack has already told the client with
// an "ERR" pkt-line (or on side-band 3) when it returns one, so the HTTP
// layer only logs it and does not change the response; errors that do not
// wrap it are the server's.
var ErrBadRequest = errors.New("gitserve: bad request")

// RequestError is a client request error; it wraps ErrBadRequest.
type RequestError struct {
	Msg string // the text sent to the client, without the "ERR " prefix
}

func (e *RequestError) Error() string { return "gitserve: " + e.Msg }

// Unwrap makes errors.Is(err, ErrBadRequest) true.
func (e *RequestError) Unwrap() error { return ErrBadRequest }

func badRequest(format string, args ...any) error {
	return &RequestError{Msg: fmt.Sprintf(format, args...)}
}
