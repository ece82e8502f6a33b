package auth

import (
	"errors"
	"fmt"
	"strconv"
	"time"
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

// ErrProviderUnavailable is returned by a PasswordAuthenticator when no
// one accepted the login and an external provider that might have could
// not be asked (its plugin is restarting): the caller should try again
// soon, not conclude that the password is wrong.
var ErrProviderUnavailable = errors.New("auth: a sign-in provider is unavailable")

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

// ThrottledError refuses a password attempt without checking it: too many
// attempts failed recently for that login or from that address.
// RetryAfter says when the next attempt may be checked.
type ThrottledError struct{ RetryAfter time.Duration }

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("auth: too many failed sign-in attempts; retry after %s", e.RetryAfter)
}

// Is makes a throttled attempt an ErrUnauthorized too, so a caller that
// knows nothing of throttling still refuses it (401) instead of failing.
func (e *ThrottledError) Is(target error) bool { return target == ErrUnauthorized }

// RetryAfterSeconds is RetryAfter for a Retry-After header: whole seconds,
// rounded up, at least 1.
func (e *ThrottledError) RetryAfterSeconds() string {
	s := int64((e.RetryAfter + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10)
}
