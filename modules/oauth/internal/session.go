package internal

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// signInCSRFCookie carries the sign-in form's CSRF token (double submit):
// before anyone signs in there is no session to bind it to.
const signInCSRFCookie = "_fennec_csrf"

// newSession signs userID in and returns the cookie's secret.
func (s *Service) newSession(ctx context.Context, userID uint64) (string, error) {
	secret := newSecret()
	now := s.now()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		return sessions.Insert(tx, &Session{Hash: hashSecret(secret), UserID: userID, CreatedAt: now, ExpiresAt: now.Add(SessionLifetime)})
	})
	return secret, err
}

// session finds the live session of a cookie's secret and its user.
// ErrUnknownToken when there is no such session; ErrUnauthorized when it has
// expired or its user is blocked or gone: such a session is deleted, so
// that unblocking the user does not bring it back.
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
func (s *Service) endSession(ctx context.Context, id uint64) {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		if err := sessions.Delete(tx, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		s.log.Warn("could not delete an ended session", zap.Error(err))
	}
}

// browserSession is the session of a page request's cookie, nil when the
// browser is not signed in (or its session ended).
func (s *Service) browserSession(r *http.Request) (*Session, *auth.User, string) {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil {
		return nil, nil, ""
	}
	sess, u, err := s.session(r.Context(), c.Value)
	if err != nil {
		return nil, nil, ""
	}
	return sess, u, c.Value
}

// sessionCSRF is the CSRF token of the forms of a signed-in browser: a MAC
// of the session's secret, which only the HttpOnly cookie holds, so another
// site can neither read nor forge it, and nothing more is stored.
func sessionCSRF(sessionSecret string) string {
	m := hmac.New(sha256.New, []byte(sessionSecret))
	m.Write([]byte("fennec csrf v1"))
	return hex.EncodeToString(m.Sum(nil))
}

func tokensEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// secure reports whether cookies must be Secure: the request came over TLS
// or the server is reached at an https URL (TLS ends at a proxy).
func (s *Service) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.external(), "https://")
}

func (s *Service) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int, sameSite http.SameSite) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.secure(r), SameSite: sameSite})
}
