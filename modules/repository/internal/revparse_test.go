package internal

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// commitHash (the light resolver of the hot write paths) must name the same
// commit as resolveCommit (the go-git one every read uses) and as git
// rev-parse, for every spelling of a revision, loose and packed alike.
func TestCommitHashAgreesWithResolveCommit(t *testing.T) {
	w := newRefWorld(t)
	git1(t, w.dir, "update-ref", "refs/heads/master", w.b.String())
	git1(t, w.dir, "update-ref", "refs/heads/feature", w.a.String())
	git1(t, w.dir, "tag", "light", w.a.String())
	git1(t, w.dir, "tag", "-a", "-m", "annotated", "annotated", w.b.String())
	git1(t, w.dir, "tag", "-a", "-m", "nested", "nested", "annotated")
	// A tag and a branch of the same name: the tag wins, as in git.
	git1(t, w.dir, "update-ref", "refs/heads/light", w.b.String())
	git1(t, w.dir, "symbolic-ref", "refs/heads/alias", "refs/heads/feature")
	tree := git1(t, w.dir, "write-tree")

	revs := []string{
		"", "master", "feature", "light", "annotated", "nested", "alias", "HEAD",
		"refs/heads/master", "refs/heads/light", "refs/tags/light", "heads/feature", "tags/annotated",
		w.a.String(), w.b.String(), w.a.String()[:7], w.b.String()[:12],
		git1(t, w.dir, "rev-parse", "annotated"), // the tag object's own id
		tree, "missing", "mast", "../master", "refs/heads/../x", "master..feature", "0000000",
	}
	check := func(stage string) {
		repo, err := w.st.Open(t.Context(), 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, rev := range revs {
			want := plumbing.ZeroHash
			if c, err := resolveCommit(repo, rev, "master"); err == nil {
				want = c.Hash
			}
			got, err := w.st.commitHash(1, rev, "master")
			if err != nil {
				got = plumbing.ZeroHash
			}
			if got != want {
				t.Errorf("%s: %q: commitHash %s, resolveCommit %s", stage, rev, got, want)
			}
		}
		for rev, want := range map[string]plumbing.Hash{"nested": w.b, "light": w.a, "alias": w.a, "": w.b} {
			if got, err := w.st.commitHash(1, rev, "master"); err != nil || got != want {
				t.Errorf("%s: %q: %s, %v; want %s", stage, rev, got, err, want)
			}
		}
	}
	check("loose")
	git1(t, w.dir, "pack-refs", "--all")
	git1(t, w.dir, "repack", "-a", "-d")
	git1(t, w.dir, "prune-packed")
	if o, err := w.st.Objects(1); err == nil {
		_ = o.Reload()
	}
	check("packed")
}
