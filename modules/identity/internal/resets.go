package internal

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/event"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// ResetTokenLifetime is how long a password reset token is valid.
const ResetTokenLifetime = 48 * time.Hour

// maxResetToken bounds what is hashed and looked up: the tokens are 20
// characters; anything much longer is no token of ours.
const maxResetToken = 128

// The errors of the reset link, the contract's.
var (
	ErrResetTokenInvalid  = user.ErrResetTokenInvalid
	ErrResetTokenExpired  = user.ErrResetTokenExpired
	ErrResetUserBlocked   = user.ErrResetUserBlocked
	ErrResetDirectoryUser = user.ErrResetDirectoryUser
)

// NewPasswordResetToken implements identity.PasswordResets: a fresh random
// token for the user, of which only the hash is stored (replacing any
// earlier one), valid for ResetTokenLifetime. Called with the context of a
// store transaction it joins it.
func (s *Service) NewPasswordResetToken(ctx context.Context, userID int64) (string, time.Time, error) {
	token, err := newSecret()
	if err != nil {
		return "", time.Time{}, err
	}
	sum := sha256.Sum256([]byte(token))
	expires := s.now().UTC().Add(ResetTokenLifetime)
	err = s.update(ctx, func(tx *store.Tx) error {
		u, err := users.Get(tx, userID)
		if errors.Is(err, store.ErrNotFound) {
			return auth.ErrUserNotFound
		}
		if err != nil {
			return err
		}
		u.ResetTokenHash, u.ResetTokenExpires = sum[:], &expires
		return users.Update(tx, u)
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return token, expires, nil
}

// ResetPasswordWithToken implements identity.PasswordResets: it sets the
// password of the user whose reset token this is and clears the token in
// the same write, so a link works once. It refuses an unknown, used or
// replaced token (ErrResetTokenInvalid), an expired one
// (ErrResetTokenExpired), a blocked user, a directory user, and a password
// that breaks the rules of the users API (ValidationError on "password").
// Unknown tokens count as failed sign-ins of the client's address
// (auth.ClientAddrFrom), so guessing is throttled as password guessing is
// (*auth.ThrottledError).
func (s *Service) ResetPasswordWithToken(ctx context.Context, token, password string) (int64, error) {
	a, wait := s.throttle.beginAddress(auth.ClientAddrFrom(ctx))
	if a == nil {
		return 0, &auth.ThrottledError{RetryAfter: wait}
	}
	id, err := s.resetPassword(ctx, token, password)
	if errors.Is(err, ErrResetTokenInvalid) {
		if len(a.locked) > 0 {
			s.log.Warn("too many invalid password reset tokens; refusing further attempts for a while",
				zap.String("remote", auth.ClientAddrFrom(ctx)), zap.Duration("for", s.throttle.window()))
		}
		return 0, err // the charge stays: a guess
	}
	s.throttle.notFailed(a)
	return id, err
}

func (s *Service) resetPassword(ctx context.Context, token, password string) (int64, error) {
	if token == "" || len(token) > maxResetToken {
		return 0, ErrResetTokenInvalid
	}
	sum := sha256.Sum256([]byte(token))
	// The token is checked in a read first: a wrong one costs a lookup,
	// never a bcrypt hash, and no write.
	err := s.db.View(ctx, func(tx *store.Tx) error {
		_, err := s.resetTokenUser(tx, sum)
		return err
	})
	if err != nil {
		return 0, err
	}
	if text := passwordProblem(password); text != "" {
		return 0, ValidationError{"password": {text}}
	}
	// Hashed outside the write, as updateUser does: bcrypt inside it would
	// hold every other writer of the group commit.
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return 0, err
	}
	var u *User
	err = s.update(ctx, func(tx *store.Tx) error {
		// Checked again: the token may have been used or replaced, or the
		// user blocked, since the read.
		var err error
		if u, err = s.resetTokenUser(tx, sum); err != nil {
			return err
		}
		u.PasswordHash = hash
		u.PasswordExpired = false // the user chose it
		u.ResetTokenHash, u.ResetTokenExpires = nil, nil
		if err := users.Update(tx, u); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.PasswordChanged{UserID: u.ID})
	})
	if err != nil {
		return 0, err
	}
	s.log.Info("password set through a reset link", zap.Int64("user_id", u.ID), zap.String("username", u.Username))
	return u.ID, nil
}

// resetTokenUser is the user a reset token (its SHA-256) lets set a
// password, or why there is none.
func (s *Service) resetTokenUser(tx *store.Tx, sum [32]byte) (*User, error) {
	u, err := users.GetBy(tx, "reset_token", hex.EncodeToString(sum[:]))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrResetTokenInvalid
	}
	if err != nil {
		return nil, err
	}
	// The index found it by the hash; the stored hash is compared anyway,
	// in constant time, so that the answer never rests on the index alone.
	if subtle.ConstantTimeCompare(u.ResetTokenHash, sum[:]) != 1 {
		return nil, ErrResetTokenInvalid
	}
	if u.ResetTokenExpires == nil || !s.now().Before(*u.ResetTokenExpires) {
		return nil, ErrResetTokenExpired
	}
	if u.State != StateActive {
		return nil, ErrResetUserBlocked
	}
	if s.directoryUser(u) {
		return nil, ErrResetDirectoryUser
	}
	return u, nil
}

// directoryUser reports whether u signs in through a directory: an
// identity of a configured auth provider, or of any "ldap…" provider (how
// GitLab names its LDAP servers: ldapmain), configured here or not.
func (s *Service) directoryUser(u *User) bool {
	for _, id := range u.Identities {
		if strings.HasPrefix(id.Provider, "ldap") {
			return true
		}
		for _, p := range s.providers {
			if id.Provider == p.Name {
				return true
			}
		}
	}
	return false
}

// ResetRequestInterval is the least time between two reset mails asked for
// one account: the page cannot be used to flood someone's mailbox.
const ResetRequestInterval = time.Minute

// RequestPasswordReset implements identity.PasswordResets: the "forgot
// your password" request. An address no account has as its primary e-mail
// counts against the client's address as a failed sign-in does (so the
// page is no faster way to probe addresses than signing in); a known one
// does not. The answer is the same either way.
func (s *Service) RequestPasswordReset(ctx context.Context, email string) error {
	email = strings.TrimSpace(email)
	if email == "" {
		return ValidationError{"email": {"can't be blank"}}
	}
	if len(email) > 255 || !validEmail(email) {
		return ValidationError{"email": {"is invalid"}}
	}
	a, wait := s.throttle.beginAddress(auth.ClientAddrFrom(ctx))
	if a == nil {
		return &auth.ThrottledError{RetryAfter: wait}
	}
	known := false
	err := s.update(ctx, func(tx *store.Tx) error {
		known = false
		u, err := users.GetBy(tx, "email", store.Fold(email))
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		known = true
		now := s.now().UTC()
		switch {
		case u.State != StateActive, s.directoryUser(u):
			s.log.Info("password reset asked for an account that cannot reset its password; no mail",
				zap.Int64("user_id", u.ID), zap.String("state", u.State))
			return nil
		case u.ResetRequestedAt != nil && now.Sub(*u.ResetRequestedAt) < ResetRequestInterval:
			return nil // the link of a minute ago is on its way
		}
		u.ResetRequestedAt = &now
		if err := users.Update(tx, u); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.PasswordResetRequested{UserID: u.ID, Username: u.Username, Name: u.Name,
			Email: u.Email, RequestedAt: now})
	})
	if err != nil {
		return err
	}
	if known {
		s.throttle.notFailed(a)
	}
	return nil
}
