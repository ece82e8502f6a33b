package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/conformance"
)

// TestConformance runs the real plugin binary under the real host through
// the conformance suite.
func TestConformance(t *testing.T) {
	binDir := t.TempDir()
	bin := filepath.Join(binDir, "executor-shell")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := t.TempDir()
	settings := map[string]any{"data_dir": filepath.Join(data, "executors", "shell"), "server_data_dir": data, "concurrency": 4}
	host := plugin.New(plugin.Options{
		Kinds:   []sdkKind{executor.Kind},
		Dir:     binDir,
		Logger:  zaptest.NewLogger(t),
		Plugins: []config.Plugin{{Name: "shell", Kind: "executor", Path: "executor-shell", Settings: settings}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := host.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Stop(context.Background()) })
	routes := host.Routes(executor.Kind.Name)
	if len(routes) != 1 || host.Status()[0].State != plugin.StateRunning {
		t.Fatalf("routes %v, status %+v", routes, host.Status())
	}
	e := routes[0].Value.(executor.Executor)
	raw, _ := jsonOf(settings)
	conformance.Run(t, func(*testing.T) executor.Executor { return e }, conformance.Fixtures{
		Settings: raw, SameMachine: true, ServerDataDir: data,
	})

	// The 10 MB trace went through without the plugin holding it: its peak
	// resident memory stays far below it plus a Go process's own.
	if hwm := peakRSS(t, host.Status()[0].PID); hwm > 60<<20 {
		t.Errorf("the plugin's peak RSS is %d MB after a 10 MB trace", hwm>>20)
	} else {
		t.Logf("plugin peak RSS: %d MB", hwm>>20)
	}
}

// peakRSS reads VmHWM of pid.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
