package user

import (
	"encoding/json"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
)

// The Service's errors, for callers to test with errors.Is. Refusals of
// the caller are core/auth's (auth.ErrUnauthorized for nobody signed in,
// an *auth.ForbiddenError with its reason: "you cannot delete yourself",
// "the last active administrator cannot be blocked"...).
var (
	// ErrUserNotFound: no such user (or no longer). It is core/auth's
	// sentinel itself, so the password and token paths of core/auth and
	// the lookups here agree.
	ErrUserNotFound = auth.ErrUserNotFound
	// ErrKeyNotFound: no such SSH key, or not the user's; for SSHKeyOwner,
	// no user has the key.
	ErrKeyNotFound = errors.New("identity: SSH key not found")
	// ErrEmailNotFound: no such secondary address, or not the user's.
	ErrEmailNotFound = errors.New("identity: e-mail not found")
	// ErrTokenNotFound: no such token of the user and kind (a
	// *TokenNotFoundError says which kind).
	ErrTokenNotFound = errors.New("identity: token not found")
	// ErrInvalid: fields an account, a key, an address or a token may not
	// have (an InvalidError says which and why).
	ErrInvalid = errors.New("identity: invalid fields")
	// ErrTaken: an update gives a username, an e-mail address or an
	// external identity another account has (a *TakenError says which).
	// A create answers an InvalidError instead, as GitLab does.
	ErrTaken = errors.New("identity: already taken")
	// ErrNoScopes: a token is issued with no scope.
	ErrNoScopes = errors.New("identity: a token needs scopes")
	// ErrInvalidScope: a token is issued with a scope not in TokenScopes.
	ErrInvalidScope = errors.New("identity: not a token scope")
)

// Errors of PasswordResets.ResetPasswordWithToken.
var (
	// ErrResetTokenInvalid: no user has this token (never issued, already
	// used, or replaced by a newer one).
	ErrResetTokenInvalid = errors.New("identity: reset password token is invalid")
	// ErrResetTokenExpired: the token was issued too long ago.
	ErrResetTokenExpired = errors.New("identity: reset password token has expired")
	// ErrResetUserBlocked: the token's user is blocked (by an
	// administrator or by the directory); a reset would not let them in.
	ErrResetUserBlocked = errors.New("identity: the account is blocked")
	// ErrResetDirectoryUser: the token's user signs in through a directory
	// (LDAP), which owns their password.
	ErrResetDirectoryUser = errors.New("identity: the account's password is managed by its directory")
)

// InvalidError is ErrInvalid with every problem at once: field ->
// what is wrong with it, in GitLab's words ("email": ["is invalid"]).
type InvalidError map[string][]string

func (e InvalidError) Error() string {
	b, _ := json.Marshal(map[string][]string(e))
	return "validation failed: " + string(b)
}

// Is makes an InvalidError an ErrInvalid.
func (e InvalidError) Is(target error) bool { return target == ErrInvalid }

// Fields is the field -> texts map (what core/api renders as GitLab's
// {"message": {...}}).
func (e InvalidError) Fields() map[string][]string { return e }

// Add appends a text to a field.
func (e InvalidError) Add(field, text string) { e[field] = append(e[field], text) }

// TokenNotFoundError is ErrTokenNotFound for a kind of token.
type TokenNotFoundError struct{ Kind TokenKind }

func (e *TokenNotFoundError) Error() string {
	return "identity: " + string(e.Kind) + " token not found"
}
func (e *TokenNotFoundError) Unwrap() error { return ErrTokenNotFound }

// TakenError is ErrTaken for a field ("username", "email", "identity").
type TakenError struct{ Field string }

func (e *TakenError) Error() string { return "identity: " + e.Field + " has already been taken" }
func (e *TakenError) Unwrap() error { return ErrTaken }
