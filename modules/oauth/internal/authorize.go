package internal

import (
	"context"
	"errors"
	"slices"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// The authorization endpoint of provider.Service: the request's checks
// and the consent's code. The pages are httpweb.go.

// maxState bounds the state echoed to the client.
const maxState = 1024

// authRequest is a checked authorization request with its application.
type authRequest struct {
	app *Application
	provider.Authorization
}

// CheckAuthorization implements provider.Service.
func (s *Service) CheckAuthorization(ctx context.Context, req provider.AuthorizationRequest) (provider.Authorization, error) {
	ar, err := s.checkAuthRequest(ctx, req)
	if ar == nil {
		return provider.Authorization{}, err
	}
	return ar.Authorization, err
}

// checkAuthRequest validates an authorization request's parameters. The
// request it returns with an error is trusted enough to send the error to
// (its client and redirect URI are); nil when they are not.
func (s *Service) checkAuthRequest(ctx context.Context, req provider.AuthorizationRequest) (*authRequest, error) {
	if req.ClientID == "" {
		return nil, provider.ErrNoClientID
	}
	var app *Application
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		app, err = apps.GetBy(tx, "uid", req.ClientID)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, provider.ErrUnknownClient
	}
	if err != nil {
		return nil, err
	}
	redirect := req.RedirectURI
	switch {
	case redirect == "" && len(app.RedirectURIs) == 1:
		redirect = app.RedirectURIs[0]
	case redirect == "":
		return nil, provider.ErrRedirectURIRequired
	case !slices.Contains(app.RedirectURIs, redirect):
		// Exact match only: no prefix, host or path leeway.
		return nil, provider.ErrRedirectURIInvalid
	}
	ar := &authRequest{app: app, Authorization: provider.Authorization{App: appOf(app), RedirectURI: redirect, State: req.State}}
	if len(ar.State) > maxState {
		ar.State = "" // not echoed: the client gets the error without it
		return ar, invalidRequest("The state parameter is longer than 1024 bytes.")
	}
	switch req.ResponseType {
	case "code":
	case "":
		return ar, invalidRequest("Missing required parameter: response_type.")
	default:
		// The implicit grant (token) included: the spec has server-side
		// clients only.
		return ar, &provider.Error{Code: provider.UnsupportedResponseType, Description: "The authorization server does not support this response type."}
	}
	scopes, se := requestedScopes(req.Scope, app.Scopes, app.Scopes)
	if se != nil {
		return ar, se
	}
	ar.Scopes = scopes
	ar.CodeChallenge, ar.CodeChallengeMethod = req.CodeChallenge, req.CodeChallengeMethod
	switch {
	case ar.CodeChallenge == "" && ar.CodeChallengeMethod != "":
		return ar, invalidRequest("code_challenge_method without code_challenge.")
	case ar.CodeChallenge == "" && !app.Confidential:
		// A public client has no secret: only the verifier binds the code
		// to it (RFC 7636; required by OAuth 2.1).
		return ar, invalidRequest("A public client must send a code_challenge (PKCE).")
	case ar.CodeChallenge == "":
	case !validPKCEString(ar.CodeChallenge):
		return ar, invalidRequest("The code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~'.")
	case ar.CodeChallengeMethod == "":
		ar.CodeChallengeMethod = "plain" // RFC 7636 4.3
	case ar.CodeChallengeMethod != "S256" && ar.CodeChallengeMethod != "plain":
		return ar, invalidRequest("The code_challenge_method must be S256 or plain.")
	}
	return ar, nil
}

// Authorize implements provider.Service: the signed-in caller's consent,
// a code bound to the client, the redirect URI and the challenge.
func (s *Service) Authorize(ctx context.Context, req provider.AuthorizationRequest) (provider.Authorization, string, error) {
	ar, err := s.checkAuthRequest(ctx, req)
	if err != nil {
		if ar == nil {
			return provider.Authorization{}, "", err
		}
		return ar.Authorization, "", err
	}
	p, err := signedIn(ctx)
	if err != nil {
		return ar.Authorization, "", err
	}
	code := newSecret()
	now := s.now()
	g := &Grant{CodeHash: hashSecret(code), AppID: ar.app.ID, UserID: p.UserID(), RedirectURI: ar.RedirectURI, Scopes: ar.Scopes,
		Challenge: ar.CodeChallenge, ChallengeMethod: ar.CodeChallengeMethod, CreatedAt: now, ExpiresAt: now.Add(CodeLifetime)}
	if err := s.db.Update(ctx, func(tx *store.Tx) error {
		g.ID = 0
		return grants.Insert(tx, g)
	}); err != nil {
		return ar.Authorization, "", err
	}
	return ar.Authorization, code, nil
}
