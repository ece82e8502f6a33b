package api

import (
	"embed"
	"io/fs"
	"net/http"
	"regexp"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// The API's documentation: the OpenAPI document Huma generates, completed
// with what generated clients and linters need (security schemes, servers,
// GitLab's error responses), and a page to browse it whose viewer is served
// from the binary, so it works without internet access and under any
// prefix an embedder mounts the server at.

//go:embed docsui/swagger-ui-bundle.js docsui/swagger-ui.css docsui/init.js docsui/LICENSE docsui/NOTICE docsui/swagger-ui-bundle.js.LICENSE.txt
var docsUI embed.FS

// docsPage links everything relative to itself (/api/v4/docs): the assets
// at docs/assets/..., the document at openapi.json.
const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Fennec API (GitLab v4 compatible)</title>
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/init.js"></script>
</body>
</html>
`

// registerDocs serves the page and its assets. They are public, as the
// document is.
func (a *API) registerDocs() {
	assets, _ := fs.Sub(docsUI, "docsui")
	files := http.StripPrefix(Prefix+"/docs/assets/", http.FileServerFS(assets))
	security := func(w http.ResponseWriter) {
		h := w.Header()
		// Everything comes from this server; Swagger UI needs inline
		// styles and data: images, nothing else.
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
	}
	a.mux.HandleFunc("GET "+Prefix+"/docs", func(w http.ResponseWriter, r *http.Request) {
		security(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(docsPage))
	})
	a.mux.HandleFunc("GET "+Prefix+"/docs/assets/", func(w http.ResponseWriter, r *http.Request) {
		security(w)
		w.Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	})
}

// errorSchemaName is the components schema of every error answer.
const errorSchemaName = "GitLabError"

// documentConventions adds to the document what every operation shares:
// how to authenticate, and the body of GitLab's errors.
func documentConventions(cfg *huma.Config) {
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"private_token_header": {Type: "apiKey", In: "header", Name: "PRIVATE-TOKEN",
			Description: "A personal access, impersonation or private token (also accepted as the `private_token` query parameter)."},
		"private_token_query": {Type: "apiKey", In: "query", Name: "private_token",
			Description: "The same tokens as the PRIVATE-TOKEN header, in the query string."},
		"oauth_bearer": {Type: "http", Scheme: "bearer",
			Description: "An OAuth 2.0 access token: `Authorization: Bearer <token>`."},
	}
	cfg.Security = anySignIn()
	cfg.Components.Schemas.Map()[errorSchemaName] = &huma.Schema{
		Type:        huma.TypeObject,
		Description: "GitLab's error body: `message` is a sentence (\"404 Project Not Found\") or, for validation errors, an object of field names to messages; a missing or invalid parameter may come as `error` instead.",
		Properties: map[string]*huma.Schema{
			"message": {OneOf: []*huma.Schema{
				{Type: huma.TypeString},
				{Type: huma.TypeObject, AdditionalProperties: &huma.Schema{Type: huma.TypeArray, Items: &huma.Schema{Type: huma.TypeString}}},
			}},
			"error": {Type: huma.TypeString},
		},
		Examples: []any{map[string]any{"message": "404 Project Not Found"}, map[string]any{"error": "title is missing"}},
	}
}

// anySignIn is the security requirement "one of the three ways to sign in".
func anySignIn() []map[string][]string {
	return []map[string][]string{{"private_token_header": {}}, {"private_token_query": {}}, {"oauth_bearer": {}}}
}

// operationDocs gives an operation its security (none needed for a public
// one) and the error answers every operation may give, in GitLab's body.
func operationDocs(op *huma.Operation, access Access) {
	if access == Public {
		op.Security = append([]map[string][]string{{}}, anySignIn()...)
	}
	if op.Responses == nil {
		op.Responses = map[string]*huma.Response{}
	}
	errs := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound}
	if op.Method == http.MethodPost || op.Method == http.MethodPut {
		errs = append(errs, http.StatusRequestEntityTooLarge)
	}
	for _, code := range errs {
		op.Responses[strconv.Itoa(code)] = &huma.Response{
			Description: http.StatusText(code),
			Content: map[string]*huma.MediaType{"application/json": {
				Schema: &huma.Schema{Ref: "#/components/schemas/" + errorSchemaName},
			}},
		}
	}
}

// setServers names the external URL as the document's server, so that
// generated clients call the right host (and prefix).
func (a *API) setServers(externalURL string) {
	if externalURL == "" {
		return
	}
	a.huma.OpenAPI().Servers = []*huma.Server{{URL: externalURL, Description: "this Fennec server"}}
}

var pathParam = regexp.MustCompile(`\{([^{}]+)\}`)

// documentPathParams declares the path parameters an operation's input
// struct does not (a module that serves one route shape for several kinds
// reads the parameter from the request), so that every {name} of a path is
// defined, as OpenAPI requires.
func (a *API) documentPathParams(method, path string) {
	op := a.documented(method, path)
	if op == nil {
		return
	}
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		name, defined := m[1], false
		for _, p := range op.Parameters {
			if p.In == "path" && p.Name == name {
				defined = true
				break
			}
		}
		if !defined {
			op.Parameters = append(op.Parameters, &huma.Param{Name: name, In: "path", Required: true, Schema: &huma.Schema{Type: huma.TypeString}})
		}
	}
}

// documented is the operation the OpenAPI document holds at method and
// path (with the /api/v4 prefix), or nil.
func (a *API) documented(method, path string) *huma.Operation {
	item := a.huma.OpenAPI().Paths[path]
	if item == nil {
		return nil
	}
	switch method {
	case http.MethodGet:
		return item.Get
	case http.MethodPost:
		return item.Post
	case http.MethodPut:
		return item.Put
	case http.MethodDelete:
		return item.Delete
	case http.MethodPatch:
		return item.Patch
	case http.MethodHead:
		return item.Head
	}
	return nil
}

// documentFileBody describes the multipart/form-data body of a RawBody
// operation, with its required file part, in the OpenAPI document only:
// Huma decided at registration that it reads no body there, and the
// parameter merging skips RawBody operations, so nothing else looks at it.
func (a *API) documentFileBody(method, path, field string) {
	op := a.documented(method, path)
	if op == nil {
		return
	}
	op.RequestBody = &huma.RequestBody{
		Required: true,
		Content: map[string]*huma.MediaType{"multipart/form-data": {Schema: &huma.Schema{
			Type:     huma.TypeObject,
			Required: []string{field},
			Properties: map[string]*huma.Schema{field: {
				Type: huma.TypeString, Format: "binary",
				Description: "The file: its content, and its name in the part's Content-Disposition",
			}},
		}}},
	}
}
