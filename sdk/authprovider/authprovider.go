package authprovider

import (
	"context"
	"errors"
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
// Authenticate, Configure, SearchUsers and SyncUsers; the host tests them
// with errors.Is.
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
	// ErrNotSupported: the provider does not implement this optional method.
	ErrNotSupported = errors.New("authprovider: not supported")
	// ErrInvalidSettings: Configure could not use the settings. The previous
	// settings, if any, stay in force.
	ErrInvalidSettings = errors.New("authprovider: invalid settings")
)

// ErrUnavailable is the failure, not a rejection: the provider (its process,
// its machine or its directory) could not answer. The host-side Client wraps
// every gRPC error with it, and the host then tries the next provider.
var ErrUnavailable = errors.New("authprovider: provider unavailable")

// Identity is a user as the directory knows them.
type Identity struct {
	// ExternalID is the directory's stable id of the user; for LDAP, the DN.
	ExternalID string
	Username   string
	Email      string
	Name       string
	Groups     []string
}

// Description is what a provider says about itself.
type Description struct {
	Name    string
	Version string
	// APIVersions lists the contract versions the provider speaks; it must
	// contain APIVersion.
	APIVersions []string
	// Features lists optional abilities (FeatureSearchUsers, ...).
	Features []string
	// SettingsSchema is the JSON schema of the settings object Configure
	// takes; empty when the provider takes none.
	SettingsSchema string
}

// Has reports whether the description announces the feature.
func (d Description) Has(feature string) bool {
	for _, f := range d.Features {
		if f == feature {
			return true
		}
	}
	return false
}

// Speaks reports whether the description lists the API version.
func (d Description) Speaks(version string) bool {
	for _, v := range d.APIVersions {
		if v == version {
			return true
		}
	}
	return false
}

// Provider is an auth provider. Its methods are called concurrently.
type Provider interface {
	// Describe says who the provider is and what it can do.
	Describe(ctx context.Context) (Description, error)
	// Configure hands the provider its settings, a JSON object. Settings it
	// cannot use are refused with an error (ErrInvalidSettings over the
	// wire) and leave the previous settings in force. The host calls it
	// again after every restart of a plugin process.
	Configure(ctx context.Context, settings []byte) error
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
