package user

import (
	"context"
	"time"
)

// The identity module's services. Other modules take the small interfaces
// they need (the root package re-exports them: identity.Users is Lookup,
// identity.Emails, identity.SSHKeys, identity.PasswordResets,
// identity.Activity, identity.DirectorySync); a transport, a page or an
// embedder takes Service, which has them all and every command of the
// users API.

// Lookup looks users up for other modules (a project's owner, a
// namespace's path). It reads through identity's cache; ErrUserNotFound
// when there is no such user.
type Lookup interface {
	UserByID(ctx context.Context, id int64) (Info, error)
	UserByUsername(ctx context.Context, username string) (Info, error)
}

// AccountLister lists accounts; other modules search people with it (the
// namespaces list finds user namespaces by username or name).
type AccountLister interface {
	// Accounts lists accounts, by id: X-Total's count, and the window
	// offset, limit of it.
	Accounts(ctx context.Context, opts ListOptions, offset, limit int) ([]Account, int, error)
}

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
	UserByEmail(ctx context.Context, email string) (Info, error)
}

// SSHKeys finds the owner of an SSH public key, for the repository
// module's SSH server.
type SSHKeys interface {
	// SSHKeyOwner is the owner of key (the wire format of a public key,
	// ssh.PublicKey.Marshal), read from the store on every call so that a
	// deleted key or a blocked user is refused at once; ErrKeyNotFound when
	// no user has the key. A blocked owner is returned with User.Blocked
	// set (auth.ForUser refuses them).
	SSHKeyOwner(ctx context.Context, key []byte) (SSHKeyOwner, error)
}

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
	// ErrResetDirectoryUser, a password the users API would refuse (an
	// InvalidError on "password"), and, when the client's address
	// (auth.WithClientAddr) sent too many unknown tokens or wrong
	// passwords, *auth.ThrottledError.
	ResetPasswordWithToken(ctx context.Context, token, newPassword string) (userID int64, err error)
	// RequestPasswordReset is the "forgot your password" request for the
	// account whose primary e-mail is email: for an active account that
	// keeps its own password, and at most once a minute per account, it
	// publishes event.PasswordResetRequested (whose subscriber mails a
	// link). It answers the same whether or not there is such an account,
	// so the page tells no one which addresses have accounts; it refuses
	// only a blank or malformed address (an InvalidError on "email") and,
	// when the client's address asked for too many unknown ones,
	// *auth.ThrottledError.
	RequestPasswordReset(ctx context.Context, email string) error
}

// Activity records that a user was active today; the repository module
// calls it on git access over HTTP or SSH. It writes at most once per user
// and day.
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

// Service is the identity module: the services above and the commands and
// queries of accounts, SSH keys, secondary e-mail addresses and tokens.
//
// The caller is the principal in ctx (auth.FromContext). Commands on a
// user's keys, addresses and tokens are for the user themself and for
// administrators; managing accounts and issuing tokens is for
// administrators; other callers get auth.ErrUnauthorized (nobody signed
// in) or an *auth.ForbiddenError. A user that does not exist is
// ErrUserNotFound. Lists return limit items from the offset-th on, oldest
// first, and how many there are in all.
type Service interface {
	Lookup
	Emails
	SSHKeys
	PasswordResets
	Activity
	DirectorySync

	// Login checks a password (login is a username or an e-mail address)
	// and records the sign-in; it returns the account and the user's
	// private token, made at the first login and the same at every login
	// until it is reset, as GitLab 9.x's. auth.ErrInvalidPassword for a
	// wrong login or password, auth.ErrUnauthorized for a blocked user,
	// *auth.ThrottledError after too many failures (of the login, or of
	// the client's address, auth.WithClientAddr).
	Login(ctx context.Context, login, password string) (Account, string, error)
	// CurrentAccount is the caller's account (with sudo, the account acted
	// as).
	CurrentAccount(ctx context.Context) (Account, error)
	// SudoPrivateToken is, for a caller acting with sudo and credentials
	// with full api rights, the private token of the user acted as, made
	// if they have none yet; ok is false for any other caller.
	SudoPrivateToken(ctx context.Context) (token string, ok bool, err error)
	// ResetPrivateToken replaces the user's private token: the current one
	// stops working at once, and the next login returns a new one.
	ResetPrivateToken(ctx context.Context, userID int64) error

	AccountLister
	// Account is a user's account, for anyone to read: what a caller is
	// shown of it is the transport's choice (Account).
	Account(ctx context.Context, id int64) (Account, error)
	// CreateAccount creates an account (administrators); an InvalidError
	// for fields it may not have, a username or address taken included.
	CreateAccount(ctx context.Context, in NewAccount) (Account, error)
	// UpdateAccount changes the fields given (administrators); a password
	// set this way must be changed (PasswordExpired). A username, address
	// or identity of another account is a *TakenError; demoting the last
	// active administrator is forbidden.
	UpdateAccount(ctx context.Context, id int64, in Fields) (Account, error)
	// DeleteAccount deletes the account with its keys, addresses and
	// tokens and publishes event.UserDeleted (administrators); it returns
	// what was deleted, nil when there was no such account (deleting twice
	// is no error). Deleting oneself or the last active administrator is
	// forbidden.
	DeleteAccount(ctx context.Context, id int64) (*Account, error)
	// Block blocks an active account, revoking its private token, and
	// publishes event.UserBlocked (administrators); changed is false when
	// it was blocked already. Blocking oneself, the last active
	// administrator or an account the directory blocked is forbidden.
	Block(ctx context.Context, id int64) (changed bool, err error)
	// Unblock unblocks an account an administrator blocked
	// (administrators); changed is false when it was active. The
	// directory's blocks are the directory's: forbidden.
	Unblock(ctx context.Context, id int64) (changed bool, err error)
	// ActiveDays are the users active on since or later (nil: six months
	// ago), the longest inactive first (administrators).
	ActiveDays(ctx context.Context, since *time.Time, offset, limit int) ([]ActiveDay, int, error)

	// Keys are the user's SSH keys.
	Keys(ctx context.Context, userID int64, offset, limit int) ([]Key, int, error)
	// Key is one of the user's SSH keys; ErrKeyNotFound when it is not
	// theirs.
	Key(ctx context.Context, userID, keyID int64) (Key, error)
	// AddKey adds an SSH key (an authorized_keys line; options are
	// dropped) with a title; an InvalidError for a blank title or a key
	// that does not parse, or one some user has already.
	AddKey(ctx context.Context, userID int64, title, key string) (Key, error)
	// DeleteKey deletes one of the user's keys and returns it.
	DeleteKey(ctx context.Context, userID, keyID int64) (Key, error)
	// KeyByID and KeyByFingerprint find any user's key with its owner
	// (administrators). A fingerprint is SHA256:... or the legacy MD5 form
	// (aa:bb:..., or MD5:aa:bb:...).
	KeyByID(ctx context.Context, keyID int64) (Key, Account, error)
	KeyByFingerprint(ctx context.Context, fingerprint string) (Key, Account, error)

	// SecondaryEmails are the user's secondary addresses.
	SecondaryEmails(ctx context.Context, userID int64, offset, limit int) ([]Email, int, error)
	// SecondaryEmail is one of them; ErrEmailNotFound when it is not
	// theirs.
	SecondaryEmail(ctx context.Context, userID, emailID int64) (Email, error)
	// AddEmail adds a secondary address; an InvalidError for a blank,
	// malformed or taken one.
	AddEmail(ctx context.Context, userID int64, address string) (Email, error)
	// DeleteEmail deletes one of the user's secondary addresses and
	// returns it.
	DeleteEmail(ctx context.Context, userID, emailID int64) (Email, error)

	// Tokens are the user's tokens of a kind.
	Tokens(ctx context.Context, userID int64, kind TokenKind, state TokenState, offset, limit int) ([]Token, int, error)
	// Token is one of them; a *TokenNotFoundError when it is not theirs.
	Token(ctx context.Context, userID int64, kind TokenKind, tokenID int64) (Token, error)
	// IssueToken makes a token for the user (administrators) and returns
	// it with its Secret: an InvalidError for a blank name, ErrNoScopes,
	// ErrInvalidScope.
	IssueToken(ctx context.Context, userID int64, in NewToken) (Token, error)
	// RevokeToken revokes one of the user's tokens of a kind: it stops
	// working at once and stays listed as revoked.
	RevokeToken(ctx context.Context, userID int64, kind TokenKind, tokenID int64) error

	// The caller's own settings (the profile pages); auth.ErrUnauthorized
	// for nobody signed in.

	// UpdateProfile changes the caller's profile fields given (nil keeps
	// one); an InvalidError for a blank name or a field too long.
	UpdateProfile(ctx context.Context, in ProfileFields) (Account, error)
	// ChangePassword sets the caller's password once current is theirs:
	// an InvalidError on "current_password" when it is not (counted as a
	// failed sign-in, *auth.ThrottledError after too many), on "password"
	// for a new one the users API would refuse; forbidden for a user whose
	// directory owns the password.
	ChangePassword(ctx context.Context, current, password string) error
	// CreatePersonalToken makes a personal access token for the caller
	// and returns it with its Secret (IssueToken's refusals otherwise).
	CreatePersonalToken(ctx context.Context, in NewToken) (Token, error)
}
