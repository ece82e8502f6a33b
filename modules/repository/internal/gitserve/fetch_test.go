package gitserve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// addCommits adds n commits on branch of the bare repository dir (through
// a scratch clone and a local push) and returns the new tip.
func addCommits(t testing.TB, c *gitClient, dir, branch string, n int, tag string) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "work")
	c.run(filepath.Dir(work), "clone", "-q", "--branch", branch, dir, work)
	for i := 0; i < n; i++ {
		name := filepath.Join(work, "src", fmt.Sprintf("new-%d.txt", i%7))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "line %d\n", i)
		f.Close()
		c.run(work, "add", "-A")
		c.run(work, "commit", "-q", "-m", fmt.Sprintf("new commit %d", i))
	}
	if tag != "" {
		c.run(work, "tag", "-a", "-m", "annotated "+tag, tag)
		c.run(work, "tag", tag+"-light", "HEAD~1")
		c.run(work, "push", "-q", "origin", branch, tag, tag+"-light")
	} else {
		c.run(work, "push", "-q", "origin", branch)
	}
	return strings.TrimSpace(c.run(work, "rev-parse", "HEAD"))
}

// objectsBetween counts the objects reachable from tip and not from base
// in dir (what an ideal fetch sends).
func objectsBetween(t testing.TB, c *gitClient, dir string, args ...string) int {
	t.Helper()
	out := c.run(dir, append([]string{"rev-list", "--objects"}, args...)...)
	return strings.Count(out, "\n")
}

func TestFetchNewCommits(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			c := newGitClient(t, p.opts...)
			dir := smallRepo(t, c)
			srv := newTestServer(t, dir)
			work := t.TempDir()
			clone := filepath.Join(work, "clone")
			c.run(work, "clone", srv.url, clone)
			old := strings.TrimSpace(c.run(dir, "rev-parse", "master"))

			tip := addCommits(t, c, dir, "master", 12, "v2")
			if err := srv.store.Reload(); err != nil {
				t.Fatal(err)
			}
			srv.record = true
			out, stderr, err := c.try(clone, "fetch", "origin")
			if err != nil {
				t.Fatalf("fetch: %v\n%s%s", err, out, stderr)
			}
			if got := strings.TrimSpace(c.run(clone, "rev-parse", "origin/master")); got != tip {
				t.Errorf("origin/master = %s, want %s", got, tip)
			}
			// include-tag: the annotated tag and the lightweight one came along.
			if got, want := c.run(clone, "rev-parse", "v2", "v2-light"), c.run(dir, "rev-parse", "v2", "v2-light"); got != want {
				t.Errorf("tags: %s, want %s", got, want)
			}
			c.run(clone, "fsck", "--strict", "--no-dangling")
			want := objectsBetween(t, c, dir, "v2", "--not", old)
			if got := srv.lastPack(t); got != want {
				t.Errorf("pack of %d objects, want %d (thin)", got, want)
			}
			srv.checkNoErrors(t)
		})
	}
}

func TestFetchTagsOnly(t *testing.T) {
	t.Parallel()
	c := newGitClient(t)
	dir := readOnlySmallRepo(t)
	srv := newTestServer(t, dir)
	work := t.TempDir()
	clone := filepath.Join(work, "clone")
	c.run(work, "clone", "--no-tags", srv.url, clone)
	if out := c.run(clone, "tag"); out != "" {
		t.Fatalf("tags after --no-tags: %s", out)
	}
	c.run(clone, "fetch", "--tags", "origin")
	if got, want := c.run(clone, "show-ref", "--tags", "-d"), c.run(dir, "show-ref", "--tags", "-d"); got != want {
		t.Errorf("tags:\n%s\nwant\n%s", got, want)
	}
	c.run(clone, "fsck", "--strict", "--no-dangling")
	srv.checkNoErrors(t)
}

func TestFetchUnknownWant(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			c := newGitClient(t, p.opts...)
			dir := readOnlySmallRepo(t)
			srv := newTestServer(t, dir)
			work := t.TempDir()
			clone := filepath.Join(work, "clone")
			c.run(work, "clone", "-q", srv.url, clone)
			bogus := "0123456789abcdef0123456789abcdef01234567"
			_, stderr, err := c.try(clone, "fetch", "origin", bogus)
			if err == nil {
				t.Fatal("fetch of an unknown object succeeded")
			}
			if !strings.Contains(stderr, "not our ref "+bogus) {
				t.Errorf("stderr: %s", stderr)
			}
			srv.mu.Lock()
			errs := srv.errs
			srv.errs = nil
			srv.mu.Unlock()
			if len(errs) != 1 || !isBadRequest(errs[0]) {
				t.Errorf("server errors: %v", errs)
			}
			// A commit that is no ref tip but reachable may be fetched
			// (allow-reachable-sha1-in-want).
			deep := strings.TrimSpace(c.run(dir, "rev-parse", "master~7"))
			c.run(clone, "fetch", "origin", deep)
			srv.checkNoErrors(t)
		})
	}
}

func TestFetchUnreachableObject(t *testing.T) {
	t.Parallel()
	c := newGitClient(t, "-c", "protocol.version=0")
	dir := smallRepo(t, c)
	// A commit that exists in the store but that no ref reaches.
	c.run(dir, "branch", "hidden", "master~2")
	hidden := addCommits(t, c, dir, "hidden", 1, "")
	c.run(dir, "branch", "-D", "hidden")
	srv := newTestServer(t, dir)
	work := t.TempDir()
	clone := filepath.Join(work, "clone")
	c.run(work, "clone", "-q", srv.url, clone)
	_, stderr, err := c.try(clone, "fetch", "origin", hidden)
	if err == nil || !strings.Contains(stderr, "not our ref "+hidden) {
		t.Errorf("fetch of an unreachable commit: %v\n%s", err, stderr)
	}
}

func TestCloneFilterFallsBack(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			c := newGitClient(t, p.opts...)
			dir := readOnlySmallRepo(t)
			srv := newTestServer(t, dir)
			work := t.TempDir()
			clone := filepath.Join(work, "clone")
			_, stderr, err := c.try(work, "clone", "--filter=blob:none", srv.url, clone)
			if err != nil {
				t.Fatalf("clone --filter: %v\n%s", err, stderr)
			}
			if !strings.Contains(stderr, "filtering not recognized by server") {
				t.Errorf("no fallback warning: %s", stderr)
			}
			// A full clone: every blob is there, nothing is promised.
			c.run(clone, "fsck", "--strict", "--no-dangling")
			if out := c.run(clone, "rev-list", "--objects", "--all", "--missing=print"); strings.Contains(out, "\n?") || strings.HasPrefix(out, "?") {
				t.Error("objects missing from the clone")
			}
			srv.checkNoErrors(t)
		})
	}
}

// TestFetchNegotiation: the client has most objects and many of its own
// commits, so negotiation takes several rounds; the pack holds only what
// is new.
func TestFetchNegotiation(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			c := newGitClient(t, p.opts...)
			dir := smallRepo(t, c)
			srv := newTestServer(t, dir)
			work := t.TempDir()
			clone := filepath.Join(work, "clone")
			c.run(work, "clone", "-q", srv.url, clone)
			old := strings.TrimSpace(c.run(dir, "rev-parse", "master"))

			// The client commits a lot of its own on several branches
			// (haves the server does not know).
			for b := 0; b < 4; b++ {
				c.run(clone, "checkout", "-q", "-b", "local"+strconv.Itoa(b), "origin/master")
				for i := 0; i < 40; i++ {
					if err := os.WriteFile(filepath.Join(clone, "local.txt"), []byte(fmt.Sprintf("%d %d\n", b, i)), 0o644); err != nil {
						t.Fatal(err)
					}
					c.run(clone, "add", "local.txt")
					c.run(clone, "commit", "-q", "-m", "local")
				}
			}
			// The server moves on too.
			addCommits(t, c, dir, "master", 5, "")
			addCommits(t, c, dir, "side", 3, "")
			if err := srv.store.Reload(); err != nil {
				t.Fatal(err)
			}
			srv.mu.Lock()
			srv.record, srv.requests = true, 0
			srv.mu.Unlock()
			c.run(clone, "fetch", "origin")
			if got, want := refsOf(t, c, clone, "refs/remotes/origin/master", "refs/remotes/origin/side"),
				strings.ReplaceAll(refsOf(t, c, dir, "refs/heads/master", "refs/heads/side"), "refs/heads/", "refs/remotes/origin/"); got != want {
				t.Errorf("refs:\n%s\nwant\n%s", got, want)
			}
			c.run(clone, "fsck", "--strict", "--no-dangling")
			srv.mu.Lock()
			rounds := srv.requests
			srv.mu.Unlock()
			if rounds < 3 {
				t.Errorf("%d requests: expected several negotiation rounds", rounds)
			}
			want := objectsBetween(t, c, dir, "master", "side", "--not", old)
			if got := srv.lastPack(t); got != want {
				t.Errorf("pack of %d objects, want %d", got, want)
			}
			t.Logf("%d requests, pack of %d objects", rounds, srv.lastPack(t))
			srv.checkNoErrors(t)
		})
	}
}

func isBadRequest(err error) bool { return errors.Is(err, ErrBadRequest) }
