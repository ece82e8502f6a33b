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
	s.registerEmails(a)
	s.registerTokens(a)
	s.registerActivity(a)

	api.Register(a, api.Op{
		ID: "get-current-user", Method: http.MethodGet, Path: "/user", Tags: []string{"users"},
		Summary: "The authenticated user (with sudo, that user plus a private token)",
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
	u, secret, err := s.Login(ctx, login, in.Body.Password)
	if err != nil {
		if errors.Is(err, auth.ErrInvalidPassword) || errors.Is(err, auth.ErrUnauthorized) {
			return nil, api.Unauthorized()
		}
		return nil, err
	}
	return &userWithTokenOutput{Body: &FullUserWithToken{FullUser: fullView(api.ExternalURLFrom(ctx), u), PrivateToken: &secret}}, nil
}

func (s *Service) currentUser(ctx context.Context, _ *struct{}) (*userWithTokenOutput, error) {
	p := auth.FromContext(ctx)
	view, err := s.ownView(ctx, api.ExternalURLFrom(ctx), uint64(p.UserID()))
	if err != nil {
		return nil, err
	}
	if p.Sudoer == nil {
		return &userWithTokenOutput{Body: view}, nil
	}
	secret, err := s.SudoToken(ctx, p.UserID())
	if err != nil {
		return nil, err
	}
	withToken := *view // the cached view is shared: copy before adding the token
	withToken.PrivateToken = &secret
	return &userWithTokenOutput{Body: &withToken}, nil
}
