package internal

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The token endpoint's grants, the token information and the revocation
// of provider.Service. The HTTP adapter (RFC 6749's parameters and
// answers) is httptoken.go.

// The errors, in Doorkeeper's words where it has them.
func invalidRequest(desc string) *provider.Error {
	return &provider.Error{Code: provider.InvalidRequest, Description: desc}
}

func invalidGrant() *provider.Error {
	return &provider.Error{Code: provider.InvalidGrant, Description: "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client."}
}

func invalidClient() *provider.Error {
	return &provider.Error{Code: provider.InvalidClient, Description: "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method."}
}

func invalidScope() *provider.Error {
	return &provider.Error{Code: provider.InvalidScope, Description: "The requested scope is invalid, unknown, or malformed."}
}

// client checks a client's credentials: a confidential client must present
// its secret; a public one identifies itself by its id alone. nil for no
// client.
func (s *Service) client(ctx context.Context, c provider.Client) (*Application, error) {
	if c.ID == "" {
		if c.Secret != "" {
			return nil, invalidClient()
		}
		return nil, nil
	}
	var app *Application
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		app, err = apps.GetBy(tx, "uid", c.ID)
		return err
	})
	if err != nil {
		// Compare anyway, so an unknown id costs what a known one does.
		secretMatches(c.Secret, "")
		return nil, invalidClient()
	}
	switch {
	case c.Secret != "" && !secretMatches(c.Secret, app.SecretHash):
		return nil, invalidClient()
	case c.Secret == "" && app.Confidential:
		return nil, invalidClient()
	}
	return app, nil
}

// issued is a token just made and its secrets (only the hashes are kept).
type issued struct {
	token           *Token
	access, refresh string
}

func (s *Service) newToken(appID provider.AppID, grantID, userID int64, scopes []string) issued {
	access, refresh := newSecret(), newSecret()
	return issued{access: access, refresh: refresh, token: &Token{
		AccessHash: hashSecret(access), RefreshHash: hashSecret(refresh), AppID: appID, GrantID: grantID,
		UserID: userID, Scopes: scopes, CreatedAt: s.now(), ExpiresIn: int64(AccessTokenLifetime / time.Second),
	}}
}

func (i issued) tokens() provider.Tokens {
	return provider.Tokens{AccessToken: i.access, RefreshToken: i.refresh, Scopes: append([]string{}, i.token.Scopes...),
		CreatedAt: i.token.CreatedAt, ExpiresIn: time.Duration(i.token.ExpiresIn) * time.Second}
}

// requestedScopes is the scope parameter checked against what the client
// may ask for; def when the parameter is absent or blank.
func requestedScopes(raw string, allowed, def []string) ([]string, *provider.Error) {
	if strings.TrimSpace(raw) == "" {
		return def, nil
	}
	scopes, known := parseScopes(raw)
	if !known || len(scopes) == 0 || !subset(scopes, allowed) {
		return nil, invalidScope()
	}
	return scopes, nil
}

// missing is invalid_request for the required parameters not given.
func missing(params ...[2]string) error {
	var names []string
	for _, p := range params {
		if p[1] == "" {
			names = append(names, p[0])
		}
	}
	if len(names) == 0 {
		return nil
	}
	return invalidRequest("Missing required parameter: " + strings.Join(names, ", ") + ".")
}

// PasswordGrant implements provider.Service: the resource owner password
// credentials grant, through the same password check as POST /session
// (local and directory users, the sign-in throttle). The client is
// optional, as in GitLab.
func (s *Service) PasswordGrant(ctx context.Context, c provider.Client, login, password, scope string) (provider.Tokens, error) {
	client, err := s.client(ctx, c)
	if err != nil {
		return provider.Tokens{}, err
	}
	if err := missing([2]string{"username", login}, [2]string{"password", password}); err != nil {
		return provider.Tokens{}, err
	}
	allowed, def := knownScopes, []string{auth.ScopeAPI}
	var appID provider.AppID
	if client != nil {
		allowed, def, appID = client.Scopes, client.Scopes, client.ID
	}
	scopes, se := requestedScopes(scope, allowed, def)
	if se != nil {
		return provider.Tokens{}, se
	}
	u, err := s.passwords.AuthenticatePassword(ctx, login, password)
	switch {
	case isThrottled(err): // also an ErrUnauthorized: asked first
		return provider.Tokens{}, err
	case errors.Is(err, auth.ErrInvalidPassword), errors.Is(err, auth.ErrUnauthorized):
		return provider.Tokens{}, invalidGrant() // wrong password, or a blocked user's right one
	case err != nil:
		return provider.Tokens{}, err
	case u.Blocked:
		return provider.Tokens{}, invalidGrant()
	}
	t := s.newToken(appID, 0, u.ID, scopes)
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return tokens.Insert(tx, t.token) }); err != nil {
		return provider.Tokens{}, err
	}
	return t.tokens(), nil
}

func isThrottled(err error) bool {
	var t *auth.ThrottledError
	return errors.As(err, &t)
}

// CodeGrant implements provider.Service: it exchanges an authorization
// code. The code is used once: a second use is refused and revokes what
// the first gave (RFC 6749 4.1.2), for a code seen twice has leaked.
func (s *Service) CodeGrant(ctx context.Context, c provider.Client, code, redirect, verifier string) (provider.Tokens, error) {
	client, err := s.client(ctx, c)
	if err != nil {
		return provider.Tokens{}, err
	}
	if client == nil {
		return provider.Tokens{}, invalidClient()
	}
	if err := missing([2]string{"code", code}, [2]string{"redirect_uri", redirect}); err != nil {
		return provider.Tokens{}, err
	}
	now := s.now()
	var out issued
	var refused *provider.Error
	err = s.updateTokens(ctx, func(tx *store.Tx) error {
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
		case g.AppID != client.ID:
			refused = invalidGrant()
			return nil
		case g.UsedAt != nil:
			refused = invalidGrant()
			// Revoked in this same transaction, which commits.
			return revokeGrantTokens(tx, g.ID, now)
		case !now.Before(g.ExpiresAt), g.RedirectURI != redirect, !pkceMatches(g, verifier):
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
		return provider.Tokens{}, err
	}
	if refused != nil {
		return provider.Tokens{}, refused
	}
	return out.tokens(), nil
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

func revokeGrantTokens(tx *store.Tx, grantID int64, now time.Time) error {
	ids, err := tokens.IDsBy(tx, "grant", store.IDString(grantID))
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
	ids, err := tokens.IDsBy(tx, "user", store.IDString(spent.UserID))
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
			zap.Int64("user_id", spent.UserID), zap.Int64("app_id", int64(spent.AppID)), zap.Int("revoked", revoked))
	}
	return nil
}

// userRefusal is invalid_grant when the user of a grant or token is gone
// or blocked, so that no token is issued to them; any other failure of the
// lookup is returned as it is.
func (s *Service) userRefusal(ctx context.Context, id int64) (*provider.Error, error) {
	_, err := s.user(ctx, id)
	if errors.Is(err, auth.ErrUnauthorized) {
		return invalidGrant(), nil
	}
	return nil, err
}

// RefreshGrant implements provider.Service: it trades a refresh token for
// a new pair; the old pair stops working (rotation), so a stolen refresh
// token is good for one use at most and its owner's next refresh fails,
// which shows the theft.
func (s *Service) RefreshGrant(ctx context.Context, c provider.Client, refresh, scope string) (provider.Tokens, error) {
	client, err := s.client(ctx, c)
	if err != nil {
		return provider.Tokens{}, err
	}
	if refresh == "" {
		return provider.Tokens{}, invalidRequest("Missing required parameter: refresh_token.")
	}
	now := s.now()
	var out issued
	var refused *provider.Error
	err = s.updateTokens(ctx, func(tx *store.Tx) error {
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
		case old.AppID != 0 && client == nil:
			refused = invalidClient()
			return nil
		case client != nil && old.AppID != client.ID:
			refused = invalidGrant()
			return nil
		}
		var scopes []string
		if scopes, refused = requestedScopes(scope, old.Scopes, old.Scopes); refused != nil {
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
		return provider.Tokens{}, err
	}
	if refused != nil {
		return provider.Tokens{}, refused
	}
	return out.tokens(), nil
}

// TokenInfo implements provider.Service.
func (s *Service) TokenInfo(ctx context.Context, access string) (provider.TokenInfo, error) {
	t, err := s.accessToken(ctx, access)
	if err == nil {
		_, err = s.user(ctx, t.UserID)
	}
	if err != nil {
		return provider.TokenInfo{}, err
	}
	info := provider.TokenInfo{UserID: t.UserID, Scopes: append([]string{}, t.Scopes...), CreatedAt: t.CreatedAt,
		ExpiresIn: t.CreatedAt.Add(time.Duration(t.ExpiresIn) * time.Second).Sub(s.now())}
	if t.AppID != 0 {
		_ = s.db.View(ctx, func(tx *store.Tx) error {
			if a, err := apps.Get(tx, t.AppID); err == nil {
				uid := a.UID
				info.ClientID = &uid
			}
			return nil
		})
	}
	return info, nil
}

// Revoke implements provider.Service (RFC 7009): an access or refresh
// token revokes its pair. Unknown tokens are no error, so the endpoint
// tells nothing about which tokens exist. A token given to a confidential
// client may be revoked by that client only; any other token is its own
// proof.
func (s *Service) Revoke(ctx context.Context, c provider.Client, secret string) error {
	client, err := s.client(ctx, c)
	if err != nil {
		return err
	}
	if secret == "" {
		return invalidRequest("Missing required parameter: token.")
	}
	now := s.now()
	var refused *provider.Error
	err = s.updateTokens(ctx, func(tx *store.Tx) error {
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
		if t.AppID != 0 && (client == nil || client.ID != t.AppID) {
			a, err := apps.Get(tx, t.AppID)
			if err == nil && a.Confidential {
				refused = &provider.Error{Code: provider.UnauthorizedClient, Description: "You are not authorized to revoke this token."}
				return nil
			}
		}
		return revokeToken(tx, t, now)
	})
	if err != nil {
		return err
	}
	if refused != nil {
		return refused
	}
	return nil
}
