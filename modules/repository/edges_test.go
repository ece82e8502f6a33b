package repository_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

// since is inclusive of commits on or after it, until of commits on or
// before it (the spec), at the second.
func TestSinceUntilBoundaries(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	dates := []string{"2017-01-01T10:00:00Z", "2017-01-02T10:00:00Z", "2017-01-03T10:00:00Z"}
	for i, d := range dates {
		if err := os.WriteFile(filepath.Join(w.work, "dated.txt"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		gitCmd(t, w.work, "add", ".")
		cmd := exec.Command("git", "commit", "-q", "-m", "dated "+string(rune('a'+i)))
		cmd.Dir = w.work
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
	}
	gitCmd(t, w.work, "push", "-q", w.bare, "master")
	titles := func(q string) string {
		var list []struct {
			Title string `json:"title"`
		}
		r, raw := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/commits?"+q, nil, &list)
		if r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", q, r.StatusCode, raw)
		}
		var out []string
		for _, c := range list {
			if strings.HasPrefix(c.Title, "dated") {
				out = append(out, c.Title)
			}
		}
		return strings.Join(out, ",")
	}
	for q, want := range map[string]string{
		"since=2017-01-02T10:00:00Z":                            "dated c,dated b",
		"until=2017-01-02T10:00:00Z":                            "dated b,dated a",
		"since=2017-01-02T10:00:00Z&until=2017-01-02T10:00:00Z": "dated b",
		"since=2017-01-02T10:00:01Z&until=2017-01-03T09:59:59Z": "",
		"since=2017-01-01&until=2017-01-03T10:00:00%2B00:00":    "dated c,dated b,dated a",
	} {
		if got := titles(q); got != want {
			t.Errorf("%s: got %q, want %q", q, got, want)
		}
	}
	r, raw := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/commits?since=yesterday", nil, nil)
	if r.StatusCode != 400 || strings.TrimSpace(string(raw)) != `{"error":"since is invalid"}` {
		t.Fatalf("bad since: %d %s", r.StatusCode, raw)
	}
}

// Binary content and a file name that is not UTF-8 never break a read.
func TestBinaryAndNonUTF8Names(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	odd := "caf\xe9.txt" // Latin-1, not UTF-8
	if err := os.WriteFile(filepath.Join(w.work, odd), []byte("x\n"), 0o644); err != nil {
		t.Skipf("the file system refuses non-UTF-8 names: %v", err)
	}
	if err := os.WriteFile(filepath.Join(w.work, "bin", "blob.dat"), []byte("\x00changed\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, w.work, "add", ".")
	gitCmd(t, w.work, "commit", "-q", "-m", "odd name and binary change")
	gitCmd(t, w.work, "push", "-q", w.bare, "master")
	id := store.IDString(w.project.ID)
	for _, path := range []string{"/repository/tree?recursive=true", "/repository/commits/master/diff", "/repository/compare?from=v1.0&to=master", "/repository/archive.zip"} {
		r, raw := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+id+path, nil, nil)
		if r.StatusCode != 200 {
			t.Errorf("%s: %d %s", path, r.StatusCode, raw)
		}
	}
	var diffs []struct {
		NewPath string `json:"new_path"`
		Diff    string `json:"diff"`
	}
	w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+id+"/repository/commits/master/diff", nil, &diffs)
	found := false
	for _, d := range diffs {
		if d.NewPath == "bin/blob.dat" {
			found = true
			if !strings.HasPrefix(d.Diff, "Binary files") {
				t.Errorf("binary diff %q", d.Diff)
			}
		}
	}
	if !found || len(diffs) != 2 {
		t.Fatalf("diffs %+v", diffs)
	}
}
