package internal

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// TestAheadBehindAgreesWithGit: on a history with diverged branches,
// merges both ways and a branch with nothing in common, aheadBehind
// counts what git rev-list --left-right --count a...b counts; with too
// small a budget it says the counts are not exact.
func TestAheadBehindAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	at := 1700000000
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		at++
		date := fmt.Sprintf("%d +0000", at)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=T",
			"GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(msg string) { run("commit", "-q", "--allow-empty", "-m", msg) }
	run("init", "-q", "-b", "master")
	for i := range 5 {
		commit(fmt.Sprint("base ", i))
	}
	run("checkout", "-q", "-b", "feature")
	for i := range 3 {
		commit(fmt.Sprint("feature ", i))
	}
	run("checkout", "-q", "master")
	for i := range 4 {
		commit(fmt.Sprint("master ", i))
	}
	run("checkout", "-q", "-b", "merged", "feature")
	run("merge", "-q", "--no-edit", "master")
	commit("after merge")
	run("checkout", "-q", "master")
	run("merge", "-q", "--no-edit", "--no-ff", "feature")
	run("checkout", "-q", "--orphan", "lonely")
	commit("alone 1")
	commit("alone 2")
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	head := func(ref string) plumbing.Hash { return plumbing.NewHash(run("rev-parse", ref)) }
	pairs := [][2]string{{"feature", "master"}, {"master", "feature"}, {"merged", "master"}, {"master", "merged"},
		{"lonely", "master"}, {"master~3", "feature~1"}, {"master", "master"}}
	for _, p := range pairs {
		want := run("rev-list", "--left-right", "--count", p[0]+"..."+p[1])
		budget := 1000
		ahead, behind, exact, err := aheadBehind(repo, head(p[0]), head(p[1]), &budget)
		if err != nil || !exact {
			t.Fatalf("%s...%s: %v exact=%v", p[0], p[1], err, exact)
		}
		if got := fmt.Sprintf("%d\t%d", ahead, behind); got != want {
			t.Errorf("%s...%s: %q, git says %q", p[0], p[1], got, want)
		}
	}
	budget := 3
	if _, _, exact, err := aheadBehind(repo, head("lonely"), head("master"), &budget); err != nil || exact || budget != 0 {
		t.Errorf("a small budget: exact=%v err=%v left %d", exact, err, budget)
	}
}
