package repository_test

// import_url is fetched by the server on a user's behalf: local and
// private destinations are refused unless the administrator allows local
// requests, every unreachable source gives the same import_error (no port
// scanning through imports), and imports run a bounded number at a time.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
)

// allowLocal lets imports reach this machine (config allow_local_requests).
var allowLocal = fennectest.WithConfig(func(c *config.Config) { c.AllowLocalRequests = true })

// errUnreachable is the one import_error of a source that cannot be read.
const errUnreachable = "Unable to access repository: the remote could not be reached, is not a git repository, or refused the credentials"

// createImport creates a project with import_url as root and returns the
// answer.
func createImport(t *testing.T, g *gitServer, name, importURL string) (int, map[string]any, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name, "import_url": importURL})
	var out map[string]any
	r, raw := g.JSON(t, http.MethodPost, "/api/v4/projects", bytes.NewReader(body), &out, "PRIVATE-TOKEN", g.RootToken, "Content-Type", "application/json")
	return r.StatusCode, out, strings.TrimSpace(string(raw))
}

// importState is a project's import_status and import_error.
func importState(t *testing.T, g *gitServer, id any) (string, string) {
	t.Helper()
	var p struct {
		ImportStatus string  `json:"import_status"`
		ImportError  *string `json:"import_error"`
	}
	if r, raw := g.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%v", id), nil, &p, "PRIVATE-TOKEN", g.RootToken); r.StatusCode != 200 {
		t.Fatalf("project %v: %d %s", id, r.StatusCode, raw)
	}
	msg := ""
	if p.ImportError != nil {
		msg = *p.ImportError
	}
	return p.ImportStatus, msg
}

// importDone waits for a project's import to end and returns its state.
func importDone(t *testing.T, g *gitServer, id any) (string, string) {
	t.Helper()
	var status, msg string
	deadline := time.Now().Add(time.Minute)
	for {
		status, msg = importState(t, g, id)
		if status == "finished" || status == "failed" || time.Now().After(deadline) {
			return status, msg
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// importSource makes a public project with two branches and a tag to import.
func importSource(t *testing.T, g *gitServer) (*gitlab.Project, string) {
	t.Helper()
	src := g.project(t, "source", gitlab.PublicVisibility)
	work := g.cli.newWork(t)
	g.cli.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.cli.ok(t, work, "tag", "-a", "v1", "-m", "v one")
	g.cli.ok(t, work, "branch", "side")
	g.cli.commit(t, work, "two", map[string]string{"b.txt": "2\n"})
	g.seed(t, src, work, "--tags", "master", "side")
	return src, refsOf(t, g.bare(src))
}

func TestImportRefusesLocalDestinations(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	src, _ := importSource(t, g)
	_, port, _ := net.SplitHostPort(g.host)
	path := "/" + src.PathWithNamespace + ".git"

	// A host that is literally a local address: 400 at once.
	localhost := `{"message":{"import_url":["is blocked: Requests to localhost are not allowed"]}}`
	network := `{"message":{"import_url":["is blocked: Requests to the local network are not allowed"]}}`
	linkLocal := `{"message":{"import_url":["is blocked: Requests to the link local network are not allowed"]}}`
	for raw, want := range map[string]string{
		"http://127.0.0.1:" + port + path:                 localhost,
		"http://root:secret@127.0.0.1:" + port + path:     localhost,
		"https://[::1]:" + port + path:                    localhost,
		"http://[::ffff:127.0.0.1]:" + port + path:        localhost,
		"http://2130706433:" + port + path:                localhost,
		"git://0.0.0.0/x.git":                             localhost,
		"http://10.1.2.3/x.git":                           network,
		"https://192.168.0.10/x.git":                      network,
		"http://[fd00::1]/x.git":                          network,
		"http://169.254.169.254/latest/meta-data/":        linkLocal,
		"http://[::ffff:169.254.169.254]/computeMetadata": linkLocal,
	} {
		status, _, body := createImport(t, g, "blocked", raw)
		if status != 400 || body != want {
			t.Errorf("import_url %s: %d %s, want 400 %s", raw, status, body, want)
		}
	}
	if r, _ := g.JSON(t, http.MethodGet, "/api/v4/projects/root%2Fblocked", nil, nil, "PRIVATE-TOKEN", g.RootToken); r.StatusCode != 404 {
		t.Errorf("a refused import made a project: %d", r.StatusCode)
	}
	// Changing import_url later is checked the same way.
	r, raw := g.JSON(t, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d", src.ID), strings.NewReader(`{"name":"source","import_url":"http://127.0.0.1/x.git"}`), nil,
		"PRIVATE-TOKEN", g.RootToken, "Content-Type", "application/json")
	if r.StatusCode != 400 || strings.TrimSpace(string(raw)) != localhost {
		t.Errorf("PUT import_url: %d %s", r.StatusCode, raw)
	}

	// A name that resolves to one is refused when connecting: the import
	// fails with the generic error, and nothing is imported.
	for i, raw := range []string{"http://localhost:" + port + path, "http://root:secret@localhost:" + port + path, "git://localhost/x.git"} {
		status, p, body := createImport(t, g, fmt.Sprintf("via-name-%d", i), raw)
		if status != 201 {
			t.Fatalf("import_url %s: %d %s", raw, status, body)
		}
		st, msg := importDone(t, g, p["id"])
		if st != "failed" || msg != errUnreachable {
			t.Errorf("import_url %s: %s %q, want failed %q", raw, st, msg, errUnreachable)
		}
		// Nothing on disk (a repository is made when first used), or an
		// empty repository.
		bare := hashedRepoPath(g.DataDir, int64(p["id"].(float64)))
		if _, err := os.Stat(bare); err == nil {
			if refs := refsOf(t, bare); refs != "" {
				t.Errorf("import_url %s imported refs:\n%s", raw, refs)
			}
		}
	}
}

func TestImportAllowedLocalRequests(t *testing.T) {
	t.Parallel()
	g := startGit(t, allowLocal)
	src, want := importSource(t, g)
	_, port, _ := net.SplitHostPort(g.host)
	for i, host := range []string{"localhost", "127.0.0.1"} {
		status, p, body := createImport(t, g, fmt.Sprintf("imported-%d", i), "http://root:"+g.RootToken+"@"+host+":"+port+"/"+src.PathWithNamespace+".git")
		if status != 201 {
			t.Fatalf("%s: %d %s", host, status, body)
		}
		if st, msg := importDone(t, g, p["id"]); st != "finished" || msg != "" {
			t.Fatalf("%s: import %s %q", host, st, msg)
		}
		bare := hashedRepoPath(g.DataDir, int64(p["id"].(float64)))
		if got := refsOf(t, bare); got != want {
			t.Errorf("%s: imported refs\n%s\nwant\n%s", host, got, want)
		}
		fsck(t, bare)
	}
}

// Whatever keeps an import from reading the source, the import_error is
// the same: a closed port, open ports that speak something else, an HTTP
// server that is no git server or wants credentials, an unknown host.
func TestImportErrorsDoNotTellPortsApart(t *testing.T) {
	t.Parallel()
	g := startGit(t, allowLocal)

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	banner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer banner.Close()
	go func() {
		for {
			c, err := banner.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			time.Sleep(100 * time.Millisecond)
			c.Close()
		}
	}()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>hello</html>"))
	}))
	defer html.Close()
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer auth.Close()

	for i, raw := range []string{
		"http://" + closedAddr + "/x.git",
		"https://" + closedAddr + "/x.git",
		"git://" + closedAddr + "/x.git",
		"http://" + banner.Addr().String() + "/x.git",
		"git://" + banner.Addr().String() + "/x.git",
		notFound.URL + "/x.git",
		html.URL + "/x.git",
		auth.URL + "/x.git",
		strings.Replace(auth.URL, "http://", "http://user:hunter2@", 1) + "/x.git",
		"http://no-such-host.invalid/x.git",
	} {
		status, p, body := createImport(t, g, fmt.Sprintf("unreachable-%d", i), raw)
		if status != 201 {
			t.Fatalf("%s: %d %s", raw, status, body)
		}
		if st, msg := importDone(t, g, p["id"]); st != "failed" || msg != errUnreachable {
			t.Errorf("%s: %s %q, want failed %q", raw, st, msg, errUnreachable)
		}
	}
}

// blockingSource is an HTTP server that holds every request until released
// and counts how many it holds at once.
type blockingSource struct {
	*httptest.Server
	mu       sync.Mutex
	active   int
	peak     int
	requests int
	release  chan struct{}
	once     sync.Once
}

// done releases the held requests (and all later ones).
func (b *blockingSource) done() { b.once.Do(func() { close(b.release) }) }

func newBlockingSource(t *testing.T) *blockingSource {
	b := &blockingSource{release: make(chan struct{})}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.active++
		b.requests++
		b.peak = max(b.peak, b.active)
		b.mu.Unlock()
		select {
		case <-b.release:
		case <-r.Context().Done():
		}
		b.mu.Lock()
		b.active--
		b.mu.Unlock()
		http.NotFound(w, r)
	}))
	// Released before closing: Close waits for the requests it holds.
	t.Cleanup(func() { b.done(); b.Close() })
	return b
}

func (b *blockingSource) counts() (active, peak, requests int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.active, b.peak, b.requests
}

// Two imports run at once, 32 more wait as "scheduled", and one more than
// that fails at once.
func TestImportConcurrencyBound(t *testing.T) {
	t.Parallel()
	g := startGit(t, allowLocal)
	src := newBlockingSource(t)
	const running, waiting = 2, 32
	var ids []any
	for i := range running + waiting + 1 {
		status, p, body := createImport(t, g, fmt.Sprintf("queued-%d", i), fmt.Sprintf("%s/p%d.git", src.URL, i))
		if status != 201 {
			t.Fatalf("create %d: %d %s", i, status, body)
		}
		ids = append(ids, p["id"])
	}
	last := ids[len(ids)-1]
	if st, msg := importDone(t, g, last); st != "failed" || msg != "Too many imports are waiting; create the project again later" {
		t.Fatalf("the import past the queue: %s %q", st, msg)
	}
	if !eventually(func() bool { a, _, _ := src.counts(); return a == running }) {
		a, _, _ := src.counts()
		t.Fatalf("%d imports reached the source, want %d", a, running)
	}
	time.Sleep(300 * time.Millisecond) // room for a third, if there were one
	if a, peak, _ := src.counts(); a != running || peak != running {
		t.Fatalf("%d imports at the source (peak %d), want %d", a, peak, running)
	}
	started, scheduled := 0, 0
	for _, id := range ids[:len(ids)-1] {
		switch st, _ := importState(t, g, id); st {
		case "started":
			started++
		case "scheduled":
			scheduled++
		default:
			t.Errorf("project %v: import %s", id, st)
		}
	}
	if started != running || scheduled != waiting {
		t.Errorf("%d started and %d scheduled, want %d and %d", started, scheduled, running, waiting)
	}
	src.done()
	for _, id := range ids[:len(ids)-1] {
		if st, msg := importDone(t, g, id); st != "failed" || msg != errUnreachable {
			t.Errorf("project %v: %s %q", id, st, msg)
		}
	}
	if _, peak, requests := src.counts(); peak != running || requests != running+waiting {
		t.Errorf("peak %d, %d requests; want %d and %d", peak, requests, running, running+waiting)
	}
}
