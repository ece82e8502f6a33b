package authprovider

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/sdk/plugin"
)

// APIVersion is the version of this contract; a provider lists the versions
// it speaks in Description.APIVersions and the host refuses one that does
// not speak it.
const APIVersion = "v1"

// Features a provider may announce in Description.Features.
const (
	// FeatureSearchUsers: the provider implements UserSearcher.
	FeatureSearchUsers = "search_users"
	// FeatureSyncUsers: the provider implements UserSyncer.
	FeatureSyncUsers = "sync_users"
)

// Rejections: outcomes, not failures. Return them (wrapped or not) from
// Authenticate, SearchUsers and SyncUsers; the host tests them with
// errors.Is.
var (
	// ErrInvalidCredentials: the login and password do not match an account.
	// Also the answer for an empty password (never an anonymous success), an
	// empty login, and a login that is ambiguous in the directory.
	ErrInvalidCredentials = errors.New("authprovider: invalid credentials")
	// ErrUnknownUser: no account has this login. A provider that cannot tell
	// this apart from a wrong password returns ErrInvalidCredentials instead.
	ErrUnknownUser = errors.New("authprovider: unknown user")
	// ErrDisabled: the account exists but is disabled or locked in the
	// directory.
	ErrDisabled = errors.New("authprovider: account disabled")
	// ErrNotSupported: the provider does not implement this optional method
	// (the base plugin error, shared by every kind).
	ErrNotSupported = plugin.ErrNotSupported
	// ErrInvalidSettings: Configure could not use the settings. The previous
	// settings, if any, stay in force. It is the base plugin error.
	ErrInvalidSettings = plugin.ErrInvalidSettings
)

// ErrUnavailable is the failure, not a rejection: the provider (its process,
// its machine or its directory) could not answer. The host-side Client wraps
// every gRPC error with it, and the host then tries the next provider. It is
// the base plugin error, shared by every kind.
var ErrUnavailable = plugin.ErrUnavailable

// Identity is a user as the directory knows them.
type Identity struct {
	// ExternalID is the directory's stable id of the user; for LDAP, the DN.
	ExternalID string
	Username   string
	Email      string
	Name       string
	Groups     []string
}

// Description is what a provider says about itself (the base plugin
// description; APIVersions must contain APIVersion).
type Description = plugin.Description

// Provider is an auth provider. Its methods are called concurrently.
type Provider interface {
	// Describe and Configure, as every plugin: who the provider is, what
	// it can do (Features), and its settings, refused with an error that
	// leaves the previous ones in force.
	plugin.Base
	// Authenticate checks login and password. It returns the identity, or a
	// rejection (ErrInvalidCredentials, ErrUnknownUser, ErrDisabled), or any
	// other error when the directory could not be asked.
	Authenticate(ctx context.Context, login, password string) (Identity, error)
}

// UserSearcher is optional (FeatureSearchUsers): find users whose username
// contains query, at most limit of them.
type UserSearcher interface {
	SearchUsers(ctx context.Context, query string, limit int) ([]Identity, error)
}

// UserSyncer is optional (FeatureSyncUsers): of the given external ids,
// return the identities of those still present in the directory, each with
// ExternalID exactly as asked (the host matches on it). An id that names no
// one (or nothing valid) is simply absent, and the host blocks that user; an
// error means the directory could not be asked, and the host blocks no one.
type UserSyncer interface {
	SyncUsers(ctx context.Context, externalIDs []string) (present []Identity, err error)
}
