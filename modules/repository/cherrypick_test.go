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

func TestCherryPick(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	// feature gets a change of its own; master then picks it.
	gitCmd(t, w.work, "checkout", "-q", "feature")
	if err := os.WriteFile(filepath.Join(w.work, "picked.txt"), []byte("pick me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, w.work, "add", ".")
	gitCmd(t, w.work, "commit", "-q", "-m", "a change to pick")
	pick := gitCmd(t, w.work, "rev-parse", "HEAD")
	gitCmd(t, w.work, "push", "-q", w.bare, "feature")

	c, resp, err := w.s.Client.Commits.CherryPickCommit(w.project.ID, pick, &gitlab.CherryPickCommitOptions{Branch: gitlab.Ptr("master")})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("pick: %v", err)
	}
	if c.AuthorEmail != "t@example.com" || !strings.Contains(c.Message, "(cherry picked from commit "+pick+")") || len(c.ParentIDs) != 1 || c.ParentIDs[0] != w.head {
		t.Fatalf("picked commit %+v", c)
	}
	if got := gitCmd(t, w.bare, "rev-parse", "refs/heads/master"); got != c.ID {
		t.Fatalf("master is %s, want %s", got, c.ID)
	}
	if got := gitCmd(t, w.bare, "show", c.ID+":picked.txt"); got != "pick me" {
		t.Fatalf("content %q", got)
	}
	gitCmd(t, w.bare, "fsck", "--strict")
	// Picking it again changes nothing: refused with GitLab's message.
	r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/commits/"+pick+"/cherry_pick?branch=master", nil, nil, "PRIVATE-TOKEN", w.s.RootToken)
	if r.StatusCode != 400 || !strings.Contains(string(raw), "cannot cherry-pick this commit automatically") {
		t.Fatalf("repeat pick: %d %s", r.StatusCode, raw)
	}
	for path, want := range map[string]string{
		"/repository/commits/" + pick + "/cherry_pick?branch=nope":                               `{"message":"404 Branch Not Found"}`,
		"/repository/commits/0123456789abcdef0123456789abcdef01234567/cherry_pick?branch=master": `{"message":"404 Commit Not Found"}`,
	} {
		r, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(w.project.ID)+path, nil, nil, "PRIVATE-TOKEN", w.s.RootToken)
		if r.StatusCode != 404 || strings.TrimSpace(string(raw)) != want {
			t.Errorf("%s: %d %s", path, r.StatusCode, raw)
		}
	}
}
