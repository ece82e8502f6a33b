package internal

// The HTTP adapter: GitLab's routes decode their parameters, call
// user.Service, render GitLab's JSON views (httpviews.go) and leave the
// service's errors to mapErrors. Nothing else in the module speaks HTTP.

import (
	"context"
	"errors"
	"net/http"
	"unicode"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity/user"
)

// handlers serve the routes over the service.
type handlers struct {
	svc user.Service
	// views caches the caller's own full view (GET /user, which every
	// client asks first and often) until the next identity commit: the
	// service tells (watch). web_url depends on the external URL, which is
	// fixed while running. The values are shared: copy before changing.
	views *store.ReadCache[int64, *FullUserWithToken]
}

// NewRoutes registers identity's operations.
func NewRoutes(s *Service) fennec.Routes {
	h := &handlers{svc: s, views: store.NewReadCache[int64, *FullUserWithToken](50000)}
	s.watch(h.views.Invalidate)
	return fennec.Routes{Name: "identity", Register: func(a *api.API) {
		mapErrors(a)
		h.register(a)
	}}
}

// mapErrors is the module's table from its domain errors to GitLab's
// answers (user.ErrUserNotFound, refusals and throttling are core/auth's,
// which the core's table answers).
func mapErrors(a *api.API) {
	a.MapError(user.ErrKeyNotFound, func(error) *api.Error { return api.NotFound("Key") })
	a.MapError(user.ErrEmailNotFound, func(error) *api.Error { return api.NotFound("Email") })
	a.MapError(user.ErrTokenNotFound, func(err error) *api.Error {
		var nf *user.TokenNotFoundError
		if errors.As(err, &nf) && nf.Kind == user.ImpersonationToken {
			return api.NotFound("Impersonation Token")
		}
		return api.NotFound("Personal Access Token")
	})
	a.MapError(user.ErrInvalid, func(err error) *api.Error {
		var invalid user.InvalidError
		if !errors.As(err, &invalid) {
			return nil
		}
		return api.Validation(invalid.Fields())
	})
	// The spec has user modification report 404 even where a conflict
	// would fit; the reason follows, as 403s carry theirs.
	a.MapError(user.ErrTaken, func(err error) *api.Error {
		var taken *user.TakenError
		if !errors.As(err, &taken) || taken.Field == "" {
			return nil
		}
		r := []rune(taken.Field)
		return &api.Error{Status: http.StatusNotFound,
			Message: "404 Not Found - " + string(unicode.ToUpper(r[0])) + string(r[1:]) + " has already been taken"}
	})
	a.MapError(user.ErrNoScopes, func(error) *api.Error { return api.Missing("scopes") })
	a.MapError(user.ErrInvalidScope, func(error) *api.Error { return api.NotValidValue("scopes") })
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

func (h *handlers) register(a *api.API) {
	api.Register(a, api.Op{
		ID: "create-session", Method: http.MethodPost, Path: "/session", Tags: []string{"session"},
		Summary: "Log in with a username or e-mail and password; returns the user with a private token",
		Access:  api.Public,
	}, h.createSession)

	h.registerUsers(a)
	h.registerKeys(a)
	h.registerEmails(a)
	h.registerTokens(a)
	h.registerPrivateToken(a)
	h.registerActivity(a)

	api.Register(a, api.Op{
		ID: "get-current-user", Method: http.MethodGet, Path: "/user", Tags: []string{"users"},
		Summary: "The authenticated user (with sudo, the user acted as)",
		Access:  api.SignedIn, Scopes: []string{auth.ScopeAPI, auth.ScopeReadUser},
	}, h.currentUser)
}

func (h *handlers) createSession(ctx context.Context, in *sessionInput) (*userWithTokenOutput, error) {
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
	acct, secret, err := h.svc.Login(ctx, login, in.Body.Password)
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &throttled):
		return nil, err // 429 with Retry-After (core/api maps it)
	case errors.Is(err, auth.ErrInvalidPassword) || errors.Is(err, auth.ErrUnauthorized):
		return nil, api.Unauthorized()
	case err != nil:
		return nil, err
	}
	return &userWithTokenOutput{Body: &FullUserWithToken{FullUser: fullView(api.ExternalURLFrom(ctx), acct), PrivateToken: &secret}}, nil
}

// currentUser answers GET /user. With sudo (and credentials with full api
// rights, see Service.SudoPrivateToken) the target's view carries the
// target's private token, as the spec's GitLab 9.x did: its one token, made
// on the first such read if the target never logged in, never a new one per
// call.
func (h *handlers) currentUser(ctx context.Context, _ *struct{}) (*userWithTokenOutput, error) {
	id := auth.FromContext(ctx).UserID()
	view, ok := h.views.Get(id)
	if !ok {
		gen := h.views.Gen()
		acct, err := h.svc.CurrentAccount(ctx)
		if err != nil {
			return nil, err
		}
		view = &FullUserWithToken{FullUser: fullView(api.ExternalURLFrom(ctx), acct)}
		h.views.Put(gen, id, view)
	}
	secret, ok, err := h.svc.SudoPrivateToken(ctx)
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

// registerPrivateToken adds the reset. GitLab 9.x reset a private token only
// on its profile page (PUT /profile/reset_private_token, no API); Fennec has
// no such page, so the signed-in user resets their own through the API (an
// administrator resets someone else's with sudo, or with the
// user-reset-private-token command). The answer carries no token: a private
// token is shown only by a session login and to an administrator's sudo, so
// a leaked credential that resets cannot read the new one back.
func (h *handlers) registerPrivateToken(a *api.API) {
	api.Register(a, api.Op{
		ID: "reset-private-token", Method: http.MethodPost, Path: "/user/private_token/reset", Tags: []string{"users"},
		Summary:     "Reset the caller's private token (Fennec addition)",
		Description: "The current private token stops working at once; the next `POST /session` returns a new one. Answers 204 with no body.",
		Access:      api.SignedIn, Status: http.StatusNoContent,
	}, func(ctx context.Context, _ *struct{}) (*struct{}, error) {
		return nil, h.svc.ResetPrivateToken(ctx, auth.FromContext(ctx).UserID())
	})
}

// maybeOutput is the answer of GitLab's idempotent deletes: the deleted
// record, or 200 with an empty body when there was nothing to delete.
type maybeOutput struct {
	Body any
}

func nothing() *maybeOutput { return &maybeOutput{Body: []byte{}} }

// page is the offset and limit of a page of a list.
func page(p api.PageParams) (offset, limit int) { return p.Offset(), p.Limit() }
