package repository_test

// Connections that never authenticate, as a flood would open them, against
// the real OpenSSH client of a key holder (issue 27: 256 idle TCP
// connections locked everyone out of git over SSH).

import (
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/repository"
)

// dialFrom opens n TCP connections to addr from the local address from,
// sending nothing.
func dialFrom(t *testing.T, from, addr string, n int) []net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			if len(conns) == 0 {
				t.Skipf("cannot dial from %s: %v", from, err)
			}
			t.Fatalf("dial from %s: %v", from, err)
		}
		conns = append(conns, c)
	}
	return conns
}

// served splits conns into those the server answers with its version line
// (it holds them, waiting for the client's) and those it closed at once.
func served(t *testing.T, conns []net.Conn) (held, closed []net.Conn) {
	t.Helper()
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line := make([]byte, 7)
		if _, err := io.ReadFull(c, line); err == nil && string(line) == "SSH-2.0" {
			held = append(held, c)
		} else {
			closed = append(closed, c)
		}
	}
	return held, closed
}

// A flood from one address holds at most a few pre-authentication places
// (the rest is closed at once), a key holder clones meanwhile with
// OpenSSH, and the connections held end at the pre-authentication
// deadline.
func TestGitSSHFloodOfUnauthenticatedConnections(t *testing.T) {
	t.Parallel()
	const (
		deadline   = 3 * time.Second
		perAddress = 5 // the default ssh_max_startups_per_address
	)
	s := startSSH(t, withSSH(func(c *repository.Config) { c.SSHHandshakeTimeout = deadline }))
	p := s.project(t, "flooded", gitlab.PrivateVisibility)
	work := s.cli.newWork(t)
	head := s.cli.commit(t, work, "first", map[string]string{"README.md": "hello\n"})
	s.seed(t, p, work)
	url := s.sshURL(t, p)
	key := newSSHKey(t)
	addKey(t, s.Client, key)
	git := s.gitWith(t, key)

	// 300 connections from one address that say nothing: a few are held
	// until the deadline, the rest closed at once.
	began := time.Now()
	flood := dialFrom(t, "127.0.0.2", s.srv.Addr(), 300)
	held, _ := served(t, flood)
	if len(held) == 0 || len(held) > perAddress {
		t.Errorf("%d of the flood's connections are held, want 1 to %d", len(held), perAddress)
	}

	// Meanwhile a key holder clones, with OpenSSH.
	dst := filepath.Join(t.TempDir(), "c")
	git.ok(t, t.TempDir(), "clone", "-q", url, dst)
	if got := git.ok(t, dst, "rev-parse", "HEAD"); got != head {
		t.Fatalf("cloned %s, want %s", got, head)
	}

	// The held ones end at the pre-authentication deadline.
	for _, c := range held {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("a held connection: %v", err)
		}
	}
	if d := time.Since(began); d > deadline+5*time.Second {
		t.Errorf("the held connections lasted %s; the deadline is %s", d, deadline)
	}
}
