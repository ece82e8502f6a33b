package identity

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/event"
	"github.com/fennec-forge/fennec/modules/identity/internal"
	"github.com/fennec-forge/fennec/modules/identity/settings"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// The names other modules use, defined in the public contract packages
// user, event and settings and re-exported here.

// UserDeleted is published (through the outbox) when an administrator
// deletes a user. The user's keys, e-mails and tokens are gone with it;
// modules owning other data of the user decide what happens to it.
type UserDeleted = event.UserDeleted

// PasswordChanged is published in the transaction that changes a user's
// password on their profile or through a reset link.
type PasswordChanged = event.PasswordChanged

// UserCreated is published in the transaction that creates a user.
type UserCreated = event.UserCreated

// UserBlocked is published in the transaction that blocks a user (an
// administrator's block, or directory synchronisation's ldap_blocked).
type UserBlocked = event.UserBlocked

// PasswordResetRequested is published when someone asks for a reset link
// for an account (RequestPasswordReset).
type PasswordResetRequested = event.PasswordResetRequested

// PasswordResets issues and redeems password reset tokens (user.PasswordResets).
type PasswordResets = user.PasswordResets

// Errors of PasswordResets.ResetPasswordWithToken.
var (
	ErrResetTokenInvalid  = user.ErrResetTokenInvalid
	ErrResetTokenExpired  = user.ErrResetTokenExpired
	ErrResetUserBlocked   = user.ErrResetUserBlocked
	ErrResetDirectoryUser = user.ErrResetDirectoryUser
)

// MinPasswordLength is the shortest password identity accepts (for forms
// that say so up front).
const MinPasswordLength = user.MinPasswordLength

// Clock tells the module the time (settings.Clock). The module uses the
// wall clock unless the app provides one (tests move past a reset token's
// lifetime with it):
//
//	fennec.Supply[identity.Clock](myClock)
type Clock = settings.Clock

// Activity records that a user was active today (user.Activity); the
// repository module calls it on git access over HTTP or SSH.
type Activity = user.Activity

// DirectorySync checks the users of external auth providers against their
// directory (user.DirectorySync).
type DirectorySync = user.DirectorySync

// ErrUserNotFound is what Users answers for a user that does not exist (or
// no longer does), for callers to test with errors.Is. It is core/auth's
// sentinel itself, so the password and token paths of core/auth and the
// lookups here agree; the API answers it 404 User Not Found.
var ErrUserNotFound = user.ErrUserNotFound

// UserInfo is what other modules may know of a user.
type UserInfo = user.Info

// BasicUser is the public view of a user that every response embedding a
// user shows ({id, name, username, state, avatar_url, web_url}); build it
// with NewBasicUser, never by hand.
type BasicUser = user.BasicUser

// NewBasicUser is u's public view; baseURL is api.ExternalURLFrom(ctx).
func NewBasicUser(baseURL string, u UserInfo) BasicUser { return user.NewBasicUser(baseURL, u) }

// GhostUser stands for a deleted user where their past work is still shown.
func GhostUser(baseURL string, id int64) BasicUser { return user.GhostUser(baseURL, id) }

// Users looks users up for other modules (user.Lookup).
type Users = user.Lookup

// Emails lists a user's addresses and finds a user by address, for the
// notifications module (user.Emails).
type Emails = user.Emails

// AccountLister lists and searches accounts, for modules that find people
// (user.AccountLister); ListOptions are its filters.
type (
	AccountLister = user.AccountLister
	ListOptions   = user.ListOptions
)

// SSHKeys finds the owner of an SSH public key, for the repository module's
// SSH server (user.SSHKeys).
type SSHKeys = user.SSHKeys

// SSHKeyOwner is what SSHKeys.SSHKeyOwner finds: the key's id and its
// owner's summary.
type SSHKeyOwner = user.SSHKeyOwner

// ErrKeyNotFound is SSHKeys' answer for a key no user has.
var ErrKeyNotFound = user.ErrKeyNotFound

// Module is the identity module for fennec.WithModules. It provides
// user.Service, the contract every caller (the HTTP adapter included) goes
// through, and each of the small services above.
func Module() fennec.Module {
	return fennec.NewModule("identity",
		fennec.ModuleConfig(SectionName, settings.Default()),
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fennec.Provide(
			internal.NewService,
			func(s *internal.Service) user.Service { return s },
			func(s *internal.Service) auth.PasswordAuthenticator { return s },
			func(s *internal.Service) auth.UserLookup { return s },
			func(s *internal.Service) auth.Provisioner { return s },
			func(s *internal.Service) Activity { return s },
			func(s *internal.Service) DirectorySync { return s },
			func(s *internal.Service) Users { return s },
			func(s *internal.Service) AccountLister { return s },
			func(s *internal.Service) SSHKeys { return s },
			func(s *internal.Service) Emails { return s },
			func(s *internal.Service) PasswordResets { return s },
		),
		fennec.ProvideTokenResolver(func(s *internal.Service) *internal.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewReferencePages),
		fennec.ProvidePages(internal.NewAdminPages),
		fennec.ProvidePages(internal.NewProfilePages),
		fennec.ProvideAdminCommands(internal.Commands, internal.CommandSpecs...),
		fennec.Invoke(internal.Wire),
	)
}
