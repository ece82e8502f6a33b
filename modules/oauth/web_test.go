package oauth_test

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/identity"
)

// webClient is a cookie-keeping HTTP client that does not follow
// redirects: the pages driven by hand, to look at every answer.
type webClient struct {
	e   *env
	jar *cookiejar.Jar
	c   *http.Client
}

func (e *env) web(t *testing.T) *webClient {
	jar, _ := cookiejar.New(nil)
	return &webClient{e: e, jar: jar, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page sends a request and returns the response with its body as text.
func (w *webClient) page(t *testing.T, method, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, w.e.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := w.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// formFields reads the hidden fields of a page's form.
func formFields(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	return v
}

// signIn signs the client in through the sign-in page.
func (w *webClient) signIn(t *testing.T, login, password string) *http.Response {
	t.Helper()
	_, page := w.page(t, http.MethodGet, "/users/sign_in", nil)
	f := formFields(page)
	f.Set("login", login)
	f.Set("password", password)
	resp, _ := w.page(t, http.MethodPost, "/users/sign_in", f)
	return resp
}

// sessionCookie is the Set-Cookie of the session in resp.
func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == "_fennec_session" {
			return c
		}
	}
	return nil
}

func TestSignInSessionCookieAndTheAPI(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	w := e.web(t)
	resp, page := w.page(t, http.MethodGet, "/users/sign_in", nil)
	if resp.StatusCode != 200 || resp.Header.Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		!strings.Contains(page, `<label for="login">`) || !strings.Contains(page, `<label for="password">`) || strings.Contains(page, "<script") {
		t.Fatalf("sign-in page: %d %v\n%s", resp.StatusCode, resp.Header, page)
	}

	// Without the form's CSRF token: refused, no session.
	resp, _ = w.page(t, http.MethodPost, "/users/sign_in", url.Values{"login": {u.Username}, "password": {u.Password}})
	if resp.StatusCode != 403 || sessionCookie(resp) != nil {
		t.Fatalf("sign-in without CSRF token: %d", resp.StatusCode)
	}
	// An address of another site to return to is replaced by a local one.
	_, page = w.page(t, http.MethodGet, "/users/sign_in?return_to=//evil.example.com/x", nil)
	f := formFields(page)
	f.Set("login", u.Email)
	f.Set("password", u.Password)
	resp, _ = w.page(t, http.MethodPost, "/users/sign_in", f)
	c := sessionCookie(resp)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/users/sign_in" || c == nil {
		t.Fatalf("sign in: %d %v", resp.StatusCode, resp.Header)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure || c.Path != "/" || c.MaxAge != int((7*24*time.Hour).Seconds()) {
		t.Fatalf("session cookie %+v (no TLS here, so not Secure)", c)
	}
	if len(c.Value) != 64 {
		t.Fatalf("session secret %q", c.Value)
	}

	// The API honours the cookie for GET and HEAD only.
	cookie := "_fennec_session=" + c.Value
	r, raw := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Cookie", cookie)
	if r.StatusCode != 200 || !strings.Contains(string(raw), `"username":"`+u.Username+`"`) {
		t.Fatalf("GET /user with the session: %d %s", r.StatusCode, raw)
	}
	if r, _ := e.JSON(t, http.MethodHead, "/api/v4/user", nil, nil, "Cookie", cookie); r.StatusCode != 200 {
		t.Fatalf("HEAD /user with the session: %d", r.StatusCode)
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		r, raw := e.JSON(t, m, "/api/v4/projects", strings.NewReader(`{"name":"by-cookie"}`), nil, "Cookie", cookie, "Content-Type", "application/json")
		if r.StatusCode != 401 && r.StatusCode != 405 {
			t.Fatalf("%s /projects with only the cookie: %d %s", m, r.StatusCode, raw)
		}
	}
	if ps, _, err := e.Client.Projects.ListProjects(&gitlab.ListProjectsOptions{Search: gitlab.Ptr("by-cookie")}); err != nil || len(ps) != 0 {
		t.Fatalf("a cookie-only write stored something: %v %v", ps, err)
	}
	// A stale cookie browses as anonymous.
	if r, _ := e.JSON(t, http.MethodGet, "/api/v4/projects", nil, nil, "Cookie", "_fennec_session=stale"); r.StatusCode != 200 {
		t.Fatalf("stale cookie on a public list: %d", r.StatusCode)
	}

	// The signed-in page offers sign-out, which needs its CSRF token.
	resp, page = w.page(t, http.MethodGet, "/users/sign_in", nil)
	if resp.StatusCode != 200 || !strings.Contains(page, "signed in as <strong>"+u.Username) {
		t.Fatalf("signed-in page: %s", page)
	}
	if resp, _ := w.page(t, http.MethodPost, "/users/sign_out", url.Values{"authenticity_token": {"forged"}}); resp.StatusCode != 403 {
		t.Fatalf("sign-out with a forged token: %d", resp.StatusCode)
	}
	resp, _ = w.page(t, http.MethodPost, "/users/sign_out", formFields(page))
	if resp.StatusCode != 303 {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	if r, _ := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Cookie", cookie); r.StatusCode != 401 {
		t.Fatalf("GET /user after sign-out: %d", r.StatusCode)
	}
}

func TestSessionCookieIsSecureBehindHTTPS(t *testing.T) {
	t.Parallel()
	// The server is reached at an https URL (TLS ends at a proxy): the
	// test's own requests still come in over plain HTTP.
	var a *api.API
	e := start(t, fennectest.WithExtract(&a))
	a.SetExternalURL("https://fennec.example.com")
	u := e.CreateUser(t, "")
	w := e.web(t)
	_, page := w.page(t, http.MethodGet, "/users/sign_in", nil)
	f := formFields(page)
	f.Set("login", u.Username)
	f.Set("password", u.Password)
	// The jar would not send the Secure CSRF cookie over http: send it by hand.
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/users/sign_in", strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "_fennec_csrf", Value: f.Get("authenticity_token")})
	resp, _ := do(t, req)
	if c := sessionCookie(resp); resp.StatusCode != 303 || c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("behind https: %d %+v", resp.StatusCode, c)
	}
}

// Blocking a user ends their sessions for good: unblocking them does not
// bring the session back.
func TestBlockingEndsSessions(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	w := e.web(t)
	c := sessionCookie(w.signIn(t, u.Username, u.Password))
	cookie := "_fennec_session=" + c.Value
	// A second browser, left alone while the user is blocked: its session
	// must end too, not only the one that was used during the block.
	idle := "_fennec_session=" + sessionCookie(e.web(t).signIn(t, u.Username, u.Password)).Value
	for _, ck := range []string{cookie, idle} {
		if r, _ := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Cookie", ck); r.StatusCode != 200 {
			t.Fatalf("before: %d", r.StatusCode)
		}
	}
	if err := e.Client.Users.BlockUser(u.ID); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Cookie", cookie); r.StatusCode != 401 {
		t.Fatalf("blocked: %d", r.StatusCode)
	}
	e.Drain(t) // the block's event has been handled
	if err := e.Client.Users.UnblockUser(u.ID); err != nil {
		t.Fatal(err)
	}
	for _, ck := range []string{cookie, idle} {
		if r, _ := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Cookie", ck); r.StatusCode != 401 {
			t.Fatalf("unblocked: the ended session came back: %d", r.StatusCode)
		}
	}
	// Unblocked, the user signs in again.
	if r, _ := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Cookie",
		"_fennec_session="+sessionCookie(e.web(t).signIn(t, u.Username, u.Password)).Value); r.StatusCode != 200 {
		t.Fatalf("a new session after the unblock: %d", r.StatusCode)
	}
	// A blocked user cannot sign in on the page either.
	if err := e.Client.Users.BlockUser(u.ID); err != nil {
		t.Fatal(err)
	}
	if resp := e.web(t).signIn(t, u.Username, u.Password); resp.StatusCode != 401 || sessionCookie(resp) != nil {
		t.Fatalf("blocked sign-in: %d", resp.StatusCode)
	}
}

func TestSignInPageIsRateLimited(t *testing.T) {
	t.Parallel()
	e := start(t, fennectest.WithModuleConfig(identity.SectionName, func(c *identity.Config) {
		c.SignInThrottle.LoginFailures, c.SignInThrottle.Window = 2, time.Minute
	}))
	u := e.CreateUser(t, "")
	w := e.web(t)
	for range 2 {
		if resp := w.signIn(t, u.Username, "wrong"); resp.StatusCode != 401 {
			t.Fatalf("wrong password: %d", resp.StatusCode)
		}
	}
	resp := w.signIn(t, u.Username, u.Password)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || sessionCookie(resp) != nil {
		t.Fatalf("locked: %d %v", resp.StatusCode, resp.Header)
	}
}

// approve runs the consent step by hand for a signed-in client and returns
// the redirect's query.
func (w *webClient) approve(t *testing.T, q url.Values, decision string) url.Values {
	t.Helper()
	resp, page := w.page(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil)
	if resp.StatusCode != 200 || !strings.Contains(page, `id="authorize"`) {
		t.Fatalf("consent page: %d %s", resp.StatusCode, page)
	}
	f := formFields(page)
	f.Set("decision", decision)
	resp, _ = w.page(t, http.MethodPost, "/oauth/authorize", f)
	if resp.StatusCode != 302 {
		t.Fatalf("decision: %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc.Query()
}

func TestAuthorizeRequestsThatMustNotRedirect(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.app(t, "app", "https://app.example.com/cb", "api", true)
	multi := e.app(t, "multi", "https://m.example.com/one\nhttps://m.example.com/two", "api", true)
	w := e.web(t)
	base := url.Values{"client_id": {a.ApplicationID}, "redirect_uri": {"https://app.example.com/cb"}, "response_type": {"code"}, "state": {"s"}}
	with := func(k, v string) string {
		q := url.Values{}
		for k2, v2 := range base {
			q[k2] = v2
		}
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q.Encode()
	}
	cases := []struct {
		name, query string
		status      int
		title       string
	}{
		{"unknown client", with("client_id", "nope"), 401, "Unknown application"},
		{"no client", with("client_id", ""), 400, "Invalid request"},
		{"other host", with("redirect_uri", "https://evil.example.com/cb"), 400, "Invalid redirect URI"},
		{"other path", with("redirect_uri", "https://app.example.com/cb/../evil"), 400, "Invalid redirect URI"},
		{"longer path", with("redirect_uri", "https://app.example.com/cbx"), 400, "Invalid redirect URI"},
		{"extra query", with("redirect_uri", "https://app.example.com/cb?next=evil"), 400, "Invalid redirect URI"},
		{"javascript", with("redirect_uri", "javascript:alert(document.cookie)"), 400, "Invalid redirect URI"},
		{"repeated redirect", with("", "") + "&redirect_uri=https://evil.example.com/cb", 400, "Invalid request"},
		{"repeated client", with("", "") + "&client_id=" + multi.ApplicationID, 400, "Invalid request"},
		{"several registered, none given", "client_id=" + multi.ApplicationID + "&response_type=code", 400, "Invalid redirect URI"},
	}
	for _, c := range cases {
		resp, page := w.page(t, http.MethodGet, "/oauth/authorize?"+c.query, nil)
		if resp.StatusCode != c.status || resp.Header.Get("Location") != "" || !strings.Contains(page, "<h1>"+c.title+"</h1>") {
			t.Errorf("%s: %d %q\n%s", c.name, resp.StatusCode, resp.Header.Get("Location"), page)
		}
	}
	// One registered URI and none given: that one is used.
	if resp, page := w.page(t, http.MethodGet, "/oauth/authorize?"+with("redirect_uri", ""), nil); resp.StatusCode != 200 || !strings.Contains(page, `id="login"`) {
		t.Fatalf("default redirect URI: %d", resp.StatusCode)
	}
}

func TestAuthorizeErrorsGoBackToTheClient(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.app(t, "app", "https://app.example.com/cb?tenant=7", "read_user", true)
	w := e.web(t)
	base := url.Values{"client_id": {a.ApplicationID}, "redirect_uri": {"https://app.example.com/cb?tenant=7"}, "response_type": {"code"}, "state": {"s1"}}
	cases := []struct {
		name, key, value, code string
		state                  bool
	}{
		{"implicit grant", "response_type", "token", "unsupported_response_type", true},
		{"no response type", "response_type", "", "invalid_request", true},
		{"unknown scope", "scope", "api sudo", "invalid_scope", true},
		{"scope beyond the client's", "scope", "api", "invalid_scope", true},
		{"oversized state", "state", strings.Repeat("s", 1025), "invalid_request", false},
		{"plain-text challenge method unknown", "code_challenge_method", "S512", "invalid_request", true},
		{"short challenge", "code_challenge", "abc", "invalid_request", true},
	}
	for _, c := range cases {
		q := url.Values{}
		for k, v := range base {
			q[k] = v
		}
		if c.value == "" {
			q.Del(c.key)
		} else {
			q.Set(c.key, c.value)
		}
		if c.key == "code_challenge_method" {
			q.Set("code_challenge", strings.Repeat("a", 43))
		}
		resp, _ := w.page(t, http.MethodGet, "/oauth/authorize?"+q.Encode(), nil)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != 302 || loc == nil || loc.Host != "app.example.com" || loc.Query().Get("error") != c.code ||
			loc.Query().Get("tenant") != "7" || (loc.Query().Get("state") == "s1") != c.state || loc.Query().Has("code") {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

func TestCodeGrantRules(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	a := e.app(t, "app", "https://app.example.com/cb", "api read_user", true)
	other := e.app(t, "other", "https://app.example.com/cb", "api", true)
	public := e.app(t, "spa", "https://spa.example.com/cb", "read_user", false)
	w := e.web(t)
	if resp := w.signIn(t, u.Username, u.Password); resp.StatusCode != 303 {
		t.Fatalf("sign in: %d", resp.StatusCode)
	}
	authQ := func(app *gitlab.Application, redirect string, extra ...string) url.Values {
		q := url.Values{"client_id": {app.ApplicationID}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"st"}}
		for i := 0; i+1 < len(extra); i += 2 {
			q.Set(extra[i], extra[i+1])
		}
		return q
	}
	exchange := func(app *gitlab.Application, code, redirect string, extra ...string) (*http.Response, map[string]any) {
		f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {app.ApplicationID}}
		if app.Secret != "" {
			f.Set("client_secret", app.Secret)
		}
		for i := 0; i+1 < len(extra); i += 2 {
			f.Set(extra[i], extra[i+1])
		}
		return e.post(t, "/oauth/token", f)
	}

	// A code from another client.
	code := w.approve(t, authQ(a, "https://app.example.com/cb"), "authorize").Get("code")
	resp, body := exchange(other, code, "https://app.example.com/cb")
	wantOAuthError(t, "another client's code", resp, body, 400, "invalid_grant")
	// Still good for its own client, once.
	if resp, body = exchange(a, code, "https://app.example.com/cb"); resp.StatusCode != 200 || body["scope"] != "api read_user" {
		t.Fatalf("own code: %d %v", resp.StatusCode, body)
	}

	// The consent form's CSRF token is required.
	_, page := w.page(t, http.MethodGet, "/oauth/authorize?"+authQ(a, "https://app.example.com/cb").Encode(), nil)
	f := formFields(page)
	f.Set("decision", "authorize")
	f.Set("authenticity_token", "forged")
	if resp, _ := w.page(t, http.MethodPost, "/oauth/authorize", f); resp.StatusCode != 403 || resp.Header.Get("Location") != "" {
		t.Fatalf("forged consent: %d", resp.StatusCode)
	}

	// Codes expire after ten minutes.
	code = w.approve(t, authQ(a, "https://app.example.com/cb"), "authorize").Get("code")
	e.clock.advance(10*time.Minute + time.Second)
	resp, body = exchange(a, code, "https://app.example.com/cb")
	wantOAuthError(t, "expired code", resp, body, 400, "invalid_grant")

	// A public client must use PKCE.
	resp, _ = w.page(t, http.MethodGet, "/oauth/authorize?"+authQ(public, "https://spa.example.com/cb").Encode(), nil)
	if loc, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != 302 || loc.Query().Get("error") != "invalid_request" {
		t.Fatalf("public client without PKCE: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}

	// PKCE S256, for a public client without a secret.
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	q := authQ(public, "https://spa.example.com/cb", "code_challenge", challenge, "code_challenge_method", "S256")
	code = w.approve(t, q, "authorize").Get("code")
	resp, body = exchange(public, code, "https://spa.example.com/cb")
	wantOAuthError(t, "no verifier", resp, body, 400, "invalid_grant")
	code = w.approve(t, q, "authorize").Get("code")
	resp, body = exchange(public, code, "https://spa.example.com/cb", "code_verifier", strings.Repeat("w", 50))
	wantOAuthError(t, "wrong verifier", resp, body, 400, "invalid_grant")
	code = w.approve(t, q, "authorize").Get("code")
	if resp, body = exchange(public, code, "https://spa.example.com/cb", "code_verifier", verifier); resp.StatusCode != 200 {
		t.Fatalf("PKCE exchange: %d %v", resp.StatusCode, body)
	}
	if _, _, err := e.bearer(t, body["access_token"].(string)).Users.CurrentUser(); err != nil {
		t.Fatal(err)
	}
	// A verifier in the URL is refused.
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/oauth/token?code_verifier="+verifier, strings.NewReader("grant_type=authorization_code"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, body = do(t, req)
	wantOAuthError(t, "verifier in the query", resp, body, 400, "invalid_request")

	// Deny carries the state and no code.
	if q := w.approve(t, authQ(a, "https://app.example.com/cb"), "deny"); q.Get("error") != "access_denied" || q.Get("state") != "st" || q.Has("code") {
		t.Fatalf("deny: %v", q)
	}
}

// The address to return to after signing in stays on this server.
func TestSignInReturnsOnlyToThisServer(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	// An authorize request with the longest state it accepts, in
	// characters that percent-encoding triples, and a long redirect URI.
	long := "/oauth/authorize?" + url.Values{"client_id": {strings.Repeat("c", 64)}, "response_type": {"code"},
		"redirect_uri": {"https://app.example.com/" + strings.Repeat("p", 1500)}, "state": {strings.Repeat("é", 512)}}.Encode()
	if len(long) <= 4096 {
		t.Fatalf("the long address is only %d bytes", len(long))
	}
	for _, c := range []struct{ returnTo, want string }{
		{"/oauth/applications", "/oauth/applications"},
		{long, long},
		{"/" + strings.Repeat("x", 16<<10), "/users/sign_in"},
		{"//evil.example.com/x", "/users/sign_in"},
		{"https://evil.example.com/", "/users/sign_in"},
		{"/\\evil.example.com", "/users/sign_in"},
		{"/\t/evil.example.com", "/users/sign_in"},
		{"/\r\nSet-Cookie: x=y", "/users/sign_in"},
		{"javascript:alert(1)", "/users/sign_in"},
		{"", "/users/sign_in"},
	} {
		w := e.web(t)
		_, page := w.page(t, http.MethodGet, "/users/sign_in", nil)
		f := formFields(page)
		f.Set("login", u.Username)
		f.Set("password", u.Password)
		f.Set("return_to", c.returnTo)
		resp, _ := w.page(t, http.MethodPost, "/users/sign_in", f)
		if resp.StatusCode != 303 || resp.Header.Get("Location") != c.want {
			t.Errorf("return_to %q: %d %q, want %q", c.returnTo, resp.StatusCode, resp.Header.Get("Location"), c.want)
		}
	}
}
