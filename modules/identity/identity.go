package identity

import (
	"context"
	"time"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/identity/event"
	"github.com/fennec-forge/fennec/modules/identity/internal"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// UserDeleted is published (through the outbox) when an administrator
// deletes a user. The user's keys, e-mails and tokens are gone with it;
// modules owning other data of the user decide what happens to it. Its
// contract is package event, public so that it is not defined inside
// internal/.
type UserDeleted = event.UserDeleted

// UserCreated is published in the transaction that creates a user.
type UserCreated = event.UserCreated

// UserBlocked is published in the transaction that blocks a user (an
// administrator's block, or directory synchronisation's ldap_blocked).
type UserBlocked = event.UserBlocked

// PasswordResetRequested is published when someone asks for a reset link
// for an account (RequestPasswordReset).
type PasswordResetRequested = event.PasswordResetRequested

// PasswordResets issues password reset tokens (for the mail that
// reset_password on user creation promises, and for the "forgot your
// password" page).
type PasswordResets interface {
	// NewPasswordResetToken returns a new reset token for the user and
	// when it expires; only its hash is stored, and it replaces any earlier
	// one. ErrUserNotFound for an unknown user.
	NewPasswordResetToken(ctx context.Context, userID int64) (token string, expires time.Time, err error)
	// ResetPasswordWithToken sets the password of the user whose reset
	// token this is (the reset link's form) and clears the token: a link
	// works once. It refuses ErrResetTokenInvalid (unknown, used or
	// replaced), ErrResetTokenExpired, ErrResetUserBlocked,
	// ErrResetDirectoryUser, a password the users API would refuse (a
	// validation error with Fields() {"password": [...]}), and, when the
	// client's address (auth.WithClientAddr) sent too many unknown tokens or
	// wrong passwords, *auth.ThrottledError.
	ResetPasswordWithToken(ctx context.Context, token, newPassword string) (userID int64, err error)
	// RequestPasswordReset is the "forgot your password" request for the
	// account whose primary e-mail is email: for an active account that
	// keeps its own password, and at most once a minute per account, it
	// publishes PasswordResetRequested (whose subscriber mails a link).
	// It answers the same whether or not there is such an account, so the
	// page tells no one which addresses have accounts; it refuses only a
	// blank or malformed address (a validation error on "email") and, when
	// the client's address asked for too many unknown ones,
	// *auth.ThrottledError.
	RequestPasswordReset(ctx context.Context, email string) error
}

// Errors of PasswordResets.ResetPasswordWithToken.
var (
	ErrResetTokenInvalid  = internal.ErrResetTokenInvalid
	ErrResetTokenExpired  = internal.ErrResetTokenExpired
	ErrResetUserBlocked   = internal.ErrResetUserBlocked
	ErrResetDirectoryUser = internal.ErrResetDirectoryUser
)

// MinPasswordLength is the shortest password identity accepts (for forms
// that say so up front).
const MinPasswordLength = internal.MinPasswordLength

// Clock tells the module the time. The module uses the wall clock unless
// the app provides one (tests move past a reset token's lifetime with it):
//
//	fx.Supply(fx.Annotate(myClock, fx.As(new(identity.Clock))))
type Clock = internal.Clock

// Activity records that a user was active today; the repository module calls
// it on git access over HTTP or SSH. It writes at most once per user and day.
type Activity interface {
	RecordActivity(ctx context.Context, userID int64) error
}

// DirectorySync checks the users of external auth providers against their
// directory: those who left become blocked (and the API cannot unblock
// them), those who came back are active again. It runs on a timer
// (config directory_sync_interval); embedders and tests may call it.
type DirectorySync interface {
	SyncDirectory(ctx context.Context) (blocked, unblocked int, err error)
}

// ErrUserNotFound is what Users answers for a user that does not exist (or
// no longer does), for callers to test with errors.Is. It is core/auth's
// sentinel itself, so the password and token paths of core/auth and the
// lookups here agree; the API answers it 404 User Not Found.
var ErrUserNotFound = auth.ErrUserNotFound

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

// Users looks users up for other modules (a project's owner, a namespace's
// path). It reads through identity's cache; ErrUserNotFound when there is
// no such user.
type Users interface {
	UserByID(ctx context.Context, id int64) (UserInfo, error)
	UserByUsername(ctx context.Context, username string) (UserInfo, error)
}

// SSHKeys finds the owner of an SSH public key, for the repository module's
// SSH server.
// Emails lists a user's addresses, for the notifications module (a
// notification_email must be one of them).
type Emails interface {
	// ConfirmedEmails returns the user's confirmed addresses: the primary
	// one first (when confirmed), then the secondary ones; ErrUserNotFound
	// for an unknown user.
	ConfirmedEmails(ctx context.Context, userID int64) ([]string, error)
	// UserByEmail is the user whose primary or secondary address this is
	// (case folded), as GitLab finds a commit's author among its users;
	// ErrUserNotFound when there is none.
	UserByEmail(ctx context.Context, email string) (UserInfo, error)
}

type SSHKeys interface {
	// SSHKeyOwner is the owner of key (the wire format of a public key,
	// ssh.PublicKey.Marshal), read from the store on every call so that a
	// deleted key or a blocked user is refused at once; ErrKeyNotFound when
	// no user has the key. A blocked owner is returned with User.Blocked
	// set (auth.ForUser refuses them).
	SSHKeyOwner(ctx context.Context, key []byte) (SSHKeyOwner, error)
}

// SSHKeyOwner is what SSHKeys.SSHKeyOwner finds: the key's id and its
// owner's summary.
type SSHKeyOwner = internal.SSHKeyOwner

// ErrKeyNotFound is SSHKeys' answer for a key no user has.
var ErrKeyNotFound = internal.ErrKeyNotFound

// Module is the identity module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("identity",
		fennec.ModuleConfig(SectionName, internal.DefaultConfig()),
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fx.Provide(
			internal.NewService,
			func(s *internal.Service) auth.PasswordAuthenticator { return s },
			func(s *internal.Service) auth.UserLookup { return s },
			func(s *internal.Service) auth.Provisioner { return s },
			func(s *internal.Service) Activity { return s },
			func(s *internal.Service) DirectorySync { return s },
			func(s *internal.Service) Users { return s },
			func(s *internal.Service) SSHKeys { return s },
			func(s *internal.Service) Emails { return s },
			func(s *internal.Service) PasswordResets { return s },
		),
		fennec.ProvideTokenResolver(func(s *internal.Service) *internal.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideAdminCommands(internal.Commands, internal.CommandSpecs...),
		// The auth providers (plugins and in-process ones), asked after the
		// local password check, in order.
		fx.Invoke(func(s *internal.Service, providers fennec.AuthProviders) {
			list := make([]internal.DirectoryProvider, 0, len(providers))
			for _, p := range providers {
				list = append(list, internal.DirectoryProvider{Name: p.Name, Provider: p.Provider})
			}
			s.SetProviders(list)
		}),
		fx.Invoke(internal.UseClock, internal.Bootstrap, internal.ScheduleSync),
	)
}
