package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const rootPassword = "gitbench-Root-Password-1"

// fennecServer is the real fennec binary, one process kept up across the
// warm runs of a scenario and restarted before its cold run.
type fennecServer struct {
	b       *bench
	bin     string
	data    string
	logPath string
	log     *os.File
	addr    string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error

	token   string
	id      int64
	path    string // root/reference
	repo    string // the project's repository on disk
	gitURL  string // with credentials
	proto   string
	gcNote  string
	gcErr   error
	loadVia string
	push    *sample
	cpu0    time.Duration
}

func (s *fennecServer) key() string  { return "fennec" }
func (s *fennecServer) name() string { return "Fennec" }

func (s *fennecServer) setup() error {
	b := s.b
	s.data = filepath.Join(b.work, "fennec-data")
	s.logPath = filepath.Join(b.work, "fennec.log")
	var err error
	if s.log, err = os.Create(s.logPath); err != nil {
		return err
	}
	if s.bin == "" {
		if s.bin, err = buildFennec(b.work); err != nil {
			return err
		}
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.addr = fmt.Sprintf("127.0.0.1:%d", port)
	if err := s.start(); err != nil {
		return err
	}

	var session struct {
		PrivateToken string `json:"private_token"`
	}
	if err := s.api(http.MethodPost, "/api/v4/session", map[string]string{"login": "root", "password": rootPassword}, &session); err != nil {
		return fmt.Errorf("sign in: %w", err)
	}
	if session.PrivateToken == "" {
		return errors.New("sign in: no private_token in the answer")
	}
	s.token = session.PrivateToken
	var project struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
	}
	if err := s.api(http.MethodPost, "/api/v4/projects", map[string]string{"name": "reference", "path": "reference"}, &project); err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	s.id, s.path = project.ID, project.PathWithNamespace
	sum := sha256.Sum256([]byte(strconv.FormatInt(s.id, 10)))
	h := hex.EncodeToString(sum[:])
	s.repo = filepath.Join(s.data, "repositories", "@hashed", h[:2], h[2:4], h+".git")
	u := url.URL{Scheme: "http", User: url.UserPassword("root", s.token), Host: s.addr, Path: "/" + s.path + ".git"}
	s.gitURL = u.String()

	switch b.load {
	case "push":
		s.loadVia = "git push --mirror over HTTP"
		b.logf("Fennec: initial push of the whole repository")
		if err := s.beginMeasure(); err != nil {
			return err
		}
		t0 := time.Now()
		_, err := b.cl.git(b.source, "push", "-q", "--mirror", s.gitURL)
		wall := time.Since(t0)
		if err != nil {
			return fmt.Errorf("initial push: %w", err)
		}
		cpu, rss, err := s.end()
		if err != nil {
			return err
		}
		s.push = &sample{wall: wall, cpu: cpu, rss: rss}
		if err := b.checkMirror(s.gitURL); err != nil {
			return fmt.Errorf("initial push: %w", err)
		}
	case "copy":
		s.loadVia = "copying the reference's files into " + s.repo
		if err := s.stop(); err != nil {
			return err
		}
		if err := os.RemoveAll(s.repo); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(s.repo), 0o750); err != nil {
			return err
		}
		if err := copyTree(b.ref, s.repo); err != nil {
			return err
		}
		os.Remove(filepath.Join(s.repo, "fennec-ready"))
		if err := s.start(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("-load %q: want push or copy", b.load)
	}

	s.gc()

	if err := s.fresh(); err != nil {
		return err
	}
	if s.proto, err = probeProtocol("http://"+s.addr+"/"+s.path+".git", "root", s.token); err != nil {
		return err
	}
	return nil
}

// gc runs `fennec repo gc` on the project, the server stopped, when the
// binary has that command.
func (s *fennecServer) gc() {
	help, _ := exec.Command(s.bin, "help").CombinedOutput()
	if !bytes.Contains(help, []byte("repo gc")) {
		s.gcNote = "not run: this fennec has no `repo gc` command"
		return
	}
	if err := s.stop(); err != nil {
		s.gcErr = err
		return
	}
	defer func() {
		if err := s.start(); err != nil {
			s.gcErr = errors.Join(s.gcErr, err)
		}
	}()
	var fails []string
	for _, project := range []string{s.path, strconv.FormatInt(s.id, 10)} {
		t0 := time.Now()
		out, err := exec.Command(s.bin, "repo", "gc", "--data", s.data, project).CombinedOutput()
		if err == nil {
			s.gcNote = fmt.Sprintf("`fennec repo gc --data DIR %s` ran in %.1fs", project, time.Since(t0).Seconds())
			if msg := strings.TrimSpace(string(out)); msg != "" {
				s.gcNote += ": " + firstLine(msg)
			}
			return
		}
		fails = append(fails, fmt.Sprintf("fennec repo gc %s: %v: %s", project, err, strings.TrimSpace(string(out))))
	}
	s.gcNote = "FAILED"
	s.gcErr = errors.New(strings.Join(fails, "; "))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// buildFennec builds ./hostapp of the module gitbench runs in.
func buildFennec(work string) (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", errors.New("cannot find the fennec module to build ./hostapp: run from the repository or pass -fennec")
	}
	bin := filepath.Join(work, "fennec")
	cmd := exec.Command("go", "build", "-o", bin, "./hostapp")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./hostapp: %v\n%s", err, out)
	}
	return bin, nil
}

func (s *fennecServer) start() error {
	cmd := exec.Command(s.bin, "serve", "--listen", s.addr, "--data", s.data, "--log-level", "warn", "--log-format", "json")
	cmd.Env = append(os.Environ(), "FENNEC_ROOT_PASSWORD="+rootPassword)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			s.cmd = nil
			return fmt.Errorf("fennec exited at start: %v; see %s", s.waitErr, s.logPath)
		default:
		}
		resp, err := http.Get("http://" + s.addr + "/-/readiness")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
	return fmt.Errorf("fennec not ready within 2 minutes; see %s", s.logPath)
}

func (s *fennecServer) stop() error {
	if s.cmd == nil {
		return nil
	}
	cmd := s.cmd
	s.cmd = nil
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("fennec did not stop within a minute of SIGTERM")
	}
	if s.waitErr != nil {
		return fmt.Errorf("fennec: %v; see %s", s.waitErr, s.logPath)
	}
	return nil
}

func (s *fennecServer) alive() error {
	if s.cmd == nil {
		return errors.New("fennec is not running")
	}
	select {
	case <-s.exited:
		s.cmd = nil
		return fmt.Errorf("fennec exited: %v; see %s", s.waitErr, s.logPath)
	default:
		return nil
	}
}

// api calls the REST API as root (once signed in) with a JSON body.
func (s *fennecServer) api(method, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, "http://"+s.addr+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("PRIVATE-TOKEN", s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %.300s", method, path, resp.Status, raw)
	}
	return json.Unmarshal(raw, out)
}

// fresh restarts the server: the next run is a cold one.
func (s *fennecServer) fresh() error {
	if err := s.stop(); err != nil {
		return err
	}
	return s.start()
}

func (s *fennecServer) beginMeasure() error {
	if err := s.alive(); err != nil {
		return err
	}
	pid := s.cmd.Process.Pid
	cpu, err := procCPU(pid)
	if err != nil {
		return err
	}
	s.cpu0 = cpu
	return resetHWM(pid)
}

func (s *fennecServer) begin() (string, error) {
	return s.gitURL, s.beginMeasure()
}

func (s *fennecServer) end() (time.Duration, int64, error) {
	// Let work the server finishes after the response (events, hooks)
	// land in the figures.
	time.Sleep(300 * time.Millisecond)
	if err := s.alive(); err != nil {
		return 0, 0, err
	}
	pid := s.cmd.Process.Pid
	cpu, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	rss, err := procHWM(pid)
	if err != nil {
		return 0, 0, err
	}
	return cpu - s.cpu0, rss, nil
}

func (s *fennecServer) finish() error { return s.alive() }

func (s *fennecServer) repoDir() string { return s.repo }

func (s *fennecServer) notes() []string {
	return []string{
		fmt.Sprintf("Fennec: %s, project %s (id %d), loaded by %s; one process per scenario, restarted before its cold run; fetch protocol spoken: %s", s.bin, s.path, s.id, s.loadVia, s.proto),
		"Fennec repo gc: " + s.gcNote,
	}
}

func (s *fennecServer) initialPush() *sample { return s.push }

func (s *fennecServer) close() {
	s.stop()
	if s.log != nil {
		s.log.Close()
	}
}
