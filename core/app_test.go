package fennec_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/modules/identity"
)

func probe(h http.Handler, path string) int {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Code
}

// Readiness is false until Start has finished and again as soon as Stop
// begins; liveness answers throughout.
func TestReadinessFollowsTheLifecycle(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = "" // embedded: no listener, the handler is served by the host
	cfg.Data = t.TempDir()
	cfg.PasswordCost = 4
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(identity.Module()), fennec.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	h := app.Handler()
	if got := probe(h, "/-/readiness"); got != http.StatusServiceUnavailable {
		t.Fatalf("readiness before Start: %d", got)
	}
	if got := probe(h, "/-/liveness"); got != http.StatusOK {
		t.Fatalf("liveness before Start: %d", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if app.Addr() != "" {
		t.Fatalf("an app without Listen must not listen, got %s", app.Addr())
	}
	if got := probe(h, "/-/readiness"); got != http.StatusOK {
		t.Fatalf("readiness after Start: %d", got)
	}
	if err := app.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := probe(h, "/-/readiness"); got != http.StatusServiceUnavailable {
		t.Fatalf("readiness after Stop: %d", got)
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = "no-port"
	if _, err := fennec.New(fennec.WithConfig(cfg)); err == nil {
		t.Fatal("accepted a listen address without a port")
	}
}

func TestStartFailsClearlyWhenThePortIsTaken(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Data = t.TempDir()
	first, err := fennec.New(fennec.WithConfig(cfg), fennec.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer first.Stop(ctx)

	cfg2 := cfg
	cfg2.Data = t.TempDir()
	cfg2.Listen = first.Addr()
	second, err := fennec.New(fennec.WithConfig(cfg2), fennec.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	err = second.Start(ctx)
	if err == nil {
		second.Stop(ctx)
		t.Fatal("second app started on a port in use")
	}
	if want := "listen on " + first.Addr(); !strings.Contains(err.Error(), want) {
		t.Fatalf("unclear error %q (want it to say %q)", err, want)
	}
}
