package internal

// Git's smart HTTP protocol, for the git CLI and every other git client:
//
//	GET  /<namespace>/<project>[.git]/info/refs?service=git-upload-pack|git-receive-pack
//	POST /<namespace>/<project>[.git]/git-upload-pack
//	POST /<namespace>/<project>[.git]/git-receive-pack
//
// Credentials come as basic auth (a password, or a token as the password)
// and are resolved by the API layer, so git sees the same users, tokens,
// blocks and LDAP logins as the REST API. Permissions are the projects
// module's: reading needs ReadCode, pushing PushCode, and protected
// branches are checked per ref in receive-pack. Whoever has not signed in
// and is refused gets 401 with a Basic challenge, so git asks for
// credentials; a signed-in caller who may not see the project gets 404.

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/internal/gitserve"
)

// GitHTTP serves the git service over the smart HTTP protocol.
type GitHTTP struct {
	*Git
	api *api.API
}

// NewGitRoutes registers the git endpoints.
func NewGitRoutes(g *Git) fennec.Routes {
	return fennec.Routes{Name: "repository-git", Register: func(a *api.API) {
		gh := &GitHTTP{Git: g, api: a}
		a.Intercept("git-http", isGitPath, http.HandlerFunc(gh.serve))
	}}
}

// The endpoints, by the path's suffix.
const (
	infoRefs    = "/info/refs"
	uploadPack  = "/git-upload-pack"
	receivePack = "/git-receive-pack"
)

// maxNegotiationBytes bounds an upload-pack request (wants and haves):
// generous for repositories with many refs, small next to a pack.
const maxNegotiationBytes = 64 << 20

// splitGitPath returns the project's full path and the endpoint; ok is false
// for anything that is not a clean project path (empty, "." or ".."
// segments, encoded slashes, invalid escapes).
func splitGitPath(escaped string) (project, endpoint string, ok bool) {
	for _, e := range []string{infoRefs, uploadPack, receivePack} {
		if strings.HasSuffix(escaped, e) {
			endpoint, escaped = e, strings.TrimSuffix(escaped, e)
			break
		}
	}
	segs := strings.Split(strings.TrimPrefix(escaped, "/"), "/")
	if endpoint == "" || len(segs) < 2 {
		return "", "", false
	}
	for i, seg := range segs {
		s, err := url.PathUnescape(seg)
		if err != nil || s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") {
			return "", "", false
		}
		segs[i] = s
	}
	last := len(segs) - 1
	segs[last] = strings.TrimSuffix(segs[last], ".git")
	if segs[last] == "" {
		return "", "", false
	}
	return strings.Join(segs, "/"), endpoint, true
}

func isGitPath(r *http.Request) bool {
	p := r.URL.EscapedPath()
	if strings.HasPrefix(p, api.Prefix+"/") || strings.HasPrefix(p, "/-/") {
		return false
	}
	return strings.HasSuffix(p, infoRefs) || strings.HasSuffix(p, uploadPack) || strings.HasSuffix(p, receivePack)
}

func (g *GitHTTP) serve(w http.ResponseWriter, r *http.Request) {
	project, endpoint, ok := splitGitPath(r.URL.EscapedPath())
	if !ok {
		gitError(w, http.StatusNotFound, "Not Found")
		return
	}
	service := ""
	switch endpoint {
	case infoRefs:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			gitError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		service = r.URL.Query().Get("service")
		if service != "git-upload-pack" && service != "git-receive-pack" {
			// The dumb protocol would hand out raw files, bypassing
			// per-request checks; only the smart protocol is served.
			gitError(w, http.StatusForbidden, "Only the smart HTTP protocol is supported; use git 1.6.6 or later")
			return
		}
	default:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			gitError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
			return
		}
		service = strings.TrimPrefix(endpoint, "/")
		if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/x-"+service+"-request" {
			gitError(w, http.StatusUnsupportedMediaType, "Unsupported Media Type")
			return
		}
	}
	push := service == "git-receive-pack"
	ctx, info, ok := g.authorize(w, r, project, push)
	if !ok {
		return
	}
	switch endpoint {
	case infoRefs:
		g.advertise(ctx, w, r, info, service)
	case uploadPack:
		g.uploadPack(ctx, w, r, info)
	case receivePack:
		g.receivePack(ctx, w, r, info)
	}
}

// authorize resolves the caller and checks the right for the service. It
// answers the refusal itself and returns ok false then.
func (g *GitHTTP) authorize(w http.ResponseWriter, r *http.Request, project string, push bool) (context.Context, projects.ProjectInfo, bool) {
	p, err := g.api.Authenticate(w, r)
	if err != nil {
		// A throttled password is 429 rather than 401: on a 401 git's
		// credential helper erases the user's stored (correct) password.
		var throttled *auth.ThrottledError
		if errors.As(err, &throttled) {
			w.Header().Set("Retry-After", throttled.RetryAfterSeconds())
			gitError(w, http.StatusTooManyRequests, "Retry later")
			return nil, projects.ProjectInfo{}, false
		}
		if errors.Is(err, auth.ErrUnauthorized) {
			challenge(w, "HTTP Basic: Access denied")
			return nil, projects.ProjectInfo{}, false
		}
		g.log.Error("git auth", zap.Error(err))
		gitError(w, http.StatusInternalServerError, "Internal Server Error")
		return nil, projects.ProjectInfo{}, false
	}
	if !p.IsAnonymous() && !p.HasScope(auth.ScopeAPI) && (push || !p.HasScope(auth.ScopeReadRepository)) {
		gitError(w, http.StatusForbidden, "The token's scopes do not allow git access (it needs api)")
		return nil, projects.ProjectInfo{}, false
	}
	ctx := g.api.Context(r, p)
	action := projects.ReadCode
	if push {
		action = projects.PushCode
	}
	info, err := g.access.Require(ctx, project, action)
	if err == nil && p.Project != 0 && info.ID != p.Project {
		// A credential for one project (a CI job's token) reads any other
		// only as an anonymous caller could: a public one.
		anon := g.api.Context(r, auth.Anonymous())
		if info, err := g.access.Require(anon, project, action); err == nil {
			return anon, info, true
		}
		gitError(w, http.StatusForbidden, "A CI job token may only read its own project's repository.")
		return nil, projects.ProjectInfo{}, false
	}
	if err == nil {
		return ctx, info, true
	}
	// Anonymous callers are asked for credentials whether the project is
	// hidden or the action refused: after signing in they may see it. A
	// signed-in caller learns only what they may already see.
	notFound, forbidden := errors.Is(err, projects.ErrNotFound), errors.Is(err, projects.ErrForbidden)
	switch {
	case p.IsAnonymous() && (notFound || forbidden):
		challenge(w, "HTTP Basic: Access denied")
	case forbidden && push:
		msg := "You are not allowed to push code to this project."
		if seen, err := g.access.Resolve(ctx, project); err == nil && seen.Archived {
			msg = "You are not allowed to push code to an archived project."
		}
		gitError(w, http.StatusForbidden, msg)
	case forbidden:
		gitError(w, http.StatusForbidden, "You are not allowed to download code from this project.")
	case notFound:
		gitError(w, http.StatusNotFound, "The project you were looking for could not be found.")
	default:
		g.log.Error("git access", zap.Error(err))
		gitError(w, http.StatusInternalServerError, "Internal Server Error")
	}
	return nil, projects.ProjectInfo{}, false
}

// challenge asks git for credentials.
func challenge(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Basic realm="Fennec"`)
	gitError(w, http.StatusUnauthorized, msg)
}

// gitError answers a plain-text error, which the git CLI shows as is.
func gitError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	noCache(h)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

func noCache(h http.Header) {
	h.Set("Cache-Control", "no-cache, max-age=0, must-revalidate")
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "Fri, 01 Jan 1980 00:00:00 GMT")
}

func (g *GitHTTP) advertise(ctx context.Context, w http.ResponseWriter, r *http.Request, info projects.ProjectInfo, service string) {
	repo, _, err := g.repoFor(ctx, info.ID)
	if err != nil {
		g.log.Error("git advertise", zap.Int64("project", info.ID), zap.Error(err))
		gitError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-"+service+"-advertisement")
	noCache(h)
	switch {
	case service == "git-receive-pack":
		err = gitserve.AdvertiseReceivePack(w, repo, receivePackCaps)
	case gitserve.IsProtocolV2(r.Header.Get("Git-Protocol")):
		err = gitserve.AdvertiseUploadPackV2(w, repo)
	default:
		err = gitserve.AdvertiseUploadPack(w, repo)
	}
	if err != nil {
		g.log.Debug("git advertise", zap.Int64("project", info.ID), zap.Error(err))
	}
}

// requestBody is the request's body, gunzipped when the client compressed
// it (git does for large negotiations).
func requestBody(r *http.Request) (io.ReadCloser, error) {
	switch strings.ToLower(r.Header.Get("Content-Encoding")) {
	case "", "identity":
		return r.Body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, err
		}
		return zr, nil
	}
	return nil, errors.New("unsupported content encoding")
}

func (g *GitHTTP) uploadPack(ctx context.Context, w http.ResponseWriter, r *http.Request, info projects.ProjectInfo) {
	body, err := requestBody(r)
	if err != nil {
		gitError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	defer body.Close()
	repo, _, err := g.repoFor(ctx, info.ID)
	if err != nil {
		g.log.Error("git upload-pack", zap.Int64("project", info.ID), zap.Error(err))
		gitError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	// A clone or fetch is activity, as a push and an SSH session are
	// (recorded once a day per user: a map lookup after the first).
	if uid := auth.FromContext(ctx).UserID(); uid != 0 && g.activity != nil {
		if err := g.activity.RecordActivity(ctx, uid); err != nil {
			g.log.Warn("git upload-pack: record activity", zap.Error(err))
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-git-upload-pack-result")
	noCache(h)
	limited := http.MaxBytesReader(w, body, maxNegotiationBytes)
	serve := gitserve.UploadPack
	if gitserve.IsProtocolV2(r.Header.Get("Git-Protocol")) {
		serve = gitserve.UploadPackV2 // git 2.18+ asks for it; older clients get v0
	}
	if err := serve(ctx, w, limited, repo); err != nil {
		g.log.Info("git upload-pack ended with an error", zap.Int64("project", info.ID), zap.Error(err))
	}
}
