package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/oauth2"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

// The password grant through a real OAuth client library: the token's
// JSON is exactly the spec's, and the token works through client-go.
func TestPasswordGrantThroughOAuth2Library(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	a := e.app(t, "trusted", "https://t.example.com/cb", "api read_user", true)
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInParams, oauth2.AuthStyleInHeader} {
		conf := &oauth2.Config{ClientID: a.ApplicationID, ClientSecret: a.Secret,
			Endpoint: oauth2.Endpoint{TokenURL: e.URL + "/oauth/token", AuthStyle: style}}
		tok, err := conf.PasswordCredentialsToken(context.Background(), u.Username, u.Password)
		if err != nil {
			t.Fatalf("auth style %d: %v", style, err)
		}
		if tok.TokenType != "bearer" || len(tok.AccessToken) != 64 || len(tok.RefreshToken) != 64 ||
			tok.ExpiresIn != 7200 || tok.Extra("scope") != "api read_user" {
			t.Fatalf("token %+v scope %v", tok, tok.Extra("scope"))
		}
		c, err := gitlab.NewAuthSourceClient(gitlab.OAuthTokenSource{TokenSource: conf.TokenSource(context.Background(), tok)},
			gitlab.WithBaseURL(e.URL+"/api/v4"), gitlab.WithoutRetries())
		if err != nil {
			t.Fatal(err)
		}
		me, _, err := c.Users.CurrentUser()
		if err != nil || me.Username != u.Username {
			t.Fatalf("current user: %v %v", me, err)
		}
	}

	// The raw answer has exactly the spec's fields.
	body := e.passwordToken(t, u.Username, u.Password, url.Values{"client_id": {a.ApplicationID}, "client_secret": {a.Secret}, "scope": {"read_user"}})
	var keys []string
	for k := range body {
		keys = append(keys, k)
	}
	if len(keys) != 6 || body["token_type"] != "bearer" || body["expires_in"] != float64(7200) || body["scope"] != "read_user" {
		t.Fatalf("token body %v", body)
	}
	created := int64(body["created_at"].(float64))
	if d := time.Now().Unix() - created; d < -2 || d > 60 {
		t.Fatalf("created_at %d", created)
	}
}

// client-go's own password-grant client (no OAuth client at all, as GitLab
// allows), and the e-mail as login.
func TestPasswordGrantThroughClientGo(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	for _, login := range []string{u.Username, u.Email} {
		c, err := gitlab.NewBasicAuthClient(login, u.Password, gitlab.WithBaseURL(e.URL+"/api/v4"), gitlab.WithoutRetries())
		if err != nil {
			t.Fatalf("%s: %v", login, err)
		}
		me, _, err := c.Users.CurrentUser()
		if err != nil || me.ID != u.ID {
			t.Fatalf("%s: %v %v", login, me, err)
		}
	}
	// The token is fetched on the first call, which fails.
	c, err := gitlab.NewBasicAuthClient(u.Username, "wrong", gitlab.WithBaseURL(e.URL+"/api/v4"), gitlab.WithoutRetries())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Users.CurrentUser(); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("a wrong password: %v", err)
	}
}

func TestScopesAreEnforcedLikePersonalTokens(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	readUser := e.passwordToken(t, u.Username, u.Password, url.Values{"scope": {"read_user"}})["access_token"].(string)
	c := e.bearer(t, readUser)
	if _, _, err := c.Users.CurrentUser(); err != nil {
		t.Fatalf("read_user on GET /user: %v", err)
	}
	if _, resp, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("nope")}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("read_user creating a project: %v", err)
	}
	openid := e.passwordToken(t, u.Username, u.Password, url.Values{"scope": {"openid"}})["access_token"].(string)
	if _, resp, err := e.bearer(t, openid).Users.CurrentUser(); err == nil || resp.StatusCode != 403 {
		t.Fatalf("openid on GET /user: %v", err)
	}
	api := e.passwordToken(t, u.Username, u.Password, nil)
	if api["scope"] != "api" {
		t.Fatalf("default scope %v", api["scope"])
	}
	if _, _, err := e.bearer(t, api["access_token"].(string)).Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("yes")}); err != nil {
		t.Fatalf("api creating a project: %v", err)
	}
	// The access_token parameter works as the header does.
	resp, raw := e.JSON(t, http.MethodGet, "/api/v4/user?access_token="+readUser, nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"username":"`+u.Username+`"`) {
		t.Fatalf("access_token parameter: %d %s", resp.StatusCode, raw)
	}
	// An OAuth token may not sudo (no sudo scope exists here).
	rootTok := e.passwordToken(t, "root", e.RootPassword, nil)["access_token"].(string)
	resp, raw = e.JSON(t, http.MethodGet, "/api/v4/user?sudo="+store.IDString(u.ID), nil, nil, "Authorization", "Bearer "+rootTok)
	if resp.StatusCode != 403 {
		t.Fatalf("sudo with an OAuth token: %d %s", resp.StatusCode, raw)
	}
	// A scope the client was not registered for is refused.
	a := e.app(t, "reader", "https://r.example.com/cb", "read_user", true)
	r2, body := e.post(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {u.Username}, "password": {u.Password},
		"scope": {"api"}, "client_id": {a.ApplicationID}, "client_secret": {a.Secret}})
	wantOAuthError(t, "scope beyond the client's", r2, body, 400, "invalid_scope")
	r2, body = e.post(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {u.Username}, "password": {u.Password}, "scope": {"sudo"}})
	wantOAuthError(t, "unknown scope", r2, body, 400, "invalid_scope")
}

func TestRefreshRotatesAndRevokeEnds(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	a := e.app(t, "rotating", "https://rot.example.com/cb", "api", true)
	client := url.Values{"client_id": {a.ApplicationID}, "client_secret": {a.Secret}}
	first := e.passwordToken(t, u.Username, u.Password, client)

	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first["refresh_token"].(string)}}
	// Tokens of a client need that client to refresh them.
	resp, body := e.post(t, "/oauth/token", form)
	wantOAuthError(t, "refresh without the client", resp, body, 401, "invalid_client")
	other := e.app(t, "other", "https://o.example.com/cb", "api", true)
	resp, body = e.post(t, "/oauth/token", form, "Authorization", basic(other.ApplicationID, other.Secret))
	wantOAuthError(t, "refresh by another client", resp, body, 400, "invalid_grant")

	resp, second := e.post(t, "/oauth/token", form, "Authorization", basic(a.ApplicationID, a.Secret))
	if resp.StatusCode != 200 || second["access_token"] == first["access_token"] || second["refresh_token"] == first["refresh_token"] {
		t.Fatalf("refresh: %d %v", resp.StatusCode, second)
	}
	// Rotation: the old access token is spent (its refresh token too: see
	// TestSpentRefreshTokenRevokesItsChain).
	if _, r, err := e.bearer(t, first["access_token"].(string)).Users.CurrentUser(); err == nil || r.StatusCode != 401 {
		t.Fatalf("the replaced access token still works: %v", err)
	}
	newTok := second["access_token"].(string)
	if _, _, err := e.bearer(t, newTok).Users.CurrentUser(); err != nil {
		t.Fatal(err)
	}

	// token/info.
	var info map[string]any
	r, raw := e.JSON(t, http.MethodGet, "/oauth/token/info", nil, &info, "Authorization", "Bearer "+newTok)
	if r.StatusCode != 200 || info["resource_owner_id"] != float64(u.ID) || info["expires_in_seconds"].(float64) < 7100 ||
		info["application"].(map[string]any)["uid"] != a.ApplicationID {
		t.Fatalf("token info: %d %s", r.StatusCode, raw)
	}
	r, raw = e.JSON(t, http.MethodGet, "/oauth/token/info?access_token=nope", nil, nil)
	if r.StatusCode != 401 || !strings.Contains(string(raw), `"error":"invalid_request"`) {
		t.Fatalf("token info of nothing: %d %s", r.StatusCode, raw)
	}

	// Revoke: another confidential client may not; the owner may; unknown
	// tokens answer 200 as RFC 7009 asks.
	resp, body = e.post(t, "/oauth/revoke", url.Values{"token": {newTok}}, "Authorization", basic(other.ApplicationID, other.Secret))
	wantOAuthError(t, "revoke by another client", resp, body, 403, "unauthorized_client")
	resp, body = e.post(t, "/oauth/revoke", url.Values{"token": {newTok}}, "Authorization", basic(a.ApplicationID, a.Secret))
	if resp.StatusCode != 200 || len(body) != 0 {
		t.Fatalf("revoke: %d %v", resp.StatusCode, body)
	}
	if _, r, err := e.bearer(t, newTok).Users.CurrentUser(); err == nil || r.StatusCode != 401 {
		t.Fatalf("a revoked token still works: %v", err)
	}
	resp, body = e.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second["refresh_token"].(string)}},
		"Authorization", basic(a.ApplicationID, a.Secret))
	wantOAuthError(t, "refresh of a revoked pair", resp, body, 400, "invalid_grant")
	resp, _ = e.post(t, "/oauth/revoke", url.Values{"token": {"not-a-token"}})
	if resp.StatusCode != 200 {
		t.Fatalf("revoke unknown: %d", resp.StatusCode)
	}
	// A token without a client is its own proof.
	bare := e.passwordToken(t, u.Username, u.Password, nil)["access_token"].(string)
	if resp, _ = e.post(t, "/oauth/revoke", url.Values{"token": {bare}}); resp.StatusCode != 200 {
		t.Fatalf("revoke bare: %d", resp.StatusCode)
	}
	if _, r, err := e.bearer(t, bare).Users.CurrentUser(); err == nil || r.StatusCode != 401 {
		t.Fatalf("a revoked bare token still works: %v", err)
	}
}

// TestSpentRefreshTokenRevokesItsChain: a refresh token used a second time
// is refused, and the token its first use gave (and whatever was rotated
// from that) is revoked: one of the two holders is a thief. Tokens of
// other chains of the same user and client keep working.
func TestSpentRefreshTokenRevokesItsChain(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	a := e.app(t, "chain", "https://chain.example.com/cb", "api", true)
	client := url.Values{"client_id": {a.ApplicationID}, "client_secret": {a.Secret}}
	refresh := func(token string) (*http.Response, map[string]any) {
		return e.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}},
			"Authorization", basic(a.ApplicationID, a.Secret))
	}
	works := func(access string) bool {
		_, r, err := e.bearer(t, access).Users.CurrentUser()
		if err != nil && (r == nil || r.StatusCode != 401) {
			t.Fatalf("GET /user: %v", err)
		}
		return err == nil
	}
	first := e.passwordToken(t, u.Username, u.Password, client)
	other := e.passwordToken(t, u.Username, u.Password, client) // another chain
	resp, second := refresh(first["refresh_token"].(string))
	if resp.StatusCode != 200 {
		t.Fatalf("refresh: %d %v", resp.StatusCode, second)
	}
	resp, third := refresh(second["refresh_token"].(string))
	if resp.StatusCode != 200 || !works(third["access_token"].(string)) {
		t.Fatalf("second refresh: %d %v", resp.StatusCode, third)
	}

	resp, body := refresh(first["refresh_token"].(string)) // spent two rotations ago
	wantOAuthError(t, "spent refresh token", resp, body, 400, "invalid_grant")
	if works(third["access_token"].(string)) {
		t.Fatal("the chain's live access token still works after its spent refresh token was used again")
	}
	resp, body = refresh(third["refresh_token"].(string))
	wantOAuthError(t, "the chain's live refresh token", resp, body, 400, "invalid_grant")
	if !works(other["access_token"].(string)) {
		t.Fatal("another chain of the same user was revoked")
	}
	if resp, body := refresh(other["refresh_token"].(string)); resp.StatusCode != 200 {
		t.Fatalf("another chain's refresh: %d %v", resp.StatusCode, body)
	}
}

// Access tokens expire after 7200 s by the module's clock; the refresh
// token still gets a new one.
func TestAccessTokensExpire(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	tok := e.passwordToken(t, u.Username, u.Password, nil)
	c := e.bearer(t, tok["access_token"].(string))
	e.clock.advance(7199 * time.Second)
	if _, _, err := c.Users.CurrentUser(); err != nil {
		t.Fatalf("at 7199 s: %v", err)
	}
	e.clock.advance(time.Second)
	if _, r, err := c.Users.CurrentUser(); err == nil || r.StatusCode != 401 {
		t.Fatalf("at 7200 s: %v", err)
	}
	r, _ := e.JSON(t, http.MethodGet, "/oauth/token/info", nil, nil, "Authorization", "Bearer "+tok["access_token"].(string))
	if r.StatusCode != 401 {
		t.Fatalf("token info of an expired token: %d", r.StatusCode)
	}
	resp, fresh := e.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}})
	if resp.StatusCode != 200 {
		t.Fatalf("refresh after expiry: %d %v", resp.StatusCode, fresh)
	}
	if _, _, err := e.bearer(t, fresh["access_token"].(string)).Users.CurrentUser(); err != nil {
		t.Fatal(err)
	}
}

func TestBlockedUsersGetNoTokensAndTheirTokensStop(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	tok := e.passwordToken(t, u.Username, u.Password, nil)
	if err := e.Client.Users.BlockUser(u.ID); err != nil {
		t.Fatal(err)
	}
	resp, body := e.post(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {u.Username}, "password": {u.Password}})
	wantOAuthError(t, "blocked user's password grant", resp, body, 400, "invalid_grant")
	if _, r, err := e.bearer(t, tok["access_token"].(string)).Users.CurrentUser(); err == nil || r.StatusCode != 401 {
		t.Fatalf("a blocked user's token still works: %v", err)
	}
	resp, body = e.post(t, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}})
	wantOAuthError(t, "blocked user's refresh", resp, body, 400, "invalid_grant")
}

func TestTokenEndpointBadInput(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	a := e.app(t, "bad-input", "https://b.example.com/cb", "api", true)
	pw := url.Values{"grant_type": {"password"}, "username": {u.Username}, "password": {u.Password}}
	cases := []struct {
		name    string
		query   string
		form    string
		headers []string
		status  int
		code    string
	}{
		{"no grant type", "", "username=a&password=b", nil, 400, "invalid_request"},
		{"unknown grant type", "", "grant_type=magic", nil, 400, "unsupported_grant_type"},
		{"implicit is no grant", "", "grant_type=token", nil, 400, "unsupported_grant_type"},
		{"client credentials unsupported", "", "grant_type=client_credentials&client_id=" + a.ApplicationID + "&client_secret=" + a.Secret, nil, 400, "unsupported_grant_type"},
		{"no password", "", "grant_type=password&username=" + u.Username, nil, 400, "invalid_request"},
		{"no username", "", "grant_type=password&password=x", nil, 400, "invalid_request"},
		{"wrong password", "", "grant_type=password&username=" + u.Username + "&password=wrong", nil, 400, "invalid_grant"},
		{"unknown user", "", "grant_type=password&username=nobody-here&password=x", nil, 400, "invalid_grant"},
		{"repeated parameter", "", pw.Encode() + "&username=root", nil, 400, "invalid_request"},
		{"repeated across query and body", "grant_type=password", pw.Encode(), nil, 400, "invalid_request"},
		{"client secret in the query", "client_secret=" + a.Secret, pw.Encode() + "&client_id=" + a.ApplicationID, nil, 400, "invalid_request"},
		{"password in the query", "password=" + u.Password, "grant_type=password&username=" + u.Username, nil, 400, "invalid_request"},
		{"code in the query", "code=x", "grant_type=authorization_code&redirect_uri=https://b.example.com/cb&client_id=" + a.ApplicationID + "&client_secret=" + a.Secret, nil, 400, "invalid_request"},
		{"unknown client", "", pw.Encode() + "&client_id=nope&client_secret=nope", nil, 401, "invalid_client"},
		{"wrong client secret", "", pw.Encode() + "&client_id=" + a.ApplicationID + "&client_secret=wrong", nil, 401, "invalid_client"},
		{"confidential client without its secret", "", pw.Encode() + "&client_id=" + a.ApplicationID, nil, 401, "invalid_client"},
		{"wrong basic secret", "", pw.Encode(), []string{"Authorization", basic(a.ApplicationID, "wrong")}, 401, "invalid_client"},
		{"basic and form secret both", "", pw.Encode() + "&client_secret=" + a.Secret, []string{"Authorization", basic(a.ApplicationID, a.Secret)}, 400, "invalid_request"},
		{"code grant without a client", "", "grant_type=authorization_code&code=x&redirect_uri=https://b.example.com/cb", nil, 401, "invalid_client"},
		{"code grant without a code", "", "grant_type=authorization_code&redirect_uri=https://b.example.com/cb&client_id=" + a.ApplicationID + "&client_secret=" + a.Secret, nil, 400, "invalid_request"},
		{"unknown code", "", "grant_type=authorization_code&code=nope&redirect_uri=https://b.example.com/cb&client_id=" + a.ApplicationID + "&client_secret=" + a.Secret, nil, 400, "invalid_grant"},
		{"refresh without token", "", "grant_type=refresh_token", nil, 400, "invalid_request"},
		{"unknown refresh token", "", "grant_type=refresh_token&refresh_token=nope", nil, 400, "invalid_grant"},
		{"malformed form", "", "grant_type=%zz", nil, 400, "invalid_request"},
		{"oversized body", "", "grant_type=password&username=" + strings.Repeat("u", 20000) + "&password=x", nil, 400, "invalid_request"},
		{"hostile username", "", "grant_type=password&username=%00%27%22%3Cscript%3E&password=x", nil, 400, "invalid_grant"},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodPost, e.URL+"/oauth/token?"+c.query, strings.NewReader(c.form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(c.headers); i += 2 {
			req.Header.Set(c.headers[i], c.headers[i+1])
		}
		resp, body := do(t, req)
		wantOAuthError(t, c.name, resp, body, c.status, c.code)
		if c.status == 401 && len(c.headers) > 0 && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate after HTTP basic", c.name)
		}
	}
	// JSON bodies work as forms do.
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/oauth/token", strings.NewReader(
		`{"grant_type":"password","username":"`+u.Username+`","password":"`+u.Password+`"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, body := do(t, req); resp.StatusCode != 200 || body["token_type"] != "bearer" {
		t.Fatalf("JSON body: %d %v", resp.StatusCode, body)
	}
	req, _ = http.NewRequest(http.MethodPost, e.URL+"/oauth/token", strings.NewReader(`{"grant_type":["password"]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, body := do(t, req)
	wantOAuthError(t, "JSON array parameter", resp, body, 400, "invalid_request")
	// A member given twice is refused as a repeated form field is, not
	// resolved to its last value.
	for name, raw := range map[string]string{
		"repeated JSON member":  `{"grant_type":"password","username":"` + u.Username + `","password":"wrong","password":"` + u.Password + `"}`,
		"JSON after the object": `{"grant_type":"password"} {}`,
		"JSON not an object":    `"grant_type"`,
	} {
		req, _ = http.NewRequest(http.MethodPost, e.URL+"/oauth/token", strings.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		resp, body = do(t, req)
		wantOAuthError(t, name, resp, body, 400, "invalid_request")
	}
}

// Password guesses at the token endpoint are limited per account and per
// address by identity's sign-in throttle (shared with POST /session).
func TestPasswordGuessesAreRateLimited(t *testing.T) {
	t.Parallel()
	e := start(t, fennectest.WithModuleConfig(identity.SectionName, func(c *identity.Config) {
		c.SignInThrottle.LoginFailures, c.SignInThrottle.AddressFailures, c.SignInThrottle.Window = 3, 6, time.Minute
	}))
	victim, other := e.CreateUser(t, ""), e.CreateUser(t, "")
	guess := func(login, password string) (*http.Response, map[string]any) {
		return e.post(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {login}, "password": {password}})
	}
	for i := range 3 {
		resp, body := guess(victim.Username, "guess"+store.IDString(int64(i)))
		wantOAuthError(t, "guess", resp, body, 400, "invalid_grant")
	}
	// Locked: even the right password is refused, with a clear 429.
	resp, body := guess(victim.Username, victim.Password)
	wantOAuthError(t, "right password while locked", resp, body, 429, "invalid_grant")
	if resp.Header.Get("Retry-After") == "" || !strings.Contains(body["error_description"].(string), "Too many failed sign-in attempts") {
		t.Fatalf("429 without Retry-After or reason: %v %v", resp.Header, body)
	}
	// Another account from the same address still works until the
	// address's own limit.
	if resp, _ := guess(other.Username, other.Password); resp.StatusCode != 200 {
		t.Fatalf("other account: %d", resp.StatusCode)
	}
	for i := range 3 {
		if resp, _ := guess("nobody"+store.IDString(int64(i)), "x"); resp.StatusCode != 400 {
			t.Fatalf("spraying %d: %d", i, resp.StatusCode)
		}
	}
	resp, body = guess(other.Username, other.Password)
	wantOAuthError(t, "address locked", resp, body, 429, "invalid_grant")
}

func basic(id, secret string) string {
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return req.Header.Get("Authorization")
}

// A token the password grant issued without a client names no application
// in its info: Doorkeeper's {"uid": null}, not a missing object.
func TestTokenInfoWithoutAClient(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "")
	resp, tok := e.post(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {u.Username}, "password": {u.Password}})
	if resp.StatusCode != 200 {
		t.Fatalf("password grant: %d %v", resp.StatusCode, tok)
	}
	r, raw := e.JSON(t, http.MethodGet, "/oauth/token/info", nil, nil, "Authorization", "Bearer "+tok["access_token"].(string))
	if r.StatusCode != 200 || !strings.Contains(string(raw), `"application":{"uid":null}`) {
		t.Fatalf("token info: %d %s", r.StatusCode, raw)
	}
	// A token sent in the revoke request's URL is refused, not revoked.
	req, _ := http.NewRequest(http.MethodPost, e.URL+"/oauth/revoke?token="+tok["access_token"].(string), nil)
	resp, body := do(t, req)
	wantOAuthError(t, "token in the query", resp, body, 400, "invalid_request")
	if _, _, err := e.bearer(t, tok["access_token"].(string)).Users.CurrentUser(); err != nil {
		t.Fatalf("the token was revoked by a refused request: %v", err)
	}
}
