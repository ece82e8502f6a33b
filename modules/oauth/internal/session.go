package internal

import (
	"context"
	"crypto/subtle"
	"errors"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The web sessions of provider.Service. The cookies and the sign-in pages
// are httpweb.go.

// SignIn implements provider.Service: it checks the password through
// identity's password path (local and directory users, the sign-in
// throttle) and starts a session.
func (s *Service) SignIn(ctx context.Context, login, password string) (provider.Session, error) {
	u, err := s.passwords.AuthenticatePassword(ctx, login, password)
	if err != nil {
		return provider.Session{}, err
	}
	if u.Blocked {
		return provider.Session{}, auth.ErrUnauthorized
	}
	secret, id, err := s.newSession(ctx, u.ID, userAgentFrom(ctx), clientIP(auth.ClientAddrFrom(ctx)))
	if err != nil {
		return provider.Session{}, err
	}
	if s.activity != nil {
		if err := s.activity.RecordActivity(ctx, u.ID); err != nil {
			s.log.Warn("could not record the sign-in as activity", zap.Error(err))
		}
	}
	return provider.Session{ID: id, User: u, Secret: secret}, nil
}

// Session implements provider.Service.
func (s *Service) Session(ctx context.Context, secret string) (provider.Session, error) {
	sess, u, err := s.session(ctx, secret)
	if err != nil {
		return provider.Session{}, err
	}
	return provider.Session{ID: sess.ID, User: u}, nil
}

// EndSession implements provider.Service.
func (s *Service) EndSession(ctx context.Context, secret string) error {
	sess, _, err := s.session(ctx, secret)
	if err != nil {
		return err
	}
	return s.deleteSession(ctx, sess.ID)
}

// newSession signs userID in and returns the cookie's secret and the
// session's id.
func (s *Service) newSession(ctx context.Context, userID int64, userAgent, ip string) (string, int64, error) {
	secret := newSecret()
	now := s.now()
	sess := &Session{Hash: hashSecret(secret), UserID: userID, CreatedAt: now, ExpiresAt: now.Add(SessionLifetime),
		UserAgent: userAgent, IP: ip}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		sess.ID = 0
		return sessions.Insert(tx, sess)
	})
	return secret, sess.ID, err
}

// session finds the live session of a cookie's secret and its user.
// ErrUnknownToken when there is no such session; ErrUnauthorized when it has
// expired or its user is blocked or gone, or, while it impersonates, its
// administrator is no longer one: such a session is deleted, so that
// unblocking the user does not bring it back.
func (s *Service) session(ctx context.Context, secret string) (*Session, *auth.User, error) {
	if secret == "" || len(secret) > 128 {
		return nil, nil, auth.ErrUnknownToken
	}
	var sess *Session
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		sess, err = sessions.GetBy(tx, "hash", hashSecret(secret))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, auth.ErrUnknownToken
	}
	if err != nil {
		return nil, nil, err
	}
	if !s.now().Before(sess.ExpiresAt) {
		s.endSession(ctx, sess.ID)
		return nil, nil, auth.ErrUnauthorized
	}
	u, err := s.user(ctx, sess.UserID)
	if err == nil && sess.ImpersonatorID != 0 {
		_, err = s.impersonator(ctx, sess)
	}
	if errors.Is(err, auth.ErrUnauthorized) {
		s.endSession(ctx, sess.ID)
	}
	if err != nil {
		return nil, nil, err
	}
	return sess, u, nil
}

// endSession deletes a session; a failure is logged only: the session is
// refused anyway and the next use tries again.
func (s *Service) endSession(ctx context.Context, id int64) {
	if err := s.deleteSession(ctx, id); err != nil {
		s.log.Warn("could not delete an ended session", zap.Error(err))
	}
}

// deleteSession deletes a session (gone already is no error).
func (s *Service) deleteSession(ctx context.Context, id int64) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if err := sessions.Delete(tx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	})
}

// tokensEqual compares two secrets in constant time; an empty one never
// matches.
func tokensEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
