package oauth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/oauth"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// testClock is the wall clock plus an offset the test moves forward, so
// token lifetimes pass without sleeping.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// env is a running stock app whose OAuth module uses clock.
type env struct {
	*fennectest.Server
	clock *testClock
}

func start(t testing.TB, opts ...fennectest.Option) *env {
	t.Helper()
	clock := &testClock{}
	opts = append([]fennectest.Option{fennectest.WithModules(fennec.NewModule("oauth-test-clock",
		fennec.Supply[oauth.Clock](clock)))}, opts...)
	return &env{Server: stocktest.Start(t, opts...), clock: clock}
}

// app registers an application as root through client-go.
func (e *env) app(t testing.TB, name, redirect, scopes string, confidential bool) *gitlab.Application {
	t.Helper()
	a, resp, err := e.Client.Applications.CreateApplication(&gitlab.CreateApplicationOptions{Name: gitlab.Ptr(name),
		RedirectURI: gitlab.Ptr(redirect), Scopes: gitlab.Ptr(scopes), Confidential: gitlab.Ptr(confidential)})
	if err != nil {
		t.Fatalf("create application: %v", err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create application: %d", resp.StatusCode)
	}
	return a
}

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// post sends a form to path with header pairs and decodes a JSON answer
// into a map; it returns the response (body read and closed) and the raw
// body.
func (e *env) post(t testing.TB, path string, form url.Values, headers ...string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

func do(t testing.TB, req *http.Request) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %q: %v", req.Method, req.URL.Path, raw, err)
		}
	}
	return resp, out
}

// wantOAuthError checks an RFC 6749 error answer.
func wantOAuthError(t testing.TB, what string, resp *http.Response, body map[string]any, status int, code string) {
	t.Helper()
	if resp.StatusCode != status || body["error"] != code {
		t.Fatalf("%s: %d %v, want %d %s", what, resp.StatusCode, body, status, code)
	}
	if d, _ := body["error_description"].(string); d == "" {
		t.Fatalf("%s: no error_description in %v", what, body)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%s: Cache-Control %q", what, resp.Header.Get("Cache-Control"))
	}
}

// passwordToken runs the password grant with raw HTTP and returns the body.
func (e *env) passwordToken(t testing.TB, login, password string, extra url.Values) map[string]any {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {login}, "password": {password}}
	for k, v := range extra {
		form[k] = v
	}
	resp, body := e.post(t, "/oauth/token", form)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("password grant for %s: %d %v", login, resp.StatusCode, body)
	}
	return body
}

// bearer is a client-go client using an OAuth access token.
func (e *env) bearer(t testing.TB, token string) *gitlab.Client {
	t.Helper()
	c, err := gitlab.NewOAuthClient(token, gitlab.WithBaseURL(e.URL+"/api/v4"), gitlab.WithoutRetries())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
