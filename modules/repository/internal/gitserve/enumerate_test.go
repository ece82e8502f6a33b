package gitserve

import (
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// refTips lists the targets of every ref of a repository.
func refTips(t testing.TB, c *gitClient, dir string) []plumbing.Hash {
	t.Helper()
	var tips []plumbing.Hash
	for _, line := range strings.Split(strings.TrimSpace(c.run(dir, "for-each-ref", "--format=%(objectname)")), "\n") {
		tips = append(tips, plumbing.NewHash(line))
	}
	return tips
}

func checkEnumerate(t *testing.T, c *gitClient, dir string) {
	st, err := gitpack.Open(dir, gitpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := Enumerate(st, refTips(t, c, dir))
	if err != nil {
		t.Fatal(err)
	}
	gotS := make([]string, len(got))
	for i, h := range got {
		gotS[i] = h.String()
	}
	sort.Strings(gotS)
	var wantS []string
	for _, line := range strings.Split(strings.TrimSpace(c.run(dir, "rev-list", "--objects", "--all")), "\n") {
		id, _, _ := strings.Cut(line, " ")
		wantS = append(wantS, id)
	}
	sort.Strings(wantS)
	if strings.Join(gotS, "\n") != strings.Join(wantS, "\n") {
		t.Errorf("Enumerate: %d objects, rev-list --objects --all %d", len(gotS), len(wantS))
		for i := 0; i < len(gotS) && i < len(wantS); i++ {
			if gotS[i] != wantS[i] {
				t.Errorf("first difference at %d: %s vs %s", i, gotS[i], wantS[i])
				break
			}
		}
	}
}

func TestEnumerate(t *testing.T) {
	c := newGitClient(t)
	t.Run("small with tags", func(t *testing.T) {
		checkEnumerate(t, c, readOnlySmallRepo(t))
	})
	t.Run("closed pack", func(t *testing.T) {
		dir := closedRepo(t, c)
		walks := recordWalks(t)
		checkEnumerate(t, c, dir)
		if got := walks(); len(got) != 1 || got[0] != 1 {
			t.Errorf("walks took closed packs %v, want [1]", got)
		}
	})
	t.Run("2000 commits", func(t *testing.T) {
		if testing.Short() {
			t.Skip("short")
		}
		checkEnumerate(t, c, repotest.Reference(t, repotest.Shape{Commits: 2000, Files: 500}))
	})
}
