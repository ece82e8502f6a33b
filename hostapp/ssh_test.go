package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// TestGitOverSSH runs the real binary with --ssh-listen: a key added
// through the API pushes and clones with the OpenSSH client and the git
// CLI, and after a restart on the same data the client, now checking the
// host key strictly against what it learned on the first run, still
// connects.
func TestGitOverSSH(t *testing.T) {
	for _, tool := range []string{"git", "ssh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not installed")
		}
	}
	t.Parallel()
	data := t.TempDir()
	const password = "password-123"
	start := func() (*server, string) {
		s := startServerArgs(t, data, []string{"--ssh-listen", "127.0.0.1:0"}, "FENNEC_ROOT_PASSWORD="+password)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if m := s.logs.find("serving git over ssh"); m != nil {
				addr := m["addr"].(string)
				return s, addr[strings.LastIndexByte(addr, ':')+1:]
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no SSH server in the log:\n%s", s.logs.text())
		return nil, ""
	}
	s, port := start()
	token := sshTestLogin(t, s, password)

	// A key, added through the API.
	home := t.TempDir()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(home, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	signer, _ := ssh.NewSignerFromKey(priv)
	sshTestAPI(t, s, token, http.MethodPost, "/api/v4/user/keys?title=laptop&key="+
		url.QueryEscape(strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))), http.StatusCreated, nil)
	var project struct {
		SSHURL string `json:"ssh_url_to_repo"`
	}
	sshTestAPI(t, s, token, http.MethodPost, "/api/v4/projects?name=viassh", http.StatusCreated, &project)
	if want := "ssh://git@127.0.0.1:" + port + "/root/viassh.git"; project.SSHURL != want {
		t.Fatalf("ssh_url_to_repo %q, want %q", project.SSHURL, want)
	}

	knownHosts := filepath.Join(home, "known_hosts")
	git := func(dir, strict string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_SSH_COMMAND=ssh -F /dev/null -i "+keyFile+" -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes"+
				" -o StrictHostKeyChecking="+strict+" -o UserKnownHostsFile="+knownHosts+" -o GlobalKnownHostsFile=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	work := t.TempDir()
	git(work, "no", "init", "-q", "-b", "master")
	if err := os.WriteFile(filepath.Join(work, "f.txt"), []byte("over ssh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(work, "no", "add", "f.txt")
	git(work, "no", "commit", "-q", "-m", "first")
	head := git(work, "no", "rev-parse", "HEAD")
	// The first contact learns the host key.
	git(work, "accept-new", "push", "-q", project.SSHURL, "master")

	// A graceful restart on the same data: a new port, the same host keys.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	learned, err := os.ReadFile(knownHosts)
	if err != nil {
		t.Fatal(err)
	}
	s, newPort := start()
	rewritten := strings.ReplaceAll(string(learned), "[127.0.0.1]:"+port+" ", "[127.0.0.1]:"+newPort+" ")
	if err := os.WriteFile(knownHosts, []byte(rewritten), 0o600); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "c")
	git(home, "yes", "clone", "-q", "ssh://git@127.0.0.1:"+newPort+"/root/viassh.git", clone)
	if got := git(clone, "yes", "rev-parse", "HEAD"); got != head {
		t.Errorf("cloned HEAD %s, want %s", got, head)
	}
	git(clone, "yes", "fsck", "--strict", "--no-dangling")
	// The served repository passes fennec's own fsck too (C git's fsck
	// --strict on the bare repository).
	if out, err := exec.Command(binary, "repo", "fsck", "--data", data, "root/viassh").CombinedOutput(); err != nil {
		t.Errorf("fennec repo fsck: %v\n%s", err, out)
	}
	// A backup holds the host keys, and a restore puts them back for the
	// server account alone: clients of a restored server see the same key.
	archive := filepath.Join(t.TempDir(), "b.tar")
	if out, err := exec.Command(binary, "backup", "--data", data, archive).CombinedOutput(); err != nil || !strings.Contains(string(out), "2 ssh_host_keys") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if out, err := exec.Command(binary, "restore", "--data", restored, archive).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	for _, name := range []string{"ssh_host_ed25519_key", "ssh_host_rsa_key"} {
		want, _ := os.ReadFile(filepath.Join(data, "ssh", name))
		got, err := os.ReadFile(filepath.Join(restored, "ssh", name))
		fi, statErr := os.Stat(filepath.Join(restored, "ssh", name))
		if err != nil || statErr != nil || len(want) == 0 || string(got) != string(want) || fi.Mode().Perm() != 0o600 {
			t.Fatalf("restored host key %s: %v %v, mode %v", name, err, statErr, fi)
		}
	}
}

func sshTestLogin(t *testing.T, s *server, password string) string {
	t.Helper()
	var session struct {
		Token string `json:"private_token"`
	}
	resp, err := http.Post(s.url("/api/v4/session"), "application/json", strings.NewReader(`{"login":"root","password":"`+password+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&session)
	return session.Token
}

func sshTestAPI(t *testing.T, s *server, token, method, path string, want int, out any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.url(path), nil)
	req.Header.Set("PRIVATE-TOKEN", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}
