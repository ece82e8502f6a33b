package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/plugin"
	"github.com/fennec-forge/fennec/plugins/auth-ldap/ldaptest"
	"github.com/fennec-forge/fennec/sdk/authprovider"
	"github.com/fennec-forge/fennec/sdk/authprovider/conformance"
	sdkplugin "github.com/fennec-forge/fennec/sdk/plugin"
)

const (
	suffix  = ldaptest.Suffix
	rootDN  = ldaptest.RootDN
	rootPW  = ldaptest.RootPW
	alicePW = ldaptest.AlicePW
	bobPW   = ldaptest.BobPW
	twinPW  = ldaptest.TwinPW
)

func startSlapd(t *testing.T) string { return ldaptest.Start(t) }

func settingsFor(url string) map[string]any {
	return map[string]any{
		"url":           url,
		"bind_dn":       rootDN,
		"bind_password": rootPW,
		"base":          suffix,
		"user_filter":   "(&(objectClass=inetOrgPerson)(uid=%s))",
		"attributes":    map[string]any{"username": "uid", "email": "mail", "name": "cn"},
		"timeout":       "5s",
	}
}

func fixtures(url string) conformance.Fixtures {
	raw, _ := json.Marshal(settingsFor(url))
	return conformance.Fixtures{
		Settings: raw,
		User: conformance.User{Login: "alice", Password: alicePW, Identity: authprovider.Identity{
			ExternalID: "uid=alice,ou=people,dc=example,dc=com", Username: "alice", Email: "alice@example.com", Name: "Alice Liddell"}},
		Second: conformance.User{Login: "bob", Password: bobPW, Identity: authprovider.Identity{
			ExternalID: "uid=bob,ou=people,dc=example,dc=com", Username: "bob", Email: "bob@example.com", Name: "Bob Builder"}},
		WrongPassword:  "alice-wrong",
		UnknownLogin:   "mallory",
		GoneExternalID: "uid=carol,ou=people,dc=example,dc=com",
	}
}

// buildPlugin builds this package into dir/auth-ldap, as `make build` does.
func buildPlugin(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "auth-ldap")
	out, err := exec.Command("go", "build", "-ldflags", "-X main.version=test", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestAgainstSlapd runs the real plugin binary under the real host against a
// real slapd: the conformance suite, then what only a process can show.
func TestAgainstSlapd(t *testing.T) {
	url := startSlapd(t)
	f := fixtures(url)

	t.Run("InProcessConformance", func(t *testing.T) {
		conformance.Run(t, func(*testing.T) authprovider.Provider { return newDirectory(nil) }, f)
	})

	binDir := t.TempDir()
	buildPlugin(t, binDir)
	closed := ldaptest.FreePort(t)
	wrongSum := sha256.Sum256([]byte("some other binary"))
	core, logs := observer.New(zapcore.DebugLevel)
	host := plugin.New(plugin.Options{
		Kinds:   []sdkplugin.Kind{authprovider.Kind},
		Dir:     binDir,
		Logger:  zap.New(core),
		Backoff: plugin.Backoff{Min: 50 * time.Millisecond, Max: time.Second},
		Plugins: []config.Plugin{
			// A sum that does not match: refused, logged, the rest runs.
			{Name: "ldapbad", Kind: "auth", Path: "auth-ldap", SHA256: hex.EncodeToString(wrongSum[:]), Settings: settingsFor(url)},
			// A directory that is down: a failure, so the next provider is asked.
			{Name: "ldapdown", Kind: "auth", Path: "auth-ldap", Settings: settingsFor(fmt.Sprintf("ldap://127.0.0.1:%d", closed))},
			// The shipped binary by its file name in the plugin directory.
			{Name: "ldapmain", Kind: "auth", Path: "auth-ldap", Settings: settingsFor(url)},
		},
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
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			if err := host.Stop(context.Background()); err != nil {
				t.Errorf("Stop: %v", err)
			}
		}
	}
	t.Cleanup(stop)

	routes := host.Routes(authprovider.Kind.Name)
	if len(routes) != 2 || routes[0].Name != "ldapdown" || routes[1].Name != "ldapmain" {
		t.Fatalf("auth providers: %v", routes)
	}
	down := routes[0].Value.(authprovider.Provider)
	main := routes[1].Value.(authprovider.Provider)

	t.Run("WrongSHA256IsRefused", func(t *testing.T) {
		st := host.Status()[0]
		if st.State != plugin.StateFailed || !errors.Is(st.Err, plugin.ErrChecksumMismatch) {
			t.Fatalf("ldapbad: %s, %v", st.State, st.Err)
		}
		if logs.FilterField(zap.String("plugin", "ldapbad")).FilterLevelExact(zapcore.ErrorLevel).Len() == 0 {
			t.Fatal("the refusal was not logged as an error")
		}
		if st.PID != 0 {
			t.Fatal("a process was started for a refused binary")
		}
	})

	t.Run("PluginConformance", func(t *testing.T) {
		conformance.Run(t, func(*testing.T) authprovider.Provider { return main }, f)
	})

	t.Run("DirectoryDownIsAFailure", func(t *testing.T) {
		_, err := down.Authenticate(context.Background(), "alice", alicePW)
		if !errors.Is(err, authprovider.ErrUnavailable) {
			t.Fatalf("directory down: %v, want ErrUnavailable", err)
		}
		if errors.Is(err, authprovider.ErrInvalidCredentials) || errors.Is(err, authprovider.ErrUnknownUser) {
			t.Fatalf("a failure looks like a rejection: %v", err)
		}
	})

	t.Run("AmbiguousLoginIsRefused", func(t *testing.T) {
		_, err := main.Authenticate(context.Background(), "twin", twinPW)
		if !errors.Is(err, authprovider.ErrInvalidCredentials) {
			t.Fatalf("a login matching two entries: %v", err)
		}
	})

	t.Run("PluginLogsReachTheHost", func(t *testing.T) {
		// Lines travel through the plugin's stderr, after the answer.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if logs.FilterMessage("login matches more than one entry; refusing it").FilterField(zap.String("plugin", "ldapmain")).Len() > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the plugin's warning did not reach the host's log")
			}
		}
	})

	t.Run("CrashAndRestart", func(t *testing.T) {
		st := host.Status()[2]
		if st.PID == 0 {
			t.Fatalf("ldapmain has no process: %+v", st)
		}
		if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The next call fails promptly with ErrUnavailable or already
		// reaches the restarted process; within seconds sign-in works.
		deadline := time.Now().Add(10 * time.Second)
		for {
			began := time.Now()
			id, err := main.Authenticate(context.Background(), "alice", alicePW)
			if took := time.Since(began); took > 2*time.Second {
				t.Fatalf("a call during the restart took %s", took)
			}
			if err == nil {
				if id.ExternalID != f.User.Identity.ExternalID {
					t.Fatalf("after restart: %+v", id)
				}
				break
			}
			if !errors.Is(err, authprovider.ErrUnavailable) {
				t.Fatalf("during the restart: %v, want ErrUnavailable", err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the plugin did not come back: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		after := host.Status()[2]
		if after.Restarts != 1 || after.PID == st.PID {
			t.Fatalf("after the crash: %+v", after)
		}
		waitGone(t, st.PID)
	})

	t.Run("StopLeavesNoProcess", func(t *testing.T) {
		var pids []int
		for _, s := range host.Status() {
			if s.PID != 0 {
				pids = append(pids, s.PID)
			}
		}
		if len(pids) != 2 {
			t.Fatalf("want 2 running plugin processes, got %v", host.Status())
		}
		stop()
		for _, pid := range pids {
			waitGone(t, pid)
		}
		if _, err := main.Authenticate(context.Background(), "alice", alicePW); !errors.Is(err, authprovider.ErrUnavailable) {
			t.Fatalf("after Stop: %v", err)
		}
	})

	t.Run("NoSecretInLogs", func(t *testing.T) {
		for _, e := range logs.All() {
			line := fmt.Sprint(e.Message, e.ContextMap())
			for _, secret := range []string{rootPW, alicePW, bobPW, twinPW} {
				if strings.Contains(line, secret) {
					t.Errorf("a password was logged: %s", line)
				}
			}
		}
	})
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still exists", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Directory failures are errors, not rejections: a refused service account,
// a server that never answers (bounded by the timeout), a cancelled call.
func TestDirectoryFailuresAreNotRejections(t *testing.T) {
	url := startSlapd(t)
	configure := func(t *testing.T, change func(map[string]any)) *directory {
		t.Helper()
		s := settingsFor(url)
		change(s)
		raw, _ := json.Marshal(s)
		d := newDirectory(nil)
		if err := d.Configure(context.Background(), raw); err != nil {
			t.Fatal(err)
		}
		return d
	}
	notRejection := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("succeeded")
		}
		for _, r := range []error{authprovider.ErrInvalidCredentials, authprovider.ErrUnknownUser, authprovider.ErrDisabled} {
			if errors.Is(err, r) {
				t.Fatalf("a failure looks like a rejection: %v", err)
			}
		}
	}

	t.Run("ServiceAccountRefused", func(t *testing.T) {
		d := configure(t, func(s map[string]any) { s["bind_password"] = "wrong" })
		_, err := d.Authenticate(context.Background(), "alice", alicePW)
		notRejection(t, err)
		_, err = d.SyncUsers(context.Background(), []string{"uid=alice,ou=people,dc=example,dc=com"})
		notRejection(t, err)
	})

	t.Run("SilentServerTimesOut", func(t *testing.T) {
		// A server that accepts connections and never answers.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var held []net.Conn
		accepting := make(chan struct{})
		go func() {
			defer close(accepting)
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
		defer func() {
			l.Close()
			<-accepting
			for _, c := range held {
				c.Close()
			}
		}()
		d := configure(t, func(s map[string]any) { s["url"] = "ldap://" + l.Addr().String(); s["timeout"] = "300ms" })
		began := time.Now()
		_, err = d.Authenticate(context.Background(), "alice", alicePW)
		notRejection(t, err)
		if took := time.Since(began); took > 2*time.Second {
			t.Fatalf("timeout 300ms, took %s", took)
		}
	})

	t.Run("CallerCancels", func(t *testing.T) {
		d := configure(t, func(map[string]any) {})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := d.Authenticate(ctx, "alice", alicePW)
		notRejection(t, err)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v", err)
		}
	})

	t.Run("AnonymousSearch", func(t *testing.T) {
		d := configure(t, func(s map[string]any) { delete(s, "bind_dn"); delete(s, "bind_password") })
		id, err := d.Authenticate(context.Background(), "bob", bobPW)
		if err != nil || id.Username != "bob" {
			t.Fatalf("anonymous search then bind: %+v, %v", id, err)
		}
	})
}
