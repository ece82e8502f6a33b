package mergerequests_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// env is a running stock application with its bus and store.
type env struct {
	*fennectest.Server
	bus *events.Bus
	db  *store.DB
}

func start(t testing.TB, opts ...fennectest.Option) *env {
	t.Helper()
	e := &env{}
	e.Server = stocktest.Start(t, append([]fennectest.Option{fennectest.WithExtract(&e.bus, &e.db)}, opts...)...)
	return e
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mrPath(project, iid int64, rest ...string) string {
	return fmt.Sprintf("/api/v4/projects/%d/merge_requests/%d", project, iid) + strings.Join(rest, "")
}

// git runs the git CLI in dir with a clean environment of its own.
func git(t testing.TB, home, dir string, args ...string) string {
	t.Helper()
	out, err := gitErr(home, dir, args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

func gitErr(home, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_AUTHOR_NAME=T",
		"GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "NO_PROXY=*", "no_proxy=*")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// clone is a working copy of project path (owner/name) as user:token.
type clone struct {
	t    testing.TB
	home string
	dir  string
}

func (e *env) clone(t testing.TB, user, token, path string) *clone {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	u, _ := url.Parse(e.URL)
	remote := "http://" + user + ":" + token + "@" + u.Host + "/" + path + ".git"
	c := &clone{t: t, home: t.TempDir(), dir: filepath.Join(t.TempDir(), "w")}
	git(t, c.home, t.TempDir(), "clone", "-q", remote, c.dir)
	return c
}

func (c *clone) git(args ...string) string { c.t.Helper(); return git(c.t, c.home, c.dir, args...) }

// commit writes files (path -> content) and commits them.
func (c *clone) commit(msg string, files map[string]string) string {
	c.t.Helper()
	for p, content := range files {
		full := filepath.Join(c.dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			c.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.git("add", "-A")
	c.git("commit", "-q", "--allow-empty", "-m", msg)
	return c.git("rev-parse", "HEAD")
}

func projectPath(project int64, rest string) string {
	return fmt.Sprintf("/api/v4/projects/%d%s", project, rest)
}

func q(v string) string { return url.QueryEscape(v) }
