package fennec_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/modules/identity"
)

// TestEmbeddedUnderAPrefix mounts the app under /git of a host's own mux,
// as the README shows: the API answers there and every link it makes
// (pagination, web_url) carries the prefix through the external URL.
func TestEmbeddedUnderAPrefix(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	host := httptest.NewServer(mux)
	defer host.Close()

	cfg := config.Default()
	cfg.Listen = "" // the host serves the handler
	cfg.Data = t.TempDir()
	cfg.ExternalURL = host.URL + "/git"
	cfg.SetModule("identity", "root_password", "password-123")
	cfg.SetModule("identity", "password_cost", 4)
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(identity.Module()), fennec.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer app.Stop(ctx)
	mux.Handle("/git/", http.StripPrefix("/git", app.Handler()))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "the host's own page", http.StatusTeapot) })

	resp, err := http.Post(host.URL+"/git/api/v4/session", "application/json", strings.NewReader(`{"login":"root","password":"password-123"}`))
	if err != nil {
		t.Fatal(err)
	}
	var session struct {
		Token  string `json:"private_token"`
		WebURL string `json:"web_url"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&session)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || session.WebURL != host.URL+"/git/root" {
		t.Fatalf("session under the prefix: %d %+v", resp.StatusCode, session)
	}
	req, _ := http.NewRequest(http.MethodGet, host.URL+"/git/api/v4/users?per_page=1", nil)
	req.Header.Set("PRIVATE-TOKEN", session.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if link := resp.Header.Get("Link"); resp.StatusCode != 200 || !strings.Contains(link, "<"+host.URL+"/git/api/v4/users?") {
		t.Fatalf("users under the prefix: %d, Link %q", resp.StatusCode, link)
	}
	if resp, err := http.Get(host.URL + "/api/v4/version"); err != nil || resp.StatusCode != http.StatusTeapot {
		t.Fatalf("outside the prefix the host answers: %v %v", err, resp)
	}
}
