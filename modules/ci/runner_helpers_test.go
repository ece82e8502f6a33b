package ci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// gitlabRunner is the real GitLab Runner 17.5.5 of the workplace
// (shared/tools, beside the repository), or $FENNEC_GITLAB_RUNNER.
func gitlabRunner(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	candidates := []string{os.Getenv("FENNEC_GITLAB_RUNNER")}
	if wd, err := os.Getwd(); err == nil {
		// modules/ci -> the repository -> its parent, where shared/ is.
		candidates = append(candidates, filepath.Join(wd, "..", "..", "..", "shared", "tools", "gitlab-runner"))
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && st.Mode()&0o111 != 0 {
			return c
		}
	}
	t.Skip("the real gitlab-runner is absent (../shared/tools/gitlab-runner or $FENNEC_GITLAB_RUNNER): runner tests skipped")
	return ""
}

// runnerConfig shortens the runner timeouts for tests.
func runnerConfig(fn func(c *ci.Config)) fennectest.Option {
	return fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) {
		c.RunnerPollTimeout = 5 * time.Second
		c.RunnerTraceInterval = time.Second
		if fn != nil {
			fn(c)
		}
	})
}

// startRunners runs the stock app without executor plugins: only runners
// take jobs.
func startRunners(t testing.TB, opts ...fennectest.Option) *fennectest.Server {
	return stocktest.Start(t, append([]fennectest.Option{runnerConfig(nil)}, opts...)...)
}

// rawJSON sends a JSON request and returns the status, headers and body.
func rawJSON(t testing.TB, method, url string, body any, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	code, h, raw, err := sendJSON(method, url, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return code, h, raw
}

// sendJSON is rawJSON that returns its error: for goroutines of a test,
// which must not call t.Fatal.
func sendJSON(method, url string, body any, headers ...string) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw, nil
}

// jobRow is a job's row as the store holds it (fields the API does not
// show: failure_reason, runner_token_hash).
func jobRow(t testing.TB, s *fennectest.Server, id int64) map[string]any {
	t.Helper()
	var row map[string]any
	err := s.Store.View(context.Background(), func(tx *store.Tx) error {
		raw := store.Keys("ci.jobs").Get(tx, store.Key(uint64(id)))
		if raw == nil {
			return fmt.Errorf("no job %d in the store", id)
		}
		return json.Unmarshal(raw, &row)
	})
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// sharedToken is the instance's registration token, as an admin reads it
// (the admin command).
func sharedToken(t testing.TB, s *fennectest.Server) string {
	t.Helper()
	for _, c := range s.App.Commands() {
		if c.Name == "ci-runners-token" {
			var out bytes.Buffer
			if err := c.Run(t.Context(), nil, &out); err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(out.String())
		}
	}
	t.Fatal("no ci-runners-token command")
	return ""
}

// registered is a runner registered through the API.
type registered struct {
	ID    int64  `json:"id"`
	Token string `json:"token"`
}

func registerRunner(t testing.TB, s *fennectest.Server, regToken string, fields map[string]any) registered {
	t.Helper()
	body := map[string]any{"token": regToken, "description": "test runner"}
	for k, v := range fields {
		body[k] = v
	}
	code, _, raw := rawJSON(t, http.MethodPost, s.URL+"/api/v4/runners", body)
	if code != http.StatusCreated {
		t.Fatalf("register: %d %s", code, raw)
	}
	var r registered
	if err := json.Unmarshal(raw, &r); err != nil || r.ID == 0 || r.Token == "" {
		t.Fatalf("register answer %s: %v", raw, err)
	}
	return r
}

// runnerProc is a gitlab-runner process of the test, in a process group
// of its own so that its jobs' shells go with it.
type runnerProc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	once sync.Once
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runnerEnv keeps the user's git configuration out of the runner's jobs.
func runnerEnv() []string {
	return append(gitEnv(), "HOME="+os.TempDir())
}

// startRunSingle runs `gitlab-runner run-single` for a registered runner.
func startRunSingle(t testing.TB, s *fennectest.Server, token string, extra ...string) *runnerProc {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"run-single", "--url", s.URL + "/", "--token", token, "--executor", "shell",
		"--builds-dir", filepath.Join(dir, "builds"), "--cache-dir", filepath.Join(dir, "cache")}, extra...)
	return startRunnerProc(t, dir, args...)
}

func startRunnerProc(t testing.TB, dir string, args ...string) *runnerProc {
	t.Helper()
	cmd := exec.Command(gitlabRunner(t), args...)
	cmd.Dir = dir
	cmd.Env = runnerEnv()
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &runnerProc{cmd: cmd, out: out}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("gitlab-runner %s output:\n%s", args[0], out.String())
		}
	})
	return p
}

// kill ends the runner and everything in its process group.
func (p *runnerProc) kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = p.cmd.Wait()
	})
}

// waitJobStatus polls a job until it reaches one of the statuses.
func waitJobStatus(t testing.TB, s *fennectest.Server, project, job int64, within time.Duration, want ...string) map[string]any {
	t.Helper()
	var last map[string]any
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		code, _, raw := rawJSON(t, http.MethodGet, s.URL+"/api/v4/projects/"+store.IDString(project)+"/jobs/"+store.IDString(job), nil, "PRIVATE-TOKEN", s.RootToken)
		if code != http.StatusOK {
			t.Fatalf("get job: %d %s", code, raw)
		}
		last = map[string]any{}
		_ = json.Unmarshal(raw, &last)
		for _, w := range want {
			if last["status"] == w {
				return last
			}
		}
	}
	t.Fatalf("job %d: %v, want status %v", job, last["status"], want)
	return nil
}

func jsonDecode(resp *http.Response, v any) error { return json.NewDecoder(resp.Body).Decode(v) }

// contextUntil is a context that ends when stop closes.
func contextUntil(stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}
