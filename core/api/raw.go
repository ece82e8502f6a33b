package api

// Raw handlers: what cannot be a Huma operation (git smart HTTP, uploads,
// health and metrics) is mounted on the mux or intercepted before it, and
// authenticates its caller and builds its services' context here, as
// operations do.

import (
	"context"
	"net/http"
	"net/url"
	"regexp"

	"github.com/fennec-forge/fennec/core/auth"
	flog "github.com/fennec-forge/fennec/core/log"
)

type intercept struct {
	name  string
	match func(*http.Request) bool
	h     http.Handler
}

// Mount adds a raw handler for a ServeMux pattern ("GET /-/health"). name
// labels its requests in the access log and metrics.
func (a *API) Mount(name, pattern string, h http.Handler) {
	a.mux.Handle(pattern, named(name, h))
}

// Alias serves requests of method whose escaped path matches re as if they
// had been sent to the path to returns (given re's submatches). It is for
// GitLab routes that a ServeMux pattern cannot hold beside their siblings:
// POST /projects/user/:user_id conflicts with POST /projects/:id/star
// ("/projects/user/star" would match both), so it is registered under a
// canonical path and aliased. The target operation does everything else.
func (a *API) Alias(method string, re *regexp.Regexp, to func(match []string) string) {
	a.intercepts = append(a.intercepts, intercept{
		match: func(r *http.Request) bool { return r.Method == method && re.MatchString(r.URL.EscapedPath()) },
		h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			target := to(re.FindStringSubmatch(r.URL.EscapedPath()))
			u := *r.URL
			if unescaped, err := url.PathUnescape(target); err == nil {
				u.Path, u.RawPath = unescaped, target
			}
			r2 := r.Clone(r.Context())
			r2.URL = &u
			r2.RequestURI = u.RequestURI()
			a.mux.ServeHTTP(w, r2)
		}),
	})
}

// Intercept routes requests that match before the mux sees them; for paths a
// ServeMux pattern cannot express, such as "/<namespace>/<project>.git/...".
func (a *API) Intercept(name string, match func(*http.Request) bool, h http.Handler) {
	a.intercepts = append(a.intercepts, intercept{name: name, match: match, h: named(name, h)})
}

func named(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flog.Info(w).Operation = name
		h.ServeHTTP(w, r)
	})
}

// Authenticate resolves the caller of a raw request (headers, query and basic
// auth); raw handlers use it instead of re-implementing credentials. w is
// the handler's ResponseWriter, so the access log can name the user.
func (a *API) Authenticate(w http.ResponseWriter, r *http.Request) (*auth.Principal, error) {
	q := r.URL.Query()
	p, err := a.resolver.Resolve(r.Context(), auth.CredentialsFrom(r, q.Get))
	if err == nil {
		flog.Info(w).UserID = p.UserID()
	}
	return p, err
}

// AuthenticateSession resolves the browser's session cookie alone, for any
// method. It is for the web interface's pages (core/web), which check a
// form's CSRF token before they act on a write; everything else uses
// Authenticate, which reads the cookie for GET and HEAD only. No cookie,
// or one whose session ended, is the anonymous principal.
func (a *API) AuthenticateSession(w http.ResponseWriter, r *http.Request) (*auth.Principal, error) {
	var c auth.Credentials
	if ck, err := r.Cookie(auth.SessionCookie); err == nil {
		c.Session = ck.Value
	}
	p, err := a.resolver.Resolve(r.Context(), c)
	if err == nil {
		flog.Info(w).UserID = p.UserID()
	}
	return p, err
}

// Context is what a raw handler's services need of a request once the
// caller is known: the principal and what ExternalURLFrom, Request and
// RequestURL read, as Huma operations have them.
func (a *API) Context(r *http.Request, p *auth.Principal) context.Context {
	st := &requestState{api: a, req: r, rawQuery: r.URL.RawQuery}
	return context.WithValue(auth.WithPrincipal(r.Context(), p), stateKey{}, st)
}

// DocumentAlias shows an aliased path in the OpenAPI document: the
// operation registered at method and target (without the /api/v4 prefix)
// is described again at path, as GitLab spells it, with its own operation
// id (the target's plus "-alias"). path must name the same path
// parameters as target. Clients and linters read the document, and an
// alias served but not described looked like a missing route.
func (a *API) DocumentAlias(method, path, target string) {
	op := a.documented(method, Prefix+target)
	if op == nil {
		panic("api: DocumentAlias: no " + method + " operation at " + target)
	}
	alias := *op
	alias.OperationID = op.OperationID + "-alias"
	alias.Path = Prefix + path
	a.huma.OpenAPI().AddOperation(&alias)
}
