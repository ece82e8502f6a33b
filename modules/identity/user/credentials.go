package user

import (
	"time"

	"github.com/fennec-forge/fennec/core/auth"
)

// Key is an SSH public key of a user. A key belongs to one user only.
type Key struct {
	ID     int64
	UserID int64
	Title  string
	// Key is the authorized_keys line without options: type, base64,
	// comment.
	Key         string
	Fingerprint string // SHA256:...
	CreatedAt   time.Time
}

// SSHKeyOwner is the owner of an SSH key, as the key's check found them.
type SSHKeyOwner struct {
	KeyID int64
	// User is the owner's summary; Blocked is set for blocked users (by an
	// administrator or by their directory).
	User *auth.User
}

// Email is a secondary e-mail address of a user (the primary one is the
// Account's).
type Email struct {
	ID        int64
	UserID    int64
	Email     string
	CreatedAt time.Time
}

// TokenKind is the kind of a token the API manages. A user's private
// token (POST /session) is of neither kind: it is read and reset apart
// (Service.Login, Service.SudoPrivateToken, Service.ResetPrivateToken).
type TokenKind string

const (
	PersonalToken      TokenKind = "personal"      // a personal access token
	ImpersonationToken TokenKind = "impersonation" // made by an administrator for a user
)

// TokenState narrows a list of tokens: "" is every token.
type TokenState string

const (
	AllTokens      TokenState = "all"
	ActiveTokens   TokenState = "active"
	InactiveTokens TokenState = "inactive" // revoked or expired
)

// Token is a personal access or impersonation token. Its secret is stored
// as a hash: Secret is set only in what IssueToken returns, and never
// again.
type Token struct {
	ID        int64
	UserID    int64
	Kind      TokenKind
	Name      string
	Scopes    []string
	CreatedAt time.Time
	ExpiresAt *time.Time // the start of the day it stops working (UTC)
	Revoked   bool
	// Active: neither revoked nor expired, when it was read.
	Active bool
	Secret string
}

// TokenScopes are the scopes a token may be issued with. sudo (GitLab
// 10.2) is what lets an administrator's personal access or impersonation
// token act as another user.
func TokenScopes() []string { return []string{auth.ScopeAPI, auth.ScopeReadUser, auth.ScopeSudo} }

// NewToken is what issuing a token gives.
type NewToken struct {
	Kind   TokenKind
	Name   string
	Scopes []string // at least one of TokenScopes
	// ExpiresAt is the day the token stops working (its date counts, at
	// midnight UTC); nil never.
	ExpiresAt *time.Time
}
