package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
)

// MaxFormBytes bounds the body of a page's form. A form that is larger is
// refused with a 413 page before its handler runs. The largest text the
// services take is 1 MiB (a snippet's content, a description); a browser
// sends each byte outside ASCII as three (%XX), so such a text may arrive
// as 3 MiB, beside the form's other fields. Anything up to the services'
// own bound therefore reaches them, and they answer "too long" beyond it.
const MaxFormBytes = 3<<20 + 64<<10

// page wraps a page handler: the form read and its CSRF token checked on a
// write (when checkCSRF), the browser's principal in the context, and a
// panic turned into the 500 page.
func (s *Site) page(h http.HandlerFunc, checkCSRF bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler { //nolint:errorlint // the sentinel itself, as net/http checks it
					panic(v)
				}
				s.log.Error("page panicked", zap.Any("panic", v), zap.String("path", r.URL.Path), zap.Stack("stack"))
				s.Error(w, r, http.StatusInternalServerError)
			}
		}()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
			if err := readForm(r); err != nil {
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					s.Error(w, r, http.StatusRequestEntityTooLarge)
					return
				}
				s.ErrorMessage(w, r, http.StatusBadRequest, "Invalid request", "The form could not be read.")
				return
			}
			if checkCSRF && !s.CheckCSRF(r) {
				s.ErrorMessage(w, r, http.StatusForbidden, "Form expired",
					"The form could not be verified (CSRF check). Reload the page and try again.")
				return
			}
		}
		p, err := s.api.AuthenticateSession(w, r)
		if err != nil {
			s.log.Error("page: the session could not be resolved", zap.Error(err))
			s.Error(w, r, http.StatusServiceUnavailable)
			return
		}
		h(w, r.WithContext(s.api.Context(r, p)))
	})
}

// readForm parses a form body: URL-encoded or multipart (bounded by the
// body's reader).
func readForm(r *http.Request) error {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		return r.ParseMultipartForm(MaxFormBytes)
	}
	return r.ParseForm()
}

// Page is what a page shows, beside its own data.
type Page struct {
	// Title is the page's title, before the site's name.
	Title string
	// Project, when set, puts the project's header and tabs above the
	// page; Tab is the active tab's key.
	Project *Project
	Tab     string
	// Area, when set, draws the area's side navigation (AddSection)
	// beside the page; Section is the active entry's key. Project
	// settings take their base and level from Project, group settings
	// from Group.
	Area    Area
	Section string
	Group   *Group
	// Crumbs lead from the project (or the site) to the page.
	Crumbs []Crumb
	// Status is the answer's status; 200 when 0.
	Status int
	// Data is the page's own, for its template.
	Data any
}

// Crumb is one step of a page's breadcrumbs; the last has no link.
type Crumb struct{ Label, Href string }

// Project is what the header of a project's pages shows, and what decides
// which tabs it offers: the caller's view of it, from the projects
// module's Access.
type Project struct {
	FullPath   string // "group/project"
	Name       string // "Group / Project"
	Visibility string
	Archived   bool
	// Level is the visitor's access level (10 guest ... 50 owner; 0 for
	// an anonymous reader of a public project).
	Level int
	// Features are the project's switches by their API names
	// ("issues_enabled").
	Features map[string]bool
	// Stars and Forks are the project's counts, shown beside its name.
	Stars, Forks int
}

// Href is the project's page under the site's root, escaped: links
// append "/-/tree/..." to it.
func (p *Project) Href() string { return "/" + EscapePath(p.FullPath) }

// ProjectTab is a tab of every project's header, added by the module
// whose pages it leads to.
type ProjectTab struct {
	Key   string // the page's Tab, to mark it active
	Label string
	// Suffix follows the project's path: "" for the overview, "/-/tree".
	Suffix string
	Order  int
	// Feature names a switch that must be on ("issues_enabled"); "" for
	// none.
	Feature string
	// MinLevel is the least access level that sees the tab (0: anyone who
	// sees the project).
	MinLevel int
}

// MenuItem is an entry of the header's menu, added by a module.
type MenuItem struct {
	Label string
	Path  string // under the site's root: "/explore/projects"
	Order int
	// SignedIn hides the entry from anonymous visitors.
	SignedIn bool
	// Admin shows the entry to administrators only.
	Admin bool
	// Count, when set, is a number shown beside the entry to signed-in
	// visitors (their pending to-dos), asked on every page: it must be
	// cheap, and may stop at MaxMenuCount (menubadge.go).
	Count func(ctx context.Context) int
}

// AddProjectTab adds a tab to every project's header.
func (s *Site) AddProjectTab(t ProjectTab) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.projectTabs = append(s.projectTabs, t)
	slices.SortStableFunc(s.projectTabs, func(a, b ProjectTab) int { return a.Order - b.Order })
}

// AddMenu adds an entry to the header's menu.
func (s *Site) AddMenu(m MenuItem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.menu = append(s.menu, m)
	slices.SortStableFunc(s.menu, func(a, b MenuItem) int { return a.Order - b.Order })
}

// Templates are a module's page templates: each is the site's layout with
// the page's "content" (and optional "head") defined by one file.
type Templates struct {
	site  *Site
	pages map[string]*template.Template
}

// Templates parses the files of fsys matching the patterns
// ("templates/files/*.html", "templates/_shared.html"): a file whose name
// starts with "_" holds partials every page of the set may use; each other
// file is a page, named after the file without ".html".
func (s *Site) Templates(fsys fs.FS, patterns ...string) *Templates {
	var names []string
	for _, pattern := range patterns {
		matched, err := fs.Glob(fsys, pattern)
		if err != nil || len(matched) == 0 {
			panic("web: no templates match " + pattern)
		}
		names = append(names, matched...)
	}
	var partials, pages []string
	for _, n := range names {
		if strings.HasPrefix(path.Base(n), "_") {
			partials = append(partials, n)
		} else {
			pages = append(pages, n)
		}
	}
	t := &Templates{site: s, pages: map[string]*template.Template{}}
	for _, p := range pages {
		tmpl := template.Must(s.base.Clone())
		if len(partials) > 0 {
			template.Must(tmpl.ParseFS(fsys, partials...))
		}
		t.pages[strings.TrimSuffix(path.Base(p), ".html")] = template.Must(tmpl.ParseFS(fsys, p))
	}
	return t
}

// view is what the layout and a page's template read: the Page, and what
// every page shows (the visitor, the menu, the assets).
type view struct {
	Page
	Site string
	User *auth.User
	// Impersonator is the administrator acting as User, for the banner
	// that stops it.
	Impersonator *auth.User
	CSRF         string
	Menu         []menuEntry
	Tabs         []tabView
	SideNav      *sideNav
	ReturnTo     string
	prefix       string
	assets       *assets
}

type tabView struct {
	Label, Href string
	Active      bool
}

// URL is an escaped path under the site's root, prefixed: href="{{.URL
// "/explore/projects"}}".
func (v *view) URL(p string) string { return v.prefix + p }

// Asset is the URL of a static asset by its plain name ("fennec.css").
func (v *view) Asset(name string) string { return v.prefix + v.assets.url(name) }

// SignInURL is the sign-in page, returning here afterwards.
func (v *view) SignInURL() string {
	return v.prefix + "/users/sign_in?return_to=" + url.QueryEscape(v.ReturnTo)
}

// Render writes page name of t. An unknown name or a failing template is
// the 500 page (and a log line): a bug, not the visitor's fault.
func (t *Templates) Render(w http.ResponseWriter, r *http.Request, name string, pg Page) {
	tmpl := t.pages[name]
	if tmpl == nil {
		t.site.log.Error("web: no such page template", zap.String("page", name))
		t.site.Error(w, r, http.StatusInternalServerError)
		return
	}
	v := t.site.viewOf(w, r, pg)
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "layout", v); err != nil {
		t.site.log.Error("web: page template failed", zap.String("page", name), zap.Error(err))
		if name != "error" {
			t.site.Error(w, r, http.StatusInternalServerError)
		} else {
			http.Error(w, "500 Internal Server Error", http.StatusInternalServerError)
		}
		return
	}
	status := pg.Status
	if status == 0 {
		status = http.StatusOK
	}
	writePage(w, r, status, buf.Bytes())
}

func (s *Site) viewOf(w http.ResponseWriter, r *http.Request, pg Page) *view {
	p := auth.FromContext(r.Context())
	prefix := s.Prefix()
	v := &view{Page: pg, Site: s.name, User: p.User, Impersonator: p.Impersonator, prefix: prefix, assets: s.assets,
		ReturnTo: prefix + r.URL.RequestURI()}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		v.ReturnTo = prefix + r.URL.Path
	}
	if p.User != nil {
		v.CSRF = s.CSRFToken(w, r)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, m := range s.menu {
		if m.Admin && (p.User == nil || !p.User.Admin) {
			continue
		}
		if !m.SignedIn || p.User != nil {
			v.Menu = append(v.Menu, menuEntryOf(r.Context(), m, p.User != nil))
		}
	}
	if pg.Project != nil {
		for _, t := range s.projectTabs {
			if (t.Feature != "" && !pg.Project.Features[t.Feature]) || pg.Project.Level < t.MinLevel {
				continue
			}
			v.Tabs = append(v.Tabs, tabView{Label: t.Label, Href: prefix + pg.Project.Href() + t.Suffix, Active: t.Key == pg.Tab})
		}
	}
	v.SideNav = s.sideNavOf(pg, prefix)
	return v
}

// pageGzips are the pages' compressors: a new one allocates and clears
// about a megabyte, a millisecond of a small page's time.
var pageGzips = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// minGzip is the smallest page worth compressing.
const minGzip = 1024

// writePage writes an HTML page with the headers every page has: no
// framing, no sniffing, no referrer to other sites, scripts and styles
// from this server only. Bodies over a kilobyte are compressed for
// browsers that accept gzip.
func writePage(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	// form-action is left out on purpose: browsers apply it to the
	// redirect after a form, and the OAuth consent form redirects to the
	// client's own site.
	hdr.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'")
	hdr.Add("Vary", "Accept-Encoding")
	if len(body) >= minGzip && acceptsGzip(r) {
		var buf bytes.Buffer
		zw := pageGzips.Get().(*gzip.Writer)
		zw.Reset(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		pageGzips.Put(zw)
		body = buf.Bytes()
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// acceptsGzip reports whether the request's Accept-Encoding names gzip
// without refusing it (q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
