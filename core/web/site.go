package web

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	flog "github.com/fennec-forge/fennec/core/log"
	"github.com/fennec-forge/fennec/core/markup"
)

// Site is the web interface of one Fennec host: the routes of every
// module's pages and what they share. Modules register during route
// registration; the site serves once the API's Handler is built.
type Site struct {
	api    *api.API
	log    *zap.Logger
	name   string
	base   *template.Template
	core   *Templates // the site's own pages (errors)
	assets *assets

	mu          sync.RWMutex
	menu        []MenuItem
	projectTabs []ProjectTab
	sections    []Section
	stats       []adminStats // the admin overview's figures (admin.go)
	// settings are the pages under a project's "/-/settings/", by
	// "METHOD name" (sections.go).
	settings map[string]http.HandlerFunc
	// scoped are the pages under a project's or a group's "/-/", by scope
	// (scopeProject, scopeGroup), then "METHOD key".
	scoped map[string]map[string]http.Handler
	// prefix caches Prefix's answer for the external URL it was read from.
	prefix atomic.Pointer[prefixOf]
	// paths resolve a bare path ("/alice", "/group/project"), in order.
	paths []PathHandler
	// references answer for the kinds of Markdown references
	// (references.go).
	references map[markup.RefKind]ReferenceFunc
	// commitStatus answers a commit's CI status (cistatus.go).
	commitStatus CommitStatusFunc
	// branchMRs answers a branch's open merge requests (cistatus.go).
	branchMRs BranchMergeRequestsFunc
}

// Options configure a Site.
type Options struct {
	// Name is the product's name in the header and page titles; "Fennec"
	// when empty.
	Name string
	Log  *zap.Logger
}

// The scopes of pages under "/-/".
const (
	scopeProject = "project"
	scopeGroup   = "group"
)

// PathHandler serves the page of a bare path (no "/-/" in it), such as a
// user's profile or a project's overview; path is unescaped, without its
// leading slash. It returns false, having written nothing, when the path
// is not one of its own, and the next handler is asked.
type PathHandler func(w http.ResponseWriter, r *http.Request, path string) bool

// New builds the site on a's mux: its static assets, and the fallback for
// every request outside /api/v4 that no route took.
func New(a *api.API, opts Options) *Site {
	if opts.Name == "" {
		opts.Name = "Fennec"
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	s := &Site{api: a, log: opts.Log, name: opts.Name, assets: newAssets(),
		scoped: map[string]map[string]http.Handler{scopeProject: {}, scopeGroup: {}}}
	s.base = template.Must(template.New("base").Funcs(funcs).ParseFS(templateFiles, "templates/base/*.html"))
	s.core = s.Templates(templateFiles, "templates/pages/*.html")
	s.addCoreAssets()
	a.Mount("static-asset", "GET /-/static/{file}", http.HandlerFunc(s.serveAsset))
	a.SetPages(http.HandlerFunc(s.dispatch))
	return s
}

// Name is the product's name shown in the pages.
func (s *Site) Name() string { return s.name }

// Logger is the site's logger.
func (s *Site) Logger() *zap.Logger { return s.log }

// API is the API the site is mounted beside.
func (s *Site) API() *api.API { return s.api }

// Handle serves the pages of a ServeMux pattern ("GET /dashboard/projects",
// "POST /users/sign_in"). The handler runs with the browser's principal in
// its request's context; a write (any method but GET and HEAD) runs only
// when its form carries this browser's CSRF token, else the visitor gets a
// 403 page and nothing changes.
func (s *Site) Handle(pattern string, h http.HandlerFunc) {
	s.api.Mount(pageName(pattern), pattern, s.page(h, true))
}

// HandleCheckingCSRF is Handle for a handler that checks the CSRF token
// itself (CheckCSRF), to answer a failed check its own way (the sign-in
// form shows itself again). Prefer Handle.
func (s *Site) HandleCheckingCSRF(pattern string, h http.HandlerFunc) {
	s.api.Mount(pageName(pattern), pattern, s.page(h, false))
}

// Project serves a page under a project: "/<full path>/-/<key>/<rest>" for
// pattern "METHOD key" ("GET tree"). The handler reads the project's full
// path with r.PathValue("owner") and what follows the key with
// r.PathValue("rest") (both unescaped; rest may be empty), and resolves
// the project itself, through the projects module's Access, so that the
// page's permissions are the API's.
func (s *Site) Project(pattern string, h http.HandlerFunc) { s.scope(scopeProject, pattern, h) }

// Group serves a page under a group: "/groups/<full path>/-/<key>/<rest>";
// key "" is the group's own page, "/groups/<full path>".
func (s *Site) Group(pattern string, h http.HandlerFunc) { s.scope(scopeGroup, pattern, h) }

func (s *Site) scope(scope, pattern string, h http.HandlerFunc) {
	method, key, ok := strings.Cut(pattern, " ")
	if !ok || method == "" || strings.Contains(key, "/") {
		panic("web: a scoped page's pattern is \"METHOD key\": " + pattern)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.scoped[scope][pattern]; dup {
		panic("web: two " + scope + " pages for " + pattern)
	}
	s.scoped[scope][pattern] = s.page(h, true)
}

// ProjectKeys are the keys of the project pages served with GET, for the
// redirects of GitLab 9.x's paths without "/-/" ("/ns/p/tree/master").
func (s *Site) ProjectKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var keys []string
	for pattern := range s.scoped[scopeProject] {
		if key, ok := strings.CutPrefix(pattern, "GET "); ok && key != "" {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// Path adds a handler of bare paths (see PathHandler).
func (s *Site) Path(h PathHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paths = append(s.paths, h)
}

// dispatch serves what no route took outside /api/v4: the scoped pages,
// then the bare paths, else the 404 page.
func (s *Site) dispatch(w http.ResponseWriter, r *http.Request) {
	flog.Info(w).Operation = "page"
	escaped := strings.TrimPrefix(r.URL.EscapedPath(), "/")
	scope := scopeProject
	if rest, ok := strings.CutPrefix(escaped, "groups/"); ok {
		scope, escaped = scopeGroup, rest
	}
	owner, after, scoped := strings.Cut(escaped, "/-/")
	if !scoped && scope == scopeGroup {
		owner, scoped = strings.TrimSuffix(owner, "/"), true
	}
	if scoped {
		key, rest, _ := strings.Cut(after, "/")
		ownerPath, err1 := url.PathUnescape(owner)
		keyText, err2 := url.PathUnescape(key)
		restPath, err3 := url.PathUnescape(rest)
		s.mu.RLock()
		h := s.scoped[scope][r.Method+" "+keyText]
		if h == nil && r.Method == http.MethodHead {
			h = s.scoped[scope][http.MethodGet+" "+keyText]
		}
		s.mu.RUnlock()
		if err1 != nil || err2 != nil || err3 != nil || h == nil || ownerPath == "" {
			s.NotFound(w, r)
			return
		}
		r.SetPathValue("owner", ownerPath)
		r.SetPathValue("rest", restPath)
		flog.Info(w).Operation = scope + "-" + keyText
		h.ServeHTTP(w, r)
		return
	}
	path, err := url.PathUnescape(escaped)
	if err != nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		s.NotFound(w, r)
		return
	}
	s.mu.RLock()
	paths := s.paths
	s.mu.RUnlock()
	if path == "" {
		s.NotFound(w, r)
		return
	}
	s.page(func(w http.ResponseWriter, r *http.Request) {
		for _, h := range paths {
			if h(w, r, path) {
				return
			}
		}
		s.NotFound(w, r)
	}, true).ServeHTTP(w, r)
}

// pageName labels a pattern's requests in the access log and metrics.
func pageName(pattern string) string {
	return "page " + pattern
}

// Prefix is the path the site is mounted under (the external URL's path,
// "" at a host's root), which every link and form carries.
func (s *Site) Prefix() string {
	// Pages ask for every link they build; the external URL is set once
	// the server listens, so the parse is kept for the URL it was of.
	ext := s.api.ExternalURL()
	if c := s.prefix.Load(); c != nil && c.external == ext {
		return c.prefix
	}
	c := &prefixOf{external: ext}
	if u, err := url.Parse(ext); err == nil {
		c.prefix = strings.TrimRight(u.EscapedPath(), "/")
	}
	s.prefix.Store(c)
	return c.prefix
}

// prefixOf is the prefix of an external URL.
type prefixOf struct{ external, prefix string }

// URL is path under the site's prefix: the href of a link or the action
// of a form. path is escaped already (EscapePath) and starts with "/".
func (s *Site) URL(path string) string { return s.Prefix() + path }

// EscapePath escapes each segment of a slash-separated path (a file's, a
// ref's, a project's full path), keeping the slashes: "a b/c#d" becomes
// "a%20b/c%23d".
func EscapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	return strings.Join(segs, "/")
}
