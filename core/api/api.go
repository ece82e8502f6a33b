package api

// The API itself: New wires every convention into a Huma API on a
// ServeMux; Handler is the HTTP stack around it (panic recovery, access log
// and metrics, intercepts, the catch-all 404 and 405). Operations are in
// operation.go, raw handlers in raw.go, request state in request.go.

import (
	"net/http"
	"net/netip"
	"reflect"
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
	reportsMu  sync.Mutex
	reports    []readinessReport
	// errors maps modules' domain errors to GitLab answers (MapError).
	errors errorTable
	// pages answers what no route took outside /api/v4 (SetPages).
	pages http.Handler
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
	cfg.DocsPath = "" // ours, served from the binary: registerDocs
	cfg.SchemasPath = Prefix + "/schemas"
	cfg.FieldsOptionalByDefault = true
	cfg.AllowAdditionalPropertiesByDefault = true
	cfg.Components.Schemas = huma.NewMapRegistry("#/components/schemas/", schemaName)
	cfg.Info.Description = "The GitLab REST API v4 as served by Fennec. Every path is relative to the server's external URL."
	documentConventions(&cfg)

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
	a.registerDocs()
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
	a.setServers(u)
}

// ExternalURL is the URL clients reach this host at.
func (a *API) ExternalURL() string { return *a.external.Load() }

// SetReady flips the readiness probe.
func (a *API) SetReady(ready bool) { a.ready.Store(ready) }

// Ready reports the readiness flag.
func (a *API) Ready() bool { return a.ready.Load() }

// readinessReport is a part of the server reported beside readiness.
type readinessReport struct {
	name   string
	report func() any
}

// AddReadinessReport has GET /-/readiness show report() under name: the
// state of a part that starts in the background and does not decide
// readiness (executor processes, which the server does not wait for).
func (a *API) AddReadinessReport(name string, report func() any) {
	a.reportsMu.Lock()
	defer a.reportsMu.Unlock()
	a.reports = append(a.reports, readinessReport{name, report})
}

// ReadinessReports are the reports added, by name.
func (a *API) ReadinessReports() map[string]any {
	a.reportsMu.Lock()
	defer a.reportsMu.Unlock()
	out := make(map[string]any, len(a.reports))
	for _, r := range a.reports {
		out[r.name] = r.report()
	}
	return out
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

// SetPages hands the requests outside /api/v4 that no route took to h (the
// web interface, core/web) instead of the JSON 404 and 405. Call it before
// Handler.
func (a *API) SetPages(h http.Handler) { a.pages = h }

// unmatched answers requests no route took: 405 with Allow when another
// method would have matched, else GitLab's 404; outside /api/v4, the pages
// when there are (SetPages).
func (a *API) unmatched(w http.ResponseWriter, r *http.Request) {
	if a.pages != nil && r.URL.Path != Prefix && !strings.HasPrefix(r.URL.Path, Prefix+"/") {
		a.pages.ServeHTTP(w, r)
		return
	}
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
