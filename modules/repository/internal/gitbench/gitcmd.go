package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// gitClient runs the git CLI as the benchmark's client: a temporary HOME
// with a fixed configuration, no system configuration, no prompts, and no
// GIT_* variables inherited from the caller.
type gitClient struct {
	env     []string
	timeout time.Duration
}

func newGitClient(home string, timeout time.Duration) (*gitClient, error) {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	// Automatic gc/maintenance after a fetch would add client work unrelated
	// to the server; the identity is for fast-import-free commands.
	cfg := "[user]\n\tname = gitbench\n\temail = gitbench@example.com\n" +
		"[init]\n\tdefaultBranch = master\n" +
		"[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n" +
		"[advice]\n\tdetachedHead = false\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GIT_") || name == "HOME" || name == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	return &gitClient{env: env, timeout: timeout}, nil
}

// run runs git in dir (the current directory when empty) with stdin, and
// returns its standard output; an error carries standard error.
func (c *gitClient) run(dir string, stdin io.Reader, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = c.env
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return stdout.String(), fmt.Errorf("git %s: %v: %s", redact(strings.Join(args, " ")), err, msg)
	}
	return stdout.String(), nil
}

func (c *gitClient) git(dir string, args ...string) (string, error) {
	return c.run(dir, nil, args...)
}

// redact hides the password of URLs in a command line.
func redact(s string) string {
	for _, scheme := range []string{"http://", "https://"} {
		i := 0
		for {
			j := strings.Index(s[i:], scheme)
			if j < 0 {
				break
			}
			start := i + j + len(scheme)
			end := start + strings.IndexAny(s[start:]+" ", " /")
			if at := strings.LastIndex(s[start:end], "@"); at >= 0 {
				if colon := strings.Index(s[start:start+at], ":"); colon >= 0 {
					s = s[:start+colon+1] + "xxx" + s[start+at:]
				}
			}
			i = start
		}
	}
	return s
}

// refs is a ref name to object id map.
type refs map[string]string

// localRefs lists the refs under prefix of the repository at dir.
func (c *gitClient) localRefs(dir, prefix string) (refs, error) {
	out, err := c.git(dir, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	m := refs{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok {
			m[name] = id
		}
	}
	return m, nil
}

// remoteRefs lists the branches and tags a server advertises, and the
// branch its HEAD names.
func (c *gitClient) remoteRefs(url string) (refs, string, error) {
	out, err := c.git("", "ls-remote", "--symref", url)
	if err != nil {
		return nil, "", err
	}
	m := refs{}
	head := ""
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		left, name, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if target, isSym := strings.CutPrefix(left, "ref: "); isSym {
			if name == "HEAD" {
				head = target
			}
			continue
		}
		if strings.HasSuffix(name, "^{}") || !(strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/tags/")) {
			continue
		}
		m[name] = left
	}
	return m, head, nil
}

// diff describes how got differs from want ("" when equal).
func (want refs) diff(got refs) string {
	var lines []string
	for name, id := range want {
		if g, ok := got[name]; !ok {
			lines = append(lines, "missing "+name)
		} else if g != id {
			lines = append(lines, fmt.Sprintf("%s is %s, the server has %s", name, g, id))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			lines = append(lines, "extra "+name)
		}
	}
	sort.Strings(lines)
	if len(lines) > 5 {
		lines = append(lines[:5], fmt.Sprintf("... and %d more", len(lines)-5))
	}
	return strings.Join(lines, "; ")
}

// fsck checks a repository's objects and connectivity.
func (c *gitClient) fsck(dir string) error {
	_, err := c.git(dir, "fsck", "--no-progress", "--no-dangling")
	return err
}
