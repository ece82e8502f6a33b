package internal

// The HTTP adapter: the applications API (below), the OAuth endpoints
// (httptoken.go) and the server-rendered pages (httpweb.go,
// httpownapps.go, httpreset.go, httppages.go) read the requests, call
// provider.Service (and identity's PasswordResets, for the reset pages),
// and write GitLab's, RFC 6749's or the pages' answers. Nothing else in
// the module speaks HTTP.

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/oauth/provider"
)

// handlers serve the routes and pages over the service.
type handlers struct {
	svc    provider.Service
	resets identity.PasswordResets
	log    *zap.Logger
	// site and tmpl are the web foundation the pages render on, set when
	// the pages are registered (NewPages).
	site *web.Site
	tmpl *web.Templates
	// sessions is the service itself, for what the provider contract
	// leaves out: impersonation, a matter of this module's sessions only.
	sessions *Service
}

// NewRoutes registers the applications API and mounts the OAuth endpoints
// and the sign-in pages, which live outside /api/v4.
// RoutesDeps are what the routes are built from.
type RoutesDeps struct {
	fennec.In
	Service *Service
	Resets  identity.PasswordResets
}

// NewRoutes registers the module's operations and pages.
func NewRoutes(d RoutesDeps) fennec.Routes {
	s, resets := d.Service, d.Resets
	h := &handlers{svc: s, resets: resets, log: s.log}
	return fennec.Routes{Name: "oauth", Register: h.register}
}

// NewPages registers the module's pages on the web foundation: sign-in,
// consent, password reset and the user's own applications. Each POST
// handler checks its form's CSRF token itself, to answer a failure its
// own way (the sign-in form shows itself again).
func NewPages(d RoutesDeps) fennec.Pages {
	h := &handlers{svc: d.Service, resets: d.Resets, log: d.Service.log, sessions: d.Service}
	return fennec.Pages{Name: "oauth", Register: h.registerPages}
}

func (h *handlers) registerPages(s *web.Site) {
	h.site, h.tmpl = s, s.Templates(templateFiles, "templates/*.html")
	s.Handle("GET /oauth/authorize", h.serveAuthorize)
	s.HandleCheckingCSRF("POST /oauth/authorize", h.serveDecision)
	s.Handle("GET /users/sign_in", h.serveSignInPage)
	s.HandleCheckingCSRF("POST /users/sign_in", h.serveSignIn)
	s.HandleCheckingCSRF("POST /users/sign_out", h.serveSignOut)
	s.Handle("GET /users/password/new", h.serveForgotPage)
	s.Handle("GET /users/password/edit", h.serveResetPage)
	s.HandleCheckingCSRF("POST /users/password", h.serveReset)
	s.HandleCheckingCSRF("PUT /users/password", h.serveReset)
	s.Handle("GET /oauth/applications", h.serveOwnApps)
	s.HandleCheckingCSRF("POST /oauth/applications", h.serveCreateOwnApp)
	s.HandleCheckingCSRF("POST /oauth/applications/{id}/delete", h.serveDeleteOwnApp)
	s.Admin("POST /admin/users/{username}/impersonate", h.serveImpersonate)
	// Not Admin: the visitor is the user impersonated, who may be none.
	s.Handle("POST /admin/impersonation/stop", h.serveStopImpersonating)
	registerProfilePages(s, h.svc)
}

func (h *handlers) register(a *api.API) {
	mapErrors(a)

	api.Register(a, api.Op{ID: "create-application", Method: http.MethodPost, Path: "/applications", Tags: []string{"applications"},
		Summary: "Register an OAuth application; the answer shows its secret, this once", Access: api.AdminOnly}, h.createApp)
	api.Register(a, api.Op{ID: "list-applications", Method: http.MethodGet, Path: "/applications", Tags: []string{"applications"},
		Summary: "The registered OAuth applications (without secrets)", Access: api.AdminOnly}, h.listApps)
	api.Register(a, api.Op{ID: "delete-application", Method: http.MethodDelete, Path: "/applications/{id}", Tags: []string{"applications"},
		Summary: "Delete an OAuth application; its tokens stop working", Access: api.AdminOnly}, h.deleteApp)

	a.Mount("oauth-token", "POST /oauth/token", http.HandlerFunc(h.serveToken))
	a.Mount("oauth-token-info", "GET /oauth/token/info", http.HandlerFunc(h.serveTokenInfo))
	a.Mount("oauth-revoke", "POST /oauth/revoke", http.HandlerFunc(h.serveRevoke))
}

// mapErrors is the module's table from its domain errors to GitLab's
// answers, for the applications API.
func mapErrors(a *api.API) {
	a.MapError(provider.ErrAppNotFound, func(error) *api.Error { return api.NotFound("Application") })
	a.MapError(provider.ErrInvalid, func(err error) *api.Error {
		var fields provider.InvalidError
		if !errors.As(err, &fields) {
			return nil
		}
		return api.Validation(fields.Fields())
	})
}

// ApplicationView is an application as the API shows it (GitLab 10.5+'s
// shape); Secret only in the answer to its creation.
type ApplicationView struct {
	ID              int64  `json:"id"`
	ApplicationID   string `json:"application_id"`
	ApplicationName string `json:"application_name"`
	Secret          string `json:"secret,omitempty"`
	CallbackURL     string `json:"callback_url"`
	Confidential    bool   `json:"confidential"`
}

func appView(a provider.Application) ApplicationView {
	return ApplicationView{ID: int64(a.ID), ApplicationID: a.ClientID, ApplicationName: a.Name, Secret: a.Secret,
		CallbackURL: strings.Join(a.RedirectURIs, "\n"), Confidential: a.Confidential}
}

type createAppInput struct {
	Body struct {
		Name         string `json:"name" required:"true" doc:"The application's name"`
		RedirectURI  string `json:"redirect_uri" required:"true" doc:"Callback URIs, one per line"`
		Scopes       string `json:"scopes" required:"true" doc:"Scopes, separated by spaces: api, read_user, openid"`
		Confidential *bool  `json:"confidential,omitempty" doc:"Whether the client keeps its secret (a server); default true"`
	}
}

type appOutput struct{ Body ApplicationView }

type appsOutput struct{ Body []ApplicationView }

type appPath struct {
	ID int64 `path:"id" doc:"Application id"`
}

func (h *handlers) createApp(ctx context.Context, in *createAppInput) (*appOutput, error) {
	confidential := in.Body.Confidential == nil || *in.Body.Confidential
	app, err := h.svc.CreateApplication(ctx, provider.NewApplication{Name: in.Body.Name, RedirectURI: in.Body.RedirectURI,
		Scopes: in.Body.Scopes, Confidential: confidential})
	if err != nil {
		return nil, err
	}
	return &appOutput{Body: appView(app)}, nil
}

func (h *handlers) listApps(ctx context.Context, _ *struct{}) (*appsOutput, error) {
	list, err := h.svc.Applications(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ApplicationView, 0, len(list))
	for _, a := range list {
		out = append(out, appView(a))
	}
	return &appsOutput{Body: out}, nil
}

func (h *handlers) deleteApp(ctx context.Context, in *appPath) (*struct{}, error) {
	return nil, h.svc.DeleteApplication(ctx, provider.AppID(in.ID))
}
