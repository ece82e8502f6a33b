package auth

import (
	"errors"
	"fmt"
)

// ErrUnauthorized: credentials were given but are invalid, expired, revoked
// or belong to a blocked user; or a signed-in user is required.
var ErrUnauthorized = errors.New("auth: unauthorized")

// ErrUnknownToken is returned by a TokenResolver for a token it does not own,
// so the next resolver can try.
var ErrUnknownToken = errors.New("auth: unknown token")

// ErrInvalidPassword is returned by a PasswordAuthenticator for a wrong login
// or password (never saying which).
var ErrInvalidPassword = errors.New("auth: invalid login or password")

// ErrUserNotFound is returned by UserLookup.
var ErrUserNotFound = errors.New("auth: user not found")

// ForbiddenError refuses a signed-in caller; Reason is shown after
// "403 Forbidden - " when set.
type ForbiddenError struct{ Reason string }

func (e *ForbiddenError) Error() string {
	if e.Reason == "" {
		return "auth: forbidden"
	}
	return "auth: forbidden: " + e.Reason
}

// Forbidden builds a ForbiddenError.
func Forbidden(reason string) error { return &ForbiddenError{Reason: reason} }

// ErrInsufficientScope is the error for a token outside its scopes.
var ErrInsufficientScope = Forbidden("insufficient scope")

// SudoNotFoundError: the sudo target does not exist.
type SudoNotFoundError struct{ Value string }

func (e *SudoNotFoundError) Error() string {
	return fmt.Sprintf("auth: no user id or username for: %s", e.Value)
}
