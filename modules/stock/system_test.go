package stock_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// whoami is what the probe module reports of the caller of a request.
type whoami struct {
	UserID int64  `json:"user_id"`
	Method string `json:"method"`
	System bool   `json:"system"`
}

// probeModule serves the caller's principal on an API operation and on a
// raw handler (git smart HTTP's way in), the two places a request's
// principal is resolved.
func probeModule() fennec.Module {
	describe := func(p *auth.Principal) whoami {
		return whoami{UserID: p.UserID(), Method: string(p.Method), System: p.IsSystem() || p.Method == auth.MethodSystem}
	}
	return fennec.NewModule("system-probe", fennec.ProvideRoutes(func(fennec.None) fennec.Routes {
		return fennec.Routes{Name: "system-probe", Register: func(a *api.API) {
			api.Register(a, api.Op{ID: "probe-whoami", Method: http.MethodGet, Path: "/probe/whoami", Access: api.Public},
				func(ctx context.Context, _ *struct{}) (*struct{ Body whoami }, error) {
					return &struct{ Body whoami }{Body: describe(auth.FromContext(ctx))}, nil
				})
			a.Mount("probe-raw", "GET /probe-raw/whoami", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p, err := a.Authenticate(w, r)
				if err != nil {
					api.WriteJSON(w, http.StatusUnauthorized, map[string]string{"message": "401 Unauthorized"})
					return
				}
				api.WriteJSON(w, http.StatusOK, describe(p))
			}))
		}}
	}))
}

// TestNoHTTPCredentialYieldsTheSystemPrincipal sends every kind of
// credential GitLab clients use, with and without sudo, to an operation
// and to a raw handler: none is ever the system (or a background)
// principal, not even a user named "system".
func TestNoHTTPCredentialYieldsTheSystemPrincipal(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t, fennectest.WithOptions(fennec.WithModules(probeModule())))
	alice := s.CreateUser(t, "")
	named := s.CreateUser(t, "system")
	cases := map[string]struct {
		query   string
		headers []string
		basic   [2]string
	}{
		"none":                  {},
		"root private token":    {headers: []string{"PRIVATE-TOKEN", s.RootToken}},
		"private_token param":   {query: "private_token=" + url.QueryEscape(alice.Token)},
		"personal token":        {headers: []string{"PRIVATE-TOKEN", alice.Token}},
		"bearer":                {headers: []string{"Authorization", "Bearer " + alice.Token}},
		"access_token param":    {query: "access_token=" + url.QueryEscape(alice.Token)},
		"basic password":        {basic: [2]string{alice.Username, alice.Password}},
		"basic token":           {basic: [2]string{"anyone", alice.Token}},
		"user named system":     {basic: [2]string{named.Username, named.Password}},
		"sudo header":           {headers: []string{"PRIVATE-TOKEN", s.RootToken, "SUDO", alice.Username}},
		"sudo system":           {headers: []string{"PRIVATE-TOKEN", s.RootToken, "SUDO", "system"}},
		"sudo parameter id 0":   {query: "sudo=0", headers: []string{"PRIVATE-TOKEN", s.RootToken}},
		"bogus private token":   {headers: []string{"PRIVATE-TOKEN", "system"}},
		"empty basic password":  {basic: [2]string{"system", ""}},
		"system as basic login": {basic: [2]string{"system", "system"}},
	}
	for name, c := range cases {
		for _, path := range []string{"/api/v4/probe/whoami", "/probe-raw/whoami"} {
			req, err := http.NewRequest(http.MethodGet, s.URL+path+"?"+c.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(c.headers); i += 2 {
				req.Header.Set(c.headers[i], c.headers[i+1])
			}
			if c.basic[0] != "" {
				req.SetBasicAuth(c.basic[0], c.basic[1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got whoami
			raw := readJSON(t, resp, &got)
			if resp.StatusCode == http.StatusOK && got.System {
				t.Errorf("%s on %s: the system principal (%s)", name, path, raw)
			}
			if resp.StatusCode != http.StatusOK && resp.StatusCode/100 != 4 {
				t.Errorf("%s on %s: %d %s", name, path, resp.StatusCode, raw)
			}
			if name == "user named system" && (resp.StatusCode != http.StatusOK || got.UserID != named.ID) {
				t.Errorf("the user named system is an ordinary user: %d %s", resp.StatusCode, raw)
			}
		}
	}
}

func readJSON(t *testing.T, resp *http.Response, out *whoami) string {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("decode %q: %v", raw, err)
		}
	}
	return string(raw)
}
