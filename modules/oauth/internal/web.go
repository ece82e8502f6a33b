package internal

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// Limits of the authorization request.
const (
	maxState     = 1024
	maxFormBytes = 32 << 10
)

// authRequest is a checked authorization request: the client and redirect
// URI are trusted from here on, so its other problems can be sent back to
// the client by redirect.
type authRequest struct {
	app             *Application
	redirectURI     string
	state           string
	scopes          []string
	challenge       string
	challengeMethod string
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

// redirectError is a problem reported to the client at its redirect URI.
type redirectError struct {
	code, description string
}

func (e *redirectError) Error() string { return e.code }

// checkAuthRequest validates an authorization request's parameters (the
// query of GET /oauth/authorize, the form of its POST).
func (s *Service) checkAuthRequest(r *http.Request, q url.Values) (*authRequest, error) {
	for k, vs := range q {
		if len(vs) > 1 {
			return nil, &pageError{status: 400, title: "Invalid request", message: "The parameter " + k + " is repeated. Each parameter may be given once."}
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return nil, &pageError{status: 400, title: "Invalid request", message: "The request has no client_id."}
	}
	var app *Application
	err := s.db.View(r.Context(), func(tx *store.Tx) error {
		var err error
		app, err = apps.GetBy(tx, "uid", clientID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, &pageError{status: 401, title: "Unknown application", message: "Client authentication failed due to unknown client. No application is registered with this client_id."}
	}
	if err != nil {
		return nil, err
	}
	redirect := q.Get("redirect_uri")
	switch {
	case redirect == "" && len(app.RedirectURIs) == 1:
		redirect = app.RedirectURIs[0]
	case redirect == "":
		return nil, &pageError{status: 400, title: "Invalid redirect URI", message: "The application has several redirect URIs; the request must name one of them."}
	case !slices.Contains(app.RedirectURIs, redirect):
		// Exact match only: no prefix, host or path leeway.
		return nil, &pageError{status: 400, title: "Invalid redirect URI", message: "The redirect URI included is not valid: it is not one of the application's registered redirect URIs."}
	}
	ar := &authRequest{app: app, redirectURI: redirect, state: q.Get("state")}
	if len(ar.state) > maxState {
		ar.state = "" // not echoed: the client gets the error without it
		return ar, &redirectError{"invalid_request", "The state parameter is longer than 1024 bytes."}
	}
	switch rt := q.Get("response_type"); rt {
	case "code":
	case "":
		return ar, &redirectError{"invalid_request", "Missing required parameter: response_type."}
	default:
		// The implicit grant (token) included: the spec has server-side
		// clients only.
		return ar, &redirectError{"unsupported_response_type", "The authorization server does not support this response type."}
	}
	scopes, se := requestedScopes(map[string]string{"scope": q.Get("scope")}, app.Scopes, app.Scopes)
	if se != nil {
		return ar, &redirectError{"invalid_scope", "The requested scope is invalid, unknown, or malformed."}
	}
	ar.scopes = scopes
	ar.challenge, ar.challengeMethod = q.Get("code_challenge"), q.Get("code_challenge_method")
	switch {
	case ar.challenge == "" && ar.challengeMethod != "":
		return ar, &redirectError{"invalid_request", "code_challenge_method without code_challenge."}
	case ar.challenge == "" && !app.Confidential:
		// A public client has no secret: only the verifier binds the code
		// to it (RFC 7636; required by OAuth 2.1).
		return ar, &redirectError{"invalid_request", "A public client must send a code_challenge (PKCE)."}
	case ar.challenge == "":
	case !validPKCEString(ar.challenge):
		return ar, &redirectError{"invalid_request", "The code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'."}
	case ar.challengeMethod == "":
		ar.challengeMethod = "plain" // RFC 7636 4.3
	case ar.challengeMethod != "S256" && ar.challengeMethod != "plain":
		return ar, &redirectError{"invalid_request", "The code_challenge_method must be S256 or plain."}
	}
	return ar, nil
}

// fields are the request's parameters for the consent form's hidden inputs.
func (ar *authRequest) fields() []hiddenField {
	f := []hiddenField{{"client_id", ar.app.UID}, {"redirect_uri", ar.redirectURI}, {"response_type", "code"},
		{"scope", strings.Join(ar.scopes, " ")}}
	if ar.state != "" {
		f = append(f, hiddenField{"state", ar.state})
	}
	if ar.challenge != "" {
		f = append(f, hiddenField{"code_challenge", ar.challenge}, hiddenField{"code_challenge_method", ar.challengeMethod})
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

func (s *Service) authProblem(w http.ResponseWriter, r *http.Request, ar *authRequest, err error) {
	var pe *pageError
	var re *redirectError
	switch {
	case errors.As(err, &pe):
		s.render(w, r, pe.status, "error", pageData{Title: pe.title, Message: pe.message})
	case errors.As(err, &re):
		params := url.Values{"error": {re.code}, "error_description": {re.description}}
		if ar.state != "" {
			params.Set("state", ar.state)
		}
		redirectTo(w, r, ar.redirectURI, params)
	default:
		s.log.Error("authorization request failed", zap.Error(err))
		s.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not handle the request. Try again later."})
	}
}

// serveAuthorize is GET /oauth/authorize: the sign-in page for a browser
// without a session, else the consent page.
func (s *Service) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	ar, err := s.checkAuthRequest(r, r.URL.Query())
	if err != nil {
		s.authProblem(w, r, ar, err)
		return
	}
	_, u, secret := s.browserSession(r)
	if u == nil {
		s.renderSignIn(w, r, http.StatusOK, r.URL.RequestURI(), "")
		return
	}
	s.render(w, r, http.StatusOK, "consent", pageData{Title: "Authorize " + ar.app.Name, User: u.Username, App: ar.app.Name,
		Scopes: describeScopes(ar.scopes), Hidden: ar.fields(), CSRF: sessionCSRF(secret)})
}

// serveDecision is the consent form's POST: Authorize or Deny.
func (s *Service) serveDecision(w http.ResponseWriter, r *http.Request) {
	form, ok := s.readForm(w, r)
	if !ok {
		return
	}
	ar, err := s.checkAuthRequest(r, form)
	if err != nil {
		s.authProblem(w, r, ar, err)
		return
	}
	sess, u, secret := s.browserSession(r)
	if u == nil {
		// Signed out meanwhile: sign in again, then see the consent again.
		back := url.Values{}
		for _, f := range ar.fields() {
			back.Set(f.Name, f.Value)
		}
		s.renderSignIn(w, r, http.StatusUnauthorized, "/oauth/authorize?"+back.Encode(), "Your session has ended. Sign in again.")
		return
	}
	if !tokensEqual(form.Get("authenticity_token"), sessionCSRF(secret)) {
		s.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Go back to the application and start again."})
		return
	}
	switch form.Get("decision") {
	case "deny":
		params := url.Values{"error": {"access_denied"}, "error_description": {"The resource owner or authorization server denied the request."}}
		if ar.state != "" {
			params.Set("state", ar.state)
		}
		redirectTo(w, r, ar.redirectURI, params)
		return
	case "authorize":
	default:
		s.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Invalid request", Message: "Choose Authorize or Deny."})
		return
	}
	code := newSecret()
	now := s.now()
	g := &Grant{CodeHash: hashSecret(code), AppID: ar.app.ID, UserID: sess.UserID, RedirectURI: ar.redirectURI, Scopes: ar.scopes,
		Challenge: ar.challenge, ChallengeMethod: ar.challengeMethod, CreatedAt: now, ExpiresAt: now.Add(CodeLifetime)}
	if err := s.db.Update(r.Context(), func(tx *store.Tx) error {
		g.ID = 0
		return grants.Insert(tx, g)
	}); err != nil {
		s.authProblem(w, r, ar, err)
		return
	}
	params := url.Values{"code": {code}}
	if ar.state != "" {
		params.Set("state", ar.state)
	}
	redirectTo(w, r, ar.redirectURI, params)
}

// readForm reads a page form's body (bounded), writing the error page
// itself when it cannot.
func (s *Service) readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Invalid request", Message: "The form could not be read."})
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
func (s *Service) formCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(signInCSRFCookie); err == nil && len(c.Value) == 64 {
		return c.Value
	}
	token := newSecret()
	s.setCookie(w, r, signInCSRFCookie, token, 0, http.SameSiteStrictMode)
	return token
}

// formCSRFValid checks a form's authenticity_token against the
// double-submit cookie.
func formCSRFValid(r *http.Request, form url.Values) bool {
	c, err := r.Cookie(signInCSRFCookie)
	return err == nil && tokensEqual(form.Get("authenticity_token"), c.Value)
}

func (s *Service) renderSignIn(w http.ResponseWriter, r *http.Request, status int, returnTo, message string) {
	s.renderSignInNotice(w, r, status, returnTo, message, "")
}

func (s *Service) renderSignInNotice(w http.ResponseWriter, r *http.Request, status int, returnTo, message, notice string) {
	s.render(w, r, status, "sign_in", pageData{Title: "Sign in", ReturnTo: localPath(returnTo), CSRF: s.formCSRF(w, r),
		Error: message, Notice: notice})
}

// signInNotices are the notices another page may ask the sign-in page to
// show (?notice=); the page shows only these texts, never the parameter.
var signInNotices = map[string]string{
	"password_changed": "Your password was changed. Sign in with your new password.",
	"reset_requested":  "If an account has this e-mail address, a link to choose a new password is on its way to it.",
}

// serveSignInPage is GET /users/sign_in: the form, or who is signed in.
func (s *Service) serveSignInPage(w http.ResponseWriter, r *http.Request) {
	notice := signInNotices[r.URL.Query().Get("notice")]
	if _, u, secret := s.browserSession(r); u != nil {
		s.render(w, r, http.StatusOK, "signed_in", pageData{Title: "Signed in", User: u.Username, CSRF: sessionCSRF(secret), Notice: notice})
		return
	}
	s.renderSignInNotice(w, r, http.StatusOK, r.URL.Query().Get("return_to"), "", notice)
}

// serveSignIn checks the sign-in form through identity's password path
// (local and directory users, the sign-in throttle) and starts a session.
func (s *Service) serveSignIn(w http.ResponseWriter, r *http.Request) {
	form, ok := s.readForm(w, r)
	if !ok {
		return
	}
	returnTo := localPath(form.Get("return_to"))
	if !formCSRFValid(r, form) {
		s.renderSignIn(w, r, http.StatusForbidden, returnTo, "The form expired. Please sign in again.")
		return
	}
	login, password := strings.TrimSpace(form.Get("login")), form.Get("password")
	if login == "" || password == "" {
		s.renderSignIn(w, r, http.StatusBadRequest, returnTo, "Enter your username or e-mail and your password.")
		return
	}
	ctx := auth.WithClientAddr(r.Context(), r.RemoteAddr)
	u, err := s.passwords.AuthenticatePassword(ctx, login, password)
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", throttled.RetryAfterSeconds())
		s.renderSignIn(w, r, http.StatusTooManyRequests, returnTo, "Too many failed sign-in attempts. Try again in "+throttled.RetryAfterSeconds()+" seconds.")
		return
	case errors.Is(err, auth.ErrProviderUnavailable):
		w.Header().Set("Retry-After", "2")
		s.renderSignIn(w, r, http.StatusServiceUnavailable, returnTo, "A sign-in provider is restarting. Try again shortly.")
		return
	case errors.Is(err, auth.ErrInvalidPassword), errors.Is(err, auth.ErrUnauthorized), err == nil && u.Blocked:
		s.renderSignIn(w, r, http.StatusUnauthorized, returnTo, "Invalid login or password.")
		return
	case err != nil:
		s.log.Error("sign-in failed", zap.Error(err))
		s.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not sign you in. Try again later."})
		return
	}
	secret, err := s.newSession(r.Context(), uint64(u.ID))
	if err != nil {
		s.log.Error("could not store a session", zap.Error(err))
		s.render(w, r, 500, "error", pageData{Title: "Something went wrong", Message: "The server could not sign you in. Try again later."})
		return
	}
	if s.activity != nil {
		if err := s.activity.RecordActivity(r.Context(), u.ID); err != nil {
			s.log.Warn("could not record the sign-in as activity", zap.Error(err))
		}
	}
	s.setCookie(w, r, auth.SessionCookie, secret, int(SessionLifetime/time.Second), http.SameSiteLaxMode)
	s.setCookie(w, r, signInCSRFCookie, "", -1, http.SameSiteStrictMode)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, returnTo, http.StatusSeeOther)
}

// serveSignOut ends the browser's session.
func (s *Service) serveSignOut(w http.ResponseWriter, r *http.Request) {
	form, ok := s.readForm(w, r)
	if !ok {
		return
	}
	sess, _, secret := s.browserSession(r)
	if sess != nil {
		if !tokensEqual(form.Get("authenticity_token"), sessionCSRF(secret)) {
			s.render(w, r, http.StatusForbidden, "error", pageData{Title: "Form expired", Message: "The form could not be verified (CSRF check). Reload the page and try again."})
			return
		}
		s.endSession(r.Context(), sess.ID)
	}
	s.setCookie(w, r, auth.SessionCookie, "", -1, http.SameSiteLaxMode)
	http.Redirect(w, r, "/users/sign_in", http.StatusSeeOther)
}
