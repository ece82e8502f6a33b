package repository_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/internal"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

func drain(t *testing.T, bus *events.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A repository is made on disk when its project is first used (not when it
// is created: creating a project is one row in the store), copied with a
// fork and removed with the project, at the hashed path.
func TestRepositoryFollowsTheProject(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	t.Parallel()
	var bus *events.Bus
	var repos repository.Store
	s := stocktest.Start(t, fennectest.WithExtract(&bus, &repos))
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("code"), Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, bus)
	path := repos.Path(p.ID)
	if !strings.Contains(path, filepath.Join(s.DataDir, "repositories", "@hashed")) || !strings.HasSuffix(path, ".git") {
		t.Fatalf("path %s", path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a repository on disk before the project was used: %v", err)
	}
	// Used: an empty repository, as GitLab shows a new project's.
	if branches, _, err := s.Client.Branches.ListBranches(p.ID, nil); err != nil || len(branches) != 0 {
		t.Fatalf("branches of a new project: %v %v", branches, err)
	}
	r, err := git.PlainOpen(path)
	if err != nil {
		t.Fatalf("no repository once used: %v", err)
	}
	head, err := r.Storer.Reference("HEAD")
	if err != nil || head.Target().String() != "refs/heads/master" {
		t.Fatalf("HEAD %v %v", head, err)
	}

	// Some history, pushed with the git CLI straight into the bare repository.
	work := t.TempDir()
	gitCmd(t, work, "init", "-q", "-b", "master")
	if err := os.WriteFile(filepath.Join(work, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, work, "add", ".")
	gitCmd(t, work, "commit", "-q", "-m", "first")
	gitCmd(t, work, "push", "-q", path, "master")
	want := gitCmd(t, work, "rev-parse", "HEAD")

	u := s.CreateUser(t, "forker")
	fork, _, err := u.Client.Projects.ForkProject(p.ID, &gitlab.ForkProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, bus)
	forkPath := repos.Path(fork.ID)
	if got := gitCmd(t, forkPath, "rev-parse", "refs/heads/master"); got != want {
		t.Fatalf("fork has %s, want %s", got, want)
	}
	gitCmd(t, forkPath, "fsck", "--strict")

	// Deleting the source leaves the fork intact (objects were linked or copied).
	if _, err := s.Client.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	drain(t, bus)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("repository still there after the project was deleted: %v", err)
	}
	gitCmd(t, forkPath, "fsck", "--strict")
	if got := gitCmd(t, forkPath, "cat-file", "-p", want+":README.md"); got != "hello" {
		t.Fatalf("fork content %q", got)
	}
}

// Open creates a repository for a project whose creation event has not been
// handled yet, and a later fork event replaces such an empty one.
func TestOpenCreatesLazily(t *testing.T) {
	t.Parallel()
	var repos *internal.Storage // Open is no longer the public Store's
	stocktest.Start(t, fennectest.WithExtract(&repos))
	r, err := repos.Open(context.Background(), 4242)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head(); err == nil {
		t.Fatal("a new repository has no commits, so HEAD must not resolve")
	}
	if _, err := os.Stat(filepath.Join(repos.Path(4242), "objects")); err != nil {
		t.Fatalf("not a bare repository: %v", err)
	}
}
