package ci_test

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/sdk/executor"
)

// startWith runs the stock app with the real shell executor plugin and
// further options.
func startWith(t testing.TB, opts ...fennectest.Option) *fennectest.Server {
	dir := shellExecutor(t)
	all := append([]fennectest.Option{fennectest.WithConfig(func(c *config.Config) { c.PluginDir = dir })}, opts...)
	return stocktest.Start(t, all...)
}

// withShell configures the shell executor explicitly (instead of the
// plugin directory's default) with these settings, e.g. a concurrency.
func withShell(settings map[string]any) fennectest.Option {
	return fennectest.WithConfig(func(c *config.Config) {
		c.Plugins = append(c.Plugins, config.Plugin{Name: "shell", Kind: executor.Kind.Name, Path: "executor-shell", Settings: settings})
	})
}

// withReapInterval shortens the expired-artifacts pass from its
// production minute.
func withReapInterval(d time.Duration) fennectest.Option {
	return fennectest.WithModules(fennec.NewModule("ci-test-reaper",
		fennec.Invoke(func(s *internal.Service) { s.SetReapInterval(d) })))
}

// waitJob polls a job until it reaches one of the statuses.
func waitJob(t testing.TB, c *gitlab.Client, project, job int64, want ...string) *gitlab.Job {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		j, _, err := c.Jobs.GetJob(project, job)
		if err != nil {
			t.Fatal(err)
		}
		last = j.Status
		for _, w := range want {
			if j.Status == w {
				return j
			}
		}
	}
	t.Fatalf("job %d: status %q, want one of %v", job, last, want)
	return nil
}

// waitTrace polls a job's trace until it contains text.
func waitTrace(t testing.TB, c *gitlab.Client, project, job int64, text string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r, resp, err := c.Jobs.GetTraceFile(project, job)
		if err == nil {
			b, _ := io.ReadAll(r)
			if strings.Contains(string(b), text) {
				return
			}
		}
		if err != nil && (resp == nil || resp.StatusCode != 404) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace of job %d never showed %q", job, text)
		}
	}
}

// waitRefPipeline waits for the newest pipeline of ref to reach one of the
// statuses (a branch and a tag at the same commit share its sha).
func waitRefPipeline(t testing.TB, c *gitlab.Client, project int64, ref string, want ...string) *gitlab.Pipeline {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{Ref: gitlab.Ptr(ref)})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 0 {
			continue
		}
		p, _, err := c.Pipelines.GetPipeline(project, list[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		last = p.Status
		for _, w := range want {
			if p.Status == w {
				return p
			}
		}
	}
	t.Fatalf("pipeline of %s: status %q, want one of %v", ref, last, want)
	return nil
}

// gitWork is a local repository pushed to a project over HTTP with the
// real git CLI.
type gitWork struct {
	dir    string
	remote string
}

// gitEnv keeps the user's and the system's git configuration out.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Tester", "GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=Tester", "GIT_COMMITTER_EMAIL=tester@example.com")
}

// runGit runs git in dir and returns its output; a failure fails the test.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := tryGit(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func tryGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// projectGitURL is the project's HTTP git URL with credentials.
func projectGitURL(s *fennectest.Server, p *gitlab.Project, user, secret string) string {
	u, err := url.Parse(s.URL)
	if err != nil {
		panic(err)
	}
	u.User = url.UserPassword(user, secret)
	u.Path = "/" + p.PathWithNamespace + ".git"
	return u.String()
}

// newGitWork starts an empty local repository on master that pushes to p
// as root.
func newGitWork(t testing.TB, s *fennectest.Server, p *gitlab.Project) *gitWork {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "work")
	runGit(t, "", "init", "-q", "-b", "master", dir)
	return &gitWork{dir: dir, remote: projectGitURL(s, p, "root", s.RootToken)}
}

// commit writes files and commits them; it returns the new sha.
func (g *gitWork) commit(t testing.TB, msg string, files map[string]string) string {
	t.Helper()
	for path, content := range files {
		full := filepath.Join(g.dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, g.dir, "add", "-A")
	runGit(t, g.dir, "commit", "-q", "-m", msg)
	return strings.TrimSpace(runGit(t, g.dir, "rev-parse", "HEAD"))
}

// push pushes refspecs to the project.
func (g *gitWork) push(t testing.TB, refspecs ...string) {
	t.Helper()
	runGit(t, g.dir, append([]string{"push", "-q", g.remote}, refspecs...)...)
}

// executorPIDs are the processes running the test's shell executor binary.
func executorPIDs(t testing.TB) []int {
	t.Helper()
	want := filepath.Join(shellExecutor(t), "executor-shell")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err == nil && exe == want {
			out = append(out, pid)
		}
	}
	return out
}

// processesMatching are the pids whose command line contains text.
func processesMatching(text string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(strings.ReplaceAll(string(raw), "\x00", " "), text) {
			out = append(out, pid)
		}
	}
	return out
}

// waitProcess waits up to d for a process whose command line contains
// text, and says whether one was seen.
func waitProcess(text string, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if len(processesMatching(text)) > 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// waitGone waits up to d for no process's command line to contain text.
func waitGone(t testing.TB, text string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		left := processesMatching(text)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes running %q still alive: %v", text, left)
			return
		}
	}
}

// statusKB reads a field in KiB (VmRSS:, VmHWM:) of /proc/<proc>/status.
func statusKB(proc, field string) int64 {
	raw, err := os.ReadFile("/proc/" + proc + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// openGate lets the jobs waiting for dir/name go on: the file is written
// aside and renamed, so a job polling for it never reads it half made.
func openGate(t testing.TB, dir, name string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}
