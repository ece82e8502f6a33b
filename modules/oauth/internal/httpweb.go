package internal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The authorization endpoint's pages (GET and POST /oauth/authorize), the
// sign-in pages and the browser's session cookie, over provider.Service.

// maxFormBytes bounds a page form's body.
const maxFormBytes = 32 << 10

// signInCSRFCookie carries the sign-in form's CSRF token (double submit):
// before anyone signs in there is no session to bind it to.
const signInCSRFCookie = "_fennec_csrf"

// authRequest reads an authorization request's parameters (the query of
// GET /oauth/authorize, the form of its POST).
func authRequestOf(q url.Values) provider.AuthorizationRequest {
	return provider.AuthorizationRequest{ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"),
		ResponseType: q.Get("response_type"), Scope: q.Get("scope"), State: q.Get("state"),
		CodeChallenge: q.Get("code_challenge"), CodeChallengeMethod: q.Get("code_challenge_method")}
}

// pageError is a problem shown on an error page, never by redirect: the
// client or its redirect URI cannot be trusted (RFC 6749 4.1.2.1), so
// sending the browser there would make the server an open redirector.
type pageError struct {
	status  int
	title   string
	message string
}

func (e *pageError) Error() string { return e.message }

// repeatedParam refuses a parameter given twice.
func repeatedParam(q url.Values) error {
	for k, vs := range q {
		if len(vs) > 1 {
			return &pageError{status: 400, title: "Invalid request", message: "The parameter " + k + " is repeated. Each parameter may be given once."}
		}
	}
	return nil
}

// checkAuthRequest checks the request's parameters with the service.
func (h *handlers) checkAuthRequest(r *http.Request, q url.Values) (provider.Authorization, error) {
	if err := repeatedParam(q); err != nil {
		return provider.Authorization{}, err
	}
	return h.svc.CheckAuthorization(r.Context(), authRequestOf(q))
}

// authFields are the request's parameters for the consent form's hidden
// inputs.
func authFields(ar provider.Authorization) []hiddenField {
	f := []hiddenField{{"client_id", ar.App.ClientID}, {"redirect_uri", ar.RedirectURI}, {"response_type", "code"},
		{"scope", strings.Join(ar.Scopes, " ")}}
	if ar.State != "" {
		f = append(f, hiddenField{"state", ar.State})
	}
	if ar.CodeChallenge != "" {
		f = append(f, hiddenField{"code_challenge", ar.CodeChallenge}, hiddenField{"code_challenge_method", ar.CodeChallengeMethod})
	}
	return f
}

// redirectTo sends the browser back to the client with params added to the
// redirect URI's own query.
func redirectTo(w http.ResponseWriter, r *http.Request, redirectURI string, params url.Values) {
	u, err := url.Parse(redirectURI)
	if err != nil { // registered URIs parse; guard anyway
		http.Error(w, "bad redirect URI", http.StatusInternalServerError)
		return
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// authProblem answers a refused authorization request: a page for one
// whose client or redirect URI cannot be trusted, a redirect to the
// client with the error otherwise.
func (h *handlers) authProblem(w http.ResponseWriter, r *http.Request, ar provider.Authorization, err error) {
	var pe *pageError
	var oe *provider.Error
	switch {
	case errors.As(err, &pe):
		h.render(w, r, pe.status, "error", pageData{Title: pe.title, Message: pe.message})
	case errors.Is(err, provider.ErrNoClientID):
		h.render(w, r, 400, "error", pageData{Title: "Invalid request", Message: "The request has no client_id."})
	case errors.Is(err, provider.ErrUnknownClient):
		h.render(w, r, 401, "error", pageData{Title: "Unknown application", Message: "Client authentication failed due to unknown client. No application is registered with this client_id."})
	case errors.Is(err, provider.ErrRedirectURIRequired):
		h.render(w, r, 400, "error", pageData{Title: "Invalid redirect URI", Message: "The application has several redirect URIs; the request must name one of them."})
	case errors.Is(err, provider.ErrRedirectURIInvalid):
		h.render(w, r, 400, "error", pageData{Title: "Invalid redirect URI", Message: "The redirect URI included is not valid: it is not one of the application's registered redirect URIs."})
	case errors.As(err, &oe) && ar.RedirectURI != "":
		params := url.Values{"error": {string(oe.Code)}, "error_description": {oe.Description}}
		if ar.State != "" {
			params.Set("state", ar.State)
		}
		redirectTo(w, r, ar.RedirectURI, params)
	default:
		h.log.Error("authorization request failed", zap.Error(err))
		h.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not handle the request. Try again later."})
	}
}

// serveAuthorize is GET /oauth/authorize: the sign-in page for a browser
// without a session, else the consent page.
func (h *handlers) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	ar, err := h.checkAuthRequest(r, r.URL.Query())
	if err != nil {
		h.authProblem(w, r, ar, err)
		return
	}
	sess, secret, ok := h.browserSession(r)
	if !ok {
		h.renderSignIn(w, r, http.StatusOK, r.URL.RequestURI(), "")
		return
	}
	h.render(w, r, http.StatusOK, "consent", pageData{Title: "Authorize " + ar.App.Name, User: sess.User.Username, App: ar.App.Name,
		Scopes: describeScopes(ar.Scopes), Hidden: authFields(ar), CSRF: sessionCSRF(secret)})
}

// serveDecision is the consent form's POST: Authorize or Deny.
func (h *handlers) serveDecision(w http.ResponseWriter, r *http.Request) {
	form, ok := h.readForm(w, r)
	if !ok {
		return
	}
	ar, err := h.checkAuthRequest(r, form)
	if err != nil {
		h.authProblem(w, r, ar, err)
		return
	}
	sess, secret, ok := h.browserSession(r)
	if !ok {
		// Signed out meanwhile: sign in again, then see the consent again.
		back := url.Values{}
		for _, f := range authFields(ar) {
			back.Set(f.Name, f.Value)
		}
		h.renderSignIn(w, r, http.StatusUnauthorized, "/oauth/authorize?"+back.Encode(), "Your session has ended. Sign in again.")
		return
	}
	if !tokensEqual(form.Get("authenticity_token"), sessionCSRF(secret)) {
		h.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Go back to the application and start again."})
		return
	}
	switch form.Get("decision") {
	case "deny":
		params := url.Values{"error": {"access_denied"}, "error_description": {"The resource owner or authorization server denied the request."}}
		if ar.State != "" {
			params.Set("state", ar.State)
		}
		redirectTo(w, r, ar.RedirectURI, params)
		return
	case "authorize":
	default:
		h.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Invalid request", Message: "Choose Authorize or Deny."})
		return
	}
	ctx := auth.WithPrincipal(r.Context(), sessionPrincipal(sess))
	ar, code, err := h.svc.Authorize(ctx, authRequestOf(form))
	if err != nil {
		h.authProblem(w, r, ar, err)
		return
	}
	params := url.Values{"code": {code}}
	if ar.State != "" {
		params.Set("state", ar.State)
	}
	redirectTo(w, r, ar.RedirectURI, params)
}

// sessionPrincipal is the principal of a browser's session, as the core's
// resolver makes it for the session cookie (ResolveToken).
func sessionPrincipal(sess provider.Session) *auth.Principal {
	return &auth.Principal{User: sess.User, Method: auth.MethodSession, TokenID: sess.ID}
}

// readForm reads a page form's body (bounded), writing the error page
// itself when it cannot.
func (h *handlers) readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		h.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Invalid request", Message: "The form could not be read."})
		return nil, false
	}
	return r.PostForm, true
}

// maxReturnPath is the longest address returned to after signing in: an
// authorize request the server accepts fits (a 1024-byte state and a long
// redirect URI, percent-encoded, run past 4 KiB).
const maxReturnPath = 16 << 10

// localPath accepts a return address on this server only: an absolute
// path, not "//host" or "/\host", which browsers take for another site.
// Backslashes and control characters are refused anywhere: browsers read
// a backslash as a slash and drop tabs and newlines, so "/<tab>/host"
// would become "//host".
func localPath(p string) string {
	if p == "" || len(p) > maxReturnPath || p[0] != '/' || strings.HasPrefix(p, "//") {
		return "/users/sign_in"
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '\\' || c == ' ' {
			return "/users/sign_in"
		}
	}
	return p
}

// formCSRF is the CSRF token of a form shown to a browser that need not be
// signed in (sign-in, password reset): the double-submit cookie's value,
// set now when the browser has none.
func (h *handlers) formCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(signInCSRFCookie); err == nil && len(c.Value) == 64 {
		return c.Value
	}
	token := newSecret()
	h.setCookie(w, r, signInCSRFCookie, token, 0, http.SameSiteStrictMode)
	return token
}

// formCSRFValid checks a form's authenticity_token against the
// double-submit cookie.
func formCSRFValid(r *http.Request, form url.Values) bool {
	c, err := r.Cookie(signInCSRFCookie)
	return err == nil && tokensEqual(form.Get("authenticity_token"), c.Value)
}

func (h *handlers) renderSignIn(w http.ResponseWriter, r *http.Request, status int, returnTo, message string) {
	h.renderSignInNotice(w, r, status, returnTo, message, "")
}

func (h *handlers) renderSignInNotice(w http.ResponseWriter, r *http.Request, status int, returnTo, message, notice string) {
	h.render(w, r, status, "sign_in", pageData{Title: "Sign in", ReturnTo: localPath(returnTo), CSRF: h.formCSRF(w, r),
		Error: message, Notice: notice})
}

// signInNotices are the notices another page may ask the sign-in page to
// show (?notice=); the page shows only these texts, never the parameter.
var signInNotices = map[string]string{
	"password_changed": "Your password was changed. Sign in with your new password.",
	"reset_requested":  "If an account has this e-mail address, a link to choose a new password is on its way to it.",
}

// serveSignInPage is GET /users/sign_in: the form, or who is signed in.
func (h *handlers) serveSignInPage(w http.ResponseWriter, r *http.Request) {
	notice := signInNotices[r.URL.Query().Get("notice")]
	if sess, secret, ok := h.browserSession(r); ok {
		h.render(w, r, http.StatusOK, "signed_in", pageData{Title: "Signed in", User: sess.User.Username, CSRF: sessionCSRF(secret), Notice: notice})
		return
	}
	h.renderSignInNotice(w, r, http.StatusOK, r.URL.Query().Get("return_to"), "", notice)
}

// serveSignIn checks the sign-in form through the service (identity's
// password path: local and directory users, the sign-in throttle) and
// starts a session.
func (h *handlers) serveSignIn(w http.ResponseWriter, r *http.Request) {
	form, ok := h.readForm(w, r)
	if !ok {
		return
	}
	returnTo := localPath(form.Get("return_to"))
	if !formCSRFValid(r, form) {
		h.renderSignIn(w, r, http.StatusForbidden, returnTo, "The form expired. Please sign in again.")
		return
	}
	login, password := strings.TrimSpace(form.Get("login")), form.Get("password")
	if login == "" || password == "" {
		h.renderSignIn(w, r, http.StatusBadRequest, returnTo, "Enter your username or e-mail and your password.")
		return
	}
	sess, err := h.svc.SignIn(auth.WithClientAddr(r.Context(), r.RemoteAddr), login, password)
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", throttled.RetryAfterSeconds())
		h.renderSignIn(w, r, http.StatusTooManyRequests, returnTo, "Too many failed sign-in attempts. Try again in "+throttled.RetryAfterSeconds()+" seconds.")
		return
	case errors.Is(err, auth.ErrProviderUnavailable):
		w.Header().Set("Retry-After", "2")
		h.renderSignIn(w, r, http.StatusServiceUnavailable, returnTo, "A sign-in provider is restarting. Try again shortly.")
		return
	case errors.Is(err, auth.ErrInvalidPassword), errors.Is(err, auth.ErrUnauthorized):
		h.renderSignIn(w, r, http.StatusUnauthorized, returnTo, "Invalid login or password.")
		return
	case err != nil:
		h.log.Error("sign-in failed", zap.Error(err))
		h.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not sign you in. Try again later."})
		return
	}
	h.setCookie(w, r, auth.SessionCookie, sess.Secret, int(provider.SessionLifetime/time.Second), http.SameSiteLaxMode)
	h.setCookie(w, r, signInCSRFCookie, "", -1, http.SameSiteStrictMode)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, returnTo, http.StatusSeeOther)
}

// serveSignOut ends the browser's session.
func (h *handlers) serveSignOut(w http.ResponseWriter, r *http.Request) {
	form, ok := h.readForm(w, r)
	if !ok {
		return
	}
	if _, secret, ok := h.browserSession(r); ok {
		if !tokensEqual(form.Get("authenticity_token"), sessionCSRF(secret)) {
			h.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Reload the page and try again."})
			return
		}
		if err := h.svc.EndSession(r.Context(), secret); err != nil {
			h.log.Warn("could not delete an ended session", zap.Error(err))
		}
	}
	h.setCookie(w, r, auth.SessionCookie, "", -1, http.SameSiteLaxMode)
	http.Redirect(w, r, "/users/sign_in", http.StatusSeeOther)
}

// browserSession is the session of a page request's cookie and the
// cookie's secret; ok is false when the browser is not signed in (or its
// session ended).
func (h *handlers) browserSession(r *http.Request) (provider.Session, string, bool) {
	c, err := r.Cookie(auth.SessionCookie)
	if err != nil {
		return provider.Session{}, "", false
	}
	sess, err := h.svc.Session(r.Context(), c.Value)
	if err != nil {
		return provider.Session{}, "", false
	}
	return sess, c.Value, true
}

// sessionCSRF is the CSRF token of the forms of a signed-in browser: a MAC
// of the session's secret, which only the HttpOnly cookie holds, so another
// site can neither read nor forge it, and nothing more is stored.
func sessionCSRF(sessionSecret string) string {
	m := hmac.New(sha256.New, []byte(sessionSecret))
	m.Write([]byte("fennec csrf v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// secure reports whether cookies must be Secure: the request came over TLS
// or the server is reached at an https URL (TLS ends at a proxy).
func (h *handlers) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(h.external(), "https://")
}

func (h *handlers) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int, sameSite http.SameSite) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: h.secure(r), SameSite: sameSite})
}
