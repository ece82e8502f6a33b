package internal

import (
	"bytes"
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
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The OAuth endpoints (POST /oauth/token, GET /oauth/token/info, POST
// /oauth/revoke): RFC 6749's parameters and answers over provider.Service.

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

// invalidParams is invalid_request for a request the endpoint cannot read.
func invalidParams(desc string) *oauthError {
	return &oauthError{status: 400, code: string(provider.InvalidRequest), description: desc}
}

// oauthAnswer is the answer to the service's refusal: 401 for an
// unauthenticated client (telling a client that tried HTTP basic which
// scheme, RFC 6749 5.2), 403 for an unauthorized one, 400 otherwise.
func oauthAnswer(e *provider.Error, creds clientCredentials) *oauthError {
	out := &oauthError{status: 400, code: string(e.Code), description: e.Description}
	switch e.Code {
	case provider.InvalidClient:
		out.status = 401
		if creds.basic && (creds.ID != "" || creds.Secret != "") {
			out.header = http.Header{"Www-Authenticate": {`Basic realm="OAuth"`}}
		}
	case provider.UnauthorizedClient:
		out.status = 403
	}
	return out
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
		return nil, invalidParams("The query string is malformed.")
	}
	for _, secret := range []string{"client_secret", "password", "refresh_token", "code_verifier", "code", "token"} {
		if query.Has(secret) {
			return nil, invalidParams(secret + " must be sent in the request body, never in the URL.")
		}
	}
	add := func(k string, vs []string) *oauthError {
		if _, dup := out[k]; dup || len(vs) > 1 {
			return invalidParams("The parameter " + k + " is repeated.")
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
		return nil, invalidParams("The request body is too large or could not be read.")
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case len(body) == 0:
	case ct == "application/json":
		m, dup, err := jsonObject(body)
		if err != nil {
			return nil, invalidParams("The request body is not a JSON object.")
		}
		if dup != "" {
			return nil, invalidParams("The parameter " + dup + " is repeated.")
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
				return nil, invalidParams("The parameter " + k + " must be a string.")
			}
			if e := add(k, []string{s}); e != nil {
				return nil, e
			}
		}
	default:
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, invalidParams("The request body is malformed.")
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

// clientCredentials are the client's credentials as the request presents
// them.
type clientCredentials struct {
	provider.Client
	basic bool
}

// clientCredentials reads the client's credentials from HTTP basic (RFC
// 6749 2.3.1: form-encoded id and secret) or the client_id and
// client_secret parameters, never both.
func readClientCredentials(r *http.Request, p map[string]string) (clientCredentials, *oauthError) {
	id, secret, basic := r.BasicAuth()
	if !basic {
		return clientCredentials{Client: provider.Client{ID: p["client_id"], Secret: p["client_secret"]}}, nil
	}
	if _, ok := p["client_secret"]; ok {
		return clientCredentials{}, invalidParams("Use one client authentication method, not both HTTP basic and client_secret.")
	}
	if v, err := url.QueryUnescape(id); err == nil {
		id = v
	}
	if v, err := url.QueryUnescape(secret); err == nil {
		secret = v
	}
	if pid, ok := p["client_id"]; ok && pid != id {
		e := oauthAnswer(invalidClient(), clientCredentials{basic: true})
		e.header = http.Header{"Www-Authenticate": {`Basic realm="OAuth"`}}
		return clientCredentials{}, e
	}
	return clientCredentials{Client: provider.Client{ID: id, Secret: secret}, basic: true}, nil
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

func tokenResponse(t provider.Tokens) *TokenResponse {
	return &TokenResponse{AccessToken: t.AccessToken, TokenType: "bearer", ExpiresIn: int64(t.ExpiresIn / time.Second),
		RefreshToken: t.RefreshToken, CreatedAt: t.CreatedAt.Unix(), Scope: strings.Join(t.Scopes, " ")}
}

// serveToken is POST /oauth/token.
func (h *handlers) serveToken(w http.ResponseWriter, r *http.Request) {
	p, e := tokenParams(r)
	if e != nil {
		writeOAuthError(w, e)
		return
	}
	ctx := r.Context()
	var creds clientCredentials
	var tokens provider.Tokens
	var err error
	switch grant := p["grant_type"]; grant {
	case "":
		e = invalidParams("Missing required parameter: grant_type.")
	case "password", "authorization_code", "refresh_token":
		if creds, e = readClientCredentials(r, p); e != nil {
			break
		}
		switch grant {
		case "password":
			tokens, err = h.svc.PasswordGrant(auth.WithClientAddr(ctx, r.RemoteAddr), creds.Client, p["username"], p["password"], p["scope"])
		case "authorization_code":
			tokens, err = h.svc.CodeGrant(ctx, creds.Client, p["code"], p["redirect_uri"], p["code_verifier"])
		default:
			tokens, err = h.svc.RefreshGrant(ctx, creds.Client, p["refresh_token"], p["scope"])
		}
	default:
		e = &oauthError{status: 400, code: "unsupported_grant_type", description: "The authorization grant type is not supported by the authorization server."}
	}
	var pe *provider.Error
	var throttled *auth.ThrottledError
	switch {
	case e != nil:
		writeOAuthError(w, e)
	case errors.As(err, &pe):
		writeOAuthError(w, oauthAnswer(pe, creds))
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
		h.log.Error("token request failed", zap.Error(err))
		writeOAuthError(w, &oauthError{status: 500, code: "server_error", description: "The authorization server encountered an unexpected condition."})
	default:
		noStore(w)
		api.WriteJSON(w, http.StatusOK, tokenResponse(tokens))
	}
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

func (h *handlers) serveTokenInfo(w http.ResponseWriter, r *http.Request) {
	creds := auth.CredentialsFrom(r, r.URL.Query().Get)
	invalid := &oauthError{status: 401, code: "invalid_request", description: "The access token is invalid, expired or revoked.",
		header: http.Header{"Www-Authenticate": {`Bearer realm="Doorkeeper", error="invalid_token"`}}}
	if creds.BearerToken == "" {
		writeOAuthError(w, invalid)
		return
	}
	t, err := h.svc.TokenInfo(r.Context(), creds.BearerToken)
	if err != nil {
		writeOAuthError(w, invalid)
		return
	}
	left := int64(t.ExpiresIn / time.Second)
	info := &TokenInfo{ResourceOwnerID: t.UserID, Scope: t.Scopes, Scopes: t.Scopes, CreatedAt: t.CreatedAt.Unix(),
		ExpiresIn: left, ExpiresInSeconds: left, Application: &TokenInfoApp{UID: t.ClientID}}
	noStore(w)
	api.WriteJSON(w, http.StatusOK, info)
}

// serveRevoke is POST /oauth/revoke (RFC 7009): an access or refresh token
// revokes its pair. Unknown tokens answer 200 too, so the endpoint tells
// nothing about which tokens exist.
func (h *handlers) serveRevoke(w http.ResponseWriter, r *http.Request) {
	p, e := tokenParams(r)
	if e != nil {
		writeOAuthError(w, e)
		return
	}
	creds, e := readClientCredentials(r, p)
	if e != nil {
		writeOAuthError(w, e)
		return
	}
	err := h.svc.Revoke(r.Context(), creds.Client, p["token"])
	var pe *provider.Error
	switch {
	case errors.As(err, &pe):
		writeOAuthError(w, oauthAnswer(pe, creds))
	case err != nil:
		h.log.Error("revoke failed", zap.Error(err))
		writeOAuthError(w, &oauthError{status: 500, code: "server_error", description: "The authorization server encountered an unexpected condition."})
	default:
		noStore(w)
		api.WriteJSON(w, http.StatusOK, map[string]any{})
	}
}
