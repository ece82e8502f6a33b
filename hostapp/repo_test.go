package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRepoGCAndFsck pushes three times with the git CLI, then runs
// `fennec repo gc` and `fennec repo fsck` while the server runs (through
// the admin socket) and after it stopped (offline), checking what they
// leave with C git's own fsck and a fresh clone.
func TestRepoGCAndFsck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data, "FENNEC_ROOT_PASSWORD=password-123")

	resp, err := http.Post(s.url("/api/v4/session"), "application/json", strings.NewReader(`{"login":"root","password":"password-123"}`))
	if err != nil {
		t.Fatal(err)
	}
	var session struct {
		Token string `json:"private_token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&session)
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodPost, s.url("/api/v4/projects?name=gcme"), nil)
	req.Header.Set("PRIVATE-TOKEN", session.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create project: %v %v", err, resp)
	}
	resp.Body.Close()

	home := t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	remote := "http://root:password-123@" + s.addr + "/root/gcme.git"
	work := t.TempDir()
	git(work, "init", "-q", "-b", "master")
	for i, content := range []string{"one\n", "two\n", "three\n"} {
		if err := os.WriteFile(filepath.Join(work, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		git(work, "add", "f.txt")
		git(work, "commit", "-q", "-m", "commit "+content)
		git(work, "push", "-q", remote, "master")
		if i == 1 {
			git(work, "tag", "-a", "v1", "-m", "v1")
			git(work, "push", "-q", remote, "v1")
		}
	}
	head := git(work, "rev-parse", "HEAD")

	fennec := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(binary, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("fennec %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	packs := func() []string {
		m, _ := filepath.Glob(filepath.Join(data, "repositories", "@hashed", "*", "*", "*.git", "objects", "pack", "*.pack"))
		return m
	}
	if n := len(packs()); n < 3 {
		t.Fatalf("%d packs after four pushes, want one per push", n)
	}
	// Online, through the admin socket; by path.
	if out := fennec("repo", "gc", "--data", data, "root/gcme"); !strings.Contains(out, "root/gcme:") || !strings.Contains(out, "in one pack") {
		t.Fatalf("repo gc said %q", out)
	}
	if n := len(packs()); n != 1 {
		t.Fatalf("%d packs after gc, want 1", n)
	}
	if out := fennec("repo", "fsck", "--data", data, "1"); !strings.Contains(out, "0 bad") {
		t.Fatalf("repo fsck said %q", out)
	}
	bare := filepath.Dir(filepath.Dir(filepath.Dir(packs()[0])))
	git(bare, "fsck", "--strict")
	clone := filepath.Join(t.TempDir(), "c")
	git(work, "clone", "-q", remote, clone)
	if got := git(clone, "rev-parse", "HEAD"); got != head {
		t.Fatalf("clone after gc at %s, want %s", got, head)
	}

	// A project that does not exist is an error with a message.
	out, err := exec.Command(binary, "repo", "fsck", "--data", data, "nobody/nothing").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nobody/nothing") {
		t.Fatalf("fsck of a missing project: %v %s", err, out)
	}

	// Offline: the server stopped, the command opens the data itself.
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
	if out := fennec("repo", "fsck", "--data", data, "root/gcme"); !strings.Contains(out, "0 bad") {
		t.Fatalf("offline repo fsck said %q", out)
	}
	if out := fennec("repo", "gc", "--data", data, "1"); !strings.Contains(out, "in one pack") {
		t.Fatalf("offline repo gc said %q", out)
	}
	git(bare, "fsck", "--strict")
}
