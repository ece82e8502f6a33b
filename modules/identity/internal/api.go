package internal

import (
	"context"
	"errors"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
)

// NewRoutes registers identity's operations.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "identity", Register: func(a *api.API) { s.register(a) }}
}

type sessionInput struct {
	Body struct {
		Login    string `json:"login,omitempty" doc:"Username or e-mail"`
		Email    string `json:"email,omitempty" doc:"E-mail, when login is absent"`
		Password string `json:"password" required:"true"`
	}
}

type userWithTokenOutput struct {
	// A pointer: Huma boxes the body into an interface, and a value of this
	// size would be copied on every response.
	Body *FullUserWithToken
}

func (s *Service) register(a *api.API) {
	api.Register(a, api.Op{
		ID: "create-session", Method: http.MethodPost, Path: "/session", Tags: []string{"session"},
		Summary: "Log in with a username or e-mail and password; returns the user with a private token",
		Access:  api.Public,
	}, s.createSession)

	s.registerUsers(a)
	s.registerKeys(a)
	s.registerKeyLookup(a)
	s.registerEmails(a)
	s.registerTokens(a)
	s.registerPrivateToken(a)
	s.registerActivity(a)

	api.Register(a, api.Op{
		ID: "get-current-user", Method: http.MethodGet, Path: "/user", Tags: []string{"users"},
		Summary: "The authenticated user (with sudo, the user acted as)",
		Access:  api.SignedIn, Scopes: []string{auth.ScopeAPI, auth.ScopeReadUser},
	}, s.currentUser)
}

func (s *Service) createSession(ctx context.Context, in *sessionInput) (*userWithTokenOutput, error) {
	login := in.Body.Login
	if login == "" {
		login = in.Body.Email
	}
	if login == "" {
		return nil, api.AtLeastOne("login", "email")
	}
	if r := api.Request(ctx); r != nil {
		ctx = auth.WithClientAddr(ctx, r.RemoteAddr) // failures are throttled per address too
	}
	u, secret, err := s.Login(ctx, login, in.Body.Password)
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		return nil, err // 429 with Retry-After (core/api maps it)
	case errors.Is(err, auth.ErrInvalidPassword) || errors.Is(err, auth.ErrUnauthorized):
		return nil, api.Unauthorized()
	case err != nil:
		return nil, err
	}
	return &userWithTokenOutput{Body: &FullUserWithToken{FullUser: fullView(api.ExternalURLFrom(ctx), u), PrivateToken: &secret}}, nil
}

// currentUser answers GET /user. With sudo (and credentials with full api
// rights, see sudoPrivateToken) the target's view carries the target's
// private token, as the spec's GitLab 9.x did: its one token, made on the
// first such read if the target never logged in, never a new one per call.
func (s *Service) currentUser(ctx context.Context, _ *struct{}) (*userWithTokenOutput, error) {
	view, err := s.ownView(ctx, api.ExternalURLFrom(ctx), uint64(auth.FromContext(ctx).UserID()))
	if err != nil {
		return nil, err
	}
	secret, ok, err := s.sudoPrivateToken(ctx)
	if err != nil {
		return nil, err
	}
	if ok {
		// The cached view is shared: the token goes on a copy.
		withToken := *view
		withToken.PrivateToken = &secret
		view = &withToken
	}
	return &userWithTokenOutput{Body: view}, nil
}
