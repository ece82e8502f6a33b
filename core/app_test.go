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
	"github.com/fennec-forge/fennec/core/store"
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
	config.Modify(&cfg, identity.SectionName, func(c *identity.Config) { c.PasswordCost = 4 })
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

// A store that stops answering makes the instance unready (so an
// orchestrator restarts it) while liveness still answers; it is ready again
// once the store is.
func TestReadinessNoticesAStuckStore(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	config.Modify(&cfg, identity.SectionName, func(c *identity.Config) { c.PasswordCost = 4 })
	var db *store.DB
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(identity.Module()), fennec.WithLogger(zap.NewNop()),
		fennec.WithExtract(&db))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer app.Stop(ctx)
	h := app.Handler()
	if got := probe(h, "/-/readiness"); got != http.StatusOK {
		t.Fatalf("readiness of a healthy store: %d", got)
	}
	// A writer that never finishes stands in for a hung store.
	held, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.UpdateAlone(context.Background(), func(*store.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	start := time.Now()
	if got := probe(h, "/-/readiness"); got != http.StatusServiceUnavailable {
		t.Errorf("readiness with a stuck store: %d, want 503", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("readiness took %v with a stuck store", d)
	}
	if got := probe(h, "/-/liveness"); got != http.StatusOK {
		t.Errorf("liveness with a stuck store: %d", got)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for probe(h, "/-/readiness") != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("readiness did not recover with the store")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
