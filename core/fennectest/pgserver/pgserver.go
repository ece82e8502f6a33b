package pgserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the role initdb creates; every DSN connects as it.
const Superuser = "postgres"

// Options shape a server.
type Options struct {
	// Durable keeps PostgreSQL's own settings (fsync, synchronous_commit,
	// full_page_writes on), for tests of what survives a crash. Without it
	// those are off: most tests lose nothing to a crash they never have,
	// and gain speed.
	Durable bool
}

// readyTimeout bounds how long a postmaster may take to accept
// connections: generous, since CI runs many race-built tests on few cores.
const readyTimeout = 60 * time.Second

// stopTimeout bounds a fast shutdown before the postmaster is killed.
const stopTimeout = 30 * time.Second

// Server is a running (or stopped, or killed) private PostgreSQL.
type Server struct {
	// Port is the loopback TCP port it listens on, kept across Restart.
	Port int

	opts       Options
	binDir     string
	baseDir    string // removed at the end; holds everything below
	dataDir    string
	socketDir  string
	logPath    string
	credential *syscall.Credential // nil unless we run as root

	databases atomic.Int64 // numbers the databases NewDatabase makes

	mu   sync.Mutex
	proc *postmaster // nil while stopped
}

// postmaster is one run of the postgres process.
type postmaster struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been waited for
}

// Start runs a new server for this test and stops and removes it at the
// test's cleanup. Without PostgreSQL it skips, or fails where PostgreSQL is
// required (see the package doc).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := start(opts)
	if err != nil {
		fail(t, err)
	}
	t.Cleanup(s.remove)
	return s
}

var shared struct {
	mu     sync.Mutex
	server *Server
	err    error // a failed start is not retried by every later test
}

// Shared returns the test process's one server, started on first use with
// the default Options. It outlives the test: the process stops it with
// StopShared (from TestMain, see the package doc). Tests must not Kill,
// Restart or Stop it; they use their own databases on it (NewDatabase).
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server == nil && shared.err == nil {
		shared.server, shared.err = start(Options{})
	}
	if shared.err != nil {
		fail(t, shared.err)
	}
	return shared.server
}

// StopShared stops and removes the shared server, if Shared started one.
// Should the process end without it, the postmaster dies with the process
// (a parent-death signal), but its directory stays in the temp directory.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.server != nil {
		shared.server.remove()
	}
	shared.server, shared.err = nil, nil
}

// errNotInstalled marks a machine without PostgreSQL (or without the user
// to run it as root): a skip, where PostgreSQL is not required.
var errNotInstalled = errors.New("PostgreSQL is not installed")

// fail skips or fails the test for err.
func fail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errNotInstalled) {
		if required(os.Getenv) {
			t.Fatalf("pgserver: %v, and it is required here (FENNEC_REQUIRE_POSTGRES=1 or CI set; apt-get install postgresql)", err)
		}
		t.Skipf("pgserver: %v; apt-get install postgresql (or set FENNEC_REQUIRE_POSTGRES=1 to fail instead of skipping)", err)
	}
	t.Fatalf("pgserver: %v", err)
}

// required tells whether a missing PostgreSQL fails tests instead of
// skipping them: always in CI, where a skip would pass unnoticed.
func required(getenv func(string) string) bool {
	return getenv("FENNEC_REQUIRE_POSTGRES") == "1" || getenv("CI") != ""
}

// findBinDir finds the directory of initdb and postgres: initdb's on PATH
// (through symlinks, as Debian keeps the real ones under
// /usr/lib/postgresql), else the newest /usr/lib/postgresql/*/bin.
func findBinDir() (string, error) {
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(initdb); err == nil {
			dir := filepath.Dir(real)
			if isExecutable(filepath.Join(dir, "postgres")) {
				return dir, nil
			}
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestVersion := "", -1
	for _, dir := range dirs {
		version, err := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		if err != nil || version <= bestVersion {
			continue
		}
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			best, bestVersion = dir, version
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w (no initdb on PATH nor under /usr/lib/postgresql/*/bin)", errNotInstalled)
	}
	return best, nil
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

// serverCredential is whom to run PostgreSQL as: ourselves, unless we are
// root, which initdb and postgres refuse; then Debian's postgres user.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	account, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%w: running as root, and there is no postgres user to run it as (%v)", errNotInstalled, err)
	}
	uid, err := strconv.ParseUint(account.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres user's uid %q: %w", account.Uid, err)
	}
	gid, err := strconv.ParseUint(account.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("postgres user's gid %q: %w", account.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// start makes a cluster and runs it until it accepts connections.
func start(opts Options) (_ *Server, err error) {
	binDir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	credential, err := serverCredential()
	if err != nil {
		return nil, err
	}
	// Not t.TempDir: its parent is private to root, and the postgres user
	// must reach the cluster; the system temp directory is open to all.
	baseDir, err := os.MkdirTemp("", "fennec-pgserver-")
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:       opts,
		binDir:     binDir,
		baseDir:    baseDir,
		dataDir:    filepath.Join(baseDir, "data"),
		socketDir:  filepath.Join(baseDir, "socket"),
		logPath:    filepath.Join(baseDir, "postgres.log"),
		credential: credential,
	}
	defer func() {
		if err != nil {
			s.remove()
		}
	}()
	if err := os.Mkdir(s.socketDir, 0o700); err != nil {
		return nil, err
	}
	if credential != nil {
		for _, dir := range []string{baseDir, s.socketDir} {
			if err := os.Chown(dir, int(credential.Uid), int(credential.Gid)); err != nil {
				return nil, err
			}
		}
	}
	if err := s.initdb(); err != nil {
		return nil, err
	}
	// A free port may be taken between our probe and the postmaster's
	// bind; another port then does.
	for attempt := 1; ; attempt++ {
		if s.Port, err = freePort(); err != nil {
			return nil, err
		}
		err = s.run()
		if err == nil || !errors.Is(err, errPortTaken) || attempt == 3 {
			return s, err
		}
	}
}

func (s *Server) initdb() error {
	logPath := filepath.Join(s.baseDir, "initdb.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(s.binDir, "initdb"),
		"--pgdata", s.dataDir,
		"--username", Superuser,
		"--auth-host", "trust", // it listens on 127.0.0.1 alone
		"--auth-local", "trust",
		"--encoding", "UTF8",
		"--locale", "C",
		"--no-sync", // a test's cluster need not survive the machine
	)
	s.prepare(cmd, logFile)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, tail(logPath, 0))
	}
	return nil
}

// prepare runs cmd as the server's user, from its directory, with
// PostgreSQL's client and server variables of our environment left out.
func (s *Server) prepare(cmd *exec.Cmd, logFile *os.File) {
	cmd.Dir = s.baseDir // the postgres user may not read our working directory
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.credential}
	env := []string{"LC_ALL=C"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
}

func freePort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port, nil
}

var errPortTaken = errors.New("port taken")

// run starts the postmaster on s.Port and waits until it accepts
// connections.
func (s *Server) run() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return errors.New("already running")
	}
	logStart := int64(0)
	if info, err := os.Stat(s.logPath); err == nil {
		logStart = info.Size()
	}
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	settings := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"port":                    strconv.Itoa(s.Port),
		"unix_socket_directories": s.socketDir,
		"max_connections":         "200", // parallel tests, each with a pool
		"fsync":                   "off",
		"synchronous_commit":      "off",
		"full_page_writes":        "off",
	}
	if s.opts.Durable {
		delete(settings, "fsync")
		delete(settings, "synchronous_commit")
		delete(settings, "full_page_writes")
	}
	args := []string{"-D", s.dataDir}
	for name, value := range settings {
		args = append(args, "-c", name+"="+value)
	}
	cmd := exec.Command(filepath.Join(s.binDir, "postgres"), args...)
	s.prepare(cmd, logFile)
	// Should the test process die without cleaning up (a panic, a
	// timeout), the postmaster dies with it instead of lingering.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	proc := &postmaster{cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the thread that forked the
		// child ends, not the process: hold this thread until it exits.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer logFile.Close()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(proc.exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	if err := s.waitReady(proc); err != nil {
		s.halt(proc, syscall.SIGKILL)
		log := tail(s.logPath, logStart)
		if strings.Contains(log, "Address already in use") {
			err = fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return fmt.Errorf("postgres on port %d: %w\n--- %s ---\n%s", s.Port, err, s.logPath, log)
	}
	s.proc = proc
	return nil
}

// waitReady waits until the server answers a query, or has exited.
func (s *Server) waitReady(proc *postmaster) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := ping(ctx, s.DSN("postgres"))
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-proc.exited:
			return fmt.Errorf("exited before accepting connections (%v)", proc.cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not accepting connections after %v: %v", readyTimeout, err)
		}
	}
}

func ping(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}

// halt sends the postmaster sig and waits for it to exit, killing it if a
// shutdown takes too long.
func (s *Server) halt(proc *postmaster, sig syscall.Signal) {
	_ = proc.cmd.Process.Signal(sig)
	select {
	case <-proc.exited:
	case <-time.After(stopTimeout):
		_ = proc.cmd.Process.Kill()
		<-proc.exited
	}
}

// DSN is the URL of database db on this server, as the superuser.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", Superuser, s.Port, db)
}

// Stop shuts the server down (PostgreSQL's fast shutdown: sessions are
// ended, committed work is kept). Restart starts it again.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.halt(s.proc, syscall.SIGINT)
		s.proc = nil
	}
}

// Kill crashes the server: SIGKILL to the postmaster and, where Linux lists
// them, to its children at once (frozen first, so it forks no more). A
// crash then leaves nothing running, and Restart recovers from the WAL.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	pid := s.proc.cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	_ = syscall.Kill(pid, syscall.SIGKILL)
	var killed []int
	for _, field := range strings.Fields(string(children)) {
		if child, err := strconv.Atoi(field); err == nil && syscall.Kill(child, syscall.SIGKILL) == nil {
			killed = append(killed, child)
		}
	}
	<-s.proc.exited
	s.proc = nil
	// Until they are gone they hold the cluster's shared memory, and a new
	// postmaster would refuse to start.
	deadline := time.Now().Add(10 * time.Second)
	for _, child := range killed {
		for alive(child) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// alive tells whether process pid still runs: a zombie has already
// released what it held.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	after := stat[strings.LastIndexByte(string(stat), ')')+1:]
	fields := strings.Fields(string(after))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// Restart starts the stopped or killed server again, on the same port and
// data directory.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	// A killed server's children may still be exiting and holding its
	// shared memory, which a new postmaster refuses to share: try again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.run()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "is still in use") {
			t.Fatalf("pgserver: restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// remove stops the server and deletes its directory.
func (s *Server) remove() {
	s.Stop()
	_ = os.RemoveAll(s.baseDir)
}

// NewDatabase creates a database of its own for the test and returns its
// DSN; at the test's cleanup the database is dropped, its sessions ended.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := s.createDatabase(t)
	t.Cleanup(func() {
		s.mu.Lock()
		running := s.proc != nil
		s.mu.Unlock()
		if !running { // a test that stops its own server drops it whole
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgserver: drop database %s: %v", name, err)
		}
	})
	return s.DSN(name)
}

// NewLastingDatabase creates a database named after the test, like
// NewDatabase, but leaves it to the server: it outlives the test that made
// it, for data that tests (or a test and its subtests) hand on to one
// another, and goes when the server is removed. Each costs disk until
// then, so it is for the few that need it.
func (s *Server) NewLastingDatabase(t testing.TB) string {
	t.Helper()
	return s.DSN(s.createDatabase(t))
}

// createDatabase creates an empty database with a unique name from the
// test's and returns the name.
func (s *Server) createDatabase(t testing.TB) string {
	t.Helper()
	name := databaseName(t.Name(), s.databases.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgserver: create database %s: %v", name, err)
	}
	return name
}

// exec runs one statement on the maintenance database.
func (s *Server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// databaseName makes a unique, readable database name from a test's name:
// lowercase letters, digits and underscores, within PostgreSQL's 63 bytes.
func databaseName(testName string, number int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "t%d_", number)
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= 63 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// tail is the end of the log file at path, from offset on: what a failed
// start needs to be understood.
func tail(path string, offset int64) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if offset > int64(len(data)) {
		offset = 0
	}
	lines := strings.Split(strings.TrimRight(string(data[offset:]), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
