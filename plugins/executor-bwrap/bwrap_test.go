package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/conformance"
	sdkplugin "github.com/fennec-forge/fennec/sdk/plugin"
)

// requireBwrap skips when this machine cannot run bwrap sandboxes, saying
// why: the suite is meaningless without them.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap is not installed (apt-get install bubblewrap)")
	}
	out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "true").CombinedOutput()
	if err != nil {
		t.Skipf("bwrap cannot create namespaces on this machine: %v: %s", err, out)
	}
}

func startHost(t *testing.T, settings map[string]any) executor.Executor {
	_, e := startHostOf(t, settings)
	return e
}

// startHostOf builds the plugin and runs it under the real host with
// settings; it returns the host and the plugin's route.
func startHostOf(t *testing.T, settings map[string]any) (*plugin.Host, executor.Executor) {
	t.Helper()
	binDir := t.TempDir()
	bin := filepath.Join(binDir, "executor-bwrap")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	host := plugin.New(plugin.Options{
		Kinds:   []sdkplugin.Kind{executor.Kind},
		Dir:     binDir,
		Logger:  zaptest.NewLogger(t),
		Plugins: []config.Plugin{{Name: "bwrap", Kind: "executor", Path: "executor-bwrap", Settings: settings}},
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
	if st := host.Status()[0]; st.State != plugin.StateRunning {
		t.Fatalf("the plugin is not running: %+v", st)
	}
	return host, host.Routes(executor.Kind.Name)[0].Value.(executor.Executor)
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

func TestConformance(t *testing.T) {
	requireBwrap(t)
	data := t.TempDir()
	settings := map[string]any{"data_dir": filepath.Join(data, "executors", "bwrap"), "server_data_dir": data, "concurrency": 4}
	host, e := startHostOf(t, settings)
	raw, _ := json.Marshal(settings)
	conformance.Run(t, func(*testing.T) executor.Executor { return e }, conformance.Fixtures{
		Settings: raw, SameMachine: true, ServerDataDir: data,
		Restart: func(t *testing.T) { crash(t, host) },
	})
}

// Jobs have no network unless a tag in network_tags asks for it.
func TestNetworkByTag(t *testing.T) {
	requireBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello-from-the-host\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	data := t.TempDir()
	settings := map[string]any{"data_dir": filepath.Join(data, "executors", "bwrap"), "network_tags": []string{"net"}}
	e := startHost(t, settings)
	raw, _ := json.Marshal(settings)
	if err := e.Configure(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	probe := fmt.Sprintf(`if exec 3<>/dev/tcp/127.0.0.1/%d; then cat <&3; else echo no-network; fi`, port)
	for i, c := range []struct {
		tags []string
		want string
	}{
		{nil, "no-network\n"},
		{[]string{"other"}, "no-network\n"},
		{[]string{"net"}, "hello-from-the-host\n"},
	} {
		job := executor.Job{ID: int64(1000 + i), Steps: executor.ScriptSteps(nil, []string{probe}, nil), Tags: c.tags, Timeout: 30 * time.Second}
		var trace strings.Builder
		res, err := e.Run(context.Background(), job, func(ch executor.TraceChunk) error { trace.Write(ch.Data); return nil })
		e.Cleanup(context.Background(), job.ID)
		if err != nil || res.Failure != executor.FailureNone {
			t.Fatalf("tags %v: %+v, %v\n%s", c.tags, res, err, trace.String())
		}
		if !strings.Contains(trace.String(), "\n"+c.want) {
			t.Errorf("tags %v: want %q in\n%s", c.tags, c.want, trace.String())
		}
	}
}

// The sandbox's settings (the paths it hides, the data directories, the
// binds) are not on bwrap's command line, which every process of the job
// can read in /proc: a job printing every command line it can see writes
// none of them into its trace (issue 27).
func TestSandboxSettingsNotVisibleToTheJob(t *testing.T) {
	requireBwrap(t)
	serverData, hidden := t.TempDir(), t.TempDir()
	settings := map[string]any{"data_dir": filepath.Join(t.TempDir(), "bwrap"), "server_data_dir": serverData, "hide": []string{hidden}}
	e := startHost(t, settings)
	raw, _ := json.Marshal(settings)
	if err := e.Configure(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	script := `for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f"; echo; done; echo seen-all`
	job := executor.Job{ID: 77, Steps: executor.ScriptSteps(nil, []string{script}, nil), Timeout: 30 * time.Second}
	var trace strings.Builder
	res, err := e.Run(context.Background(), job, func(ch executor.TraceChunk) error { trace.Write(ch.Data); return nil })
	e.Cleanup(context.Background(), job.ID)
	if err != nil || res.Failure != executor.FailureNone || !strings.Contains(trace.String(), "\nseen-all\n") {
		t.Fatalf("%+v, %v\n%s", res, err, trace.String())
	}
	for _, secret := range []string{serverData, hidden, "--ro-bind", "--tmpfs", "--unshare-pid"} {
		if strings.Contains(trace.String(), secret) {
			t.Errorf("the trace shows %q:\n%s", secret, trace.String())
		}
	}
}
