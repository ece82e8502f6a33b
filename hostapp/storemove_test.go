package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest/pgserver"
)

// stopServer ends a server the way an operator does, and waits for it.
func stopServer(t *testing.T, s *server) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop")
	}
}

// fennecCmd runs the binary with extra environment and returns its output.
func fennecCmd(env []string, args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// instanceContent is what TestPostgresInstanceBackupRestoreAndCopy writes
// through the API and git, and checks on every copy of the instance.
type instanceContent struct {
	projectID int
	issueIID  int
	commit    string
}

// checkInstance starts a server on data (with env naming its store) and
// finds the project, its issue and its pushed commit, cloning the
// repository; then stops the server.
func checkInstance(t *testing.T, what, data string, want instanceContent, env ...string) {
	t.Helper()
	s := startServer(t, data, env...)
	defer stopServer(t, s)
	c := newCrashClient(s, login(t, s))
	defer c.close()
	var p struct {
		PathWithNamespace string `json:"path_with_namespace"`
	}
	c.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d", want.projectID), nil, http.StatusOK, &p)
	var issue struct {
		Title string `json:"title"`
	}
	c.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d/issues/%d", want.projectID, want.issueIID), nil, http.StatusOK, &issue)
	var commit struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	c.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d/repository/commits/main", want.projectID), nil, http.StatusOK, &commit)
	if p.PathWithNamespace != "root/moved" || issue.Title != "survives the move" || commit.ID != want.commit {
		t.Fatalf("%s: project %q, issue %q, commit %s (want %s)", what, p.PathWithNamespace, issue.Title, commit.ID, want.commit)
	}
	git := gitRunner(t)
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := git(t.TempDir(), "clone", "-q", fmt.Sprintf("http://root:password-123@%s/root/moved.git", s.addr), clone); err != nil {
		t.Fatalf("%s: clone: %v %s", what, err, out)
	}
	if head, _ := git(clone, "rev-parse", "HEAD"); head != want.commit {
		t.Fatalf("%s: the clone's HEAD is %s, want %s", what, head, want.commit)
	}
}

// TestPostgresInstanceBackupRestoreAndCopy runs an instance on a real
// PostgreSQL, writes a project with an issue and a pushed commit, and
// moves it every way an operator can (admin commands reach it running and
// stopped): an online backup restored into
// bbolt and into another database (not into one that holds data), and
// fennec store copy from PostgreSQL to bbolt and from bbolt to
// PostgreSQL. A server on each copy serves the same project.
func TestPostgresInstanceBackupRestoreAndCopy(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	t.Parallel()
	pg := pgserver.Shared(t)
	live := pg.NewDatabase(t)
	data := t.TempDir()
	s := startServer(t, data, "FENNEC_ROOT_PASSWORD=password-123", "FENNEC_STORE="+live)
	c := newCrashClient(s, login(t, s))
	defer c.close()
	var want instanceContent
	var p struct {
		ID int `json:"id"`
	}
	c.mustJSON(t, http.MethodPost, "/projects", map[string]any{"name": "moved"}, http.StatusCreated, &p)
	want.projectID = p.ID
	var issue struct {
		IID int `json:"iid"`
	}
	c.mustJSON(t, http.MethodPost, fmt.Sprintf("/projects/%d/issues", p.ID), map[string]any{"title": "survives the move"}, http.StatusCreated, &issue)
	want.issueIID = issue.IID
	git := gitRunner(t)
	work := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "first"},
		{"push", "-q", fmt.Sprintf("http://root:password-123@%s/root/moved.git", s.addr), "main"}} {
		if out, err := git(work, args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	want.commit, _ = git(work, "rev-parse", "HEAD")

	// The online backup finds the server by its admin socket: PostgreSQL
	// holds no lock to tell it.
	archive := filepath.Join(t.TempDir(), "pg.tar")
	if out, err := fennecCmd([]string{"FENNEC_STORE=" + live}, "backup", "--data", data, archive); err != nil || !strings.Contains(out, "wrote "+archive) {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if s.logs.await("online backup served") == nil {
		t.Fatalf("the backup did not go through the server; log:\n%s", s.logs.text())
	}
	// Nor is the store copied, or restored over, under a running server.
	if out, err := fennecCmd(nil, "store", "copy", "--data", data, "--store", live, "--to", "bbolt"); err == nil || !strings.Contains(out, "server is running") {
		t.Fatalf("copy under a running server: %v %s", err, out)
	}

	intoBolt := filepath.Join(t.TempDir(), "bolt")
	if out, err := fennecCmd(nil, "restore", "--data", intoBolt, archive); err != nil {
		t.Fatalf("restore into bbolt: %v\n%s", err, out)
	}
	other := pg.NewDatabase(t)
	intoPG := filepath.Join(t.TempDir(), "pg")
	out, err := fennecCmd(nil, "restore", "--data", intoPG, "--store", other, archive)
	if err != nil || !strings.Contains(out, "loaded into the PostgreSQL database") {
		t.Fatalf("restore into PostgreSQL: %v\n%s", err, out)
	}
	// The live database holds data: a restore into it is refused.
	refused := filepath.Join(t.TempDir(), "refused")
	if out, err := fennecCmd([]string{"FENNEC_STORE=" + live}, "restore", "--data", refused, archive); err == nil || !strings.Contains(out, "already holds Fennec data") {
		t.Fatalf("restore into a database with data: %v\n%s", err, out)
	}
	// Admin commands reach the instance through its socket while it runs,
	// and open the database named by --store once it is stopped.
	if out, err := fennecCmd([]string{"FENNEC_STORE=" + live}, "user", "list", "--data", data); err != nil || !strings.Contains(out, "root") {
		t.Fatalf("user list while serving: %v %s", err, out)
	}
	stopServer(t, s)
	if out, err := fennecCmd(nil, "user", "list", "--data", data, "--store", live); err != nil || !strings.Contains(out, "root") {
		t.Fatalf("user list offline: %v %s", err, out)
	}
	if out, err := fennecCmd(nil, "user", "list", "--data", data, "--store", pg.NewDatabase(t)); err == nil || !strings.Contains(out, "no Fennec data") {
		t.Fatalf("user list on an empty database: %v %s", err, out)
	}

	checkInstance(t, "restored into bbolt", intoBolt, want)
	checkInstance(t, "restored into PostgreSQL", intoPG, want, "FENNEC_STORE="+other)

	// Moving with store copy: the stopped PostgreSQL instance to its data
	// directory's fennec.db, and the bbolt instance to a new database.
	out, err = fennecCmd(nil, "store", "copy", "--data", data, "--store", live, "--to", "bbolt")
	if err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("copy to bbolt: %v\n%s", err, out)
	}
	checkInstance(t, "copied to bbolt", data, want)
	third := pg.NewDatabase(t)
	out, err = fennecCmd(nil, "store", "copy", "--data", intoBolt, "--to", third)
	if err != nil || !strings.Contains(out, "verified") {
		t.Fatalf("copy to PostgreSQL: %v\n%s", err, out)
	}
	checkInstance(t, "copied to PostgreSQL", intoBolt, want, "FENNEC_STORE="+third)
	// Into a database that holds data: refused.
	if out, err := fennecCmd(nil, "store", "copy", "--data", intoBolt, "--to", other); err == nil || !strings.Contains(out, "already holds Fennec data") {
		t.Fatalf("copy into a database with data: %v %s", err, out)
	}
}
