package repository_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/repotest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// BenchmarkGitSSH compares git over SSH with smart HTTP on the reference
// repository (20,000 commits; FENNEC_BENCH_COMMITS shrinks it), with the
// real git CLI (and the OpenSSH client): a full clone, a push of 1,000
// commits, and, when OpenSSH's sshd is installed, the same clone through
// sshd running C git's git-upload-pack on a copy of the repository. The
// handshake sub-benchmark is the SSH server's rate of key exchanges with
// public-key authentication (x/crypto/ssh client, ed25519 host key
// offered first).
func BenchmarkGitSSH(b *testing.B) {
	if _, err := exec.LookPath("ssh"); err != nil {
		b.Skip("OpenSSH client (ssh) not installed")
	}
	shape := repotest.Shape{}
	if n, err := strconv.Atoi(os.Getenv("FENNEC_BENCH_COMMITS")); err == nil && n > 0 {
		shape.Commits = n
	}
	ref := repotest.Reference(b, shape)
	var srv repository.SSHServer
	var repos repository.Store
	g := &gitServer{}
	s := startBench(b, &srv, &repos, g)
	port := srv.Addr()[strings.LastIndexByte(srv.Addr(), ':')+1:]
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("reference")})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.bus.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	dst := repos.Path(p.ID)
	restore := func() {
		if err := os.RemoveAll(dst); err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", ref, dst).CombinedOutput(); err != nil {
			b.Fatalf("copy the reference repository: %v %s", err, out)
		}
	}
	restore()

	home := b.TempDir()
	keyFile := filepath.Join(home, "id_ed25519")
	signer := benchKey(b, keyFile)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	if _, _, err := s.Client.Users.AddSSHKey(&gitlab.AddSSHKeyOptions{Title: gitlab.Ptr("bench"), Key: gitlab.Ptr(line)}); err != nil {
		b.Fatal(err)
	}
	knownHosts := filepath.Join(home, "known_hosts")
	var kh strings.Builder
	for _, k := range srv.HostKeys() {
		kh.WriteString("[127.0.0.1]:" + port + " " + string(ssh.MarshalAuthorizedKey(k)))
	}
	if err := os.WriteFile(knownHosts, []byte(kh.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	sshCmd := func(port string) string {
		return "ssh -F /dev/null -i " + keyFile + " -o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes" +
			" -o StrictHostKeyChecking=no -o UserKnownHostsFile=" + knownHosts + " -o LogLevel=ERROR -p " + port
	}
	gitRun := func(dir, sshCommand string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_SSH_COMMAND="+sshCommand, "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	sshURL := "ssh://git@127.0.0.1:" + port + "/" + p.PathWithNamespace + ".git"
	httpURL := "http://root:" + s.RootToken + "@" + g.host + "/" + p.PathWithNamespace + ".git"

	clone := func(b *testing.B, url, sshCommand string) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			out := filepath.Join(b.TempDir(), "c.git")
			b.StartTimer()
			gitRun(home, sshCommand, "clone", "-q", "--bare", url, out)
			b.StopTimer()
			_ = os.RemoveAll(out)
			b.StartTimer()
		}
	}
	b.Run("clone-ssh", func(b *testing.B) { clone(b, sshURL, sshCmd(port)) })
	b.Run("clone-http", func(b *testing.B) { clone(b, httpURL, sshCmd(port)) })
	if sshd, err := startSSHD(b, home, line); err == nil {
		// The same repository, served by C git through OpenSSH's sshd.
		b.Run("clone-openssh-sshd", func(b *testing.B) {
			clone(b, "ssh://"+sshd.user+"@127.0.0.1:"+sshd.port+ref, sshCmd(sshd.port))
		})
	} else {
		b.Logf("OpenSSH sshd comparison skipped: %v", err)
	}

	// A push of the last 1,000 commits of master, onto a repository
	// whose master is 1,000 commits behind (restored between rounds).
	local := filepath.Join(home, "local.git")
	gitRun(home, "", "clone", "-q", "--bare", ref, local)
	push := func(b *testing.B, url string) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			restore()
			behind := strings.TrimSpace(run(b, dst, "rev-parse", "master~1000"))
			run(b, dst, "update-ref", "refs/heads/master", behind)
			b.StartTimer()
			gitRun(local, sshCmd(port), "push", "-q", url, "master")
		}
	}
	b.Run("push-1000-commits-ssh", func(b *testing.B) { push(b, sshURL) })
	b.Run("push-1000-commits-http", func(b *testing.B) { push(b, httpURL) })

	// One OpenSSH client connection: start, key exchange, authentication,
	// the ref advertisement, and the end; what every git command over
	// SSH pays before its work.
	b.Run("connect-openssh-advertise", func(b *testing.B) {
		args := strings.Fields(sshCmd(port))[1:]
		args = append(args, "git@127.0.0.1", "git-upload-pack '"+p.PathWithNamespace+".git'")
		for i := 0; i < b.N; i++ {
			cmd := exec.Command("ssh", args...)
			cmd.Stdin = strings.NewReader("0000")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("ssh: %v %s", err, out)
			}
		}
	})

	b.Run("handshake", func(b *testing.B) {
		conf := &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
			HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second,
			HostKeyAlgorithms: []string{ssh.KeyAlgoED25519}}
		start := time.Now()
		for i := 0; i < b.N; i++ {
			c, err := ssh.Dial("tcp", srv.Addr(), conf)
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "handshakes/s")
	})
}

func startBench(b *testing.B, srv *repository.SSHServer, repos *repository.Store, g *gitServer) *fennectest.Server {
	s := stocktest.Start(b, fennectest.WithExtract(srv, repos, &g.bus),
		fennectest.WithConfig(func(c *config.Config) { c.NoSync = true }), withSSH())
	g.Server = s
	g.host = strings.TrimPrefix(s.URL, "http://")
	return s
}

func benchKey(b *testing.B, file string) ssh.Signer {
	k := newSSHKey(b)
	if err := os.WriteFile(file, k.pem, 0o600); err != nil {
		b.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(k.pem)
	if err != nil {
		b.Fatal(err)
	}
	return signer
}

type sshdServer struct {
	port, user string
	cmd        *exec.Cmd
}

// startSSHD runs OpenSSH's sshd on a free port for the current user, with
// key as the only authorized key.
func startSSHD(b *testing.B, home, key string) (*sshdServer, error) {
	path, err := exec.LookPath("sshd")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/sshd"); serr != nil {
			return nil, errors.New("sshd not installed (Debian's openssh-server)")
		}
		path = "/usr/sbin/sshd"
	}
	dir := filepath.Join(home, "sshd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "host")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ssh-keygen: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(key+"\n"), 0o600); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	user := os.Getenv("USER")
	if user == "" {
		out, _ := exec.Command("id", "-un").Output()
		user = strings.TrimSpace(string(out))
	}
	conf := strings.Join([]string{
		"Port " + port, "ListenAddress 127.0.0.1", "HostKey " + filepath.Join(dir, "host"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"), "PasswordAuthentication no",
		"KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password", "StrictModes no", "UsePAM no",
		"PidFile " + filepath.Join(dir, "pid"), "LogLevel ERROR",
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(conf), 0o600); err != nil {
		return nil, err
	}
	_ = os.MkdirAll("/run/sshd", 0o755)
	cmd := exec.Command(path, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			return &sshdServer{port: port, user: user, cmd: cmd}, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, fmt.Errorf("sshd did not start: %s", stderr.String())
}
