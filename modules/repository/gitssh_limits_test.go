package repository_test

// The SSH server's limits, driven with x/crypto/ssh's client where the
// OpenSSH client cannot hold a connection in a given state.

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"golang.org/x/crypto/ssh"

	"github.com/fennec-forge/fennec/modules/repository"
)

func dialSSH(t *testing.T, s *sshServer, key sshKey) *ssh.Client {
	t.Helper()
	raw, err := os.ReadFile(key.file)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", s.srv.Addr(), &ssh.ClientConfig{User: "git", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
			for _, h := range s.srv.HostKeys() {
				if bytes.Equal(h.Marshal(), k.Marshal()) {
					return nil
				}
			}
			return errors.New("not the server's host key")
		}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("ssh dial: %v", err)
	}
	return c
}

func TestGitSSHLimits(t *testing.T) {
	t.Parallel()
	s := startSSH(t, withSSH(func(c *repository.Config) {
		c.SSHMaxSessions = 3
		c.SSHMaxSessionsPerUser = 1
		c.SSHIdleTimeout = 2 * time.Second
		c.SSHHandshakeTimeout = 3 * time.Second
		c.SSHExternal = "git.example.com:22"
		c.MaxPushBytes = 64 << 10
	}))
	p := s.project(t, "limits", gitlab.PrivateVisibility)
	key := newSSHKey(t)
	addKey(t, s.Client, key)

	t.Run("ssh_url_to_repo on port 22", func(t *testing.T) {
		got, _, err := s.Client.Projects.GetProject(p.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := "git@git.example.com:" + p.PathWithNamespace + ".git"; got.SSHURLToRepo != want {
			t.Errorf("ssh_url_to_repo %q, want %q", got.SSHURLToRepo, want)
		}
	})

	t.Run("commands per user", func(t *testing.T) {
		c := dialSSH(t, s, key)
		defer c.Close()
		first, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		stdin, _ := first.StdinPipe()
		stdout, _ := first.StdoutPipe()
		if err := first.Start("git-upload-pack '" + p.PathWithNamespace + ".git'"); err != nil {
			t.Fatal(err)
		}
		// The advertisement of the empty repository: the command runs.
		buf := make([]byte, 4)
		if _, err := io.ReadFull(stdout, buf); err != nil || string(buf) != "0000" {
			t.Fatalf("advertisement %q %v", buf, err)
		}
		second, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		var errOut bytes.Buffer
		second.Stderr = &errOut
		err = second.Run("git-upload-pack '" + p.PathWithNamespace + ".git'")
		var exit *ssh.ExitError
		if !errorsAs(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(errOut.String(), "Too many git sessions") {
			t.Errorf("second command: %v, stderr %q", err, errOut.String())
		}
		// The first ends (a flush: nothing wanted); then another may run.
		_, _ = stdin.Write([]byte("0000"))
		_ = stdin.Close()
		if err := first.Wait(); err != nil {
			t.Errorf("first command: %v", err)
		}
		third, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		third.Stdin = strings.NewReader("0000")
		if out, err := third.Output("git upload-pack '/" + p.PathWithNamespace + "'"); err != nil || string(out) != "0000" {
			t.Errorf("third command: %q %v", out, err)
		}
	})

	t.Run("push size limit", func(t *testing.T) {
		c := newGitCLI(t)
		c.env = append(c.env, "GIT_SSH_COMMAND="+strings.Join(s.sshArgs(key, "yes"), " "))
		work := c.newWork(t)
		big := make([]byte, 256<<10)
		_, _ = rand.Read(big)
		c.commit(t, work, "big", map[string]string{"big.bin": string(big)})
		before := refsOf(t, s.bare(p))
		msg := c.fail(t, work, "push", "ssh://git@127.0.0.1:"+s.port+"/"+p.PathWithNamespace+".git", "master")
		if !strings.Contains(msg, "pack exceeds the maximum push size of 65536 bytes") {
			t.Errorf("an oversized push reads:\n%s", msg)
		}
		if after := refsOf(t, s.bare(p)); after != before {
			t.Errorf("refs moved: %s", after)
		}
		fsck(t, s.bare(p))
	})

	t.Run("handshake timeout", func(t *testing.T) {
		nc, err := net.Dial("tcp", s.srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		start := time.Now()
		_ = nc.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, err = io.Copy(io.Discard, nc) // the server's version line, then EOF
		if err != nil || time.Since(start) > 10*time.Second {
			t.Errorf("a silent connection lasted %s (%v)", time.Since(start), err)
		}
	})

	t.Run("idle timeout", func(t *testing.T) {
		c := dialSSH(t, s, key)
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			c.Close()
			t.Fatal("an idle connection stayed open")
		}
	})

	t.Run("authenticated connections in total", func(t *testing.T) {
		var held []*ssh.Client
		closeAll := func() {
			for _, c := range held {
				c.Close()
			}
			held = nil
		}
		defer closeAll()
		// Three authenticated connections that each open a session. The
		// earlier subtests' connections may take a moment to end on the
		// server's side: until all three can.
		sessions := func() bool {
			closeAll()
			for range 3 {
				c := dialSSH(t, s, key)
				held = append(held, c)
				sess, err := c.NewSession()
				if err != nil {
					return false
				}
				sess.Close()
			}
			return true
		}
		if !eventually(sessions) {
			t.Fatal("three authenticated connections were not served")
		}
		// A fourth authenticates, and its session is refused with a reason.
		c := dialSSH(t, s, key)
		defer c.Close()
		if _, err := c.NewSession(); err == nil || !strings.Contains(err.Error(), "Too many SSH connections") {
			t.Errorf("a fourth authenticated connection's session: %v", err)
		}
		// Connections still authenticating are counted apart: served.
		nc, err := net.Dial("tcp", s.srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		line := make([]byte, 7)
		if _, err := io.ReadFull(nc, line); err != nil || string(line) != "SSH-2.0" {
			t.Errorf("a new connection while the sessions are all taken: %q %v", line, err)
		}
		// One ends: its place is free again.
		held[0].Close()
		held = held[1:]
		freed := func() bool {
			c := dialSSH(t, s, key)
			defer c.Close()
			sess, err := c.NewSession()
			if err != nil {
				return false
			}
			sess.Close()
			return true
		}
		if !eventually(freed) {
			t.Error("the place of a closed connection was not given back")
		}
	})
}

func errorsAs(err error, target **ssh.ExitError) bool {
	e, ok := err.(*ssh.ExitError)
	if ok {
		*target = e
	}
	return ok
}
