package internal

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The authorization endpoint's pages (GET and POST /oauth/authorize), the
// sign-in pages and the browser's session cookie, over provider.Service.

// maxFormBytes bounds a page form's body.
const maxFormBytes = 32 << 10

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
		h.renderSignIn(w, r, http.StatusOK, h.site.Prefix()+r.URL.RequestURI(), "")
		return
	}
	h.render(w, r, http.StatusOK, "consent", pageData{Title: "Authorize " + ar.App.Name, User: sess.User.Username, App: ar.App.Name,
		Scopes: describeScopes(ar.Scopes), Hidden: authFields(ar), CSRF: web.SessionCSRF(secret)})
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
		h.renderSignIn(w, r, http.StatusUnauthorized, h.site.Prefix()+"/oauth/authorize?"+back.Encode(), "Your session has ended. Sign in again.")
		return
	}
	if !tokensEqual(form.Get("authenticity_token"), web.SessionCSRF(secret)) {
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
// path under the site's prefix, not "//host" or "/\host", which browsers
// take for another site, and without dot segments ("/git/../x", also
// percent-encoded), which browsers resolve out of the prefix. Backslashes
// and control characters are refused anywhere: browsers read a backslash
// as a slash and drop tabs and newlines, so "/<tab>/host" would become
// "//host". Anything else is the sign-in page.
func (h *handlers) localPath(p string) string {
	prefix := h.site.Prefix()
	fallback := prefix + "/users/sign_in"
	if p == "" || len(p) > maxReturnPath || p[0] != '/' || strings.HasPrefix(p, "//") ||
		(prefix != "" && p != prefix && !strings.HasPrefix(p, prefix+"/") && !strings.HasPrefix(p, prefix+"?")) {
		return fallback
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c == 0x7f || c == '\\' || c == ' ' {
			return fallback
		}
	}
	pathPart, _, _ := strings.Cut(p, "?")
	for _, seg := range strings.Split(strings.ToLower(pathPart), "/") {
		if seg == "." || seg == ".." || seg == "%2e" || seg == "%2e%2e" || seg == ".%2e" || seg == "%2e." {
			return fallback
		}
	}
	return p
}

func (h *handlers) renderSignIn(w http.ResponseWriter, r *http.Request, status int, returnTo, message string) {
	h.renderSignInNotice(w, r, status, returnTo, message, "")
}

func (h *handlers) renderSignInNotice(w http.ResponseWriter, r *http.Request, status int, returnTo, message, notice string) {
	h.render(w, r, status, "sign_in", pageData{Title: "Sign in", ReturnTo: h.localPath(returnTo), CSRF: h.site.DoubleSubmitToken(w, r),
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
		h.render(w, r, http.StatusOK, "signed_in", pageData{Title: "Signed in", User: sess.User.Username, CSRF: web.SessionCSRF(secret), Notice: notice})
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
	returnTo := h.localPath(form.Get("return_to"))
	if !h.site.CheckDoubleSubmit(r) {
		h.renderSignIn(w, r, http.StatusForbidden, returnTo, "The form expired. Please sign in again.")
		return
	}
	login, password := strings.TrimSpace(form.Get("login")), form.Get("password")
	if login == "" || password == "" {
		h.renderSignIn(w, r, http.StatusBadRequest, returnTo, "Enter your username or e-mail and your password.")
		return
	}
	sess, err := h.svc.SignIn(withUserAgent(auth.WithClientAddr(r.Context(), r.RemoteAddr), r.UserAgent()), login, password)
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
	h.site.SetCookie(w, r, auth.SessionCookie, sess.Secret, int(provider.SessionLifetime/time.Second), http.SameSiteLaxMode)
	h.site.SetCookie(w, r, web.CSRFCookie, "", -1, http.SameSiteStrictMode)
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
		if !tokensEqual(form.Get("authenticity_token"), web.SessionCSRF(secret)) {
			h.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Reload the page and try again."})
			return
		}
		if err := h.svc.EndSession(r.Context(), secret); err != nil {
			h.log.Warn("could not delete an ended session", zap.Error(err))
		}
	}
	h.site.SetCookie(w, r, auth.SessionCookie, "", -1, http.SameSiteLaxMode)
	h.site.Redirect(w, r, "/users/sign_in")
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
