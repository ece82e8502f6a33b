package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest/gobuild"
	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock"
)

var binary string

// TestMain builds the real fennec binary once; the tests run it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fennec-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "fennec")
	// Built once per source (gobuild's cache), copied here.
	if err := gobuild.InstallTo(".", binary); err != nil {
		fmt.Fprintf(os.Stderr, "build fennec: %v\n", err)
		os.Exit(1)
	}
	// The shipped plugins, where the host looks for them: plugins/ next to it.
	if err := gobuild.InstallTo("../plugins/auth-ldap", filepath.Join(dir, "plugins", "auth-ldap")); err != nil {
		fmt.Fprintf(os.Stderr, "build auth-ldap: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	pgserver.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestHelpListsCommandsFlagsAndEnv(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, stock.Modules(), &out, &errOut); code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, want := range []string{"serve", "backup", "--gzip", "--without-secret-key", "restore", "--force", "store copy", "--to DEST", "version", "-listen", "-data", "-external-url", "-config", "-log-level",
		"FENNEC_LISTEN", "FENNEC_DATA", "FENNEC_EXTERNAL_URL", `default "127.0.0.1:8080"`, `default "./data"`,
		// the modules' admin commands and the settings table
		"fennec repo gc [--data DIR] PROJECT", "fennec repo fsck [--data DIR] PROJECT", "fennec config",
		"fennec user reset-password [--data DIR] [--generate] LOGIN",
		// settings that only the file (or the environment) sets
		"read_header_timeout", "plugins", "repository.housekeeping_pushes", "FENNEC_CI_JOB_TIMEOUT"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help does not mention %q", want)
		}
	}
	if code := run([]string{"frobnicate"}, stock.Modules(), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"version"}, stock.Modules(), &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "fennec ") {
		t.Errorf("version: exit %d %q", code, out.String())
	}
}

// server is one `fennec serve` process.
type server struct {
	cmd  *exec.Cmd
	addr string
	data string
	logs *lineLog
	done chan error
}

type lineLog struct {
	mu    sync.Mutex
	lines []map[string]any
	raw   []string
}

func (l *lineLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.raw = append(l.raw, line)
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) == nil {
		l.lines = append(l.lines, m)
	}
}

func (l *lineLog) find(msg string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.lines {
		if s, _ := m["msg"].(string); strings.Contains(s, msg) {
			return m
		}
	}
	return nil
}

// await is find, waiting for the line up to a deadline (what the server
// logs from the background comes after it answers).
func (l *lineLog) await(msg string) map[string]any {
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := l.find(msg); m != nil || time.Now().After(deadline) {
			return m
		}
	}
}

func (l *lineLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.raw, "\n")
}

func startServer(t *testing.T, data string, env ...string) *server {
	t.Helper()
	return startServerArgs(t, data, nil, env...)
}

func startServerArgs(t *testing.T, data string, args []string, env ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--listen", "127.0.0.1:0", "--data", data}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, data: data, logs: &lineLog{}, done: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.logs.add(sc.Text())
		}
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := s.logs.find("listening"); m != nil {
			s.addr = m["addr"].(string)
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("server did not start; log:\n%s", s.logs.text())
	return nil
}

func (s *server) url(path string) string { return "http://" + s.addr + path }

func TestFirstStartPrintsTheAdministratorLogin(t *testing.T) {
	t.Parallel()
	s := startServer(t, t.TempDir())
	m := s.logs.find("administrator")
	if m == nil || m["login"] != "root" {
		t.Fatalf("no administrator login in the log:\n%s", s.logs.text())
	}
	password, _ := m["password"].(string)
	body := strings.NewReader(`{"login":"root","password":"` + password + `"}`)
	resp, err := http.Post(s.url("/api/v4/session"), "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("login with the printed password: %s", resp.Status)
	}
}

func TestSecondServerOnTheSameDataFailsFast(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	startServer(t, data, "FENNEC_ROOT_PASSWORD=password-123")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, binary, "serve", "--listen", "127.0.0.1:0", "--data", data).CombinedOutput()
	took := time.Since(start)
	if err == nil {
		t.Fatal("second server started on a locked store")
	}
	if !strings.Contains(string(out), "database is locked") || !strings.Contains(string(out), "fennec.db") {
		t.Fatalf("unclear error: %s", out)
	}
	if took > 2*time.Second {
		t.Fatalf("second server took %v to fail; want under 2s", took)
	}
}

// TestSIGTERMDrainsInFlightRequests sends SIGTERM while a login request is
// half-sent; the server must finish it, exit 0 and leave a clean store.
func TestSIGTERMDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data, "FENNEC_ROOT_PASSWORD=password-123")

	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"login":"root","password":"password-123"}`
	// Expect: 100-continue makes the server say when it starts reading
	// the body: from then on the request is in flight.
	head := fmt.Sprintf("POST /api/v4/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	answers := bufio.NewReader(conn)
	if line, err := answers.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("the server did not start reading the body: %q %v", line, err)
	}
	if blank, err := answers.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("after 100 Continue: %q %v", blank, err)
	}
	if _, err := io.WriteString(conn, body[:10]); err != nil {
		t.Fatal(err)
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.logs.find("shutting down") == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := io.WriteString(conn, body[10:]); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, err := answers.ReadString('\n')
	if err != nil || !strings.Contains(status, "201") {
		t.Fatalf("in-flight request was not completed: %q %v", status, err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("server exit: %v\n%s", err, s.logs.text())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not exit after SIGTERM")
	}
	if err := store.Verify(filepath.Join(data, "fennec.db")); err != nil {
		t.Fatalf("store not clean after shutdown: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, "fennec.sock")); !os.IsNotExist(err) {
		t.Errorf("admin socket left behind: %v", err)
	}
}

// TestOnlineBackup copies the store while the server runs and writes.
func TestOnlineBackup(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data, "FENNEC_ROOT_PASSWORD=password-123")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // keep writing: each login records the sign-in and a token
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := http.Post(s.url("/api/v4/session"), "application/json", strings.NewReader(`{"login":"root","password":"password-123"}`))
			if err == nil {
				resp.Body.Close()
			}
		}
	}()
	archive := filepath.Join(t.TempDir(), "backup.tar")
	out, err := exec.Command(binary, "backup", "--data", data, archive).CombinedOutput()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "wrote "+archive) {
		t.Fatalf("backup output: %s", out)
	}
	dest := storeFromArchive(t, archive)
	if err := store.Verify(dest); err != nil {
		t.Fatal(err)
	}
	// The restored file opens as a store like any other (what a restore
	// does with it) and holds the users: root is found by its username.
	db, err := store.Open(dest, store.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(context.Background(), func(tx *store.Tx) error {
		if !store.Keys("identity.users#username").Has(tx, []byte("root")) {
			return fmt.Errorf("root is not in the backup")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The server kept serving throughout.
	resp, err := http.Get(s.url("/-/readiness"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("server not ready after backup: %v", err)
	}
	resp.Body.Close()
}

func TestOfflineBackupAndMissingStore(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	out, err := exec.Command(binary, "backup", "--data", data, filepath.Join(t.TempDir(), "x.db")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no database") {
		t.Fatalf("backup of an empty dir: %v %s", err, out)
	}
	db, err := store.Open(filepath.Join(data, "fennec.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	archive := filepath.Join(t.TempDir(), "offline.tar")
	if out, err := exec.Command(binary, "backup", "--data", data, archive).CombinedOutput(); err != nil {
		t.Fatalf("offline backup: %v %s", err, out)
	}
	if err := store.Verify(storeFromArchive(t, archive)); err != nil {
		t.Fatal(err)
	}
}

// TestVersionIsSemver: clients that parse GET /version expect semver, so
// the version make build stamps is one (from the latest vX.Y.Z tag, or
// 0.0.0-dev+SHA), and so is a plain go build's.
func TestVersionIsSemver(t *testing.T) {
	semver := regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	if _, err := exec.LookPath("make"); err == nil {
		out, err := exec.Command("make", "-s", "--no-print-directory", "-C", "..", "version").Output()
		if v := strings.TrimSpace(string(out)); err != nil || !semver.MatchString(v) {
			t.Errorf("make version: %q %v", v, err)
		}
	}
	out, err := exec.Command(binary, "version").Output()
	if f := strings.Fields(string(out)); err != nil || len(f) < 2 || !semver.MatchString(f[1]) {
		t.Errorf("fennec version: %q %v", out, err)
	}
}

// TestPortInUseFailsBeforeAnything: a serve whose port is taken stops with
// one clear line before any module acts: no administrator is created, so no
// one-time password is printed for a server that never ran.
func TestPortInUseFailsBeforeAnything(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	data := t.TempDir()
	cmd := exec.Command(binary, "serve", "--listen", busy.Addr().String(), "--data", data)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("serve on a busy port succeeded")
	}
	out := stderr.String()
	if strings.Contains(out, "password") || strings.Contains(out, "created the administrator") {
		t.Fatalf("an administrator was created before the port was tried:\n%s", out)
	}
	want := "fennec: listen on " + busy.Addr().String() + ": "
	if !strings.Contains(out, want) || strings.Contains(out, "fennec: fennec:") {
		t.Fatalf("stderr %q, want one line with %q", out, want)
	}
	// The next start, on a free port, creates the administrator then.
	s := startServer(t, data)
	if m := s.logs.find("created the administrator; this password is shown only once"); m == nil || m["password"] == "" {
		t.Fatalf("no administrator created on the first real start; log:\n%s", s.logs.text())
	}
}
