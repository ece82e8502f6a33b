package conformance

import (
	"archive/zip"
	"bytes"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// gitServer is a real git smart-HTTP server (git http-backend behind
// net/http/cgi) holding one project, group/project.git, with two commits
// on main. It takes the job token as the password of gitlab-ci-token, as
// Fennec does.
type gitServer struct {
	URL        string // http://127.0.0.1:port
	Token      string
	First      string // sha of the first commit (README, version.txt "one")
	Second     string // sha of the second commit, main's head (version.txt "two")
	mu         sync.Mutex
	authFailed int
}

// RepoURL is the project's URL with token as the job token, as GitLab
// puts it in the job payload.
func (g *gitServer) RepoURL(token string) string {
	return strings.Replace(g.URL, "http://", "http://gitlab-ci-token:"+token+"@", 1) + "/group/project.git"
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Conformance", "GIT_AUTHOR_EMAIL=c@example.com",
		"GIT_COMMITTER_NAME=Conformance", "GIT_COMMITTER_EMAIL=c@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func startGitServer(t *testing.T) *gitServer {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("the conformance suite needs git on this machine: %v", err)
	}
	root := t.TempDir()
	bare := filepath.Join(root, "group", "project.git")
	run(t, root, git, "init", "-q", "--bare", "-b", "main", bare)
	work := t.TempDir()
	run(t, work, git, "init", "-q", "-b", "main", ".")
	os.WriteFile(filepath.Join(work, "README"), []byte("conformance\n"), 0o644)
	os.WriteFile(filepath.Join(work, "version.txt"), []byte("one\n"), 0o644)
	os.WriteFile(filepath.Join(work, ".gitignore"), []byte("*.tmp\n"), 0o644)
	run(t, work, git, "add", ".")
	run(t, work, git, "commit", "-q", "-m", "one")
	first := run(t, work, git, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(work, "version.txt"), []byte("two\n"), 0o644)
	run(t, work, git, "commit", "-q", "-am", "two")
	second := run(t, work, git, "rev-parse", "HEAD")
	run(t, work, git, "push", "-q", bare, "main")

	g := &gitServer{Token: "job-token-" + randomWord(), First: first, Second: second}
	backend := &cgi.Handler{Path: git, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "gitlab-ci-token" || pass != g.Token {
			g.mu.Lock()
			g.authFailed++
			g.mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Basic realm="fennec"`)
			http.Error(w, "HTTP Basic: Access denied", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

// artifactServer answers dependencies' archives at /jobs/<id>/artifacts,
// to the JOB-TOKEN of each.
type artifactServer struct {
	URL   string
	mu    sync.Mutex
	files map[string][]byte // path -> zip
	token map[string]string // path -> JOB-TOKEN
}

func startArtifactServer(t *testing.T) *artifactServer {
	t.Helper()
	a := &artifactServer{files: map[string][]byte{}, token: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		data, ok := a.files[r.URL.Path]
		token := a.token[r.URL.Path]
		a.mu.Unlock()
		switch {
		case !ok:
			http.NotFound(w, r)
		case r.Header.Get("JOB-TOKEN") != token:
			http.Error(w, "403 Forbidden", http.StatusForbidden)
		default:
			w.Header().Set("Content-Type", "application/zip")
			w.Write(data)
		}
	}))
	t.Cleanup(srv.Close)
	a.URL = srv.URL
	return a
}

// add serves a zip of entries (name -> content) for job id and returns
// its URL.
func (a *artifactServer) add(t *testing.T, id int64, token string, entries [][2]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e[0], Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := fmt.Sprintf("/jobs/%d/artifacts", id)
	a.mu.Lock()
	a.files[p], a.token[p] = buf.Bytes(), token
	a.mu.Unlock()
	return a.URL + p
}
