package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/conformance"
)

// startHost builds the plugin and runs it under the real host with
// settings; it returns the host and the plugin's route.
func startHost(t *testing.T, settings map[string]any) (*plugin.Host, executor.Executor) {
	t.Helper()
	binDir := t.TempDir()
	bin := filepath.Join(binDir, "executor-shell")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
	// Start does not wait for the process; the test talks to it at once.
	if err := host.WaitStarted(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Stop(context.Background()) })
	routes := host.Routes(executor.Kind.Name)
	if len(routes) != 1 || host.Status()[0].State != plugin.StateRunning {
		t.Fatalf("routes %v, status %+v", routes, host.Status())
	}
	return host, routes[0].Value.(executor.Executor)
}

// TestConformance runs the real plugin binary under the real host through
// the conformance suite, its Restart subtest included: the plugin is
// SIGKILLed during a job and the host restarts it.
func TestConformance(t *testing.T) {
	data := t.TempDir()
	settings := map[string]any{"data_dir": filepath.Join(data, "executors", "shell"), "server_data_dir": data, "concurrency": 4}
	host, e := startHost(t, settings)
	raw, _ := jsonOf(settings)
	var hwm int64 // the first process's peak RSS, read before Restart kills it
	conformance.Run(t, func(*testing.T) executor.Executor { return e }, conformance.Fixtures{
		Settings: raw, SameMachine: true, ServerDataDir: data,
		Restart: func(t *testing.T) {
			hwm = peakRSS(t, host.Status()[0].PID)
			crash(t, host)
		},
	})
	if hwm == 0 {
		hwm = peakRSS(t, host.Status()[0].PID)
	}

	// The 10 MB trace went through without the plugin holding it: its peak
	// resident memory stays far below it plus a Go process's own.
	if hwm > 60<<20 {
		t.Errorf("the plugin's peak RSS is %d MB after a 10 MB trace", hwm>>20)
	} else {
		t.Logf("plugin peak RSS: %d MB", hwm>>20)
	}
}

// crash SIGKILLs the plugin's process and waits for the host to run
// another.
func crash(t *testing.T, host *plugin.Host) {
	t.Helper()
	pid := host.Status()[0].PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st := host.Status()[0]; st.State == plugin.StateRunning && st.PID != pid {
			return
		}
	}
	t.Fatalf("the host did not restart the plugin: %+v", host.Status()[0])
}

// TestFiftyMegabyteTraces: 50 jobs at once, each printing 1 MiB, through
// the real plugin: the plugin holds a bounded buffer per job, not what the
// jobs print faster than the host takes it (it peaked at 276 MiB when each
// trace message took a 1 MiB buffer of gRPC's pool).
func TestFiftyMegabyteTraces(t *testing.T) {
	const jobs = 50
	data := t.TempDir()
	settings := map[string]any{"data_dir": filepath.Join(data, "executors", "shell"), "concurrency": jobs}
	host, e := startHost(t, settings)
	base := time.Now().UnixNano() % 1e9 * 100
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Go(func() {
			// 16,384 lines of 64 bytes.
			job := executor.Job{ID: base + int64(i), Steps: executor.ScriptSteps(nil, []string{`printf '%063d\n' $(seq 1 16384)`}, nil), Timeout: time.Minute}
			var n int64
			res, err := e.Run(context.Background(), job, func(c executor.TraceChunk) error {
				n += int64(len(c.Data))
				time.Sleep(time.Millisecond) // a host writing each chunk somewhere
				return nil
			})
			if err != nil || !res.Success() || n < 1<<20 {
				t.Errorf("job %d: %+v, %v, %d bytes of trace", i, res, err, n)
			}
			e.Cleanup(context.Background(), job.ID)
		})
	}
	wg.Wait()
	hwm := peakRSS(t, host.Status()[0].PID)
	t.Logf("plugin peak RSS with %d jobs of 1 MiB at once: %d MiB", jobs, hwm>>20)
	if hwm > 60<<20 {
		t.Errorf("the plugin's peak RSS is %d MiB, more than 60 MiB", hwm>>20)
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
