package internal_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// When the store cannot say whether a branch is protected, writes to it are
// refused (fail closed), through the API and through git push alike.
func TestUnreadableProtectionRefusesWrites(t *testing.T) {
	t.Parallel()
	var db *store.DB
	s := stocktest.Start(t, fennectest.WithExtract(&db))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("closed")})
	if err != nil {
		t.Fatal(err)
	}
	file := func(branch, name string) *gitlab.CreateCommitOptions {
		return &gitlab.CreateCommitOptions{Branch: gitlab.Ptr(branch), CommitMessage: gitlab.Ptr(name),
			Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr(name), Content: gitlab.Ptr("x")}}}
	}
	c1, _, err := s.Client.Commits.CreateCommit(p.ID, file("master", "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Do(t, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d/repository/branches/master/protect", p.ID), nil,
		"PRIVATE-TOKEN", s.RootToken); r.Body.Close() != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("protect: %d", r.StatusCode)
	}
	// The protection's record becomes unreadable.
	if err := db.Update(context.Background(), func(tx *store.Tx) error {
		rows := store.Keys("repository.protected_branches")
		c := rows.Cursor(tx)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if err := rows.Put(tx, append([]byte(nil), k...), []byte("{not json")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	if _, resp, err := s.Client.Commits.CreateCommit(p.ID, file("master", "b.txt")); err == nil || resp == nil || resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("commit to a branch of unknown protection: %v", err)
	}
	if _, err := exec.LookPath("git"); err == nil {
		work := t.TempDir()
		remote := strings.Replace(s.URL, "http://", "http://"+url.UserPassword("root", s.RootToken).String()+"@", 1) +
			"/" + p.PathWithNamespace + ".git"
		mustGit(t, work, "clone", "-q", remote, ".")
		if err := os.WriteFile(work+"/c.txt", []byte("c"), 0o644); err != nil {
			t.Fatal(err)
		}
		mustGit(t, work, "add", "c.txt")
		mustGit(t, work, "commit", "-q", "-m", "c")
		if out, err := git(t, work, "push", "origin", "HEAD:master"); err == nil || !strings.Contains(out, "could not check the branch protection") {
			t.Fatalf("push to a branch of unknown protection: %v\n%s", err, out)
		}
	}
	if b, _, err := s.Client.Branches.GetBranch(p.ID, "master"); err != nil || b.Commit.ID != c1.ID {
		t.Fatalf("master moved: %v", err)
	}
}
