package gitserve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// protocols are the client settings every scenario runs with: v2 (git's
// default, served by the v2 functions) and v0. With v2 the C git server
// compared against speaks v2 too.
var protocols = []struct {
	name string
	opts []string
	v2   bool
}{
	{"v2", []string{"-c", "protocol.version=2"}, true},
	{"v0", []string{"-c", "protocol.version=0"}, false},
}

// smallRepo is a copy of the small reference repository with a branch,
// an annotated tag, a tag of a tag and a lightweight tag added.
func smallRepo(t *testing.T, c *gitClient) string {
	t.Helper()
	dir := copyRepo(t, repotest.Reference(t, smallShape()))
	c.run(dir, "branch", "side", "master~20")
	c.run(dir, "tag", "-a", "-m", "release one", "v1", "master~10")
	c.run(dir, "tag", "-a", "-m", "tag of a tag", "v1-signed", "v1")
	c.run(dir, "tag", "light", "master~5")
	c.run(dir, "tag", "-a", "-m", "a tree", "tree-tag", "master~3^{tree}")
	return dir
}

func (s *testServer) checkNoErrors(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, err := range s.errs {
		t.Errorf("server: %v", err)
	}
}

func TestCloneFull(t *testing.T) {
	t.Parallel()
	cases := append(protocols[:len(protocols):len(protocols)], struct {
		name string
		opts []string
		v2   bool
	}{"v2 client, v0 server", nil, false})
	for _, p := range cases {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			c := newGitClient(t, p.opts...)
			dir := readOnlySmallRepo(t)
			srv := newTestServer(t, dir)
			srv.noV2 = p.name == "v2 client, v0 server"
			work := t.TempDir()

			mirror := filepath.Join(work, "mirror.git")
			c.run(work, "clone", "--mirror", srv.url, mirror)
			if got, want := refsOf(t, c, mirror), refsOf(t, c, dir); got != want {
				t.Errorf("refs differ:\n%s\nwant\n%s", got, want)
			}
			c.run(mirror, "fsck", "--strict", "--no-dangling")
			if got, want := c.run(mirror, "count-objects", "-v"), ""; !strings.Contains(got, "count: 0") {
				t.Errorf("loose objects in the clone: %s%s", got, want)
			}

			plain := filepath.Join(work, "plain")
			c.run(work, "clone", srv.url, plain)
			if got := strings.TrimSpace(c.run(plain, "symbolic-ref", "HEAD")); got != "refs/heads/master" {
				t.Errorf("HEAD = %s", got)
			}
			if got, want := c.run(plain, "rev-parse", "HEAD"), c.run(dir, "rev-parse", "master"); got != want {
				t.Errorf("HEAD at %s, want %s", got, want)
			}
			c.run(plain, "fsck", "--strict", "--no-dangling")
			if _, err := os.Stat(filepath.Join(plain, "src")); err != nil {
				t.Errorf("no checkout: %v", err)
			}
			srv.checkNoErrors(t)
		})
	}
}

func TestCloneEmpty(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			c := newGitClient(t, p.opts...)
			dir := filepath.Join(t.TempDir(), "repo.git")
			c.run(t.TempDir(), "init", "--bare", "-b", "main", dir)
			srv := newTestServer(t, dir)
			work := t.TempDir()
			_, stderr, err := c.try(work, "clone", srv.url, filepath.Join(work, "clone"))
			if err != nil {
				t.Fatalf("clone: %v\n%s", err, stderr)
			}
			if !strings.Contains(stderr, "empty repository") {
				t.Errorf("no empty-repository warning: %s", stderr)
			}
			if out := c.run(filepath.Join(work, "clone"), "for-each-ref"); out != "" {
				t.Errorf("refs in the clone: %s", out)
			}
			srv.checkNoErrors(t)
		})
	}
}

func TestAdvertisement(t *testing.T) {
	t.Parallel()
	c := newGitClient(t)
	dir := readOnlySmallRepo(t)
	srv := newTestServer(t, dir)
	got := c.run(t.TempDir(), "ls-remote", srv.url)
	want := c.run(dir, "show-ref", "--head", "-d")
	// ls-remote prints "hash\tname", show-ref "hash name"; HEAD first in both.
	want = strings.ReplaceAll(want, " ", "\t")
	if got != want {
		t.Errorf("ls-remote:\n%s\nwant\n%s", got, want)
	}
}

// TestConcurrentClones runs clones and fetches at once against one store.
func TestConcurrentClones(t *testing.T) {
	t.Parallel()
	c := newGitClient(t, "-c", "protocol.version=0")
	dir := readOnlySmallRepo(t)
	srv := newTestServer(t, dir)
	work := t.TempDir()
	want := refsOf(t, c, dir)
	errs := make(chan error, 6)
	for i := 0; i < 6; i++ {
		go func(i int) {
			dst := filepath.Join(work, fmt.Sprint(i))
			args := []string{"clone", "-q", "--mirror", srv.url, dst}
			if i%3 == 1 {
				args = []string{"clone", "-q", "--depth", "5", srv.url, dst}
			}
			if _, stderr, err := c.try(work, args...); err != nil {
				errs <- fmt.Errorf("clone %d: %v\n%s", i, err, stderr)
				return
			}
			if _, stderr, err := c.try(dst, "fsck", "--strict", "--no-dangling"); err != nil {
				errs <- fmt.Errorf("fsck %d: %v\n%s", i, err, stderr)
				return
			}
			if i%3 != 1 {
				if got := refsOf(t, c, dst); got != want {
					errs <- fmt.Errorf("clone %d: refs differ", i)
					return
				}
			}
			errs <- nil
		}(i)
	}
	for i := 0; i < 6; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	srv.checkNoErrors(t)
}
