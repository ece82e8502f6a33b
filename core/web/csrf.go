package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
)

// Forms carry a CSRF token in the field authenticity_token (GitLab's name;
// scripts may send the header X-CSRF-Token instead). A browser with a
// session cookie gets a MAC of the cookie's secret, which only the
// HttpOnly cookie holds, so another site can neither read nor forge it and
// nothing more is stored. Before signing in there is no session to bind to:
// the token is then a random value also set in a cookie of its own (double
// submit), which another site cannot set.

// CSRFField is the form field of the CSRF token.
const CSRFField = "authenticity_token"

// CSRFCookie holds the token of a browser without a session.
const CSRFCookie = "_fennec_csrf"

// CSRFToken is the token this browser's forms carry: its session's when it
// has a session cookie, else its double-submit token (DoubleSubmitToken).
func (s *Site) CSRFToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(auth.SessionCookie); err == nil && c.Value != "" {
		return SessionCSRF(c.Value)
	}
	return s.DoubleSubmitToken(w, r)
}

// CheckCSRF reports whether a write's form (parsed already) or header
// carries this browser's token: its session's when it has a session cookie,
// else its double-submit cookie's.
func (s *Site) CheckCSRF(r *http.Request) bool {
	if c, err := r.Cookie(auth.SessionCookie); err == nil && c.Value != "" {
		return tokensEqual(formToken(r), SessionCSRF(c.Value))
	}
	return s.CheckDoubleSubmit(r)
}

// DoubleSubmitToken is the token of a form that must work whether or not
// the browser is signed in (sign-in, password reset): the double-submit
// cookie's value, set now when the browser has none.
func (s *Site) DoubleSubmitToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(CSRFCookie); err == nil && len(c.Value) == 64 {
		return c.Value
	}
	token := NewSecret()
	s.SetCookie(w, r, CSRFCookie, token, 0, http.SameSiteStrictMode)
	return token
}

// CheckDoubleSubmit reports whether a write's form (parsed already) or
// header carries the browser's double-submit token.
func (s *Site) CheckDoubleSubmit(r *http.Request) bool {
	c, err := r.Cookie(CSRFCookie)
	return err == nil && len(c.Value) == 64 && tokensEqual(formToken(r), c.Value)
}

// formToken is the CSRF token a write sent: the form's field, else the
// header scripts use.
func formToken(r *http.Request) string {
	if got := r.PostFormValue(CSRFField); got != "" {
		return got
	}
	return r.Header.Get("X-CSRF-Token")
}

// SessionCSRF is the CSRF token of a session's forms: a MAC of the
// session's secret.
func SessionCSRF(sessionSecret string) string {
	m := hmac.New(sha256.New, []byte(sessionSecret))
	m.Write([]byte("fennec csrf v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// NewSecret is 32 random bytes, hex-encoded.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand's contract)
	return hex.EncodeToString(b)
}

// tokensEqual compares two secrets in constant time; an empty one never
// matches.
func tokensEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// Secure reports whether cookies must be Secure: the request came over TLS
// or the server is reached at an https URL (TLS ends at a proxy).
func (s *Site) Secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.api.ExternalURL(), "https://")
}

// SetCookie sets an HttpOnly cookie of the site, scoped to its prefix;
// maxAge < 0 deletes it, 0 makes it last the browser's session.
func (s *Site) SetCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int, sameSite http.SameSite) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: s.Prefix() + "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.Secure(r), SameSite: sameSite})
}
