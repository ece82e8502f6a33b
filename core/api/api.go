package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	flog "github.com/fennec-forge/fennec/core/log"
)

// Prefix is where the GitLab API lives.
const Prefix = "/api/v4"

// Options configure an API.
type Options struct {
	Logger   *zap.Logger
	Resolver *auth.Resolver
	// MaxBodyBytes is the default request body limit; 10 MiB when 0.
	MaxBodyBytes int64
	// BodyReadTimeout bounds reading one request body; 30s when 0.
	BodyReadTimeout time.Duration
	// Version is shown in the OpenAPI document.
	Version string
	// MetricsToken and MetricsAllow guard MetricsHandler (see there).
	MetricsToken string
	MetricsAllow []netip.Prefix
}

// API is the shared Huma API plus the raw routes of one Fennec host.
type API struct {
	huma       huma.API
	mux        *http.ServeMux
	log        *zap.Logger
	resolver   *auth.Resolver
	maxBody    int64
	bodyTime   time.Duration
	external   atomic.Pointer[string]
	metrics    *Metrics
	metricsAcc metricsAccess
	intercepts []intercept
	handler    http.Handler
	buildOnce  sync.Once
	ready      atomic.Bool
	// errors maps modules' domain errors to GitLab answers (MapError).
	errors errorTable
}

type intercept struct {
	name  string
	match func(*http.Request) bool
	h     http.Handler
}

var installHooks sync.Once

// New builds an API with every convention wired in. Register operations,
// then call Handler.
func New(opts Options) *API {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Resolver == nil {
		opts.Resolver = &auth.Resolver{}
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 10 << 20
	}
	if opts.BodyReadTimeout <= 0 {
		opts.BodyReadTimeout = 30 * time.Second
	}
	// Huma's error constructor is process-wide; the hook only changes errors
	// of operations registered through this package (it checks the
	// operation's metadata), so an embedder's own Huma API keeps its format.
	installHooks.Do(func() {
		huma.NewErrorWithContext = errorHook(huma.NewErrorWithContext)
	})

	mux := http.NewServeMux()
	cfg := huma.DefaultConfig("Fennec API (GitLab v4 compatible)", opts.Version)
	cfg.CreateHooks = nil // no $schema keys, no schema Link headers
	cfg.Formats = map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat}
	cfg.OpenAPIPath = Prefix + "/openapi"
	cfg.DocsPath = Prefix + "/docs"
	cfg.SchemasPath = Prefix + "/schemas"
	cfg.FieldsOptionalByDefault = true
	cfg.AllowAdditionalPropertiesByDefault = true
	cfg.Components.Schemas = huma.NewMapRegistry("#/components/schemas/", schemaName)
	cfg.Info.Description = "The GitLab REST API v4 as served by Fennec. Every path is relative to the host."

	a := &API{
		mux:      mux,
		log:      opts.Logger,
		resolver: opts.Resolver,
		maxBody:  opts.MaxBodyBytes,
		bodyTime: opts.BodyReadTimeout,
		metrics:  newMetrics(),
	}
	a.metricsAcc = newMetricsAccess(opts.MetricsToken, opts.MetricsAllow)
	empty := ""
	a.external.Store(&empty)
	a.huma = humago.New(mux, cfg)
	a.huma.UseMiddleware(a.pipeline)
	mux.HandleFunc(Prefix+"/", a.unmatched)
	mux.HandleFunc("/", a.unmatched)
	return a
}

// Huma exposes the underlying Huma API, for operations that need Huma
// features Register does not cover. Prefer Register.
func (a *API) Huma() huma.API { return a.huma }

// Logger is the API's logger.
func (a *API) Logger() *zap.Logger { return a.log }

// Metrics is the API's metrics registry.
func (a *API) Metrics() *Metrics { return a.metrics }

// SetExternalURL records how clients reach this host (no trailing slash).
func (a *API) SetExternalURL(u string) {
	u = strings.TrimRight(u, "/")
	a.external.Store(&u)
}

// ExternalURL is the URL clients reach this host at.
func (a *API) ExternalURL() string { return *a.external.Load() }

// SetReady flips the readiness probe.
func (a *API) SetReady(ready bool) { a.ready.Store(ready) }

// Ready reports the readiness flag.
func (a *API) Ready() bool { return a.ready.Load() }

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

// Context is what a raw handler's services need of a request once the
// caller is known: the principal and what ExternalURLFrom, Request and
// RequestURL read, as Huma operations have them.
func (a *API) Context(r *http.Request, p *auth.Principal) context.Context {
	st := &requestState{api: a, req: r, rawQuery: r.URL.RawQuery}
	return context.WithValue(auth.WithPrincipal(r.Context(), p), stateKey{}, st)
}

// Handler is the whole HTTP stack: panic recovery, access log and metrics,
// intercepts, then the mux.
func (a *API) Handler() http.Handler {
	a.buildOnce.Do(a.buildHandler)
	return a.handler
}

func (a *API) buildHandler() {
	var inner http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !canonicalPath(r.URL.EscapedPath()) {
			// "..", "." and empty segments name nothing here; the mux would
			// redirect to a cleaned path, which only invites probing.
			WriteJSON(w, http.StatusNotFound, map[string]string{"error": "404 Not Found"})
			return
		}
		for _, ic := range a.intercepts {
			if ic.match(r) {
				if ic.name == "" {
					a.guardBody(w, r) // an alias: an operation serves it
				}
				// Named intercepts (git over HTTP) stream large bodies and
				// keep their own deadlines.
				ic.h.ServeHTTP(w, r)
				return
			}
		}
		a.guardBody(w, r)
		a.mux.ServeHTTP(w, r)
	})
	inner = a.recoverer(inner)
	a.handler = flog.Middleware(a.log, inner, a.metrics.observe)
}

// canonicalPath reports whether the escaped path p has no literal "." or
// ".." segment and no empty one but a trailing slash (what the mux would
// answer with a redirect). Escaped dots and slashes inside a segment are
// data (a file path, an id) and reach the handlers, which check them.
func canonicalPath(p string) bool {
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, seg := range segs {
		if (seg == "" && i < len(segs)-1) || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Access says who may call an operation at all; finer rules (project
// membership) are the module's business.
type Access int

const (
	// Public operations answer anonymous callers too.
	Public Access = iota
	// SignedIn operations answer 401 to anonymous callers.
	SignedIn
	// AdminOnly operations answer 401 to anonymous and 403 to other users.
	AdminOnly
)

// Op describes an operation for Register.
type Op struct {
	// ID is the OpenAPI operation id and the metrics label ("get-user").
	ID string
	// Method and Path; Path is below /api/v4 ("/user", "/projects/{id}").
	Method, Path string
	Summary      string
	Description  string
	Tags         []string
	Access       Access
	// Scopes that allow the call; default api. Read-only user endpoints add
	// read_user.
	Scopes []string
	// Status is the success status; default 200, 201 for POST, 204 for
	// DELETE (API-CONVENTIONS.md); idempotent deletes set 200 explicitly.
	Status int
	// MaxBodyBytes overrides the API-wide body limit.
	MaxBodyBytes int64
	// RawBody leaves the body to Huma (multipart uploads): no merging.
	RawBody bool
}

const metaKey = "fennec"

type opMeta struct {
	api     *API // whose error table answers the operation's errors
	access  Access
	scopes  []string
	rawBody bool
	maxBody int64
}

// Register adds an operation to the API under /api/v4 with Fennec's
// conventions: parameter merging, auth and access check, GitLab errors.
func Register[I, O any](a *API, op Op, h func(context.Context, *I) (*O, error)) {
	status := op.Status
	if status == 0 {
		switch op.Method {
		case http.MethodPost:
			status = http.StatusCreated
		case http.MethodDelete:
			status = http.StatusNoContent
		default:
			status = http.StatusOK
		}
	}
	scopes := op.Scopes
	if len(scopes) == 0 {
		scopes = []string{auth.ScopeAPI}
	}
	maxBody := op.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = a.maxBody
	}
	hop := huma.Operation{
		OperationID:   op.ID,
		Method:        op.Method,
		Path:          Prefix + op.Path,
		Summary:       op.Summary,
		Description:   op.Description,
		Tags:          op.Tags,
		DefaultStatus: status,
		MaxBodyBytes:  maxBody,
		// The merger reads the body under its own deadline.
		BodyReadTimeout: -1,
		Metadata: map[string]any{metaKey: &opMeta{
			api: a, access: op.Access, scopes: scopes, rawBody: op.RawBody, maxBody: maxBody,
		}},
	}
	huma.Register(a.huma, hop, h)
}

// pipeline runs before every Fennec operation: it names the operation for
// the logs, merges parameters into one JSON body, resolves the caller and
// enforces the operation's access rule.
func (a *API) pipeline(ctx huma.Context, next func(huma.Context)) {
	meta, ok := ctx.Operation().Metadata[metaKey].(*opMeta)
	if !ok {
		next(ctx)
		return
	}
	r, w := humago.Unwrap(ctx)
	info := flog.Info(w)
	info.Operation = ctx.Operation().OperationID
	rawQuery := r.URL.RawQuery
	normalizeQuery(r)

	var params requestParams
	if r.URL.RawQuery != "" {
		params.query = r.URL.Query()
	}
	// Credentials in the headers or the query string are checked before the
	// body is read, so a bad token costs no body; when there are some, a
	// body's private_token or access_token is not looked at (its sudo is).
	// resolved remembers what p was resolved from, to resolve again only if
	// the body changes the credentials.
	early := auth.CredentialsFrom(r, params.get)
	var p *auth.Principal
	var resolved auth.Credentials
	readsBody := !meta.rawBody && r.Method != http.MethodGet && r.Method != http.MethodHead
	if readsBody && !early.Empty() {
		var err error
		if p, err = a.resolver.Resolve(r.Context(), early); err != nil {
			a.writeError(ctx, err)
			return
		}
		resolved = early
	}
	if readsBody {
		var gate func([]byte) error
		if early.Empty() && meta.access >= SignedIn {
			// Nobody is signed in yet and the operation needs someone: only
			// a token near the start of the body can still change that, so
			// a large body is not read without one.
			gate = func(prefix []byte) error {
				peek := requestParams{query: params.query, body: peekParams(r.Header.Get("Content-Type"), prefix)}
				c := auth.CredentialsFrom(r, peek.get)
				if c.Empty() {
					return Unauthorized()
				}
				var err error
				p, err = a.resolver.Resolve(r.Context(), c)
				resolved = c
				return err
			}
		}
		merged, err := a.merge(w, r, rawQuery, ctx.Operation(), meta.maxBody, gate)
		if err != nil {
			a.writeError(ctx, err)
			return
		}
		params.body = merged.values
		if merged.json != nil {
			ctx = &bodyContext{humaContext: ctx, body: merged.json}
		}
	}

	creds := auth.CredentialsFrom(r, params.get)
	if !early.Empty() {
		creds = early
		if creds.Sudo == "" {
			creds.Sudo = params.get("sudo")
		}
	}
	if p == nil || creds != resolved {
		var err error
		if p, err = a.resolver.Resolve(r.Context(), creds); err != nil {
			a.writeError(ctx, err)
			return
		}
	}
	info.UserID = p.UserID()
	switch {
	case meta.access >= SignedIn && p.IsAnonymous():
		a.writeError(ctx, Unauthorized())
		return
	case meta.access == AdminOnly && !p.IsAdmin():
		a.writeError(ctx, Forbidden(""))
		return
	case !p.AllowsAny(meta.scopes):
		a.writeError(ctx, auth.ErrInsufficientScope)
		return
	}
	st := &requestState{api: a, req: r, rawQuery: rawQuery}
	c := context.WithValue(auth.WithPrincipal(ctx.Context(), p), stateKey{}, st)
	next(huma.WithContext(ctx, c))
}

func (a *API) writeError(ctx huma.Context, err error) {
	e, ok := a.ErrorResponse(err)
	if !ok {
		a.log.Error("request failed", zap.Error(err))
		e = Internal()
	}
	_ = huma.WriteErr(a.huma, ctx, e.Status, "", e)
}

// requestState is what handlers may need from the raw request.
type requestState struct {
	api *API
	req *http.Request
	// rawQuery is the query as the client sent it, before name[] arrays
	// were normalised; Link headers echo it.
	rawQuery string
}

type stateKey struct{}

func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(stateKey{}).(*requestState)
	return st
}

// RequestURL is the absolute URL of the current request as the client sees
// it (external URL + path + query); used for Link headers.
func RequestURL(ctx context.Context) string {
	st := stateOf(ctx)
	if st == nil {
		return ""
	}
	return st.api.ExternalURL() + st.req.URL.EscapedPath()
}

// ExternalURLFrom is the host's external URL, from a handler's context.
func ExternalURLFrom(ctx context.Context) string {
	if st := stateOf(ctx); st != nil {
		return st.api.ExternalURL()
	}
	return ""
}

// Request returns the raw request behind a handler's context, or nil.
func Request(ctx context.Context) *http.Request {
	if st := stateOf(ctx); st != nil {
		return st.req
	}
	return nil
}

type requestParams struct {
	query map[string][]string
	body  map[string]any
}

// get reads a scalar parameter, the body winning over the query.
func (p requestParams) get(name string) string {
	if v, ok := p.body[name]; ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	if vs := p.query[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// bodyContext hands Huma the merged JSON body instead of the original one.
type bodyContext struct {
	humaContext
	body []byte
}

// humaContext lets bodyContext embed huma.Context without a field named
// Context shadowing the Context() method.
type humaContext = huma.Context

func (c *bodyContext) BodyReader() io.Reader { return bytes.NewReader(c.body) }
func (c *bodyContext) Header(name string) string {
	if strings.EqualFold(name, "Content-Type") {
		return "application/json"
	}
	return c.humaContext.Header(name)
}
func (c *bodyContext) Unwrap() huma.Context { return c.humaContext }

// unmatched answers requests no route took: 405 with Allow when another
// method would have matched, else GitLab's 404.
func (a *API) unmatched(w http.ResponseWriter, r *http.Request) {
	flog.Info(w).Operation = "unmatched"
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := a.mux.Handler(probe); pattern != "" && pattern != "/" && pattern != Prefix+"/" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		sort.Strings(allowed)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		WriteJSON(w, http.StatusMethodNotAllowed, &Error{Err: "405 Not Allowed"})
		return
	}
	WriteJSON(w, http.StatusNotFound, &Error{Err: "404 Not Found"})
}

// schemaName names OpenAPI schemas after their module so two modules may
// both have a "User" type: identity.User -> IdentityUser.
func schemaName(t reflect.Type, hint string) string {
	name := huma.DefaultSchemaNamer(t, hint)
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	pkg := t.PkgPath()
	const root = "github.com/fennec-forge/fennec/"
	if !strings.HasPrefix(pkg, root) || t.Name() == "" {
		return name
	}
	parts := strings.Split(strings.TrimPrefix(pkg, root), "/")
	owner := parts[len(parts)-1]
	for i, p := range parts {
		if p == "internal" && i > 0 {
			owner = parts[i-1]
			break
		}
	}
	if owner == "" {
		return name
	}
	r := []rune(owner)
	r[0] = unicode.ToUpper(r[0])
	prefix := string(r)
	if strings.HasPrefix(name, prefix) {
		return name
	}
	return prefix + name
}
