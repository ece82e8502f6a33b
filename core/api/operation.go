package api

// Operations: Register, the one way a module adds a GitLab endpoint, and the
// pipeline every operation runs through before its handler: naming it for the
// logs, merging query, form, multipart and JSON parameters into one body,
// resolving the caller and enforcing the operation's access rule and scopes.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	flog "github.com/fennec-forge/fennec/core/log"
)

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
	// FileField, with RawBody, documents the body as multipart/form-data
	// with a required file part of that name (uploads: "file"): the
	// handler reads such a body itself, so no input type describes it.
	FileField string
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
	operationDocs(&hop, op.Access)
	huma.Register(a.huma, hop, h)
	a.documentPathParams(hop.Method, hop.Path)
	if op.RawBody && op.FileField != "" {
		a.documentFileBody(hop.Method, hop.Path, op.FileField)
	}
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
