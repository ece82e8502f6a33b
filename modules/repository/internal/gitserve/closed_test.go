package gitserve

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// closedRepo is the small reference repository with its pack declared
// closed (tip master), then more refs and commits added outside it.
func closedRepo(t *testing.T, c *gitClient) string {
	t.Helper()
	dir := copyRepo(t, repotest.Reference(t, smallShape()))
	markClosed(t, c, dir)
	c.run(dir, "branch", "side", "master~20")
	c.run(dir, "tag", "-a", "-m", "release one", "v1", "master~10")
	c.run(dir, "tag", "light", "master~5")
	addCommits(t, c, dir, "master", 4, "v2")
	c.run(dir, "branch", "other", "master~6")
	addCommits(t, c, dir, "other", 3, "")
	return dir
}

// recordWalks collects tookClosed of the walks done while the test runs.
// The hook is global: a test that uses it stays serial (parallel tests
// start once the serial ones are done), or it would see others' walks.
func recordWalks(t *testing.T) func() []int {
	var mu sync.Mutex
	var took []int
	testHookWalk = func(w *walker) {
		mu.Lock()
		took = append(took, w.tookClosed)
		mu.Unlock()
	}
	t.Cleanup(func() { testHookWalk = nil })
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		out := took
		took = nil
		return out
	}
}

func TestClosedPack(t *testing.T) {
	c := newGitClient(t, "-c", "protocol.version=0")
	dir := closedRepo(t, c)
	srv := newTestServer(t, dir)
	if n := len(srv.store.ClosedPacks()); n != 1 {
		t.Fatalf("%d closed packs", n)
	}
	srv.record = true
	walks := recordWalks(t)
	work := t.TempDir()

	cases := []struct {
		name   string
		args   []string
		refs   []string // what the clone must have, as rev-list arguments on the server
		closed int      // closed packs the walk must take
	}{
		{"mirror", []string{"--mirror"}, []string{"--all"}, 1},
		{"master", []string{"--single-branch", "--branch", "master", "--no-tags"}, []string{"master"}, 1},
		{"other", []string{"--single-branch", "--branch", "other", "--no-tags"}, []string{"other"}, 0},
		{"side", []string{"--single-branch", "--branch", "side", "--no-tags"}, []string{"side"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(work, tc.name)
			c.run(work, append(append([]string{"clone", "--bare"}, tc.args...), srv.url, dst)...)
			c.run(dst, "fsck", "--strict", "--no-dangling")
			// The client asks for include-tag even with --no-tags.
			want := objectsBetween(t, c, dir, append(tc.refs, tagsInto(t, c, dir, tc.refs[0])...)...)
			if got := srv.lastPack(t); got != want {
				t.Errorf("pack of %d objects, want exactly %d", got, want)
			}
			if got := walks(); len(got) != 1 || got[0] != tc.closed {
				t.Errorf("walks took closed packs %v, want [%d]", got, tc.closed)
			}
			if tc.name == "mirror" {
				if got, want := refsOf(t, c, dst), refsOf(t, c, dir); got != want {
					t.Errorf("refs:\n%s\nwant\n%s", got, want)
				}
			}
		})
	}
	// A fetch (haves) and a shallow clone walk normally.
	t.Run("fetch", func(t *testing.T) {
		dst := filepath.Join(work, "master")
		addCommits(t, c, dir, "master", 2, "")
		if err := srv.store.Reload(); err != nil {
			t.Fatal(err)
		}
		c.run(dst, "fetch", "origin", "master:master")
		c.run(dst, "fsck", "--strict", "--no-dangling")
		if got := walks(); len(got) != 1 || got[0] != 0 {
			t.Errorf("walks took closed packs %v, want [0]", got)
		}
	})
	t.Run("depth", func(t *testing.T) {
		dst := filepath.Join(work, "shallow")
		c.run(work, "clone", "--depth", "2", srv.url, dst)
		c.run(dst, "fsck", "--strict", "--no-dangling")
		if got := walks(); len(got) != 1 || got[0] != 0 {
			t.Errorf("walks took closed packs %v, want [0]", got)
		}
		if got := strings.TrimSpace(c.run(dst, "rev-list", "--count", "HEAD")); got != "2" {
			t.Errorf("%s commits", got)
		}
	})
	srv.checkNoErrors(t)
}

// tagsInto lists the annotated tags of dir that point into ref's history.
func tagsInto(t *testing.T, c *gitClient, dir, ref string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(c.run(dir, "for-each-ref", "--format=%(objecttype) %(refname)", "refs/tags")), "\n") {
		typ, name, _ := strings.Cut(line, " ")
		if typ != "tag" {
			continue
		}
		if ref == "--all" {
			out = append(out, name)
			continue
		}
		if _, _, err := c.try(dir, "merge-base", "--is-ancestor", name+"^{}", ref); err == nil {
			out = append(out, name)
		}
	}
	return out
}
