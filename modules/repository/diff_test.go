package repository_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

// gitHunks is git's diff of one file between two commits, from its first
// "@@" on (the part GitLab puts in an entry's "diff").
func gitHunks(t *testing.T, dir, from, to string, paths ...string) string {
	t.Helper()
	args := []string{"diff", "-M", from}
	if to != "" {
		args = append(args, to)
	}
	out := gitCmd(t, dir, append(append(args, "--"), paths...)...)
	if i := strings.Index(out, "\n@@ "); i >= 0 {
		return out[i+1:] + "\n"
	}
	return ""
}

func TestCommitDiffMatchesGit(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	// One more commit: a rename, a deletion and a modification.
	gitCmd(t, w.work, "mv", "docs/guide/intro.md", "docs/guide/start.md")
	gitCmd(t, w.work, "rm", "-q", "run.sh")
	if err := os.WriteFile(filepath.Join(w.work, "README.md"), []byte("hello\nthere\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, w.work, "commit", "-q", "-am", "third")
	head := gitCmd(t, w.work, "rev-parse", "HEAD")
	// Push through the same path as the world did.
	gitCmd(t, w.work, "push", "-q", pushTarget(t, w), "master")

	diffs, _, err := w.s.NewClient(t, "").Commits.GetCommitDiff(w.project.ID, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*gitlab.Diff{}
	for _, d := range diffs {
		byPath[d.NewPath] = d
	}
	if len(diffs) != 3 {
		t.Fatalf("%d entries: %+v", len(diffs), diffs)
	}
	readme := byPath["README.md"]
	if readme == nil || readme.NewFile || readme.DeletedFile || readme.RenamedFile || readme.Diff != gitHunks(t, w.work, "HEAD~1", "HEAD", "README.md") {
		t.Fatalf("README.md entry %+v\ngit:\n%s", readme, gitHunks(t, w.work, "HEAD~1", "HEAD", "README.md"))
	}
	gone := byPath["run.sh"]
	if gone == nil || !gone.DeletedFile || gone.AMode != "100755" || gone.Diff != gitHunks(t, w.work, "HEAD~1", "HEAD", "run.sh") {
		t.Fatalf("run.sh entry %+v", gone)
	}
	moved := byPath["docs/guide/start.md"]
	if moved == nil || !moved.RenamedFile || moved.OldPath != "docs/guide/intro.md" {
		t.Fatalf("rename entry %+v", moved)
	}
	// The root commit diffs against nothing: every file is new.
	root := gitCmd(t, w.work, "rev-list", "--max-parents=0", "HEAD")
	rootDiffs, _, err := w.s.Client.Commits.GetCommitDiff(w.project.ID, root, nil)
	if err != nil || len(rootDiffs) != 2 || !rootDiffs[0].NewFile || !rootDiffs[1].NewFile {
		t.Fatalf("root commit diff %+v %v", rootDiffs, err)
	}
	resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/commits/0123456789abcdef0123456789abcdef01234567/diff", nil, nil)
	if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Commit Not Found"}` {
		t.Fatalf("unknown commit: %d %s", resp.StatusCode, body)
	}
}
