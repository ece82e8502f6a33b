package gitserve

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// The repositories most tests serve are built once per package run and
// shared by the tests that only read them (a test that adds commits or
// refs builds its own): building one costs a copy and a dozen git
// commands, and the tests run in parallel.

// fixtureRoot holds the shared repositories; TestMain removes it.
var fixtureRoot = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "fennec-gitserve-fixtures-") })

// shared is one read-only repository, built by the first test that asks.
type shared struct {
	once sync.Once
	dir  string
	err  error
}

var sharedSmall, sharedRich shared

// get builds the repository with build, in the first asking test, and
// moves it where every test can read it for the rest of the run.
func (s *shared) get(t *testing.T, name string, build func() string) string {
	t.Helper()
	s.once.Do(func() {
		// Stays the answer when build fails the first test (Goexit).
		s.err = fmt.Errorf("the shared %s repository failed to build: see the first test that asked for it", name)
		root, err := fixtureRoot()
		if err != nil {
			s.err = err
			return
		}
		dir := filepath.Join(root, name+".git")
		if err := os.Rename(build(), dir); err != nil {
			s.err = err
			return
		}
		s.dir, s.err = dir, nil
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.dir
}

// smallShape is the reference repository most tests serve; under -short
// a smaller one (fewer files and commits) of the same kinds of objects.
// The tests' numbers follow smallShape, so both sizes check the same.
func smallShape() repotest.Shape {
	if testing.Short() {
		return repotest.Shape{Commits: 160, Files: 50, Binaries: 1}
	}
	return repotest.Shape{Commits: 300, Files: 200, Binaries: 1}
}

// readOnlySmallRepo is smallRepo, shared: for tests that do not write to
// the served repository.
func readOnlySmallRepo(t *testing.T) string {
	t.Helper()
	return sharedSmall.get(t, "small", func() string { return smallRepo(t, newGitClient(t)) })
}

// readOnlyRichRepo is richRepo, shared: copy it before writing to it.
func readOnlyRichRepo(t *testing.T) string {
	t.Helper()
	return sharedRich.get(t, "rich", func() string { return richRepo(t, newGitClient(t)) })
}

func removeFixtures() {
	if root, err := fixtureRoot(); err == nil {
		os.RemoveAll(root)
	}
}
