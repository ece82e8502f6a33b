package executors_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/executors"
	"github.com/fennec-forge/fennec/core/fennectest/gobuild"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// lockedTrace collects a trace from Run's goroutine.
type lockedTrace struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedTrace) add(c executor.TraceChunk) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(c.Data)
	return nil
}

func (l *lockedTrace) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startPoolApp starts an app of the executor pool alone, on a fresh data
// directory with the plugins of pluginDir and those given, filling
// extract; the caller stops it.
func startPoolApp(t *testing.T, pluginDir string, plugins []config.Plugin, extract ...any) (*fennec.App, config.Config) {
	t.Helper()
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	cfg.PluginDir = pluginDir
	cfg.Plugins = plugins
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithLogger(zaptest.NewLogger(t)),
		fennec.WithModules(fennec.NewModule("ci-test", executors.Option())),
		fennec.WithExtract(extract...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return app, cfg
}

// TestPoolWithTheShippedShellExecutor is the CI module's view: an app with
// no executor configured finds executor-shell in the plugin directory,
// runs a job on it through the Pool, and survives the executor's process
// being killed mid-job.
func TestPoolWithTheShippedShellExecutor(t *testing.T) {
	pluginDir := t.TempDir()
	gobuild.Install(t, "../../plugins/executor-shell", filepath.Join(pluginDir, "executor-shell"))
	var pool *executors.Pool
	var host *plugin.Host
	app, cfg := startPoolApp(t, pluginDir, nil, &pool, &host)
	defer app.Stop(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Start does not wait for the executor's process: the pool learns of
	// it in the background.
	deadline := time.Now().Add(30 * time.Second)
	for len(pool.Status()) == 1 && !pool.Status()[0].Running && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := pool.Status()
	if len(st) != 1 || st[0].Name != "shell" || !st[0].Running || !st[0].Capabilities.RunUntagged || !slicesEqual(st[0].Capabilities.Tags, []string{"shell"}) {
		t.Fatalf("pool status %+v", st)
	}

	// A job, its trace and its archive.
	slot, err := pool.Acquire(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	job := executor.Job{ID: 1, Steps: executor.ScriptSteps(nil, []string{"echo hello > out.txt", "echo dir=$CI_PROJECT_DIR"}, nil),
		Artifacts: &executor.ArtifactsSpec{Paths: []string{"out.txt"}}, Timeout: 30 * time.Second}
	var trace lockedTrace
	res, err := slot.Run(ctx, job, trace.add)
	if err != nil || !res.Success() || res.Artifacts.Filename != "artifacts.zip" {
		t.Fatalf("Run = %+v, %v\n%s", res, err, trace.String())
	}
	if want := filepath.Join(cfg.Data, "executors", "shell", "builds"); !strings.Contains(trace.String(), "dir="+want) {
		t.Errorf("the job did not run under %s:\n%s", want, trace.String())
	}
	var zipped bytes.Buffer
	if _, err := slot.Artifacts(ctx, &zipped); err != nil {
		t.Fatal(err)
	}
	if zr, err := zip.NewReader(bytes.NewReader(zipped.Bytes()), int64(zipped.Len())); err != nil || len(zr.File) != 1 || zr.File[0].Name != "out.txt" {
		t.Fatalf("archive: %v", err)
	}
	slot.Release()

	// The executor's process is killed mid-job: the job fails with
	// ErrExecutorCrashed at once, the process is restarted, and the next
	// job runs.
	slot, err = pool.Acquire(ctx, []string{"shell"})
	if err != nil {
		t.Fatal(err)
	}
	var crashed lockedTrace
	done := make(chan error, 1)
	go func() {
		_, err := slot.Run(ctx, executor.Job{ID: 2, Steps: executor.ScriptSteps(nil, []string{"echo started", "sleep 300"}, nil)}, crashed.add)
		done <- err
	}()
	for !strings.Contains(crashed.String(), "started\n") {
		time.Sleep(10 * time.Millisecond)
	}
	pid := host.Status()[0].PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, executors.ErrExecutorCrashed) || !errors.Is(err, executor.ErrUnavailable) {
			t.Fatalf("Run after the crash: %v", err)
		}
		t.Logf("the job's error: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end within 5 s of the crash")
	}
	slot.Release()

	slot, err = pool.Acquire(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slot.Release()
	res, err = slot.Run(ctx, executor.Job{ID: 3, Steps: executor.ScriptSteps(nil, []string{"true"}, nil)}, func(executor.TraceChunk) error { return nil })
	if err != nil || !res.Success() {
		t.Fatalf("after the restart: %+v, %v", res, err)
	}
	if st := host.Status()[0]; st.PID == pid || st.Restarts != 1 {
		t.Fatalf("host status after the restart: %+v", st)
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// An executor plugin that hangs before its handshake does not delay the
// server: Start returns, GET /-/readiness answers 200 at once with the
// executor reported as starting beside the status, a job asking for an
// executor waits instead of failing, and Stop does not wait for the
// plugin's start timeout.
func TestServerAnswersWhileAnExecutorHangsAtStart(t *testing.T) {
	pluginDir := t.TempDir()
	script := filepath.Join(pluginDir, "executor-hangs")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var pool *executors.Pool
	var a *api.API
	app, _ := startPoolApp(t, pluginDir, []config.Plugin{{Name: "hangs", Kind: "executor", Path: script}}, &pool, &a)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stopped := false
	defer func() {
		if !stopped {
			_ = app.Stop(context.Background())
		}
	}()

	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/-/readiness", nil))
	if want := `{"executors":[{"name":"hangs","status":"starting"}],"status":"ok"}`; rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != want {
		t.Fatalf("readiness while the executor starts: %d %s, want 200 %s", rec.Code, rec.Body, want)
	}
	waitCtx, cancelWait := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelWait()
	if _, err := pool.Acquire(waitCtx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a job while the only executor starts: %v, want it to wait (deadline exceeded)", err)
	}

	stopCtx, cancelStop := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelStop()
	stopped = true
	if err := app.Stop(stopCtx); err != nil {
		t.Fatalf("Stop with an executor still starting: %v", err)
	}
}
