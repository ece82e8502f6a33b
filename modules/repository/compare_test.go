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

// compare from..to lists the commits of "to" that "from" lacks, oldest
// first, and the diff from their merge base (git diff from...to).
func TestCompareMatchesGit(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	// master moves on; feature gets two commits of its own.
	gitCmd(t, w.work, "checkout", "-q", "feature")
	for i, body := range []string{"one\n", "two\n"} {
		if err := os.WriteFile(filepath.Join(w.work, "feature.txt"), []byte(strings.Repeat(body, i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		gitCmd(t, w.work, "add", ".")
		gitCmd(t, w.work, "commit", "-q", "-m", "feature "+body)
	}
	gitCmd(t, w.work, "checkout", "-q", "master")
	if err := os.WriteFile(filepath.Join(w.work, "master.txt"), []byte("m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, w.work, "add", ".")
	gitCmd(t, w.work, "commit", "-q", "-m", "master moves")
	gitCmd(t, w.work, "push", "-q", pushTarget(t, w), "master", "feature")

	cmp, _, err := w.s.NewClient(t, "").Repositories.Compare(w.project.ID, &gitlab.CompareOptions{From: gitlab.Ptr("master"), To: gitlab.Ptr("feature")})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(gitCmd(t, w.work, "rev-list", "--reverse", "master..feature"), "\n")
	if len(cmp.Commits) != len(want) {
		t.Fatalf("%d commits, git says %d", len(cmp.Commits), len(want))
	}
	for i, c := range cmp.Commits {
		if c.ID != want[i] {
			t.Fatalf("commit %d is %s, git says %s", i, c.ID, want[i])
		}
	}
	if cmp.Commit == nil || cmp.Commit.ID != gitCmd(t, w.work, "rev-parse", "feature") || cmp.CompareSameRef || cmp.CompareTimeout {
		t.Fatalf("commit/flags %+v", cmp)
	}
	// Merge-base semantics: master's own new file is not in the diff.
	if len(cmp.Diffs) != 1 || cmp.Diffs[0].NewPath != "feature.txt" || !cmp.Diffs[0].NewFile ||
		cmp.Diffs[0].Diff != gitHunks(t, w.work, "master...feature", "", "feature.txt") {
		t.Fatalf("diffs %+v", cmp.Diffs)
	}
	same, _, err := w.s.Client.Repositories.Compare(w.project.ID, &gitlab.CompareOptions{From: gitlab.Ptr("master"), To: gitlab.Ptr(gitCmd(t, w.work, "rev-parse", "master"))})
	if err != nil || !same.CompareSameRef || len(same.Commits) != 0 || len(same.Diffs) != 0 || same.Commit != nil {
		t.Fatalf("same ref %+v %v", same, err)
	}
	resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/compare?from=master", nil, nil)
	if resp.StatusCode != 400 || strings.TrimSpace(string(body)) != `{"error":"to is missing"}` {
		t.Fatalf("missing to: %d %s", resp.StatusCode, body)
	}
	resp, body = w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/compare?from=master&to=nope", nil, nil)
	if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Commit Not Found"}` {
		t.Fatalf("unknown ref: %d %s", resp.StatusCode, body)
	}
}
