package internal

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"go.uber.org/zap"

	fconfig "github.com/fennec-forge/fennec/core/config"
)

func git1(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("git %v: %v %s", args, err, msg)
	}
	return strings.TrimSpace(string(out))
}

// refWorld is a Storage with one repository holding two commits.
type refWorld struct {
	st   *Storage
	repo *git.Repository
	dir  string
	a, b plumbing.Hash
}

func newRefWorld(t *testing.T) *refWorld {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	cfg := fconfig.Default()
	cfg.Data = t.TempDir()
	st := NewStorage(cfg, nil, zap.NewNop())
	repo, err := st.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := st.Path(1)
	tree := git1(t, dir, "mktree")
	a := git1(t, dir, "commit-tree", tree, "-m", "a")
	b := git1(t, dir, "commit-tree", tree, "-p", a, "-m", "b")
	return &refWorld{st: st, repo: repo, dir: dir, a: plumbing.NewHash(a), b: plumbing.NewHash(b)}
}

func (w *refWorld) update(t *testing.T, name string, old, new plumbing.Hash) error {
	t.Helper()
	return w.st.UpdateRefs(1, w.repo, []RefUpdate{{Name: plumbing.ReferenceName(name), Old: old, New: new}}, false)[0]
}

// listed is what IterReferences gives, as sorted "name hash" lines.
func (w *refWorld) listed(t *testing.T) string {
	t.Helper()
	iter, err := w.repo.Storer.IterReferences()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	_ = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference {
			out = append(out, r.Name().String()+" "+r.Hash().String())
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// gitListed is the same list as git sees it.
func (w *refWorld) gitListed(t *testing.T) string {
	t.Helper()
	return git1(t, w.dir, "for-each-ref", "--format=%(refname) %(objectname)")
}

func TestRefStoreAgreesWithGit(t *testing.T) {
	w := newRefWorld(t)
	z := plumbing.ZeroHash
	for _, u := range []struct {
		name     string
		old, new plumbing.Hash
	}{
		{"refs/heads/master", z, w.a},
		{"refs/heads/a/b", z, w.a},
		{"refs/tags/v1", z, w.b},
		{"refs/heads/master", w.a, w.b},
	} {
		if err := w.update(t, u.name, u.old, u.new); err != nil {
			t.Fatalf("%s: %v", u.name, err)
		}
	}
	if err := w.update(t, "refs/heads/master", w.a, w.b); !errors.Is(err, ErrRefMoved) {
		t.Fatalf("a stale old value: %v", err)
	}
	if got, want := w.listed(t), w.gitListed(t); got != want {
		t.Fatalf("refs:\n%s\ngit sees:\n%s", got, want)
	}
	// A deleted nested ref leaves no directory in the way of its parent name.
	if err := w.update(t, "refs/heads/a/b", w.a, z); err != nil {
		t.Fatal(err)
	}
	if err := w.update(t, "refs/heads/a", z, w.b); err != nil {
		t.Fatalf("a ref where a deleted one's directory was: %v", err)
	}
	// Packed refs: read, overridden by a loose write, removed by a delete.
	git1(t, w.dir, "pack-refs", "--all")
	if got, want := w.listed(t), w.gitListed(t); got != want {
		t.Fatalf("packed refs:\n%s\ngit sees:\n%s", got, want)
	}
	if err := w.update(t, "refs/tags/v1", w.b, z); err != nil {
		t.Fatal(err)
	}
	if err := w.update(t, "refs/heads/master", w.b, w.a); err != nil {
		t.Fatal(err)
	}
	if got, want := w.listed(t), w.gitListed(t); got != want || strings.Contains(got, "refs/tags/v1") {
		t.Fatalf("after changing packed refs:\n%s\ngit sees:\n%s", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(w.dir, "packed-refs")); strings.Contains(string(b), "refs/tags/v1") {
		t.Fatalf("the deleted tag is still in packed-refs:\n%s", b)
	}
	// HEAD is written the same way and stays symbolic.
	if err := w.repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/a")); err != nil {
		t.Fatal(err)
	}
	if got := git1(t, w.dir, "symbolic-ref", "HEAD"); got != "refs/heads/a" {
		t.Fatalf("HEAD is %s", got)
	}
	git1(t, w.dir, "fsck", "--strict", "--no-dangling")
	if out := git1(t, w.dir, "for-each-ref"); strings.Contains(out, ".lock") {
		t.Fatalf("a lock file is left:\n%s", out)
	}
}

// A lock file or an empty ref file never breaks readers; a fresh lock (a
// git command at work) refuses a write, an old one (a crash's leftover) is
// taken over.
func TestRefStoreLocksAndLeftovers(t *testing.T) {
	w := newRefWorld(t)
	if err := w.update(t, "refs/heads/master", plumbing.ZeroHash, w.a); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(w.dir, "refs", "heads", "master.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := w.listed(t); got != "refs/heads/master "+w.a.String() {
		t.Fatalf("with a lock file present, the refs are:\n%s", got)
	}
	if err := w.update(t, "refs/heads/master", w.a, w.b); !errors.Is(err, errRefLocked) {
		t.Fatalf("a write under a fresh lock: %v", err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if err := w.update(t, "refs/heads/master", w.a, w.b); err != nil {
		t.Fatalf("a write under a stale lock: %v", err)
	}
	if _, err := os.Stat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock is still there: %v", err)
	}
	// An empty loose file (left by go-git's in-place write and a crash) is
	// no ref: the packed value shows through, and listing works.
	git1(t, w.dir, "pack-refs", "--all")
	if err := os.WriteFile(filepath.Join(w.dir, "refs", "heads", "master"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "refs", "heads", "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := w.listed(t); got != "refs/heads/master "+w.b.String() {
		t.Fatalf("with empty ref files, the refs are:\n%s", got)
	}
	if r, err := w.repo.Reference("refs/heads/master", true); err != nil || r.Hash() != w.b {
		t.Fatalf("master: %v %v", r, err)
	}
	// Names that leave refs/ are refused at the last step too.
	for _, bad := range []string{"refs/heads/../../config", "config", "refs//x", "refs/heads/a\\b"} {
		if err := w.update(t, bad, plumbing.ZeroHash, w.a); err == nil {
			t.Errorf("%q was written", bad)
		}
	}
}
