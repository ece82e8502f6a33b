package repository_test

// Helpers for the black-box tests of git over smart HTTP: a running Fennec,
// the real git CLI in a clean environment (its own HOME, no system config,
// no prompts, every HTTP answer traced so that a 5xx fails the test), raw
// HTTP with pkt-lines, and snapshots of a served bare repository.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// zeroSHA is git's "no object".
const zeroSHA = "0000000000000000000000000000000000000000"

// gitCommandTimeout bounds one git command, so that a server that hangs
// fails the test instead of the whole run.
const gitCommandTimeout = 3 * time.Minute

// gitServer is a running Fennec for git tests.
type gitServer struct {
	*fennectest.Server
	bus  *events.Bus
	host string // 127.0.0.1:port
	cli  *gitCLI
}

// startGit starts the stock application (skipping when the git CLI is
// missing).
func startGit(t *testing.T, opts ...fennectest.Option) *gitServer {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	g := &gitServer{}
	s := stocktest.Start(t, append([]fennectest.Option{fennectest.WithExtract(&g.bus)}, opts...)...)
	g.Server = s
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	g.host = u.Host
	g.cli = newGitCLI(t)
	return g
}

// hashedRepoPath is where Fennec keeps a project's bare repository:
// <data>/repositories/@hashed/<h[0:2]>/<h[2:4]>/<h>.git, h the hex sha256
// of the decimal project id.
func hashedRepoPath(dataDir string, projectID int64) string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(projectID, 10)))
	h := hex.EncodeToString(sum[:])
	return filepath.Join(dataDir, "repositories", "@hashed", h[:2], h[2:4], h+".git")
}

func (g *gitServer) bare(p *gitlab.Project) string { return hashedRepoPath(g.DataDir, p.ID) }

// touchRepository reads the project's repository through the API, which
// makes it on disk if nobody had touched it yet (a repository is made when
// first used, not with its project): tests that write straight into the
// bare repository on disk call it first.
func touchRepository(t *testing.T, c *gitlab.Client, projectID int64) {
	t.Helper()
	if _, _, err := c.Branches.ListBranches(projectID, nil); err != nil {
		t.Fatalf("touch the repository of project %d: %v", projectID, err)
	}
}

// project creates a project as root (in root's namespace) with the given
// visibility and waits for its repository.
func (g *gitServer) project(t *testing.T, name string, vis gitlab.VisibilityValue) *gitlab.Project {
	t.Helper()
	p, _, err := g.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr(name), Visibility: gitlab.Ptr(vis)})
	if err != nil {
		t.Fatalf("create project %s: %v", name, err)
	}
	drain(t, g.bus)
	return p
}

// addMember adds u to the project with the given access level.
func (g *gitServer) addMember(t *testing.T, p *gitlab.Project, u *fennectest.User, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := g.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: u.ID, AccessLevel: gitlab.Ptr(level)}); err != nil {
		t.Fatalf("add %s to %s: %v", u.Username, p.PathWithNamespace, err)
	}
}

// url is the project's git URL with user:secret in it (anonymous when user
// is empty).
func (g *gitServer) url(p *gitlab.Project, user, secret string) string {
	return g.pathURL("/"+p.PathWithNamespace+".git", user, secret)
}

func (g *gitServer) pathURL(path, user, secret string) string {
	if user == "" {
		return "http://" + g.host + path
	}
	return "http://" + url.UserPassword(user, secret).String() + "@" + g.host + path
}

// rootURL is the project's git URL with root's credentials.
func (g *gitServer) rootURL(p *gitlab.Project) string { return g.url(p, "root", g.RootToken) }

// seed writes history straight into the project's bare repository on disk
// (not through the server) from the local repository dir: the branches and
// tags given, or master and all tags.
func (g *gitServer) seed(t *testing.T, p *gitlab.Project, dir string, refs ...string) {
	t.Helper()
	touchRepository(t, g.Client, p.ID)
	bare := g.bare(p)
	if _, err := os.Stat(filepath.Join(bare, "HEAD")); err != nil {
		t.Fatalf("project %d has no repository at %s (hashed path): %v", p.ID, bare, err)
	}
	if len(refs) == 0 {
		refs = []string{"--tags", "master"}
	}
	g.cli.ok(t, dir, append([]string{"push", "-q", bare}, refs...)...)
}

// gitCLI runs the git CLI with a clean environment of its own.
type gitCLI struct {
	home string
	env  []string
	n    atomic.Int64
}

func newGitCLI(t *testing.T) *gitCLI {
	t.Helper()
	home := t.TempDir()
	cfg := "[user]\n\tname = T\n\temail = t@example.com\n[init]\n\tdefaultBranch = master\n" +
		"[advice]\n\tdetachedHead = false\n[gc]\n\tauto = 0\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") ||
			strings.HasPrefix(kv, "SSH_ASKPASS=") || strings.HasPrefix(kv, "http_proxy=") || strings.HasPrefix(kv, "HTTP_PROXY=") ||
			strings.HasPrefix(kv, "all_proxy=") || strings.HasPrefix(kv, "ALL_PROXY=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_TRACE_CURL_NO_DATA=1", "NO_PROXY=*", "no_proxy=*", "LC_ALL=C", "LANG=C")
	return &gitCLI{home: home, env: env}
}

// A 5xx in git's curl trace.
var serverError = regexp.MustCompile(`<= Recv header: HTTP/[0-9.]+ 5[0-9][0-9]`)

// try runs git in dir with stdin (may be nil) and returns its stdout and
// stderr. Whatever git's outcome, a 5xx answer from the server fails the
// test.
func (c *gitCLI) try(t *testing.T, dir string, stdin []byte, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	trace := filepath.Join(c.home, fmt.Sprintf("curl-trace-%d", c.n.Add(1)))
	ctx, cancel := context.WithTimeout(context.Background(), gitCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, c.env...), "GIT_TRACE_CURL="+trace)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("git %s: no answer within %s\nstderr:\n%s", redact(args), gitCommandTimeout, e.String())
	}
	if raw, rerr := os.ReadFile(trace); rerr == nil {
		_ = os.Remove(trace)
		if m := serverError.Find(raw); m != nil {
			t.Errorf("git %s: the server answered %s\nstderr:\n%s", redact(args), m, e.String())
		}
	}
	return o.String(), e.String(), err
}

// ok runs git and fails the test when it fails; it returns the trimmed
// stdout.
func (c *gitCLI) ok(t *testing.T, dir string, args ...string) string {
	t.Helper()
	o, e, err := c.try(t, dir, nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v\nstdout:\n%s\nstderr:\n%s", redact(args), err, o, e)
	}
	return strings.TrimSpace(o)
}

// okErr is ok returning stderr too.
func (c *gitCLI) okErr(t *testing.T, dir string, args ...string) (stdout, stderr string) {
	t.Helper()
	o, e, err := c.try(t, dir, nil, args...)
	if err != nil {
		t.Fatalf("git %s: %v\nstdout:\n%s\nstderr:\n%s", redact(args), err, o, e)
	}
	return strings.TrimSpace(o), e
}

// fail runs git, fails the test when it succeeds, and returns its stderr.
func (c *gitCLI) fail(t *testing.T, dir string, args ...string) string {
	t.Helper()
	o, e, err := c.try(t, dir, nil, args...)
	if err == nil {
		t.Fatalf("git %s succeeded but must fail\nstdout:\n%s\nstderr:\n%s", redact(args), o, e)
	}
	return e
}

// redact hides passwords in URLs of a command line for messages.
func redact(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if u, err := url.Parse(a); err == nil && u.User != nil {
			u.User = url.User(u.User.Username())
			a = u.String()
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// newWork makes an empty local repository (branch master).
func (c *gitCLI) newWork(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	c.ok(t, dir, "init", "-q", "-b", "master")
	return dir
}

// commit writes files (path -> content) in the work tree of dir and commits
// them; it returns the new commit's id.
func (c *gitCLI) commit(t *testing.T, dir, msg string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		full := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.ok(t, dir, "add", "-A")
	c.ok(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return c.ok(t, dir, "rev-parse", "HEAD")
}

// fastImport adds n commits on top of branch in dir with git fast-import,
// each changing one small file; it checks the branch out and returns its
// new tip.
func (c *gitCLI) fastImport(t *testing.T, dir, branch string, n int, tag string) string {
	t.Helper()
	var b strings.Builder
	parent, _, err := c.try(t, dir, nil, "rev-parse", "--verify", "-q", "refs/heads/"+branch)
	parent = strings.TrimSpace(parent)
	if err != nil {
		parent = ""
	}
	data := func(s string) { fmt.Fprintf(&b, "data %d\n%s\n", len(s), s) }
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "commit refs/heads/%s\nmark :%d\n", branch, i)
		fmt.Fprintf(&b, "committer T <t@example.com> %d +0000\n", 1700000000+i)
		data(fmt.Sprintf("%s commit %d\n\nbody %d", tag, i, i))
		switch {
		case i > 1:
			fmt.Fprintf(&b, "from :%d\n", i-1)
		case parent != "":
			fmt.Fprintf(&b, "from %s\n", parent)
		}
		fmt.Fprintf(&b, "M 644 inline %s/counter.txt\n", tag)
		data(fmt.Sprintf("%s %d\n", tag, i))
		if i%10 == 0 {
			fmt.Fprintf(&b, "M 644 inline %s/file-%d.txt\n", tag, i)
			data(fmt.Sprintf("file %d of %s\n", i, tag))
		}
	}
	if _, e, err := c.try(t, dir, []byte(b.String()), "fast-import", "--quiet"); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, e)
	}
	c.ok(t, dir, "checkout", "-q", "-f", branch)
	return c.ok(t, dir, "rev-parse", "HEAD")
}

// fsck checks a bare repository with git fsck --strict.
func fsck(t *testing.T, bare string) {
	t.Helper()
	cmd := exec.Command("git", "fsck", "--strict", "--no-dangling", "--no-progress")
	cmd.Dir = bare
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("git fsck --strict in %s: %v\n%s", bare, err, out)
	}
}

// bareGit runs a read-only git command in a served bare repository.
func bareGit(t *testing.T, bare string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = bare
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("git %v in %s: %v %s", args, bare, err, msg)
	}
	return strings.TrimSpace(string(out))
}

// refsOf lists the refs of a bare repository as "sha ref" lines.
func refsOf(t *testing.T, bare string) string {
	t.Helper()
	return bareGit(t, bare, "for-each-ref", "--format=%(objectname) %(refname)")
}

// refsNow is refsOf for polling a repository that may be replaced while it
// is read (an import renames its finished copy into place): "" when git
// cannot read it at that moment.
func refsNow(bare string) string {
	cmd := exec.Command("git", "for-each-ref", "--format=%(objectname) %(refname)")
	cmd.Dir = bare
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// refOf is the object a ref of a bare repository points at, or "" when
// there is no such ref.
func refOf(t *testing.T, bare, ref string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", ref)
	cmd.Dir = bare
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// repoState is what must not change when the server refuses a request:
// the refs, HEAD, and every file and directory of the bare repository
// (objects, packs, refs, locks, quarantines), with the sizes of files.
func repoState(t *testing.T, bare string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("refs:\n" + refsOf(t, bare) + "\n")
	head, err := os.ReadFile(filepath.Join(bare, "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("HEAD: " + string(head) + "files:\n")
	var files []string
	err = filepath.WalkDir(bare, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(bare, path)
		if d.IsDir() {
			files = append(files, rel+"/")
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, fmt.Sprintf("%s %d", rel, info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	b.WriteString(strings.Join(files, "\n"))
	return b.String()
}

// sameState fails the test when the repository's state changed.
func sameState(t *testing.T, what, before, after string) {
	t.Helper()
	if before != after {
		t.Errorf("%s changed the repository:\nbefore:\n%s\nafter:\n%s", what, before, after)
	}
}

// rawResponse is an answer read completely.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// noRedirects is an HTTP client that shows redirects instead of following
// them and gives up after a minute.
var noRedirects = &http.Client{
	Timeout:       time.Minute,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport:     &http.Transport{DisableCompression: true, Proxy: nil},
}

// raw sends a request with net/http; user may be empty for none. Headers
// are name, value pairs.
func (g *gitServer) raw(t *testing.T, method, path, user, secret string, body io.Reader, headers ...string) rawResponse {
	t.Helper()
	req, err := http.NewRequest(method, g.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, secret)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: raw}
}

// verbatim sends a GET with the request target exactly as given (no
// cleaning, no re-encoding) over a plain TCP connection.
func (g *gitServer) verbatim(t *testing.T, target, user, secret string) rawResponse {
	t.Helper()
	conn, err := net.DialTimeout("tcp", g.host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	req := "GET " + target + " HTTP/1.1\r\nHost: " + g.host + "\r\nUser-Agent: git/2.39.5\r\nConnection: close\r\n"
	if user != "" {
		r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
		r.SetBasicAuth(user, secret)
		req += "Authorization: " + r.Header.Get("Authorization") + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: raw}
}

// pkt frames s as a pkt-line.
func pkt(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// pktLines splits a pkt-line stream into its payloads ("" for a flush). It
// stops at the first thing that is not a pkt-line (a pack, say) and returns
// the rest.
func pktLines(b []byte) (lines []string, rest []byte) {
	for len(b) >= 4 {
		n, err := strconv.ParseUint(string(b[:4]), 16, 16)
		if err != nil {
			return lines, b
		}
		switch {
		case n == 0:
			lines = append(lines, "")
			b = b[4:]
			continue
		case n < 4 || int(n) > len(b):
			return lines, b
		}
		lines = append(lines, string(b[4:n]))
		b = b[n:]
	}
	return lines, b
}

// sideBand takes band 1 and band 2/3 apart from a side-band-64k stream; the
// pkt-lines that carry no band byte are returned in plain.
func sideBand(b []byte) (data []byte, msgs string, plain []string) {
	lines, _ := pktLines(b)
	for _, l := range lines {
		if l == "" || (l[0] != 1 && l[0] != 2 && l[0] != 3) {
			plain = append(plain, l)
			continue
		}
		switch l[0] {
		case 1:
			data = append(data, l[1:]...)
		default:
			msgs += l[1:]
		}
	}
	return data, msgs, plain
}

// wantStatus fails the test when a raw answer has another status.
func wantStatus(t *testing.T, what string, r rawResponse, want int) {
	t.Helper()
	if r.status != want {
		t.Errorf("%s: status %d, want %d; body %q", what, r.status, want, clip(r.body))
	}
}

// clip shortens a body for a message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// lsRemote is git ls-remote of url as "sha ref" lines.
func (c *gitCLI) lsRemote(t *testing.T, url string) string {
	t.Helper()
	return c.ok(t, t.TempDir(), "ls-remote", url)
}

// eventually polls fn every 50ms for up to 15s; it returns whether fn ever
// returned true.
func eventually(fn func() bool) bool {
	deadline := time.Now().Add(15 * time.Second)
	for {
		if fn() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// today is the current UTC date as GitLab prints it.
func today() string { return time.Now().UTC().Format("2006-01-02") }
