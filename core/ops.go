package fennec

import (
	"context"
	"net/http"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
)

type versionOutput struct {
	Body struct {
		Version  string `json:"version"`
		Revision string `json:"revision"`
	}
}

// readinessStoreDeadline bounds the store probe of GET /-/readiness.
const readinessStoreDeadline = 2 * time.Second

// registerOps adds the endpoints every host has: the API version and the
// health, liveness, readiness and metrics probes.
func registerOps(a *api.API, db *store.DB) {
	api.Register(a, api.Op{
		ID: "get-version", Method: http.MethodGet, Path: "/version", Tags: []string{"meta"},
		Summary: "Version of the server", Access: api.SignedIn,
		Scopes: []string{"api", "read_user"},
	}, func(ctx context.Context, _ *struct{}) (*versionOutput, error) {
		out := &versionOutput{}
		out.Body.Version, out.Body.Revision = Version()
		return out, nil
	})

	a.Mount("health", "GET /-/health", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("Fennec OK"))
	}))
	a.Mount("liveness", "GET /-/liveness", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}))
	a.Mount("readiness", "GET /-/readiness", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A store that hangs (a stuck writer, a full disk that blocks fsync)
		// makes the instance unready, so an orchestrator restarts it.
		// Parts that start in the background (executors) are reported
		// beside the status and do not decide it.
		ctx, cancel := context.WithTimeout(r.Context(), readinessStoreDeadline)
		defer cancel()
		body := a.ReadinessReports()
		if !a.Ready() || db.Probe(ctx) != nil {
			body["status"] = "failed"
			api.WriteJSON(w, http.StatusServiceUnavailable, body)
			return
		}
		body["status"] = "ok"
		api.WriteJSON(w, http.StatusOK, body)
	}))
	a.Mount("metrics", "GET /-/metrics", a.MetricsHandler())
}
