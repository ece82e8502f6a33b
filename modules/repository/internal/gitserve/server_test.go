package gitserve

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
)

// testServer serves one bare repository at /repo.git through the
// package's functions, as the HTTP layer does (without auth).
type testServer struct {
	tb    testing.TB
	dir   string
	store *gitpack.Store
	url   string

	mu       sync.Mutex
	requests int     // POSTs served
	errs     []error // errors UploadPack returned
	packs    []int   // objects in each pack sent (with record)
	record   bool
	noV2     bool // serve protocol v0 only
}

func newTestServer(tb testing.TB, dir string) *testServer {
	tb.Helper()
	st, err := gitpack.Open(dir, gitpack.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	s := &testServer{tb: tb, dir: dir, store: st}
	hs := httptest.NewServer(s)
	tb.Cleanup(func() {
		hs.Close()
		st.Close()
	})
	s.url = hs.URL + "/repo.git"
	return s
}

// repo reads the refs and HEAD of the served repository.
func (s *testServer) repo() (Repo, error) {
	return readRepo(s.dir, s.store)
}

// readRepo lists refs with git for-each-ref (the refs are the HTTP
// layer's business; the test only needs them right).
func readRepo(dir string, st *gitpack.Store) (Repo, error) {
	out, err := exec.Command("git", "--git-dir", dir, "for-each-ref", "--format=%(objectname) %(refname)").Output()
	if err != nil {
		return Repo{}, err
	}
	repo := Repo{Objects: st}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		h, name, _ := strings.Cut(line, " ")
		repo.Refs = append(repo.Refs, Ref{Name: plumbing.ReferenceName(name), Hash: plumbing.NewHash(h)})
	}
	head, err := exec.Command("git", "--git-dir", dir, "symbolic-ref", "HEAD").Output()
	if err == nil {
		target := plumbing.ReferenceName(strings.TrimSpace(string(head)))
		for _, r := range repo.Refs {
			if r.Name == target {
				repo.Head = target
			}
		}
	}
	return repo, nil
}

func (s *testServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	repo, err := s.repo()
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	switch {
	case r.Method == "GET" && r.URL.Path == "/repo.git/info/refs":
		service := r.URL.Query().Get("service")
		w.Header().Set("Content-Type", "application/x-"+service+"-advertisement")
		w.Header().Set("Cache-Control", "no-cache")
		switch service {
		case "git-upload-pack":
			if s.v2(r) {
				err = AdvertiseUploadPackV2(w, repo)
			} else {
				err = AdvertiseUploadPack(w, repo)
			}
		case "git-receive-pack":
			err = AdvertiseReceivePack(w, repo, []string{"report-status", "delete-refs", "ofs-delta", "agent=" + Agent})
		default:
			http.Error(w, "dumb protocol not supported", 403)
			return
		}
		if err != nil {
			s.tb.Errorf("advertise: %v", err)
		}
	case r.Method == "POST" && r.URL.Path == "/repo.git/git-upload-pack":
		body := io.Reader(r.Body)
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = zr
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
		w.Header().Set("Cache-Control", "no-cache")
		s.mu.Lock()
		record := s.record
		s.mu.Unlock()
		var out io.Writer = w
		var rec bytes.Buffer
		if record {
			out = io.MultiWriter(w, &rec)
		}
		var err error
		if s.v2(r) {
			err = UploadPackV2(r.Context(), out, body, repo)
		} else {
			err = UploadPack(r.Context(), out, body, repo)
		}
		s.mu.Lock()
		s.requests++
		if err != nil {
			s.errs = append(s.errs, err)
		}
		if n, ok := packObjects(rec.Bytes()); ok {
			s.packs = append(s.packs, n)
		}
		s.mu.Unlock()
	default:
		http.NotFound(w, r)
	}
}

func (s *testServer) v2(r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.noV2 && IsProtocolV2(r.Header.Get("Git-Protocol"))
}

// gitEnv is a clean environment for the git CLI.
func gitEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com")
}

// gitClient runs the git CLI with a private HOME.
type gitClient struct {
	tb   testing.TB
	home string
	opts []string // e.g. -c protocol.version=0
}

func newGitClient(tb testing.TB, opts ...string) *gitClient {
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git CLI not installed")
	}
	return &gitClient{tb: tb, home: tb.TempDir(), opts: opts}
}

func (c *gitClient) cmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(context.Background(), "git", append(append([]string{}, c.opts...), args...)...)
	cmd.Dir = dir
	cmd.Env = gitEnv(c.home)
	return cmd
}

// run runs git and fails the test on error; it returns stdout.
func (c *gitClient) run(dir string, args ...string) string {
	c.tb.Helper()
	out, errOut, err := c.try(dir, args...)
	if err != nil {
		c.tb.Fatalf("git %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// try runs git and returns stdout, stderr and the error.
func (c *gitClient) try(dir string, args ...string) (string, string, error) {
	cmd := c.cmd(dir, args...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// copyRepo copies a bare repository (with cp -a) into a temp dir.
func copyRepo(tb testing.TB, src string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), "repo.git")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		tb.Fatalf("cp: %v\n%s", err, out)
	}
	return dst
}

// refsOf returns "hash name" lines of all refs in a repository.
func refsOf(tb testing.TB, c *gitClient, dir string, pattern ...string) string {
	tb.Helper()
	return c.run(dir, append([]string{"for-each-ref", "--format=%(objectname) %(refname)"}, pattern...)...)
}

// cgitServer serves the same kind of URL through C git's http-backend,
// to compare behaviour and speed. It speaks protocol v0 only, as this
// package does (the Git-Protocol header is dropped).
func cgitServer(tb testing.TB, dir string) string { return cgitServerWith(tb, dir, false, nil) }

// cgitServerWith serves dir through git-http-backend; with v2 the client
// may use protocol v2; wrap may change the CGI handler.
func cgitServerWith(tb testing.TB, dir string, v2 bool, wrap func(*cgi.Handler)) string {
	tb.Helper()
	backend := "/usr/lib/git-core/git-http-backend"
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	if _, err := os.Stat(backend); err != nil {
		tb.Skip("git-http-backend not installed")
	}
	env := []string{
		"GIT_PROJECT_ROOT=" + filepath.Dir(dir),
		"GIT_HTTP_EXPORT_ALL=1",
		"GIT_CONFIG_NOSYSTEM=1",
		"HOME=" + tb.TempDir(),
	}
	h := &cgi.Handler{Path: backend, Root: "/git", Env: env}
	if wrap != nil {
		wrap(h)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !v2 {
			r.Header.Del("Git-Protocol")
		}
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(hs.Close)
	return hs.URL + "/git/" + filepath.Base(dir)
}

// markClosed repacks a repository into one closed pack of everything its
// refs reach, with gitpack.Repack.
func markClosed(tb testing.TB, c *gitClient, dir string) {
	tb.Helper()
	st, err := gitpack.Open(dir, gitpack.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	tips := refTips(tb, c, dir)
	objs, err := Enumerate(st, tips)
	if err != nil {
		tb.Fatal(err)
	}
	if err := st.Repack(objs, tips); err != nil {
		tb.Fatal(err)
	}
}

// packObjects finds the pack in an upload-pack response on side-band-64k
// (v0 or v2) and returns its object count.
func packObjects(resp []byte) (int, bool) {
	var data []byte
	for len(resp) >= 4 {
		n, ok := unhex4(resp[:4])
		if !ok {
			return 0, false
		}
		if n < 4 { // flush, delim
			resp = resp[4:]
			continue
		}
		if n > len(resp) {
			return 0, false
		}
		payload := resp[4:n]
		resp = resp[n:]
		if len(payload) > 0 && payload[0] == bandData {
			data = append(data, payload[1:]...)
		}
	}
	if len(data) < 12 || string(data[:4]) != "PACK" {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(data[8:12])), true
}

// lastPack returns the object count of the last pack sent.
func (s *testServer) lastPack(t *testing.T) int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.packs) == 0 {
		t.Fatal("no pack recorded")
	}
	return s.packs[len(s.packs)-1]
}
