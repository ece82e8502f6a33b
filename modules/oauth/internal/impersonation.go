package internal

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

// Impersonation: an administrator's browser session acts as another user
// (the admin area's "Impersonate"), to see the forge as they do, until
// "Stop impersonating" turns it back into the administrator's. It is the
// session itself that changes (Session.ImpersonatorID keeps whose it is),
// so no second credential exists: signing out ends both, and the API's
// tokens are untouched. The rules are GitLab's: only an administrator
// impersonates, never themself, never a blocked user, and not from a
// session that impersonates already. The session is refused (and
// deleted) as soon as its administrator is blocked, deleted or demoted,
// or the user impersonated is blocked (session). Each start and stop is
// an audit line in the log, naming both users and the session.

// Refusals of StartImpersonation, in GitLab's words.
var (
	errImpersonateSelf    = auth.Forbidden("You cannot impersonate yourself")
	errImpersonateBlocked = auth.Forbidden("You cannot impersonate a blocked user")
	errImpersonateTwice   = auth.Forbidden("You are already impersonating a user")
	// ErrNotImpersonating: StopImpersonation of a session that does not
	// impersonate.
	ErrNotImpersonating = errors.New("oauth: the session impersonates nobody")
)

// impersonator is the administrator of a session that impersonates;
// ErrUnauthorized when they are gone, blocked or no longer an
// administrator.
func (s *Service) impersonator(ctx context.Context, sess *Session) (*auth.User, error) {
	admin, err := s.user(ctx, sess.ImpersonatorID)
	if err != nil {
		return nil, err
	}
	if !admin.Admin {
		return nil, auth.ErrUnauthorized
	}
	return admin, nil
}

// StartImpersonation makes the session of secret, which must be the
// caller's own (an administrator's, impersonating nobody), act as
// username.
func (s *Service) StartImpersonation(ctx context.Context, secret, username string) error {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return auth.ErrUnauthorized
	}
	if !p.IsAdmin() {
		return auth.Forbidden("")
	}
	if p.Impersonator != nil {
		return errImpersonateTwice
	}
	target, err := s.users.UserByUsername(ctx, username)
	if err != nil {
		return err
	}
	if target.ID == p.User.ID {
		return errImpersonateSelf
	}
	if target.State != "active" {
		return errImpersonateBlocked
	}
	var sessionID int64
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		sess, err := sessions.GetBy(tx, "hash", hashSecret(secret))
		if errors.Is(err, store.ErrNotFound) {
			return auth.ErrUnauthorized
		}
		if err != nil {
			return err
		}
		if sess.UserID != p.User.ID || sess.ImpersonatorID != 0 {
			return errImpersonateTwice
		}
		sess.ImpersonatorID, sess.UserID, sessionID = sess.UserID, target.ID, sess.ID
		return sessions.Update(tx, sess)
	})
	if err != nil {
		return err
	}
	s.log.Info("audit: impersonation started", zap.Int64("admin_id", p.User.ID), zap.String("admin", p.User.Username),
		zap.Int64("user_id", target.ID), zap.String("user", target.Username), zap.Int64("session_id", sessionID))
	return nil
}

// StopImpersonation turns the session of secret back into its
// administrator's and returns the user it impersonated.
func (s *Service) StopImpersonation(ctx context.Context, secret string) (identity.UserInfo, error) {
	var sess *Session
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		sess, err = sessions.GetBy(tx, "hash", hashSecret(secret))
		if errors.Is(err, store.ErrNotFound) || (err == nil && sess.ImpersonatorID == 0) {
			return ErrNotImpersonating
		}
		if err != nil {
			return err
		}
		back := *sess
		back.UserID, back.ImpersonatorID = sess.ImpersonatorID, 0
		return sessions.Update(tx, &back)
	})
	if err != nil {
		return identity.UserInfo{}, err
	}
	var admin, target identity.UserInfo
	admin, _ = s.users.UserByID(ctx, sess.ImpersonatorID)
	target, _ = s.users.UserByID(ctx, sess.UserID)
	s.log.Info("audit: impersonation stopped", zap.Int64("admin_id", sess.ImpersonatorID), zap.String("admin", admin.Username),
		zap.Int64("user_id", sess.UserID), zap.String("user", target.Username), zap.Int64("session_id", sess.ID))
	return target, nil
}
