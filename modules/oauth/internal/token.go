package internal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// maxTokenRequest bounds a token request's body: a few short parameters.
const maxTokenRequest = 16 << 10

// oauthError is an RFC 6749 section 5.2 error answer.
type oauthError struct {
	status      int
	code        string
	description string
	header      http.Header
}

func (e *oauthError) Error() string { return "oauth: " + e.code + ": " + e.description }

// The errors, in Doorkeeper's words where it has them.
func invalidRequest(desc string) *oauthError {
	return &oauthError{status: 400, code: "invalid_request", description: desc}
}

func invalidGrant() *oauthError {
	return &oauthError{status: 400, code: "invalid_grant", description: "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client."}
}

func invalidClient(basic bool) *oauthError {
	e := &oauthError{status: 401, code: "invalid_client", description: "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method."}
	if basic {
		// RFC 6749 5.2: a client that tried HTTP basic is told which scheme.
		e.header = http.Header{"Www-Authenticate": {`Basic realm="OAuth"`}}
	}
	return e
}

func invalidScope() *oauthError {
	return &oauthError{status: 400, code: "invalid_scope", description: "The requested scope is invalid, unknown, or malformed."}
}

func writeOAuthError(w http.ResponseWriter, e *oauthError) {
	for k, v := range e.header {
		w.Header()[k] = v
	}
	noStore(w)
	api.WriteJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.description})
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
}

// tokenParams reads a token, revoke or info request's parameters: the form
// or JSON body and the query string. A parameter sent twice is refused (RFC
// 6749 section 3.2), and so are secrets in the query string, which lands in
// access logs, proxies' logs and browser histories.
func tokenParams(r *http.Request) (map[string]string, *oauthError) {
	out := map[string]string{}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, invalidRequest("The query string is malformed.")
	}
	for _, secret := range []string{"client_secret", "password", "refresh_token", "code_verifier", "code", "token"} {
		if query.Has(secret) {
			return nil, invalidRequest(secret + " must be sent in the request body, never in the URL.")
		}
	}
	add := func(k string, vs []string) *oauthError {
		if _, dup := out[k]; dup || len(vs) > 1 {
			return invalidRequest("The parameter " + k + " is repeated.")
		}
		if len(vs) == 1 {
			out[k] = vs[0]
		}
		return nil
	}
	for k, vs := range query {
		if e := add(k, vs); e != nil {
			return nil, e
		}
	}
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return out, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxTokenRequest))
	if err != nil {
		return nil, invalidRequest("The request body is too large or could not be read.")
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case len(body) == 0:
	case ct == "application/json":
		m, dup, err := jsonObject(body)
		if err != nil {
			return nil, invalidRequest("The request body is not a JSON object.")
		}
		if dup != "" {
			return nil, invalidRequest("The parameter " + dup + " is repeated.")
		}
		for k, v := range m {
			var s string
			switch v := v.(type) {
			case string:
				s = v
			case float64, bool:
				s = fmt.Sprint(v)
			case nil:
				continue
			default:
				return nil, invalidRequest("The parameter " + k + " must be a string.")
			}
			if e := add(k, []string{s}); e != nil {
				return nil, e
			}
		}
	default:
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, invalidRequest("The request body is malformed.")
		}
		for k, vs := range form {
			if e := add(k, vs); e != nil {
				return nil, e
			}
		}
	}
	return out, nil
}

// jsonObject decodes a JSON object's members, and names the first member
// that appears twice (encoding/json keeps the last silently; a form's
// repeated field is refused, so is a JSON one).
func jsonObject(body []byte) (map[string]any, string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, "", errors.New("not a JSON object")
	}
	m := map[string]any{}
	dup := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", err
		}
		k, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, "", err
		}
		if _, seen := m[k]; seen && dup == "" {
			dup = k
		}
		m[k] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, "", errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "", errors.New("data after the JSON object")
	}
	return m, dup, nil
}

// clientAuth is who the client says it is.
type clientAuth struct {
	app   *Application // nil when no client identified itself
	basic bool
}

// authenticateClient checks the client's credentials, from HTTP basic
// (RFC 6749 2.3.1: form-encoded id and secret) or the client_id and
// client_secret parameters, never both. A confidential client must present
// its secret; a public one identifies itself by its id alone.
func (s *Service) authenticateClient(ctx context.Context, r *http.Request, p map[string]string) (clientAuth, *oauthError) {
	id, secret, basic := r.BasicAuth()
	if basic {
		if _, ok := p["client_secret"]; ok {
			return clientAuth{}, invalidRequest("Use one client authentication method, not both HTTP basic and client_secret.")
		}
		if v, err := url.QueryUnescape(id); err == nil {
			id = v
		}
		if v, err := url.QueryUnescape(secret); err == nil {
			secret = v
		}
		if pid, ok := p["client_id"]; ok && pid != id {
			return clientAuth{}, invalidClient(true)
		}
	} else {
		id, secret = p["client_id"], p["client_secret"]
	}
	if id == "" {
		if secret != "" {
			return clientAuth{}, invalidClient(basic)
		}
		return clientAuth{}, nil
	}
	var app *Application
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		app, err = apps.GetBy(tx, "uid", id)
		return err
	})
	if err != nil {
		// Compare anyway, so an unknown id costs what a known one does.
		secretMatches(secret, "")
		return clientAuth{}, invalidClient(basic)
	}
	switch {
	case secret != "" && !secretMatches(secret, app.SecretHash):
		return clientAuth{}, invalidClient(basic)
	case secret == "" && app.Confidential:
		return clientAuth{}, invalidClient(basic)
	}
	return clientAuth{app: app, basic: basic}, nil
}

// TokenResponse is the body of a successful token request.
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	CreatedAt    int64  `json:"created_at"`
	Scope        string `json:"scope"`
}

// issued is a token just made and its secrets (only the hashes are kept).
type issued struct {
	token           *Token
	access, refresh string
}

func (s *Service) newToken(appID, grantID, userID uint64, scopes []string) issued {
	access, refresh := newSecret(), newSecret()
	return issued{access: access, refresh: refresh, token: &Token{
		AccessHash: hashSecret(access), RefreshHash: hashSecret(refresh), AppID: appID, GrantID: grantID,
		UserID: userID, Scopes: scopes, CreatedAt: s.now(), ExpiresIn: int64(AccessTokenLifetime / time.Second),
	}}
}

func (i issued) response() *TokenResponse {
	return &TokenResponse{AccessToken: i.access, TokenType: "bearer", ExpiresIn: i.token.ExpiresIn,
		RefreshToken: i.refresh, CreatedAt: i.token.CreatedAt.Unix(), Scope: strings.Join(i.token.Scopes, " ")}
}

// serveToken is POST /oauth/token.
func (s *Service) serveToken(w http.ResponseWriter, r *http.Request) {
	p, e := tokenParams(r)
	if e != nil {
		writeOAuthError(w, e)
		return
	}
	ctx := r.Context()
	var resp *TokenResponse
	var err error
	switch grant := p["grant_type"]; grant {
	case "":
		e = invalidRequest("Missing required parameter: grant_type.")
	case "password", "authorization_code", "refresh_token":
		client, ce := s.authenticateClient(ctx, r, p)
		if ce != nil {
			e = ce
			break
		}
		switch grant {
		case "password":
			resp, err = s.passwordGrant(auth.WithClientAddr(ctx, r.RemoteAddr), client, p)
		case "authorization_code":
			resp, err = s.codeGrant(ctx, client, p)
		default:
			resp, err = s.refreshGrant(ctx, client, p)
		}
	default:
		e = &oauthError{status: 400, code: "unsupported_grant_type", description: "The authorization grant type is not supported by the authorization server."}
	}
	var oe *oauthError
	var throttled *auth.ThrottledError
	switch {
	case e != nil:
		writeOAuthError(w, e)
	case errors.As(err, &oe):
		writeOAuthError(w, oe)
	case errors.As(err, &throttled):
		// Too many failed passwords for this login or from this address
		// (identity's sign-in throttle, shared with POST /session).
		writeOAuthError(w, &oauthError{status: http.StatusTooManyRequests, code: "invalid_grant",
			description: "Too many failed sign-in attempts for this account or from this address; retry in " + throttled.RetryAfterSeconds() + " seconds.",
			header:      http.Header{"Retry-After": {throttled.RetryAfterSeconds()}}})
	case errors.Is(err, auth.ErrProviderUnavailable):
		writeOAuthError(w, &oauthError{status: 503, code: "temporarily_unavailable",
			description: "A sign-in provider is restarting; try again shortly.", header: http.Header{"Retry-After": {"2"}}})
	case err != nil:
		s.log.Error("token request failed", zap.Error(err))
		writeOAuthError(w, &oauthError{status: 500, code: "server_error", description: "The authorization server encountered an unexpected condition."})
	default:
		noStore(w)
		api.WriteJSON(w, http.StatusOK, resp)
	}
}

// requestedScopes is the scope parameter checked against what the client
// may ask for; def when the parameter is absent.
func requestedScopes(p map[string]string, allowed, def []string) ([]string, *oauthError) {
	raw, ok := p["scope"]
	if !ok || strings.TrimSpace(raw) == "" {
		return def, nil
	}
	scopes, known := parseScopes(raw)
	if !known || len(scopes) == 0 || !subset(scopes, allowed) {
		return nil, invalidScope()
	}
	return scopes, nil
}

// passwordGrant is the resource owner password credentials grant, through
// the same password check as POST /session (local and directory users,
// the sign-in throttle). The client is optional, as in GitLab.
func (s *Service) passwordGrant(ctx context.Context, client clientAuth, p map[string]string) (*TokenResponse, error) {
	login, password := p["username"], p["password"]
	var missing []string
	if login == "" {
		missing = append(missing, "username")
	}
	if password == "" {
		missing = append(missing, "password")
	}
	if len(missing) > 0 {
		return nil, invalidRequest("Missing required parameter: " + strings.Join(missing, ", ") + ".")
	}
	allowed, def := knownScopes, []string{auth.ScopeAPI}
	var appID uint64
	if client.app != nil {
		allowed, def, appID = client.app.Scopes, client.app.Scopes, client.app.ID
	}
	scopes, se := requestedScopes(p, allowed, def)
	if se != nil {
		return nil, se
	}
	u, err := s.passwords.AuthenticatePassword(ctx, login, password)
	switch {
	case isThrottled(err): // also an ErrUnauthorized: asked first
		return nil, err
	case errors.Is(err, auth.ErrInvalidPassword), errors.Is(err, auth.ErrUnauthorized):
		return nil, invalidGrant() // wrong password, or a blocked user's right one
	case err != nil:
		return nil, err
	case u.Blocked:
		return nil, invalidGrant()
	}
	t := s.newToken(appID, 0, uint64(u.ID), scopes)
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return tokens.Insert(tx, t.token) }); err != nil {
		return nil, err
	}
	return t.response(), nil
}

func isThrottled(err error) bool {
	var t *auth.ThrottledError
	return errors.As(err, &t)
}

// codeGrant exchanges an authorization code. The code is used once: a
// second use is refused and revokes what the first gave (RFC 6749 4.1.2),
// for a code seen twice has leaked.
func (s *Service) codeGrant(ctx context.Context, client clientAuth, p map[string]string) (*TokenResponse, error) {
	if client.app == nil {
		return nil, invalidClient(false)
	}
	code, redirect := p["code"], p["redirect_uri"]
	var missing []string
	if code == "" {
		missing = append(missing, "code")
	}
	if redirect == "" {
		missing = append(missing, "redirect_uri")
	}
	if len(missing) > 0 {
		return nil, invalidRequest("Missing required parameter: " + strings.Join(missing, ", ") + ".")
	}
	now := s.now()
	var out issued
	var refused *oauthError
	err := s.updateTokens(ctx, func(tx *store.Tx) error {
		refused = nil
		g, err := grants.GetBy(tx, "code", hashSecret(code))
		if errors.Is(err, store.ErrNotFound) {
			refused = invalidGrant()
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case g.AppID != client.app.ID:
			refused = invalidGrant()
			return nil
		case g.UsedAt != nil:
			refused = invalidGrant()
			// Revoked in this same transaction, which commits.
			return revokeGrantTokens(tx, g.ID, now)
		case !now.Before(g.ExpiresAt), g.RedirectURI != redirect, !pkceMatches(g, p["code_verifier"]):
			refused = invalidGrant()
			return nil
		}
		if refused, err = s.userRefusal(tx.Context(), g.UserID); refused != nil || err != nil {
			return err
		}
		g.UsedAt = &now
		if err := grants.Update(tx, g); err != nil {
			return err
		}
		out = s.newToken(g.AppID, g.ID, g.UserID, g.Scopes)
		return tokens.Insert(tx, out.token)
	})
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, refused
	}
	return out.response(), nil
}

// pkceMatches checks RFC 7636's verifier against the grant's challenge; a
// grant made without a challenge needs no verifier.
func pkceMatches(g *Grant, verifier string) bool {
	if g.Challenge == "" {
		return true
	}
	if !validPKCEString(verifier) {
		return false
	}
	if g.ChallengeMethod == "S256" {
		sum := sha256.Sum256([]byte(verifier))
		return tokensEqual(base64.RawURLEncoding.EncodeToString(sum[:]), g.Challenge)
	}
	return tokensEqual(verifier, g.Challenge)
}

// validPKCEString: 43 to 128 characters of [A-Za-z0-9-._~] (RFC 7636 4.1).
func validPKCEString(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~':
		default:
			return false
		}
	}
	return true
}

func revokeGrantTokens(tx *store.Tx, grantID uint64, now time.Time) error {
	ids, err := tokens.IDsBy(tx, "grant", itoa(grantID))
	if err != nil {
		return err
	}
	for _, id := range ids {
		t, err := tokens.Get(tx, id)
		if err != nil {
			return err
		}
		if err := revokeToken(tx, t, now); err != nil {
			return err
		}
	}
	return nil
}

// revokeToken revokes t (its access and refresh token) at now; a token
// revoked already keeps its time.
func revokeToken(tx *store.Tx, t *Token, now time.Time) error {
	if t.RevokedAt != nil {
		return nil
	}
	t.RevokedAt = &now
	return tokens.Update(tx, t)
}

// revokeFamily revokes the live tokens of spent's refresh chain (found
// among its user's tokens, which are few) and logs the reuse.
func (s *Service) revokeFamily(tx *store.Tx, spent *Token, now time.Time) error {
	ids, err := tokens.IDsBy(tx, "user", u64(spent.UserID))
	if err != nil {
		return err
	}
	revoked := 0
	for _, id := range ids {
		t, err := tokens.Get(tx, id)
		if err != nil {
			return err
		}
		if t.RevokedAt == nil && t.family() == spent.family() {
			if err := revokeToken(tx, t, now); err != nil {
				return err
			}
			revoked++
		}
	}
	if revoked > 0 {
		s.log.Warn("oauth: a spent refresh token was used again; its chain's live token is revoked",
			zap.Uint64("user_id", spent.UserID), zap.Uint64("app_id", spent.AppID), zap.Int("revoked", revoked))
	}
	return nil
}

// userRefusal is invalid_grant when the user of a grant or token is gone
// or blocked, so that no token is issued to them; any other failure of the
// lookup is returned as it is.
func (s *Service) userRefusal(ctx context.Context, id uint64) (*oauthError, error) {
	_, err := s.user(ctx, id)
	if errors.Is(err, auth.ErrUnauthorized) {
		return invalidGrant(), nil
	}
	return nil, err
}

// refreshGrant trades a refresh token for a new pair; the old pair stops
// working (rotation), so a stolen refresh token is good for one use at most
// and its owner's next refresh fails, which shows the theft.
func (s *Service) refreshGrant(ctx context.Context, client clientAuth, p map[string]string) (*TokenResponse, error) {
	refresh := p["refresh_token"]
	if refresh == "" {
		return nil, invalidRequest("Missing required parameter: refresh_token.")
	}
	now := s.now()
	var out issued
	var refused *oauthError
	err := s.updateTokens(ctx, func(tx *store.Tx) error {
		refused = nil
		old, err := tokens.GetBy(tx, "refresh", hashSecret(refresh))
		if errors.Is(err, store.ErrNotFound) {
			refused = invalidGrant()
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case old.RevokedAt != nil:
			// A spent refresh token used again means two parties hold it
			// (RFC 9700 4.14.2): the chain's live token is revoked too, so
			// whichever of them is the thief loses it.
			refused = invalidGrant()
			return s.revokeFamily(tx, old, now)
		case old.AppID != 0 && client.app == nil:
			refused = invalidClient(false)
			return nil
		case client.app != nil && old.AppID != client.app.ID:
			refused = invalidGrant()
			return nil
		}
		var scopes []string
		if scopes, refused = requestedScopes(p, old.Scopes, old.Scopes); refused != nil {
			return nil
		}
		if refused, err = s.userRefusal(tx.Context(), old.UserID); refused != nil || err != nil {
			return err
		}
		if err := revokeToken(tx, old, now); err != nil {
			return err
		}
		out = s.newToken(old.AppID, old.GrantID, old.UserID, scopes)
		out.token.Family = old.family()
		return tokens.Insert(tx, out.token)
	})
	if err != nil {
		return nil, err
	}
	if refused != nil {
		return nil, refused
	}
	return out.response(), nil
}

// TokenInfo is GET /oauth/token/info's answer (Doorkeeper's fields, with
// the aliases later GitLab added).
type TokenInfo struct {
	ResourceOwnerID  int64         `json:"resource_owner_id"`
	Scope            []string      `json:"scope"`
	Scopes           []string      `json:"scopes"`
	ExpiresIn        int64         `json:"expires_in"`
	ExpiresInSeconds int64         `json:"expires_in_seconds"`
	Application      *TokenInfoApp `json:"application"`
	CreatedAt        int64         `json:"created_at"`
}

// TokenInfoApp names the token's client; UID is null for a token the
// password grant issued without a client (Doorkeeper's application.try(:uid)).
type TokenInfoApp struct {
	UID *string `json:"uid"`
}

func (s *Service) serveTokenInfo(w http.ResponseWriter, r *http.Request) {
	creds := auth.CredentialsFrom(r, r.URL.Query().Get)
	invalid := &oauthError{status: 401, code: "invalid_request", description: "The access token is invalid, expired or revoked.",
		header: http.Header{"Www-Authenticate": {`Bearer realm="Doorkeeper", error="invalid_token"`}}}
	if creds.BearerToken == "" {
		writeOAuthError(w, invalid)
		return
	}
	t, err := s.accessToken(r.Context(), creds.BearerToken)
	if err == nil {
		_, err = s.user(r.Context(), t.UserID)
	}
	if err != nil {
		writeOAuthError(w, invalid)
		return
	}
	info := &TokenInfo{ResourceOwnerID: int64(t.UserID), Scope: t.Scopes, Scopes: t.Scopes, CreatedAt: t.CreatedAt.Unix()}
	left := int64(t.CreatedAt.Add(time.Duration(t.ExpiresIn)*time.Second).Sub(s.now()) / time.Second)
	info.ExpiresIn, info.ExpiresInSeconds = left, left
	info.Application = &TokenInfoApp{}
	if t.AppID != 0 {
		_ = s.db.View(r.Context(), func(tx *store.Tx) error {
			if a, err := apps.Get(tx, t.AppID); err == nil {
				info.Application.UID = &a.UID
			}
			return nil
		})
	}
	noStore(w)
	api.WriteJSON(w, http.StatusOK, info)
}

// serveRevoke is POST /oauth/revoke (RFC 7009): an access or refresh token
// revokes its pair. Unknown tokens answer 200 too, so the endpoint tells
// nothing about which tokens exist. A token given to a confidential client
// may be revoked by that client only; any other token is its own proof.
func (s *Service) serveRevoke(w http.ResponseWriter, r *http.Request) {
	p, e := tokenParams(r)
	if e != nil {
		writeOAuthError(w, e)
		return
	}
	client, e := s.authenticateClient(r.Context(), r, p)
	if e != nil {
		writeOAuthError(w, e)
		return
	}
	secret := p["token"]
	if secret == "" {
		writeOAuthError(w, invalidRequest("Missing required parameter: token."))
		return
	}
	now := s.now()
	var refused *oauthError
	err := s.updateTokens(r.Context(), func(tx *store.Tx) error {
		refused = nil
		h := hashSecret(secret)
		t, err := tokens.GetBy(tx, "access", h)
		if errors.Is(err, store.ErrNotFound) {
			t, err = tokens.GetBy(tx, "refresh", h)
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if t.AppID != 0 && (client.app == nil || client.app.ID != t.AppID) {
			a, err := apps.Get(tx, t.AppID)
			if err == nil && a.Confidential {
				refused = &oauthError{status: 403, code: "unauthorized_client", description: "You are not authorized to revoke this token."}
				return nil
			}
		}
		return revokeToken(tx, t, now)
	})
	switch {
	case err != nil:
		s.log.Error("revoke failed", zap.Error(err))
		writeOAuthError(w, &oauthError{status: 500, code: "server_error", description: "The authorization server encountered an unexpected condition."})
	case refused != nil:
		writeOAuthError(w, refused)
	default:
		noStore(w)
		api.WriteJSON(w, http.StatusOK, map[string]any{})
	}
}
