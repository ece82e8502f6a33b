package stock_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestDocsWorkOffline: /api/v4/docs loads nothing from outside the server
// (every asset is served from the binary, linked relative to the page, so a
// prefix works too), and the OpenAPI document of the whole stock bundle
// says how to authenticate, where the server is and what its errors look
// like. When the redocly CLI is installed (.ci/run installs it) the
// document must also pass its recommended lint rules.
func TestDocsWorkOffline(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}

	resp, page := get("/api/v4/docs")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("docs page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, `src="/`) || strings.Contains(page, `href="/`) {
		t.Fatalf("the page links outside the server or by absolute path:\n%s", page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	for _, asset := range []struct{ path, typ string }{
		{"docs/assets/swagger-ui-bundle.js", "text/javascript"},
		{"docs/assets/swagger-ui.css", "text/css"},
		{"docs/assets/init.js", "text/javascript"},
	} {
		if !strings.Contains(page, `"`+asset.path+`"`) {
			t.Fatalf("the page does not load %s", asset.path)
		}
		resp, body := get("/api/v4/" + asset.path)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), asset.typ) || len(body) < 100 {
			t.Fatalf("%s: %d %s, %d bytes", asset.path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}
	if resp, _ := get("/api/v4/docs/assets/../../user"); resp.StatusCode == 200 {
		t.Fatal("the asset path escapes its directory")
	}
	if resp, _ := get("/api/v4/docs/assets/nothing.js"); resp.StatusCode != 404 {
		t.Fatalf("missing asset: %d", resp.StatusCode)
	}

	resp, raw := get("/api/v4/openapi.json")
	var doc struct {
		Servers    []struct{ URL string }
		Security   []map[string][]string
		Components struct {
			SecuritySchemes map[string]struct{ Type, In, Name, Scheme string }
			Schemas         map[string]json.RawMessage
		}
		Paths map[string]map[string]struct {
			OperationID string
			Security    []map[string][]string
			Responses   map[string]struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("openapi.json: %d %v", resp.StatusCode, err)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != s.URL {
		t.Fatalf("servers %+v, want the external URL %s", doc.Servers, s.URL)
	}
	header := doc.Components.SecuritySchemes["private_token_header"]
	query := doc.Components.SecuritySchemes["private_token_query"]
	bearer := doc.Components.SecuritySchemes["oauth_bearer"]
	if header.Type != "apiKey" || header.In != "header" || header.Name != "PRIVATE-TOKEN" || query.In != "query" || query.Name != "private_token" ||
		bearer.Type != "http" || bearer.Scheme != "bearer" || len(doc.Security) != 3 {
		t.Fatalf("security schemes %+v, security %v", doc.Components.SecuritySchemes, doc.Security)
	}
	if _, ok := doc.Components.Schemas["GitLabError"]; !ok {
		t.Fatal("no GitLabError schema")
	}
	ops := 0
	for path, methods := range doc.Paths {
		for method, op := range methods {
			ops++
			for _, code := range []string{"400", "401", "403", "404"} {
				if ref := op.Responses[code].Content["application/json"].Schema.Ref; ref != "#/components/schemas/GitLabError" {
					t.Errorf("%s %s: response %s has schema %q", method, path, code, ref)
				}
			}
			if _, ok := op.Responses["default"]; ok {
				t.Errorf("%s %s: a default (problem+json) response, which Fennec never sends", method, path)
			}
		}
	}
	if ops < 100 {
		t.Fatalf("only %d operations in the document", ops)
	}
	if user := doc.Paths["/api/v4/projects"]["get"]; len(user.Security) == 0 || len(user.Security[0]) != 0 {
		t.Errorf("GET /projects answers anonymous callers: its security should start with {}: %v", user.Security)
	}

	lint, err := exec.LookPath("redocly")
	if err != nil {
		t.Log("redocly is not installed: the lint of the document is skipped (.ci/run installs it: npm install -g @redocly/cli)")
		return
	}
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(lint, "lint", file, "--format=summary")
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("redocly lint: %v\n%s", err, out)
	}
}
