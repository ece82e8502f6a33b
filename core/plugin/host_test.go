package plugin_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"gopkg.in/yaml.v3"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest/gobuild"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/sdk/authprovider"
	sdkplugin "github.com/fennec-forge/fennec/sdk/plugin"
)

// Binaries built once for the whole package from testdata/authplugin.
var bins struct {
	dir  string // holds "authplugin"
	good string
	v0   string // speaks only API v0
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fennec-plugin-test")
	if err != nil {
		panic(err)
	}
	bins.dir = dir
	bins.good = filepath.Join(dir, "authplugin")
	bins.v0 = filepath.Join(dir, "authplugin-v0")
	for _, b := range []struct{ out, ldflags string }{
		{bins.good, ""},
		{bins.v0, "-X main.apiVersion=v0"},
	} {
		// Built once per source (gobuild's cache); each run gets copies.
		if err := gobuild.InstallTo("./testdata/authplugin", b.out, "-ldflags", b.ldflags); err != nil {
			fmt.Fprintf(os.Stderr, "building the test plugin: %v\n", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func good(name string) config.Plugin {
	return config.Plugin{Name: name, Kind: "auth", Path: bins.good, Settings: map[string]any{"realm": "example.com"}}
}

// start runs a host and stops it at cleanup, then checks that no plugin
// process and no supervisor, go-plugin or gRPC goroutine is left.
func start(t *testing.T, o plugin.Options) (*plugin.Host, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	o.Logger = zap.New(core)
	if o.Backoff == (plugin.Backoff{}) {
		o.Backoff = plugin.Backoff{Min: 20 * time.Millisecond, Max: 200 * time.Millisecond}
	}
	if o.Kinds == nil {
		o.Kinds = []sdkplugin.Kind{authprovider.Kind}
	}
	h := plugin.New(o)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := h.WaitStarted(ctx); err != nil {
		t.Fatalf("WaitStarted: %v", err)
	}
	t.Cleanup(func() {
		var pids []int
		for _, s := range h.Status() {
			if s.PID != 0 {
				pids = append(pids, s.PID)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		for _, s := range h.Status() {
			if s.PID != 0 || (s.State != plugin.StateStopped && s.State != plugin.StateFailed) {
				t.Errorf("after Stop, %s is %s with pid %d", s.Name, s.State, s.PID)
			}
		}
		for _, pid := range pids {
			waitGone(t, pid)
		}
		noLeakedGoroutines(t)
	})
	return h, logs
}

// waitGone waits until pid no longer exists (killed and reaped).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Errorf("plugin process %d still exists", pid)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func noLeakedGoroutines(t *testing.T) {
	t.Helper()
	var stacks string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		leaked := false
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "hashicorp/go-plugin") || strings.Contains(g, "core/plugin.(*") ||
				strings.Contains(g, "google.golang.org/grpc") {
				leaked = true
			}
		}
		if !leaked {
			return
		}
	}
	t.Errorf("goroutines left after Stop:\n%s", stacks)
}

func auth(t *testing.T, h *plugin.Host, name string) authprovider.Provider {
	t.Helper()
	for _, r := range h.Routes("auth") {
		if r.Name == name {
			return r.Value.(authprovider.Provider)
		}
	}
	t.Fatalf("no auth provider %q in %v", name, h.Routes("auth"))
	return nil
}

func TestHostRunsAnAuthPlugin(t *testing.T) {
	h, logs := start(t, plugin.Options{Plugins: []config.Plugin{good("mem")}})
	p := auth(t, h, "mem")
	ctx := context.Background()
	id, err := p.Authenticate(ctx, "alice", "secret")
	if err != nil || id.Email != "alice@example.com" {
		t.Fatalf("Authenticate = %+v, %v", id, err)
	}
	if _, err := p.Authenticate(ctx, "alice", "wrong"); !errors.Is(err, authprovider.ErrInvalidCredentials) {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := p.Authenticate(ctx, "nobody", "x"); !errors.Is(err, authprovider.ErrUnknownUser) {
		t.Fatalf("unknown user: %v", err)
	}
	if _, err := p.(authprovider.UserSearcher).SearchUsers(ctx, "a", 1); !errors.Is(err, authprovider.ErrNotSupported) {
		t.Fatalf("SearchUsers on a plugin without it: %v", err)
	}
	st := h.Status()[0]
	if st.State != plugin.StateRunning || st.PID == 0 || st.Description.Name != "authplugin" {
		t.Fatalf("status %+v", st)
	}
	// The plugin's own hclog line arrives in zap, under its name.
	// Lines travel through the plugin's stderr, asynchronously.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		found := logs.FilterMessage("configured").FilterField(zap.String("plugin", "mem")).All()
		if len(found) > 0 {
			if found[0].ContextMap()["realm"] != "example.com" {
				t.Fatalf("forwarded line lost its fields: %v", found[0].ContextMap())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's log line was not forwarded: %v", logs.All())
		}
	}
}

// A crash fails the call in flight with ErrUnavailable; the supervisor
// restarts the process and configures it again; calls recover.
func TestHostRestartsACrashedPlugin(t *testing.T) {
	h, _ := start(t, plugin.Options{Plugins: []config.Plugin{good("mem")}})
	p := auth(t, h, "mem")
	ctx := context.Background()
	firstPID := h.Status()[0].PID

	began := time.Now()
	_, err := p.Authenticate(ctx, "crash", "x")
	if !errors.Is(err, authprovider.ErrUnavailable) {
		t.Fatalf("call that crashed the plugin: %v, want ErrUnavailable", err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Fatalf("the crashed call took %s", d)
	}
	waitAuthenticates(t, p, "alice@example.com")
	st := h.Status()[0]
	if st.Restarts != 1 || st.PID == firstPID || st.PID == 0 {
		t.Fatalf("after a crash: %+v (first pid %d)", st, firstPID)
	}
	waitGone(t, firstPID)
}

// waitAuthenticates polls until alice signs in, checking that every failure
// on the way is a prompt ErrUnavailable.
func waitAuthenticates(t *testing.T, p authprovider.Provider, wantExternalID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		began := time.Now()
		id, err := p.Authenticate(context.Background(), "alice", "secret")
		if err == nil {
			if id.ExternalID != wantExternalID {
				t.Fatalf("signed in as %q, want %q", id.ExternalID, wantExternalID)
			}
			return
		}
		if !errors.Is(err, authprovider.ErrUnavailable) {
			t.Fatalf("while restarting: %v, want ErrUnavailable", err)
		}
		if d := time.Since(began); d > time.Second {
			t.Fatalf("a call to a down plugin took %s", d)
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin did not come back: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Killing the process from outside ends a call blocked in it.
func TestHostFailsCallsInFlightWhenThePluginDies(t *testing.T) {
	h, logs := start(t, plugin.Options{Plugins: []config.Plugin{good("mem")}})
	p := auth(t, h, "mem")
	pid := h.Status()[0].PID
	errc := make(chan error, 1)
	go func() {
		_, err := p.Authenticate(context.Background(), "hang", "x")
		errc <- err
	}()
	// The plugin logs once the call has reached it.
	for deadline := time.Now().Add(10 * time.Second); logs.FilterMessage("hanging").Len() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call never reached the plugin")
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, authprovider.ErrUnavailable) {
			t.Fatalf("in-flight call: %v, want ErrUnavailable", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the call in flight did not end when its plugin died")
	}
	waitAuthenticates(t, p, "alice@example.com")
}

// Settings given through the route are kept for later restarts.
func TestHostReconfiguresAfterRestart(t *testing.T) {
	h, _ := start(t, plugin.Options{Plugins: []config.Plugin{good("mem")}})
	p := auth(t, h, "mem")
	ctx := context.Background()
	if err := p.Configure(ctx, []byte(`{"realm":"other.org"}`)); err != nil {
		t.Fatal(err)
	}
	if err := p.Configure(ctx, []byte(`{"realm":""}`)); !errors.Is(err, authprovider.ErrInvalidSettings) {
		t.Fatalf("refused settings: %v", err)
	}
	_, _ = p.Authenticate(ctx, "crash", "x")
	waitAuthenticates(t, p, "alice@other.org")
}

// Every kind of misconfiguration disables only its own plugin, with a clear
// status and log line; the good plugin works and Start succeeds.
func TestHostContinuesWithoutBrokenPlugins(t *testing.T) {
	sum := sha256.Sum256([]byte("not the binary"))
	realSum, err := os.ReadFile(bins.good)
	if err != nil {
		t.Fatal(err)
	}
	goodSum := sha256.Sum256(realSum)
	wrongSum := good("wrongsum")
	wrongSum.SHA256 = hex.EncodeToString(sum[:])
	rightSum := good("rightsum")
	rightSum.SHA256 = "SHA256:" + strings.ToUpper(hex.EncodeToString(goodSum[:]))
	badHex := good("badhex")
	badHex.SHA256 = "xyz"
	missing := good("missing")
	missing.Path = filepath.Join(t.TempDir(), "nope")
	executor := good("exec")
	executor.Kind = "executor"
	refused := good("refused")
	refused.Settings = map[string]any{"realm": ""}
	v0 := good("v0")
	v0.Path = bins.v0
	dup := good("rightsum")

	h, logs := start(t, plugin.Options{Plugins: []config.Plugin{wrongSum, missing, executor, badHex, refused, v0, rightSum, dup}})

	want := map[string]string{
		"wrongsum": "does not match its sha256",
		"missing":  "no such file",
		"exec":     `unknown kind: kind "executor" is not run by this host`,
		"badhex":   "not 64 hexadecimal digits",
		"refused":  "settings refused",
		"v0":       `needs "v1"`,
	}
	for _, s := range h.Status() {
		if s.Name == "rightsum" && s.State == plugin.StateRunning {
			continue
		}
		if s.Name == "rightsum" && strings.Contains(fmt.Sprint(s.Err), "already named") {
			continue
		}
		w, ok := want[s.Name]
		if !ok || s.State != plugin.StateFailed || !strings.Contains(fmt.Sprint(s.Err), w) {
			t.Errorf("%s: %s, %v; want failed with %q", s.Name, s.State, s.Err, w)
		}
		level := zapcore.ErrorLevel
		if s.Name == "exec" {
			level = zapcore.WarnLevel // a kind for a later host: a warning
		}
		if logs.FilterField(zap.String("plugin", s.Name)).FilterLevelExact(level).Len() == 0 {
			t.Errorf("%s: nothing logged at %s", s.Name, level)
		}
	}
	if !errors.Is(h.Status()[0].Err, plugin.ErrChecksumMismatch) {
		t.Errorf("wrong sum: %v, want ErrChecksumMismatch", h.Status()[0].Err)
	}
	// Refused and v0 are found out only by running them: still listed, and
	// answering ErrUnavailable at once.
	var names []string
	for _, r := range h.Routes("auth") {
		names = append(names, r.Name)
	}
	if fmt.Sprint(names) != "[refused v0 rightsum]" {
		t.Errorf("auth providers %v", names)
	}
	for _, name := range []string{"refused", "v0"} {
		began := time.Now()
		if _, err := auth(t, h, name).Authenticate(context.Background(), "alice", "secret"); !errors.Is(err, authprovider.ErrUnavailable) || time.Since(began) > 100*time.Millisecond {
			t.Errorf("%s: %v after %s, want a prompt ErrUnavailable", name, err, time.Since(began))
		}
	}
	if _, err := auth(t, h, "rightsum").Authenticate(context.Background(), "alice", "secret"); err != nil {
		t.Errorf("the good plugin: %v", err)
	}
}

// Start returns once each plugin's first attempt has settled: a plugin
// refused at its first start is already failed, and logged, however long
// its process takes to be killed (the hook stands for a slow kill on a
// loaded machine, where TestHostContinuesWithoutBrokenPlugins once found
// a plugin not yet logged).
// WaitStarted returns once each first attempt has settled: its state and
// its log line are there.
func TestWaitStartedWaitsForFirstAttemptsToSettle(t *testing.T) {
	t.Cleanup(plugin.SetTestHookDown(func(s plugin.State) {
		if s == plugin.StateFailed {
			time.Sleep(300 * time.Millisecond)
		}
	}))
	refused := good("refused")
	refused.Settings = map[string]any{"realm": ""}
	h, logs := start(t, plugin.Options{Plugins: []config.Plugin{refused}})
	if s := h.Status()[0]; s.State != plugin.StateFailed || !strings.Contains(fmt.Sprint(s.Err), "settings refused") {
		t.Errorf("after WaitStarted: %s, %v; want failed with settings refused", s.State, s.Err)
	}
	if logs.FilterField(zap.String("plugin", "refused")).FilterLevelExact(zapcore.ErrorLevel).Len() == 0 {
		t.Error("the refusal was not logged when WaitStarted returned")
	}
}

// Start returns at once while a plugin hangs before its handshake, so the
// server it belongs to answers; a call made meanwhile waits for the first
// attempt (here until its own deadline) instead of failing at once, and
// Stop kills the hanging process without waiting for the start timeout.
func TestStartDoesNotWaitForAHangingPlugin(t *testing.T) {
	script := filepath.Join(t.TempDir(), "hangs")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho $$ > \"$0.pid\"\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := plugin.New(plugin.Options{Kinds: []sdkplugin.Kind{authprovider.Kind}, StartTimeout: time.Minute,
		Plugins: []config.Plugin{{Name: "hangs", Kind: "auth", Path: script}}})
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := h.Status()[0]; s.State != plugin.StateStarting {
		t.Fatalf("right after Start: %s, want starting", s.State)
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(script + ".pid")
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if pid == 0 && time.Now().After(deadline) {
			t.Fatal("the plugin process never started")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	p := auth(t, h, "hangs")
	if _, err := p.Authenticate(ctx, "alice", "secret"); !errors.Is(err, sdkplugin.ErrUnavailable) || ctx.Err() == nil {
		t.Fatalf("a call during the first start: %v (its deadline passed: %v); want ErrUnavailable after waiting", err, ctx.Err())
	}
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelStop()
	if err := h.Stop(stopCtx); err != nil {
		t.Fatalf("Stop with a plugin still starting: %v", err)
	}
	waitGone(t, pid)
	noLeakedGoroutines(t)
}

// A bare file name, or no path at all, is looked up in the plugin directory.
func TestHostFindsPluginsInItsDirectory(t *testing.T) {
	byName := good("authplugin")
	byName.Path = ""
	byFile := good("other")
	byFile.Path = "authplugin"
	h, _ := start(t, plugin.Options{Dir: bins.dir, Plugins: []config.Plugin{byName, byFile}})
	for _, s := range h.Status() {
		if s.State != plugin.StateRunning || s.Path != bins.good {
			t.Errorf("%s: %s at %s (%v)", s.Name, s.State, s.Path, s.Err)
		}
	}
}

// A binary replaced after the host pinned it is refused at the next start.
func TestHostRefusesABinarySwappedAfterStart(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "authplugin")
	copyFile(t, bins.good, bin)
	p := good("swapped")
	p.Path = bin
	h, _ := start(t, plugin.Options{Plugins: []config.Plugin{p}})
	pr := auth(t, h, "swapped")
	if _, err := pr.Authenticate(context.Background(), "alice", "secret"); err != nil {
		t.Fatal(err)
	}
	copyFile(t, bins.v0, bin) // a different binary at the same path
	_, _ = pr.Authenticate(context.Background(), "crash", "x")
	deadline := time.Now().Add(5 * time.Second)
	for h.Status()[0].State != plugin.StateFailed {
		if time.Now().After(deadline) {
			t.Fatalf("swapped binary: %+v", h.Status()[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := h.Status()[0].Err; !errors.Is(err, plugin.ErrChecksumMismatch) {
		t.Fatalf("swapped binary: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, to); err != nil {
		t.Fatal(err)
	}
}

// A host that is never started, or stopped twice, is harmless.
func TestHostStopWithoutStart(t *testing.T) {
	h := plugin.New(plugin.Options{Kinds: []sdkplugin.Kind{authprovider.Kind}, Plugins: []config.Plugin{good("mem")}})
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := h.Routes("auth")[0].Value.(authprovider.Provider).Authenticate(context.Background(), "alice", "secret")
	if !errors.Is(err, authprovider.ErrUnavailable) {
		t.Fatalf("before Start: %v", err)
	}
}

// The YAML of the configuration file reaches the plugin as JSON settings.
func TestHostFromYAMLConfig(t *testing.T) {
	var cfg config.Config
	doc := `
plugin_dir: ` + bins.dir + `
plugins:
  - name: mem
    kind: auth
    path: authplugin
    settings:
      realm: yaml.example
      nested: {list: [1, two], flag: true}
`
	if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	h, _ := start(t, plugin.Options{Plugins: cfg.Plugins, Dir: cfg.PluginDir})
	id, err := auth(t, h, "mem").Authenticate(context.Background(), "alice", "secret")
	if err != nil || id.Email != "alice@yaml.example" {
		t.Fatalf("%+v, %v", id, err)
	}
}

// echoKind is a second kind, known only to this test: the host runs it with
// the same supervisor, from nothing but its descriptor.
var echoKind = sdkplugin.Kind{
	Name:       "echo",
	APIVersion: "v1",
	NewClient:  func(cc grpc.ClientConnInterface) any { return cc },
	Route:      func(conn sdkplugin.Conn) any { return conn },
}

// A plugin is checked against the kind it is configured as: the auth test
// plugin configured as another kind is refused for good, with both kinds
// named, and the host keeps serving each kind its own routes.
func TestHostRefusesAPluginOfAnotherKind(t *testing.T) {
	wrong := good("wrongkind")
	wrong.Kind = echoKind.Name
	h, _ := start(t, plugin.Options{
		Kinds:   []sdkplugin.Kind{authprovider.Kind, echoKind},
		Plugins: []config.Plugin{wrong, good("mem")},
	})
	deadline := time.Now().Add(5 * time.Second)
	for h.Status()[0].State != plugin.StateFailed {
		if time.Now().After(deadline) {
			t.Fatalf("wrong kind: %+v", h.Status()[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := fmt.Sprint(h.Status()[0].Err); !strings.Contains(err, `kind "auth"; the configuration says "echo"`) {
		t.Fatalf("wrong kind: %v", err)
	}
	routes := h.Routes(echoKind.Name)
	if len(routes) != 1 || routes[0].Name != "wrongkind" {
		t.Fatalf("echo routes %v", routes)
	}
	conn := routes[0].Value.(sdkplugin.Conn)
	if _, err := conn.Describe(context.Background()); !errors.Is(err, sdkplugin.ErrUnavailable) {
		t.Fatalf("Describe on a refused plugin: %v", err)
	}
	if _, err := auth(t, h, "mem").Authenticate(context.Background(), "alice", "secret"); err != nil {
		t.Fatal(err)
	}
	if d, err := auth(t, h, "mem").Describe(context.Background()); err != nil || d.Kind != "auth" || d.Name != "authplugin" {
		t.Fatalf("Describe through the route: %+v, %v", d, err)
	}
}

// A plugin whose host is gone without a word, and without a parent-death
// signal (here a shell that started it, killed with SIGKILL), notices that
// it was re-parented and exits (issue 27: plugins outlived a killed
// server).
func TestPluginExitsWhenItsHostIsGone(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	sh := exec.Command("sh", "-c", `"$0" & echo "$!"; exec sleep 600`, bins.good)
	sh.Env = append(os.Environ(), sdkplugin.Handshake.MagicCookieKey+"="+sdkplugin.Handshake.MagicCookieValue,
		"PLUGIN_PROTOCOL_VERSIONS="+strconv.Itoa(int(sdkplugin.Handshake.ProtocolVersion)))
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer sh.Process.Kill()
	lines := bufio.NewScanner(out)
	// The plugin's pid, then its handshake line: it is serving.
	if !lines.Scan() {
		t.Fatal("no pid from the shell")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(lines.Text()))
	if err != nil {
		t.Fatalf("pid %q", lines.Text())
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !lines.Scan() || !strings.Contains(lines.Text(), "|unix|") {
		t.Fatalf("handshake %q", lines.Text())
	}
	if err := sh.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = sh.Wait()
	for deadline := time.Now().Add(5 * time.Second); running(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the plugin (%d) still runs 5 s after its host was killed", pid)
		}
	}
}

// running says whether process pid exists and is not a zombie.
func running(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}
