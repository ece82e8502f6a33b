package repository_test

// Git over SSH with the real OpenSSH client driving the real git CLI
// (GIT_SSH_COMMAND), with keys added through the API.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
)

// sshServer is a running Fennec with its SSH server on.
type sshServer struct {
	*gitServer
	srv        repository.SSHServer
	port       string
	knownHosts string // a known_hosts file holding the server's host keys
}

// withSSH turns the SSH server on at a free port.
func withSSH(fn ...func(*repository.Config)) fennectest.Option {
	return fennectest.WithModuleConfig[repository.Config](repository.SectionName, func(c *repository.Config) {
		c.SSHListen = "127.0.0.1:0"
		for _, f := range fn {
			f(c)
		}
	})
}

func startSSH(t *testing.T, opts ...fennectest.Option) *sshServer {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("OpenSSH client (ssh) not installed")
	}
	s := &sshServer{}
	s.gitServer = startGit(t, append([]fennectest.Option{withSSH(), fennectest.WithExtract(&s.srv)}, opts...)...)
	_, port, err := splitHostPort(s.srv.Addr())
	if err != nil {
		t.Fatalf("ssh server address %q: %v", s.srv.Addr(), err)
	}
	s.port = port
	s.knownHosts = filepath.Join(t.TempDir(), "known_hosts")
	writeKnownHosts(t, s.knownHosts, port, s.srv.HostKeys())
	return s
}

func splitHostPort(addr string) (string, string, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", "", os.ErrInvalid
	}
	return addr[:i], addr[i+1:], nil
}

func writeKnownHosts(t *testing.T, file, port string, keys []ssh.PublicKey) {
	t.Helper()
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("[127.0.0.1]:" + port + " " + string(ssh.MarshalAuthorizedKey(k)))
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// sshKey is a key pair on disk for the ssh client.
type sshKey struct {
	file string // the private key
	line string // the authorized_keys line
	pem  []byte // the private key's file content
}

var keyCount atomic.Int64

func newSSHKey(t testing.TB) sshKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sp, _ := ssh.NewPublicKey(pub)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sp))) + " test-" + strconv.FormatInt(keyCount.Add(1), 10)
	return sshKey{file: file, line: line, pem: pem.EncodeToMemory(block)}
}

// addKey registers key for the client's user through the API.
func addKey(t *testing.T, c *gitlab.Client, key sshKey) *gitlab.SSHKey {
	t.Helper()
	k, _, err := c.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("key"), Key: gitlab.Ptr(key.line)})
	if err != nil {
		t.Fatalf("add SSH key: %v", err)
	}
	return k
}

// sshArgs is the ssh command line (without the destination) for key.
func (s *sshServer) sshArgs(key sshKey, strict string) []string {
	return []string{"ssh", "-F", "/dev/null", "-i", key.file, "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
		"-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=" + strict, "-o", "UserKnownHostsFile=" + s.knownHosts,
		"-o", "GlobalKnownHostsFile=/dev/null", "-o", "LogLevel=INFO", "-o", "ConnectTimeout=20", "-p", s.port}
}

// gitWith is a git CLI whose ssh is the OpenSSH client with key, checking
// the host key against the server's.
func (s *sshServer) gitWith(t *testing.T, key sshKey) *gitCLI {
	c := newGitCLI(t)
	c.env = append(c.env, "GIT_SSH_COMMAND="+strings.Join(s.sshArgs(key, "yes"), " "))
	return c
}

// sshRun runs the ssh client itself with a command (or none), returning
// stdout, stderr and the exit status.
func (s *sshServer) sshRun(t *testing.T, key sshKey, extra []string, command ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append(s.sshArgs(key, "yes")[1:], extra...)
	args = append(args, "git@127.0.0.1")
	args = append(args, command...)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.Stdin = strings.NewReader("")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	return o.String(), e.String(), status
}

// sshURL is the project's ssh_url_to_repo, as the API renders it.
func (s *sshServer) sshURL(t *testing.T, p *gitlab.Project) string {
	t.Helper()
	got, _, err := s.Client.Projects.GetProject(p.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "ssh://git@127.0.0.1:" + s.port + "/" + p.PathWithNamespace + ".git"
	if got.SSHURLToRepo != want {
		t.Fatalf("ssh_url_to_repo %q, want %q", got.SSHURLToRepo, want)
	}
	return got.SSHURLToRepo
}

const msgNoProject = "The project you were looking for could not be found or you don't have permission to view it."

func TestGitSSH(t *testing.T) {
	t.Parallel()
	s := startSSH(t)
	p := s.project(t, "viassh", gitlab.PrivateVisibility)
	work := s.cli.newWork(t)
	s.cli.commit(t, work, "first", map[string]string{"README.md": "hello\n"})
	head := s.cli.fastImport(t, work, "master", 29, "hist") // 30 commits
	s.cli.ok(t, work, "tag", "-a", "v1", "-m", "one", "HEAD~3")
	s.seed(t, p, work)
	bare := s.bare(p)
	url := s.sshURL(t, p)

	rootKey := newSSHKey(t)
	addKey(t, s.Client, rootKey)
	root := s.gitWith(t, rootKey)

	dev := s.CreateUser(t, "")
	devKey := newSSHKey(t)
	addKey(t, dev.Client, devKey)
	s.addMember(t, p, dev, gitlab.DeveloperPermissions)
	devGit := s.gitWith(t, devKey)

	t.Run("clone", func(t *testing.T) {
		for _, version := range []string{"0", "1", "2"} {
			dst := filepath.Join(t.TempDir(), "c")
			root.ok(t, t.TempDir(), "-c", "protocol.version="+version, "clone", "-q", url, dst)
			if got := root.ok(t, dst, "rev-parse", "HEAD"); got != head {
				t.Errorf("v%s: HEAD %s, want %s", version, got, head)
			}
			if got := root.ok(t, dst, "rev-list", "--count", "--all"); got != "30" {
				t.Errorf("v%s: %s commits, want 30", version, got)
			}
			if got := root.ok(t, dst, "cat-file", "-t", "v1"); got != "tag" {
				t.Errorf("v%s: v1 is a %s", version, got)
			}
			root.ok(t, dst, "fsck", "--strict", "--no-dangling")
		}
		// Protocol v2 is what the server spoke when asked (GIT_PROTOCOL
		// passed by ssh's SendEnv, which git sets).
		traced := s.gitWith(t, rootKey)
		traced.env = append(traced.env, "GIT_TRACE_PACKET=1")
		if _, e := traced.okErr(t, t.TempDir(), "-c", "protocol.version=2", "ls-remote", url); !strings.Contains(e, "< version 2") {
			t.Errorf("no protocol v2 in the packet trace:\n%s", clip([]byte(e)))
		}
		fsck(t, bare)
	})

	t.Run("shallow clone and fetch", func(t *testing.T) {
		for _, version := range []string{"0", "2"} {
			dst := filepath.Join(t.TempDir(), "c")
			devGit.ok(t, t.TempDir(), "-c", "protocol.version="+version, "clone", "-q", "--depth", "1", url, dst)
			if got := devGit.ok(t, dst, "rev-list", "--count", "HEAD"); got != "1" {
				t.Errorf("v%s: a --depth 1 clone has %s commits", version, got)
			}
			devGit.ok(t, dst, "-c", "protocol.version="+version, "fetch", "-q", "--deepen", "5")
			if got := devGit.ok(t, dst, "rev-list", "--count", "HEAD"); got != "6" {
				t.Errorf("v%s: after --deepen 5, %s commits", version, got)
			}
			devGit.ok(t, dst, "-c", "protocol.version="+version, "fetch", "-q", "--unshallow")
			if got := devGit.ok(t, dst, "rev-list", "--count", "HEAD"); got != "30" {
				t.Errorf("v%s: after --unshallow, %s commits", version, got)
			}
		}
		fsck(t, bare)
	})

	t.Run("push branches and tags, fetch them", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "c")
		devGit.ok(t, t.TempDir(), "clone", "-q", url, dst)
		tip := devGit.commit(t, dst, "over ssh", map[string]string{"ssh.txt": "pushed over ssh\n"})
		devGit.ok(t, dst, "push", "-q", "origin", "master")
		devGit.ok(t, dst, "tag", "-a", "v2", "-m", "two")
		devGit.ok(t, dst, "checkout", "-q", "-b", "feature")
		feature := devGit.commit(t, dst, "feature", map[string]string{"f.txt": "f\n"})
		devGit.ok(t, dst, "push", "-q", "origin", "feature", "v2")
		if got := refOf(t, bare, "refs/heads/master"); got != tip {
			t.Errorf("master %s, want %s", got, tip)
		}
		if got := refOf(t, bare, "refs/heads/feature"); got != feature {
			t.Errorf("feature %s, want %s", got, feature)
		}
		if got := bareGit(t, bare, "cat-file", "-t", "refs/tags/v2"); got != "tag" {
			t.Errorf("v2 is a %s", got)
		}
		// Another clone fetches what was pushed (v0 and v2).
		other := filepath.Join(t.TempDir(), "o")
		root.ok(t, t.TempDir(), "clone", "-q", "--branch", "master", url, other)
		root.ok(t, other, "reset", "-q", "--hard", "HEAD~1")
		for _, version := range []string{"0", "2"} {
			root.ok(t, other, "-c", "protocol.version="+version, "fetch", "-q", "--tags", "origin")
			if got := root.ok(t, other, "rev-parse", "origin/feature"); got != feature {
				t.Errorf("v%s: fetched feature %s, want %s", version, got, feature)
			}
		}
		// Deleting a branch.
		devGit.ok(t, dst, "push", "-q", "origin", "--delete", "feature")
		if strings.Contains(refsOf(t, bare), "refs/heads/feature") {
			t.Errorf("feature still there after delete")
		}
		fsck(t, bare)
		// The push made push events and counted as the user's activity.
		drain(t, s.bus)
		s.waitEvents(t, p, map[string]func(feedEvent) bool{
			"the push to master": func(e feedEvent) bool {
				return e.AuthorUsername == dev.Username && e.PushData != nil && e.PushData.Ref == "master" && strp(e.PushData.CommitTo) == tip
			},
			"the tag v2": func(e feedEvent) bool {
				return e.PushData != nil && e.PushData.RefType == "tag" && e.PushData.Ref == "v2"
			},
		})
		var acts []struct {
			Username       string `json:"username"`
			LastActivityOn string `json:"last_activity_on"`
		}
		s.JSON(t, "GET", "/api/v4/user/activities", nil, &acts, "PRIVATE-TOKEN", s.RootToken)
		found := false
		for _, a := range acts {
			found = found || (a.Username == dev.Username && a.LastActivityOn == today())
		}
		if !found {
			t.Errorf("no activity today for %s: %+v", dev.Username, acts)
		}
	})

	t.Run("fetch negotiating over several rounds", func(t *testing.T) {
		// A clone with 300 commits of its own sends its haves in rounds
		// (16, then more) until the server is ready.
		mine := filepath.Join(t.TempDir(), "m")
		root.ok(t, t.TempDir(), "clone", "-q", url, mine)
		root.fastImport(t, mine, "local", 300, "local")
		dst := devGit.newWork(t)
		traced := s.gitWith(t, rootKey)
		traced.env = append(traced.env, "GIT_TRACE_PACKET=1")
		for _, version := range []string{"0", "2"} {
			tip := devGit.commit(t, dst, "negotiated v"+version, map[string]string{"n.txt": version})
			devGit.ok(t, dst, "push", "-q", "-f", url, "master:refs/heads/negotiate")
			_, e := traced.okErr(t, mine, "-c", "protocol.version="+version, "fetch", "origin", "negotiate")
			// (v0 negotiates on one stream; v2 rounds are commands of
			// their own, and here one round is enough.)
			if haves := strings.Count(e, "> have "); version == "0" && haves <= 16 {
				t.Errorf("v%s: %d haves sent, want several rounds", version, haves)
			}
			if got := root.ok(t, mine, "rev-parse", "FETCH_HEAD"); got != tip {
				t.Errorf("v%s: fetched %s, want %s", version, got, tip)
			}
			root.ok(t, mine, "fsck", "--no-dangling")
		}
		fsck(t, bare)
	})

	t.Run("protected branch", func(t *testing.T) {
		s.protect(t, p, "master", false)
		before := refsOf(t, bare)
		dst := filepath.Join(t.TempDir(), "c")
		devGit.ok(t, t.TempDir(), "clone", "-q", url, dst)
		devGit.commit(t, dst, "refused", map[string]string{"no.txt": "no\n"})
		msg := devGit.fail(t, dst, "push", "origin", "master")
		if !strings.Contains(msg, "You are not allowed to push code to protected branches on this project.") ||
			!strings.Contains(msg, "[remote rejected] master -> master") {
			t.Errorf("the refusal reads:\n%s", msg)
		}
		if after := refsOf(t, bare); after != before {
			t.Errorf("refs changed:\n%s\nwant\n%s", after, before)
		}
		fsck(t, bare)
	})

	t.Run("archived project", func(t *testing.T) {
		a := s.project(t, "archived", gitlab.PrivateVisibility)
		s.addMember(t, a, dev, gitlab.DeveloperPermissions)
		aURL := s.sshURL(t, a)
		dst := devGit.newWork(t)
		devGit.commit(t, dst, "one", map[string]string{"a": "a\n"})
		devGit.ok(t, dst, "push", "-q", aURL, "master")
		if _, _, err := s.Client.Projects.ArchiveProject(a.ID); err != nil {
			t.Fatal(err)
		}
		devGit.commit(t, dst, "two", map[string]string{"a": "b\n"})
		if msg := devGit.fail(t, dst, "push", aURL, "master"); !strings.Contains(msg, "You are not allowed to push code to an archived project.") {
			t.Errorf("a push to an archived project reads:\n%s", msg)
		}
		devGit.ok(t, t.TempDir(), "clone", "-q", aURL, filepath.Join(t.TempDir(), "c")) // still readable
		fsck(t, s.bare(a))
	})

	t.Run("another user's key on a private project", func(t *testing.T) {
		stranger := s.CreateUser(t, "")
		key := newSSHKey(t)
		addKey(t, stranger.Client, key)
		c := s.gitWith(t, key)
		msg := c.fail(t, t.TempDir(), "clone", "-q", url, filepath.Join(t.TempDir(), "c"))
		if !strings.Contains(msg, msgNoProject) {
			t.Errorf("a stranger reads:\n%s", msg)
		}
		// An unknown project reads the same.
		unknown := c.fail(t, t.TempDir(), "clone", "-q", "ssh://git@127.0.0.1:"+s.port+"/root/nosuch.git", filepath.Join(t.TempDir(), "c"))
		if !strings.Contains(unknown, msgNoProject) {
			t.Errorf("an unknown project reads:\n%s", unknown)
		}
		// And so do paths that try to leave the repositories.
		for _, path := range []string{"/../../etc/passwd", "/root/../root/viassh.git", "/etc/passwd", "/~root/viassh.git/.."} {
			msg := c.fail(t, t.TempDir(), "clone", "-q", "ssh://git@127.0.0.1:"+s.port+path, filepath.Join(t.TempDir(), "c"))
			if !strings.Contains(msg, msgNoProject) {
				t.Errorf("%s reads:\n%s", path, msg)
			}
		}
		// A reporter may clone but not push.
		s.addMember(t, p, stranger, gitlab.ReporterPermissions)
		dst := filepath.Join(t.TempDir(), "c")
		c.ok(t, t.TempDir(), "clone", "-q", url, dst)
		c.commit(t, dst, "no", map[string]string{"r.txt": "r\n"})
		if msg := c.fail(t, dst, "push", "origin", "HEAD:refs/heads/reporter"); !strings.Contains(msg, "You are not allowed to push code to this project.") {
			t.Errorf("a reporter's push reads:\n%s", msg)
		}
		fsck(t, bare)
	})

	t.Run("deleted key", func(t *testing.T) {
		u := s.CreateUser(t, "")
		key := newSSHKey(t)
		k := addKey(t, u.Client, key)
		s.addMember(t, p, u, gitlab.DeveloperPermissions)
		c := s.gitWith(t, key)
		c.ok(t, t.TempDir(), "ls-remote", url)
		if _, err := u.Client.Users.DeleteSSHKey(k.ID); err != nil {
			t.Fatal(err)
		}
		msg := c.fail(t, t.TempDir(), "ls-remote", url)
		if !strings.Contains(msg, "Permission denied (publickey)") {
			t.Errorf("a deleted key reads:\n%s", msg)
		}
		fsck(t, bare)
	})

	t.Run("blocked user", func(t *testing.T) {
		u := s.CreateUser(t, "")
		key := newSSHKey(t)
		addKey(t, u.Client, key)
		s.addMember(t, p, u, gitlab.DeveloperPermissions)
		c := s.gitWith(t, key)
		c.ok(t, t.TempDir(), "ls-remote", url)
		if err := s.Client.Users.BlockUser(u.ID); err != nil {
			t.Fatal(err)
		}
		msg := c.fail(t, t.TempDir(), "ls-remote", url)
		if !strings.Contains(msg, "Your account has been blocked.") {
			t.Errorf("a blocked user reads:\n%s", msg)
		}
		fsck(t, bare)
	})

	t.Run("commands other than git", func(t *testing.T) {
		for _, cmd := range []string{
			"git-upload-pack 'x'; id'",
			"git-upload-pack 'root/viassh.git'; id",
			"git-upload-pack root/viassh.git && id",
			"git-upload-pack $(id)",
			"id",
			"ls -la",
			"sh -c id",
			"git-upload-pack",
			"git-upload-pack 'root/viassh.git' extra",
			"git config --list",
		} {
			out, errOut, status := s.sshRun(t, rootKey, nil, cmd)
			if status == 0 || strings.Contains(out, "uid=") || out != "" {
				t.Errorf("%q: status %d, stdout %q", cmd, status, out)
			}
			if !strings.Contains(errOut, "not allowed") && !strings.Contains(errOut, msgNoProject) {
				t.Errorf("%q: stderr %q", cmd, errOut)
			}
		}
		// A shell (no command, with or without a tty).
		_, errOut, status := s.sshRun(t, rootKey, []string{"-T"})
		if status != 1 || !strings.Contains(errOut, "does not provide shell access") {
			t.Errorf("shell: status %d, stderr %q", status, errOut)
		}
		// A terminal is refused (ssh -tt gives up without one).
		_, errOut, status = s.sshRun(t, rootKey, []string{"-tt"})
		if status == 0 || !strings.Contains(errOut, "PTY allocation request failed") {
			t.Errorf("shell with a tty: status %d, stderr %q", status, errOut)
		}
		// A subsystem.
		_, errOut, status = s.sshRun(t, rootKey, []string{"-s"}, "sftp")
		if status == 0 || !strings.Contains(errOut, "subsystems") {
			t.Errorf("subsystem: status %d, stderr %q", status, errOut)
		}
		// Port forwarding.
		_, errOut, status = s.sshRun(t, rootKey, []string{"-W", "127.0.0.1:" + s.port})
		if status == 0 || !strings.Contains(errOut, "prohibited") {
			t.Errorf("forwarding: status %d, stderr %q", status, errOut)
		}
		// git-upload-archive is refused.
		_, errOut, status = s.sshRun(t, rootKey, nil, "git-upload-archive '"+p.PathWithNamespace+".git'")
		if status == 0 || !strings.Contains(errOut, "upload-archive") {
			t.Errorf("upload-archive: status %d, stderr %q", status, errOut)
		}
		fsck(t, bare)
	})
}

// TestGitSSHHostKeyStable restarts the server on the same data directory:
// the second run has the host keys of the first, checked by the client
// with StrictHostKeyChecking=yes against the known_hosts the first run
// left.
func TestGitSSHHostKeyStable(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("OpenSSH client (ssh) not installed")
	}
	data, password := t.TempDir(), "root-password-1"
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	key := newSSHKey(t)
	var first []ssh.PublicKey
	var pathWithNS string
	var projectID int64
	t.Run("first", func(t *testing.T) {
		s := startSSH(t, fennectest.WithDataDir(data, password))
		first = s.srv.HostKeys()
		// The client learns the host key (accept-new) into known_hosts.
		s.knownHosts = knownHosts
		if err := os.WriteFile(knownHosts, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		addKey(t, s.Client, key)
		p := s.project(t, "stable", gitlab.PrivateVisibility)
		pathWithNS, projectID = p.PathWithNamespace, p.ID
		c := newGitCLI(t)
		c.env = append(c.env, "GIT_SSH_COMMAND="+strings.Join(s.sshArgs(key, "accept-new"), " "))
		work := c.newWork(t)
		c.commit(t, work, "one", map[string]string{"a": "a\n"})
		c.ok(t, work, "push", "-q", s.sshURL(t, p), "master")
		fsck(t, s.bare(p))
	})
	learned, err := os.ReadFile(knownHosts)
	if err != nil || !bytes.Contains(learned, []byte("ssh-ed25519")) {
		t.Fatalf("known_hosts after the first run: %q %v", learned, err)
	}
	for _, name := range []string{"ssh_host_ed25519_key", "ssh_host_rsa_key"} {
		st, err := os.Stat(filepath.Join(data, "ssh", name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", name, st.Mode(), err)
		}
	}
	s := startSSH(t, fennectest.WithDataDir(data, password))
	second := s.srv.HostKeys()
	if len(second) != len(first) || len(first) != 2 {
		t.Fatalf("host keys: %d then %d", len(first), len(second))
	}
	for i := range first {
		if !bytes.Equal(first[i].Marshal(), second[i].Marshal()) {
			t.Errorf("host key %s changed across a restart", first[i].Type())
		}
	}
	// The port differs; the learned key is stored under the old one, so
	// the new known_hosts names the new port with the learned key lines.
	lines := strings.Split(strings.TrimSpace(string(learned)), "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 3 {
			lines[i] = "[127.0.0.1]:" + s.port + " " + f[1] + " " + f[2]
		}
	}
	if err := os.WriteFile(s.knownHosts, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := s.gitWith(t, key)
	dst := filepath.Join(t.TempDir(), "c")
	c.ok(t, t.TempDir(), "clone", "-q", "ssh://git@127.0.0.1:"+s.port+"/"+pathWithNS+".git", dst)
	if got := c.ok(t, dst, "log", "--format=%s"); got != "one" {
		t.Errorf("log %q", got)
	}
	fsck(t, hashedRepoPath(data, projectID))
}
