package repository_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// A project's repository is made when the project is first used, and only
// a repository that had content is missed when the data directory loses
// it: after the repositories are removed and the server restarted, the
// project that had commits is a failed import, while a project never used
// and one only read are served as empty repositories, as before.
func TestOnlyWrittenRepositoriesAreMissed(t *testing.T) {
	t.Parallel()
	dir, password := t.TempDir(), "written-root-pw"
	var unused, read, written int64
	t.Run("before", func(t *testing.T) {
		s := stocktest.Start(t, fennectest.WithDataDir(dir, password))
		unused = stocktest.NewProject(t, s.Client, "unused", "private").ID
		read = stocktest.NewProject(t, s.Client, "read", "private").ID
		if _, _, err := s.Client.Branches.ListBranches(read, nil); err != nil {
			t.Fatal(err)
		}
		written = stocktest.NewProject(t, s.Client, "written", "private").ID
		stocktest.CommitFiles(t, s.Client, written, "master", "first", map[string]string{"a.txt": "a\n"})
	})
	if t.Failed() {
		return
	}
	if err := os.RemoveAll(filepath.Join(dir, "repositories")); err != nil {
		t.Fatal(err)
	}

	s := stocktest.Start(t, fennectest.WithDataDir(dir, password))
	status := func(id int64) (string, string) {
		t.Helper()
		p, _, err := s.Client.Projects.GetProject(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(p.ImportStatus), p.ImportError
	}
	// The check runs in the background once the server answers.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, _ := status(written); st == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the project whose repository had commits was not reported missing")
		}
	}
	if _, msg := status(written); !strings.Contains(msg, "missing") {
		t.Errorf("import_error of the lost repository: %q", msg)
	}
	if _, resp, err := s.Client.Branches.ListBranches(written, nil); err == nil || resp == nil || resp.StatusCode == http.StatusOK {
		t.Errorf("the lost repository was served (made anew): %v", err)
	}
	for name, id := range map[string]int64{"never used": unused, "only read": read} {
		if st, msg := status(id); st == "failed" {
			t.Errorf("%s: import %s %q; an empty repository loses nothing", name, st, msg)
		}
		if branches, _, err := s.Client.Branches.ListBranches(id, nil); err != nil || len(branches) != 0 {
			t.Errorf("%s: branches %v, %v; want an empty repository", name, branches, err)
		}
	}
}
