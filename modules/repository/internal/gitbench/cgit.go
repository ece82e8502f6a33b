package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// usage is what the -serve-cgi process reports on GET /-/rusage.
type usage struct {
	CPUNanos int64 `json:"cpu_ns"`   // user+sys of the process and its waited children
	MaxRSS   int64 `json:"maxrss_b"` // the larger of its own and its largest child's

	SelfMaxRSS     int64 `json:"self_maxrss_b"`     // the net/http/cgi server's own
	ChildrenMaxRSS int64 `json:"children_maxrss_b"` // the largest git process's
}

// serveCGI is the hidden -serve-cgi mode: `git http-backend` for the
// repositories under root, through net/http/cgi, until SIGTERM. It prints
// "listening ADDR" on standard output once it accepts connections.
func serveCGI(root, addr string) int {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gitbench -serve-cgi:", err)
		return 1
	}
	backend := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + root,
		},
		Stderr: os.Stderr,
	}
	var inflight atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /-/rusage", func(w http.ResponseWriter, r *http.Request) {
		// The client has exited, but a handler may still be waiting for its
		// CGI process: wait for them so their children are accounted.
		deadline := time.Now().Add(2 * time.Minute)
		for inflight.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		if n := inflight.Load(); n > 0 {
			http.Error(w, fmt.Sprintf("%d requests still in flight", n), http.StatusServiceUnavailable)
			return
		}
		var self, children syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		cpu := func(ru *syscall.Rusage) int64 {
			return ru.Utime.Nano() + ru.Stime.Nano()
		}
		json.NewEncoder(w).Encode(usage{
			CPUNanos:       cpu(&self) + cpu(&children),
			MaxRSS:         max(self.Maxrss, children.Maxrss) << 10, // kB on Linux
			SelfMaxRSS:     self.Maxrss << 10,
			ChildrenMaxRSS: children.Maxrss << 10,
		})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		inflight.Add(1)
		defer inflight.Add(-1)
		if r.ContentLength < 0 || len(r.TransferEncoding) > 0 {
			// net/http/cgi refuses chunked bodies (large pushes): spool the
			// body to a file and hand it over with its length.
			f, err := os.CreateTemp("", "gitbench-body-*")
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer os.Remove(f.Name())
			defer f.Close()
			n, err := io.Copy(f, r.Body)
			if err == nil {
				_, err = f.Seek(0, io.SeekStart)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body, r.ContentLength, r.TransferEncoding = f, n, nil
		}
		backend.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gitbench -serve-cgi:", err)
		return 1
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Minute}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	fmt.Printf("listening %s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "gitbench -serve-cgi:", err)
		return 1
	}
	return 0
}

// cgitServer is C git: a fresh -serve-cgi process per measured run, over a
// copy of the reference repository.
type cgitServer struct {
	b     *bench
	root  string // GIT_PROJECT_ROOT
	repo  string // root/reference.git
	log   *os.File
	cmd   *exec.Cmd
	base  string // http://127.0.0.1:port
	proto string
	push  *sample
}

func (s *cgitServer) key() string  { return "git" }
func (s *cgitServer) name() string { return "C git" }

func (s *cgitServer) setup() error {
	b := s.b
	s.root = filepath.Join(b.work, "git-root")
	s.repo = filepath.Join(s.root, "reference.git")
	var err error
	if s.log, err = os.Create(filepath.Join(b.work, "cgit.log")); err != nil {
		return err
	}
	if _, err := b.cl.git("", "clone", "--bare", "-q", b.ref, s.repo); err != nil {
		return err
	}
	if _, err := b.cl.git(s.repo, "config", "http.receivepack", "true"); err != nil {
		return err
	}
	if _, err := b.cl.git(s.repo, "remote", "remove", "origin"); err != nil {
		return err
	}

	// The protocol the server speaks to a client asking for v2.
	if err := s.start(); err != nil {
		return err
	}
	s.proto, err = probeProtocol(s.base+"/reference.git", "", "")
	if err := errors.Join(err, s.stop()); err != nil {
		return err
	}

	// The initial push of the whole repository, into an empty one.
	initial := filepath.Join(s.root, "initial.git")
	if _, err := b.cl.git("", "init", "--bare", "-q", initial); err != nil {
		return err
	}
	if _, err := b.cl.git(initial, "config", "http.receivepack", "true"); err != nil {
		return err
	}
	b.logf("C git: initial push of the whole repository")
	if err := s.start(); err != nil {
		return err
	}
	url := s.base + "/initial.git"
	t0 := time.Now()
	_, err = b.cl.git(b.source, "push", "-q", "--mirror", url)
	wall := time.Since(t0)
	if err == nil {
		var cpu time.Duration
		var rss int64
		if cpu, rss, err = s.end(); err == nil {
			s.push = &sample{wall: wall, cpu: cpu, rss: rss}
			err = b.checkMirror(url)
		}
	}
	if err := errors.Join(err, s.stop()); err != nil {
		return fmt.Errorf("initial push: %w", err)
	}
	return os.RemoveAll(initial)
}

func (s *cgitServer) start() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.b.work, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(self, "-serve-cgi", s.root, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stderr = s.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("C git server did not start (%q, %v); see %s", line, err, s.log.Name())
	}
	s.cmd, s.base = cmd, "http://"+addr
	return nil
}

func (s *cgitServer) stop() error {
	if s.cmd == nil {
		return nil
	}
	cmd := s.cmd
	s.cmd = nil
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("C git server: %v; see %s", err, s.log.Name())
		}
		return nil
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("C git server did not stop within a minute")
	}
}

// fresh: every run gets a fresh process anyway.
func (s *cgitServer) fresh() error { return nil }

func (s *cgitServer) begin() (string, error) {
	if err := s.start(); err != nil {
		return "", err
	}
	return s.base + "/reference.git", nil
}

func (s *cgitServer) end() (time.Duration, int64, error) {
	resp, err := http.Get(s.base + "/-/rusage")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("C git server rusage: %s: %s", resp.Status, raw)
	}
	var u usage
	if err := json.Unmarshal(raw, &u); err != nil {
		return 0, 0, fmt.Errorf("C git server rusage: %v", err)
	}
	return time.Duration(u.CPUNanos), u.MaxRSS, nil
}

func (s *cgitServer) finish() error { return s.stop() }

func (s *cgitServer) repoDir() string { return s.repo }

func (s *cgitServer) notes() []string {
	return []string{fmt.Sprintf("C git: %s, git http-backend through net/http/cgi, a fresh server process per run; fetch protocol spoken: %s", gitVersion(), s.proto)}
}

func (s *cgitServer) initialPush() *sample { return s.push }

func (s *cgitServer) close() {
	s.stop()
	if s.log != nil {
		s.log.Close()
	}
}

// probeProtocol asks url's upload-pack advertisement for protocol v2, as
// git 2.39 does, and tells what the server answered.
func probeProtocol(url, user, pass string) (string, error) {
	req, err := http.NewRequest(http.MethodGet, url+"/info/refs?service=git-upload-pack", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Git-Protocol", "version=2")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s/info/refs: %s: %.200s", redact(url), resp.Status, head)
	}
	if strings.Contains(string(head), "version 2") {
		return "v2", nil
	}
	return "v0", nil
}

func gitVersion() string {
	out, err := exec.Command("git", "version").Output()
	if err != nil {
		return "git (version unknown)"
	}
	return strings.TrimSpace(string(out))
}
