package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
)

// metricsFrom asks for /-/metrics as if from remote (ip:port), through the
// application's handler.
func metricsFrom(s *fennectest.Server, remote string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/-/metrics", nil)
	req.RemoteAddr = remote
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	s.App.Handler().ServeHTTP(rec, req)
	return rec
}

func wantMetrics(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "fennec_http_requests_total") {
		t.Errorf("%s: %d %.200s, want the metrics", what, rec.Code, rec.Body.String())
	}
}

func wantRefused(t *testing.T, what string, rec *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if rec.Code != status || strings.TrimSpace(rec.Body.String()) != body || strings.Contains(rec.Body.String(), "fennec_") {
		t.Errorf("%s: %d %.200s, want %d %s", what, rec.Code, rec.Body.String(), status, body)
	}
}

// TestMetricsAccess: /-/metrics is served only to loopback when nothing is
// configured (as GitLab's monitoring whitelist did), to the configured
// address ranges (metrics_allow), and with metrics_token to callers that
// present it. Before the fix anyone could read them.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	const notFound, unauthorized = `{"error":"404 Not Found"}`, `{"message":"401 Unauthorized"}`

	t.Run("default: loopback only", func(t *testing.T) {
		t.Parallel()
		s := start(t)
		resp, raw := send(t, s, http.MethodGet, "/-/metrics", nil) // a real connection from 127.0.0.1
		if resp.StatusCode != 200 || !strings.Contains(string(raw), "fennec_http_requests_total") {
			t.Errorf("over loopback: %d %.200s", resp.StatusCode, raw)
		}
		wantMetrics(t, "from ::1", metricsFrom(s, "[::1]:5000"))
		wantMetrics(t, "from 127.0.0.2", metricsFrom(s, "127.0.0.2:5000"))
		wantRefused(t, "from 203.0.113.7", metricsFrom(s, "203.0.113.7:5000"), 404, notFound)
		wantRefused(t, "from 10.0.0.1", metricsFrom(s, "10.0.0.1:5000"), 404, notFound)
		wantRefused(t, "from 2001:db8::1", metricsFrom(s, "[2001:db8::1]:5000"), 404, notFound)
		// Health probes stay open.
		if rec := httptest.NewRecorder(); true {
			req := httptest.NewRequest(http.MethodGet, "/-/readiness", nil)
			req.RemoteAddr = "203.0.113.7:5000"
			s.App.Handler().ServeHTTP(rec, req)
			if rec.Code != 200 {
				t.Errorf("readiness from afar: %d", rec.Code)
			}
		}
	})

	t.Run("allow-list", func(t *testing.T) {
		t.Parallel()
		s := start(t, fennectest.WithConfig(func(c *config.Config) { c.MetricsAllow = []string{"10.0.0.0/8", "2001:db8::5"} }))
		wantMetrics(t, "from 10.1.2.3", metricsFrom(s, "10.1.2.3:5000"))
		wantMetrics(t, "from 2001:db8::5", metricsFrom(s, "[2001:db8::5]:5000"))
		wantRefused(t, "from 2001:db8::6", metricsFrom(s, "[2001:db8::6]:5000"), 404, notFound)
		wantRefused(t, "from loopback, not listed", metricsFrom(s, "127.0.0.1:5000"), 404, notFound)
	})

	t.Run("token", func(t *testing.T) {
		t.Parallel()
		s := start(t, fennectest.WithConfig(func(c *config.Config) { c.MetricsToken = "scrape-secret" }))
		wantMetrics(t, "bearer from afar", metricsFrom(s, "203.0.113.7:5000", "Authorization", "Bearer scrape-secret"))
		wantMetrics(t, "token parameter", func() *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodGet, "/-/metrics?token=scrape-secret", nil)
			req.RemoteAddr = "203.0.113.7:5000"
			rec := httptest.NewRecorder()
			s.App.Handler().ServeHTTP(rec, req)
			return rec
		}())
		wantRefused(t, "wrong token", metricsFrom(s, "203.0.113.7:5000", "Authorization", "Bearer scrape-secreT"), 401, unauthorized)
		// With a token set, loopback needs it too: behind a reverse proxy on
		// the same host every client looks like loopback.
		wantRefused(t, "no token from loopback", metricsFrom(s, "127.0.0.1:5000"), 401, unauthorized)
	})

	t.Run("token and allow-list", func(t *testing.T) {
		t.Parallel()
		s := start(t, fennectest.WithConfig(func(c *config.Config) {
			c.MetricsToken, c.MetricsAllow = "scrape-secret", []string{"192.0.2.0/24"}
		}))
		wantMetrics(t, "listed, with token", metricsFrom(s, "192.0.2.9:5000", "Authorization", "Bearer scrape-secret"))
		wantRefused(t, "listed, no token", metricsFrom(s, "192.0.2.9:5000"), 401, unauthorized)
		wantRefused(t, "not listed, with token", metricsFrom(s, "203.0.113.7:5000", "Authorization", "Bearer scrape-secret"), 404, notFound)
	})
}
