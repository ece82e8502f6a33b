package repository_test

// Black-box tests of git over smart HTTP with the real git CLI: clones of
// every kind, the access matrix, hostile requests and import_url. Pushes
// are in githttp_push_test.go, helpers in githttp_helpers_test.go.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// Every way the git CLI clones a public project: full (protocol v0, v1 and
// the client's default), anonymous and without the .git suffix, shallow
// and deepened, partial, and an empty repository.
func TestGitClone(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	p := g.project(t, "clone", gitlab.PublicVisibility)
	work := g.cli.newWork(t)
	first := g.cli.commit(t, work, "first", map[string]string{"README.md": "hello\n", "docs/a.txt": "a\n"})
	head := g.cli.fastImport(t, work, "master", 19, "hist") // 20 commits in all
	g.cli.ok(t, work, "tag", "-a", "v1.0", "-m", "release one", "HEAD~5")
	g.cli.ok(t, work, "tag", "light", "HEAD~2")
	g.cli.ok(t, work, "branch", "side", "HEAD~3")
	g.seed(t, p, work, "--tags", "master", "side")
	bare := g.bare(p)
	wantRefs := g.cli.lsRemote(t, bare)
	empty := g.project(t, "empty", gitlab.PublicVisibility)

	t.Run("ls-remote", func(t *testing.T) {
		t.Parallel()
		c := newGitCLI(t)
		if got := c.lsRemote(t, g.url(p, "", "")); got != wantRefs {
			t.Errorf("ls-remote over HTTP:\n%s\nwant (the repository on disk):\n%s", got, wantRefs)
		}
		if got := c.lsRemote(t, g.url(empty, "", "")); got != "" {
			t.Errorf("ls-remote of an empty repository: %q", got)
		}
	})
	for _, version := range []string{"", "0", "1"} {
		t.Run("full protocol="+version, func(t *testing.T) {
			t.Parallel()
			c := newGitCLI(t)
			dst := filepath.Join(t.TempDir(), "c")
			args := []string{"clone", "-q", g.rootURL(p), dst}
			if version != "" {
				args = append([]string{"-c", "protocol.version=" + version}, args...)
			}
			c.ok(t, t.TempDir(), args...)
			if got := c.ok(t, dst, "rev-parse", "HEAD"); got != head {
				t.Errorf("HEAD %s, want %s", got, head)
			}
			if got := c.ok(t, dst, "symbolic-ref", "--short", "HEAD"); got != "master" {
				t.Errorf("checked out %s, want master", got)
			}
			if got := c.ok(t, dst, "rev-list", "--count", "--all"); got != "20" {
				t.Errorf("%s commits, want 20", got)
			}
			if got := c.ok(t, dst, "for-each-ref", "--format=%(objectname) %(refname)", "refs/tags", "refs/remotes/origin/side"); got != strings.Join([]string{
				refOf(t, bare, "refs/heads/side") + " refs/remotes/origin/side",
				refOf(t, bare, "refs/tags/light") + " refs/tags/light",
				refOf(t, bare, "refs/tags/v1.0") + " refs/tags/v1.0",
			}, "\n") {
				t.Errorf("refs of the clone:\n%s", got)
			}
			if got := c.ok(t, dst, "cat-file", "-t", "v1.0"); got != "tag" {
				t.Errorf("v1.0 is a %s, want an annotated tag", got)
			}
			if b, err := os.ReadFile(filepath.Join(dst, "README.md")); err != nil || string(b) != "hello\n" {
				t.Errorf("README.md %q %v", b, err)
			}
			c.ok(t, dst, "fsck", "--strict", "--no-dangling")
		})
	}
	t.Run("anonymous without .git", func(t *testing.T) {
		t.Parallel()
		c := newGitCLI(t)
		dst := filepath.Join(t.TempDir(), "c")
		c.ok(t, t.TempDir(), "clone", "-q", g.pathURL("/"+p.PathWithNamespace, "", ""), dst)
		if got := c.ok(t, dst, "rev-parse", "HEAD"); got != head {
			t.Errorf("HEAD %s, want %s", got, head)
		}
		c.ok(t, dst, "fsck", "--strict", "--no-dangling")
	})
	t.Run("depth 1", func(t *testing.T) {
		t.Parallel()
		c := newGitCLI(t)
		dst := filepath.Join(t.TempDir(), "c")
		c.ok(t, t.TempDir(), "clone", "-q", "--depth", "1", g.url(p, "", ""), dst)
		if got := c.ok(t, dst, "rev-list", "--count", "HEAD"); got != "1" {
			t.Errorf("%s commits in a --depth 1 clone", got)
		}
		if b, err := os.ReadFile(filepath.Join(dst, ".git", "shallow")); err != nil || strings.TrimSpace(string(b)) != head {
			t.Errorf(".git/shallow %q %v, want %s", b, err, head)
		}
		if got := c.ok(t, dst, "rev-parse", "HEAD"); got != head {
			t.Errorf("HEAD %s, want %s", got, head)
		}
	})
	t.Run("depth 10, deepen 5, unshallow", func(t *testing.T) {
		t.Parallel()
		c := newGitCLI(t)
		dst := filepath.Join(t.TempDir(), "c")
		c.ok(t, t.TempDir(), "clone", "-q", "--depth", "10", g.url(p, "", ""), dst)
		if got := c.ok(t, dst, "rev-list", "--count", "HEAD"); got != "10" {
			t.Errorf("%s commits after --depth 10", got)
		}
		c.ok(t, dst, "fetch", "-q", "--deepen", "5")
		if got := c.ok(t, dst, "rev-list", "--count", "HEAD"); got != "15" {
			t.Errorf("%s commits after --deepen 5, want 15", got)
		}
		if b, _ := os.ReadFile(filepath.Join(dst, ".git", "shallow")); strings.TrimSpace(string(b)) != c.ok(t, dst, "rev-parse", "HEAD~14") {
			t.Errorf(".git/shallow %q, want HEAD~14", b)
		}
		c.ok(t, dst, "fetch", "-q", "--unshallow")
		if got := c.ok(t, dst, "rev-list", "--count", "HEAD"); got != "20" {
			t.Errorf("%s commits after --unshallow, want 20", got)
		}
		if got := c.ok(t, dst, "rev-list", "--max-parents=0", "HEAD"); got != first {
			t.Errorf("root commit %s, want %s", got, first)
		}
		c.ok(t, dst, "fsck", "--strict", "--no-dangling")
	})
	t.Run("filter blob:none", func(t *testing.T) {
		t.Parallel()
		c := newGitCLI(t)
		dst := filepath.Join(t.TempDir(), "c")
		// Either a real partial clone or git's fallback to a full one
		// ("filtering not recognized by server"); both must give a
		// working repository, and no 5xx (checked on every git command).
		_, stderr := c.okErr(t, t.TempDir(), "clone", "-q", "--filter=blob:none", g.url(p, "", ""), dst)
		partial := c.ok(t, dst, "config", "--default", "", "remote.origin.promisor") == "true" &&
			!strings.Contains(stderr, "filtering not recognized by server")
		t.Logf("partial clone: %v; stderr %q", partial, stderr)
		if got := c.ok(t, dst, "rev-parse", "HEAD"); got != head {
			t.Errorf("HEAD %s, want %s", got, head)
		}
		if got := c.ok(t, dst, "show", first+":docs/a.txt"); got != "a" {
			t.Errorf("old blob %q", got)
		}
		c.ok(t, dst, "log", "-p", "-5", "--format=%H")
		if got := c.ok(t, dst, "show", "HEAD~7:hist/counter.txt"); got != "hist 12" {
			t.Errorf("blob at HEAD~7: %q", got)
		}
	})
	t.Run("empty repository", func(t *testing.T) {
		t.Parallel()
		c := newGitCLI(t)
		dst := filepath.Join(t.TempDir(), "c")
		_, stderr := c.okErr(t, t.TempDir(), "clone", g.rootURL(empty), dst)
		if !strings.Contains(stderr, "You appear to have cloned an empty repository") {
			t.Errorf("stderr of an empty clone:\n%s", stderr)
		}
		if o, _, err := c.try(t, dst, nil, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
			t.Errorf("an empty clone has HEAD %s", o)
		}
	})
	t.Cleanup(func() {
		fsck(t, bare)
		fsck(t, g.bare(empty))
	})
}

// gitIdentity is who calls in the access matrix.
type gitIdentity struct {
	name, user, secret string
}

// The access matrix: anonymous, wrong credentials, users of every role,
// non-members (external or not) and an administrator against public,
// internal, private and missing projects. info/refs and the POST endpoints
// answer with the exact status (and a Basic challenge on 401), and the git
// CLI clones and pushes exactly when they answer 200 (and clones any public
// project, since git sends credentials only when challenged).
func TestGitAccessMatrix(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	users := map[string]*fennectest.User{}
	for _, name := range []string{"guest", "reporter", "developer", "master", "outsider"} {
		users[name] = g.CreateUser(t, name)
	}
	users["external"] = g.CreateUser(t, "external", fennectest.External())

	work := g.cli.newWork(t)
	seedHead := g.cli.commit(t, work, "seed", map[string]string{"README.md": "seed\n"})
	projects := map[string]*gitlab.Project{}
	for _, vis := range []gitlab.VisibilityValue{gitlab.PublicVisibility, gitlab.InternalVisibility, gitlab.PrivateVisibility} {
		p := g.project(t, "vis-"+string(vis), vis)
		g.seed(t, p, work, "master")
		g.addMember(t, p, users["guest"], gitlab.GuestPermissions)
		g.addMember(t, p, users["reporter"], gitlab.ReporterPermissions)
		g.addMember(t, p, users["developer"], gitlab.DeveloperPermissions)
		g.addMember(t, p, users["master"], gitlab.MaintainerPermissions)
		projects[string(vis)] = p
	}
	pushed := g.cli.commit(t, work, "to push", map[string]string{"pushed.txt": "pushed\n"})

	ids := []gitIdentity{
		{"anonymous", "", ""},
		{"wrong", "developer", "not-the-password"},
		{"outsider", "outsider", users["outsider"].Token},
		{"external", "external", users["external"].Token},
		{"guest", "guest", users["guest"].Token},
		{"reporter", "reporter", users["reporter"].Token},
		{"developer", "developer", users["developer"].Password}, // a password
		{"master", "any-name-at-all", users["master"].Token},    // a token under any username
		{"admin", "root", g.RootToken},
	}
	// want[who][project] = {upload-pack, receive-pack}
	type codes [2]int
	all := func(c codes) map[string]codes {
		return map[string]codes{"public": c, "internal": c, "private": c, "missing": c}
	}
	member := func(c codes) map[string]codes {
		return map[string]codes{"public": c, "internal": c, "private": c, "missing": {404, 404}}
	}
	want := map[string]map[string]codes{
		"anonymous": {"public": {200, 401}, "internal": {401, 401}, "private": {401, 401}, "missing": {401, 401}},
		"wrong":     all(codes{401, 401}),
		"outsider":  {"public": {200, 403}, "internal": {200, 403}, "private": {404, 404}, "missing": {404, 404}},
		"external":  {"public": {200, 403}, "internal": {404, 404}, "private": {404, 404}, "missing": {404, 404}},
		"guest":     {"public": {200, 403}, "internal": {200, 403}, "private": {403, 403}, "missing": {404, 404}},
		"reporter":  member(codes{200, 403}),
		"developer": member(codes{200, 200}),
		"master":    member(codes{200, 200}),
		"admin":     member(codes{200, 200}),
	}
	pathOf := func(name string) string {
		if p := projects[name]; p != nil {
			return "/" + p.PathWithNamespace
		}
		return "/root/missing"
	}

	t.Run("cells", func(t *testing.T) {
		for _, id := range ids {
			for _, proj := range []string{"public", "internal", "private", "missing"} {
				t.Run(id.name+"/"+proj, func(t *testing.T) {
					t.Parallel()
					w := want[id.name][proj]
					base := pathOf(proj)
					for i, svc := range []string{"git-upload-pack", "git-receive-pack"} {
						for _, suffix := range []string{".git", ""} {
							what := "GET " + base + suffix + "/info/refs?service=" + svc
							r := g.raw(t, http.MethodGet, base+suffix+"/info/refs?service="+svc, id.user, id.secret, nil)
							checkAnswer(t, what, r, w[i])
							if r.status == 200 {
								if ct := r.header.Get("Content-Type"); ct != "application/x-"+svc+"-advertisement" {
									t.Errorf("%s: Content-Type %q", what, ct)
								}
								prefix := pkt("# service="+svc+"\n") + "0000"
								if !bytes.HasPrefix(r.body, []byte(prefix)) || !bytes.Contains(r.body, []byte(seedHead+" refs/heads/master")) {
									t.Errorf("%s: advertisement %q", what, clip(r.body))
								}
							}
						}
					}
					// The POST endpoints check access on their own.
					body := pkt("want "+seedHead+" ofs-delta\n") + "0000" + pkt("done\n")
					r := g.raw(t, http.MethodPost, base+".git/git-upload-pack", id.user, id.secret, strings.NewReader(body),
						"Content-Type", "application/x-git-upload-pack-request", "Accept", "application/x-git-upload-pack-result")
					checkAnswer(t, "POST git-upload-pack", r, w[0])
					if r.status == 200 && (!bytes.Contains(r.body, []byte("PACK")) || r.header.Get("Content-Type") != "application/x-git-upload-pack-result") {
						t.Errorf("POST git-upload-pack: %s %q", r.header.Get("Content-Type"), clip(r.body))
					}
					r = g.raw(t, http.MethodPost, base+".git/git-receive-pack", id.user, id.secret, strings.NewReader("0000"),
						"Content-Type", "application/x-git-receive-pack-request", "Accept", "application/x-git-receive-pack-result")
					checkAnswer(t, "POST git-receive-pack", r, w[1])

					// The git CLI.
					c := newGitCLI(t)
					u := g.pathURL(base+".git", id.user, id.secret)
					dst := filepath.Join(t.TempDir(), "c")
					// git sends credentials only when challenged, so
					// anyone clones a public project: wrong credentials
					// are never sent.
					if w[0] == 200 || proj == "public" {
						c.ok(t, t.TempDir(), "clone", "-q", u, dst)
						if got := c.ok(t, dst, "rev-parse", "HEAD"); got != seedHead {
							t.Errorf("cloned HEAD %s, want %s", got, seedHead)
						}
					} else {
						checkGitRefusal(t, "clone", c.fail(t, t.TempDir(), "clone", "-q", u, dst), w[0], id.user != "")
					}
					if w[1] == 200 {
						c.ok(t, work, "push", "-q", u, "HEAD:refs/heads/push-"+id.name)
					} else {
						checkGitRefusal(t, "push", c.fail(t, work, "push", "-q", u, "HEAD:refs/heads/push-"+id.name), w[1], id.user != "")
					}
				})
			}
		}
	})
	// Exactly the allowed pushes reached the repositories.
	for name, p := range projects {
		got := refsOf(t, g.bare(p))
		wantRefs := strings.Join([]string{
			seedHead + " refs/heads/master",
			pushed + " refs/heads/push-admin",
			pushed + " refs/heads/push-developer",
			pushed + " refs/heads/push-master",
		}, "\n")
		if got != wantRefs {
			t.Errorf("%s: refs after the matrix:\n%s\nwant:\n%s", name, got, wantRefs)
		}
		fsck(t, g.bare(p))
	}
}

// checkAnswer asserts a status, and the Basic challenge on 401.
func checkAnswer(t *testing.T, what string, r rawResponse, want int) {
	t.Helper()
	wantStatus(t, what, r, want)
	if r.status == 401 {
		if got := r.header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != `Basic realm="Fennec"` {
			t.Errorf("%s: WWW-Authenticate %q, want [Basic realm=\"Fennec\"]", what, got)
		}
	}
}

// checkGitRefusal asserts how the git CLI reports a refusal with status.
func checkGitRefusal(t *testing.T, what, stderr string, status int, withCredentials bool) {
	t.Helper()
	var want string
	switch {
	case status == 401 && withCredentials:
		want = "Authentication failed"
	case status == 401:
		want = "could not read Username"
	case status == 403:
		want = "The requested URL returned error: 403"
	case status == 404:
		want = "not found"
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("%s: git should say %q (status %d); stderr:\n%s", what, want, status, stderr)
	}
}

// hostileWorld is a public project with three commits, a private one, a
// local commit the server does not have, and packs built from it.
type hostileWorld struct {
	g                 *gitServer
	target, secret    *gitlab.Project
	bare              string
	a, b, head        string // the target's history on master
	evil              string // a commit the server does not have (parent head)
	pack              []byte // a valid pack of evil's objects
	commitOnly        []byte // a pack of evil's commit alone (tree missing)
	emptyPack         []byte
	secretHead        string
	plantedA, planted string // bare repositories outside any project
}

func newHostileWorld(t *testing.T) *hostileWorld {
	g := startGit(t)
	w := &hostileWorld{g: g}
	w.target = g.project(t, "target", gitlab.PublicVisibility)
	w.secret = g.project(t, "secret", gitlab.PrivateVisibility)
	w.bare = g.bare(w.target)
	work := g.cli.newWork(t)
	w.a = g.cli.commit(t, work, "a", map[string]string{"README.md": "a\n"})
	w.b = g.cli.commit(t, work, "b", map[string]string{"README.md": "b\n"})
	w.head = g.cli.commit(t, work, "head", map[string]string{"README.md": "head\n"})
	g.cli.ok(t, work, "tag", "-a", "v1", "-m", "one")
	g.seed(t, w.target, work, "--tags", "master", "master:refs/heads/side")
	w.evil = g.cli.commit(t, work, "evil", map[string]string{"evil.txt": "evil\n"})
	w.pack = packObjects(t, g.cli, work, "--revs", w.evil+"\n^"+w.head+"\n")
	w.commitOnly = packObjects(t, g.cli, work, "", w.evil+"\n")
	w.emptyPack = packObjects(t, g.cli, work, "", "")

	sw := g.cli.newWork(t)
	w.secretHead = g.cli.commit(t, sw, "secret", map[string]string{"secret.txt": "secret\n"})
	g.seed(t, w.secret, sw, "master")

	// Bare repositories where a path traversal could find them.
	w.planted = filepath.Join(g.DataDir, "planted.git")
	w.plantedA = filepath.Join(g.DataDir, "repositories", "planted.git")
	for _, dir := range []string{w.planted, w.plantedA} {
		g.cli.ok(t, g.DataDir, "init", "-q", "--bare", dir)
		g.cli.ok(t, sw, "push", "-q", dir, "master")
	}
	return w
}

// packObjects runs git pack-objects --stdout with the given input.
func packObjects(t *testing.T, c *gitCLI, dir, flag, input string) []byte {
	t.Helper()
	args := []string{"pack-objects", "--stdout", "-q"}
	if flag != "" {
		args = append(args, flag)
	}
	o, e, err := c.try(t, dir, []byte(input), args...)
	if err != nil || !strings.HasPrefix(o, "PACK") {
		t.Fatalf("pack-objects: %v %s", err, e)
	}
	return []byte(o)
}

// receive builds a receive-pack request: the commands (the first gets the
// capabilities), a flush, and the pack.
func receive(pack []byte, commands ...string) []byte {
	var b bytes.Buffer
	for i, c := range commands {
		if i == 0 {
			c += "\x00report-status agent=git/2.39.5"
		}
		b.WriteString(pkt(c + "\n"))
	}
	b.WriteString("0000")
	b.Write(pack)
	return b.Bytes()
}

// withTrailer replaces a pack's trailing SHA-1 with the right one for its
// (modified) content.
func withTrailer(pack []byte) []byte {
	body := append([]byte{}, pack[:len(pack)-20]...)
	sum := sha1.Sum(body)
	return append(body, sum[:]...)
}

// postReceive POSTs a receive-pack request to the target as root.
func (w *hostileWorld) postReceive(t *testing.T, body []byte, headers ...string) rawResponse {
	t.Helper()
	h := append([]string{"Content-Type", "application/x-git-receive-pack-request", "Accept", "application/x-git-receive-pack-result"}, headers...)
	return w.g.raw(t, http.MethodPost, "/"+w.target.PathWithNamespace+".git/git-receive-pack", "root", w.g.RootToken, bytes.NewReader(body), h...)
}

// postUpload POSTs an upload-pack request to the target as root.
func (w *hostileWorld) postUpload(t *testing.T, body []byte, headers ...string) rawResponse {
	t.Helper()
	h := append([]string{"Content-Type", "application/x-git-upload-pack-request", "Accept", "application/x-git-upload-pack-result"}, headers...)
	return w.g.raw(t, http.MethodPost, "/"+w.target.PathWithNamespace+".git/git-upload-pack", "root", w.g.RootToken, bytes.NewReader(body), h...)
}

// refusedPush asserts a clean refusal of a receive-pack request: a 4xx, or
// 200 with a report that does not accept ref (an unpack error, an ng for
// it, or an ERR).
func refusedPush(t *testing.T, what string, r rawResponse, ref string) {
	t.Helper()
	if r.status >= 400 && r.status < 500 {
		return
	}
	if r.status != 200 {
		t.Errorf("%s: status %d, want a 4xx or a 200 with a refusal; body %q", what, r.status, clip(r.body))
		return
	}
	lines, _ := pktLines(r.body)
	unpackFailed, ng, errLine := false, false, false
	for _, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		switch {
		case strings.HasPrefix(l, "unpack ") && l != "unpack ok":
			unpackFailed = true
		case strings.HasPrefix(l, "ng "+ref+" ") && ref != "":
			ng = true
		case strings.HasPrefix(l, "ERR "):
			errLine = true
		case l == "ok "+ref:
			t.Errorf("%s: the server accepted %s: %q", what, ref, r.body)
		}
	}
	if !unpackFailed && !ng && !errLine {
		t.Errorf("%s: status 200 without a refusal in the report: %q", what, clip(r.body))
	}
}

// refusedFetch asserts a clean refusal of an upload-pack request: a 4xx,
// or 200 with an ERR pkt-line and no pack.
func refusedFetch(t *testing.T, what string, r rawResponse) {
	t.Helper()
	if r.status >= 400 && r.status < 500 {
		return
	}
	if r.status != 200 {
		t.Errorf("%s: status %d, want a 4xx or a 200 with ERR; body %q", what, r.status, clip(r.body))
		return
	}
	if bytes.Contains(r.body, []byte("PACK")) {
		t.Errorf("%s: the server sent a pack", what)
	}
	lines, _ := pktLines(r.body)
	_, msgs, plain := sideBand(r.body)
	for _, l := range append(plain, lines...) {
		if strings.HasPrefix(l, "ERR ") {
			return
		}
	}
	if strings.Contains(msgs, "ERR") || strings.Contains(strings.ToLower(msgs), "error") {
		return
	}
	t.Errorf("%s: status 200 without ERR: %q", what, clip(r.body))
}

// Corrupt and truncated packs, bad pkt-lines, refs the server must not
// take, unknown wants, a gzip bomb and path traversals: each gets a clean
// error and leaves the repository exactly as it was.
func TestGitHostileRequests(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	g := w.g
	newRef := func(ref, sha string) string { return zeroSHA + " " + sha + " " + ref }

	flip := func(b []byte, at int) []byte {
		c := append([]byte{}, b...)
		c[at] ^= 0xff
		return c
	}
	lying := append([]byte{}, w.pack...)
	binary.BigEndian.PutUint32(lying[8:12], binary.BigEndian.Uint32(lying[8:12])+1)
	receives := []struct {
		name string
		body []byte
		ref  string
	}{
		{"truncated pack", receive(w.pack[:len(w.pack)/2], newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"pack cut before its trailer", receive(w.pack[:len(w.pack)-20], newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"pack with a wrong trailer", receive(flip(w.pack, len(w.pack)-1), newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"pack with a flipped byte and a matching trailer", receive(withTrailer(flip(w.pack, len(w.pack)/2)), newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"pack with a flipped header byte", receive(withTrailer(flip(w.pack, 12)), newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"pack claiming one object more", receive(withTrailer(lying), newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"not a pack", receive([]byte("this is not a pack at all, no no"), newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"pack without the commit's tree", receive(w.commitOnly, newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"ref to an object nobody sent", receive(w.emptyPack, newRef("refs/heads/ghost", "1234567890123456789012345678901234567890")), "refs/heads/ghost"},
		{"no pack at all", receive(nil, newRef("refs/heads/evil", w.evil)), "refs/heads/evil"},
		{"stale old value", receive(w.emptyPack, w.a+" "+w.b+" refs/heads/master"), "refs/heads/master"},
		{"stale old value of a delete", receive(nil, w.a+" "+zeroSHA+" refs/heads/side"), "refs/heads/side"},
		{"delete of a missing ref", receive(nil, w.a+" "+zeroSHA+" refs/heads/nothing"), "refs/heads/nothing"},
		{"ref name with ..", receive(w.emptyPack, newRef("refs/heads/a..b", w.b)), "refs/heads/a..b"},
		{"ref name climbing out", receive(w.emptyPack, newRef("refs/heads/../../evil", w.b)), "refs/heads/../../evil"},
		{"ref name climbing out of refs", receive(w.emptyPack, newRef("refs/../../../../evil", w.b)), "refs/../../../../evil"},
		{"ref outside refs/", receive(w.emptyPack, newRef("evil", w.b)), "evil"},
		{"ref name ending in .lock", receive(w.emptyPack, newRef("refs/heads/x.lock", w.b)), "refs/heads/x.lock"},
		{"ref name with a control character", receive(w.emptyPack, newRef("refs/heads/x\x01y", w.b)), "refs/heads/x\x01y"},
		{"bad pkt-line length", []byte("zzzz" + newRef("refs/heads/evil", w.evil)), ""},
		{"pkt-line length below 4", []byte("0003" + newRef("refs/heads/evil", w.evil)), ""},
		{"pkt-line longer than the body", []byte("ffff" + newRef("refs/heads/evil", w.evil)), ""},
		{"commands without a flush", []byte(pkt(newRef("refs/heads/evil", w.evil) + "\x00report-status\n")), ""},
		{"a command that is not one", append([]byte(pkt("not a command\x00report-status\n")+"0000"), w.pack...), ""},
		{"an old value that is not hex", receive(w.pack, "zz"+w.head[2:]+" "+w.evil+" refs/heads/master"), "refs/heads/master"},
	}
	for _, tc := range receives {
		before := repoState(t, w.bare)
		r := w.postReceive(t, tc.body)
		t.Logf("%s: %d %q", tc.name, r.status, clip(r.body))
		refusedPush(t, tc.name, r, tc.ref)
		sameState(t, tc.name, before, repoState(t, w.bare))
	}

	// Bombs: 1 GiB once inflated. The server must answer (4xx, or a
	// refusal in the protocol), soon, without holding it in memory.
	t.Run("gzip bomb of zeros after a pack header", func(t *testing.T) {
		before := repoState(t, w.bare)
		head := receive([]byte("PACK\x00\x00\x00\x02\xff\xff\xff\xff"), newRef("refs/heads/evil", w.evil))
		r, peak := w.bomb(t, "git-receive-pack", head, []byte{0})
		refusedPush(t, "gzip bomb", r, "refs/heads/evil")
		checkPeak(t, peak)
		sameState(t, "gzip bomb", before, repoState(t, w.bare))
	})
	t.Run("gzip bomb of commands", func(t *testing.T) {
		before := repoState(t, w.bare)
		head := []byte(pkt(newRef("refs/heads/evil", w.b) + "\x00report-status\n"))
		r, peak := w.bomb(t, "git-receive-pack", head, []byte(pkt(newRef("refs/heads/evil", w.b)+"\n")))
		refusedPush(t, "gzip bomb of commands", r, "refs/heads/evil")
		checkPeak(t, peak)
		sameState(t, "gzip bomb of commands", before, repoState(t, w.bare))
	})
	t.Run("gzip bomb of flushes", func(t *testing.T) {
		head := []byte(pkt("want " + w.head + " ofs-delta\n"))
		r, peak := w.bomb(t, "git-upload-pack", head, []byte("0"))
		if r.status >= 500 {
			t.Errorf("status %d", r.status)
		}
		checkPeak(t, peak)
	})
	t.Run("gzip bomb of haves", func(t *testing.T) {
		head := []byte(pkt("want "+w.head+" ofs-delta\n") + "0000")
		r, peak := w.bomb(t, "git-upload-pack", head, []byte(pkt("have "+w.a+"\n")))
		// Refused once past the bound on haves, instead of answering all
		// twenty million of them: the answer has begun, so git's ERR line.
		if r.status >= 500 || !strings.Contains(string(r.body), "ERR upload-pack: too many haves") {
			t.Errorf("status %d %q, want an ERR about too many haves", r.status, clip(r.body))
		}
		checkPeak(t, peak)
	})
	t.Run("bad gzip", func(t *testing.T) {
		r := w.postUpload(t, []byte("not gzip at all"), "Content-Encoding", "gzip")
		refusedFetch(t, "upload-pack", r)
		before := repoState(t, w.bare)
		refusedPush(t, "receive-pack", w.postReceive(t, []byte("not gzip at all"), "Content-Encoding", "gzip"), "")
		sameState(t, "bad gzip", before, repoState(t, w.bare))
	})

	t.Run("upload-pack", func(t *testing.T) {
		before := repoState(t, w.bare)
		for name, body := range map[string]string{
			"unknown want":              pkt("want 1234567890123456789012345678901234567890 ofs-delta\n") + "0000" + pkt("done\n"),
			"want of another project's": pkt("want "+w.secretHead+" ofs-delta\n") + "0000" + pkt("done\n"),
			"want that is not hex":      pkt("want zz34567890123456789012345678901234567890\n") + "0000" + pkt("done\n"),
			"bad pkt-line":              "zzzz" + pkt("done\n"),
			"pkt-line longer than body": "ffffwant " + w.head,
			"not a want":                pkt("gimme "+w.head+"\n") + "0000" + pkt("done\n"),
		} {
			r := w.postUpload(t, []byte(body))
			t.Logf("%s: %d %q", name, r.status, clip(r.body))
			refusedFetch(t, name, r)
		}
		sameState(t, "upload-pack requests", before, repoState(t, w.bare))
	})
	t.Run("gzip upload-pack request", func(t *testing.T) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		fmt.Fprint(zw, pkt("want "+w.head+" ofs-delta\n")+"0000"+pkt("done\n"))
		zw.Close()
		r := w.postUpload(t, z.Bytes(), "Content-Encoding", "gzip")
		wantStatus(t, "gzip request", r, 200)
		lines, rest := pktLines(r.body)
		if len(lines) == 0 || lines[0] != "NAK\n" || !bytes.HasPrefix(rest, []byte("PACK")) {
			t.Errorf("gzip request: answer %q", clip(r.body))
		}
	})

	t.Run("path traversal", func(t *testing.T) {
		outsider := g.CreateUser(t, "outsider")
		h := filepath.Base(g.bare(w.secret))
		h = strings.TrimSuffix(h, ".git")
		q := "?service=git-upload-pack"
		for _, target := range []string{
			"/root/target.git/../secret.git/info/refs" + q,
			"/root/../root/secret.git/info/refs" + q,
			"/root/target.git/info/refs/../../secret.git/info/refs" + q,
			"/../planted.git/info/refs" + q,
			"/root/../../planted.git/info/refs" + q,
			"/%2e%2e/planted.git/info/refs" + q,
			"/root/%2e%2e/%2e%2e/planted.git/info/refs" + q,
			"/root/..%2f..%2fplanted.git/info/refs" + q,
			"/root%2f..%2f..%2fplanted.git/info/refs" + q,
			"/..%2f..%2frepositories%2fplanted.git/info/refs" + q,
			"/root%2fsecret.git/info/refs" + q,
			"/root/secret%2egit/info/refs" + q,
			"/repositories/planted.git/info/refs" + q,
			"/@hashed/" + h[:2] + "/" + h[2:4] + "/" + h + ".git/info/refs" + q,
			"/root/target.git/info/refs?service=../../planted",
			"/root/target.git/info/refs?service=git-upload-pack/../../x",
			"/root/target.git/config",
			"/root/target.git/../../../planted.git/config",
			"/root/secret.git/HEAD",
			"/root/secret.git/objects/info/packs",
			"/root/secret.git/info/refs",
		} {
			for _, who := range []struct{ user, secret string }{{"", ""}, {"outsider", outsider.Token}} {
				r := g.verbatim(t, target, who.user, who.secret)
				t.Logf("GET %s as %q: %d", target, who.user, r.status)
				if r.status < 400 || r.status >= 500 {
					t.Errorf("GET %s as %q: status %d, want a 4xx; body %q", target, who.user, r.status, clip(r.body))
				}
				for _, leak := range []string{"# service=", "[core]", "ref: refs/", w.secretHead, "refs/heads/master"} {
					if bytes.Contains(r.body, []byte(leak)) {
						t.Errorf("GET %s as %q: the answer shows %q: %q", target, who.user, leak, clip(r.body))
					}
				}
			}
		}
	})

	// The request builder is right: the same pack, whole, is accepted.
	t.Run("the valid request is accepted", func(t *testing.T) {
		r := w.postReceive(t, receive(w.pack, newRef("refs/heads/evil", w.evil)))
		wantStatus(t, "valid push", r, 200)
		lines, _ := pktLines(r.body)
		if len(lines) < 2 || lines[0] != "unpack ok\n" || lines[1] != "ok refs/heads/evil\n" {
			t.Errorf("valid push: report %q", r.body)
		}
		if got := refOf(t, w.bare, "refs/heads/evil"); got != w.evil {
			t.Errorf("refs/heads/evil is %q after a valid push", got)
		}
	})
	fsck(t, w.bare)
	for _, dir := range []string{w.planted, w.plantedA} {
		if got := refsOf(t, dir); !strings.HasSuffix(got, " refs/heads/master") || strings.Count(got, "\n") != 0 {
			t.Errorf("the planted repository %s changed: %s", dir, got)
		}
	}
	// Nothing named evil was written anywhere under the data directory
	// (but the branch of the valid push).
	_ = filepath.Walk(g.DataDir, func(path string, info os.FileInfo, err error) error {
		if err == nil && (info.Name() == "evil" || info.Name() == "x.lock") && path != filepath.Join(w.bare, "refs", "heads", "evil") {
			t.Errorf("a hostile ref name left %s", path)
		}
		return nil
	})
}

// bomb POSTs head followed by 1 GiB of unit repeated, gzip-compressed as a
// chain of gzip members (a few MiB at most on the wire), while watching the
// process's heap. It returns the answer and the heap's peak growth.
func (w *hostileWorld) bomb(t *testing.T, service string, head, unit []byte) (rawResponse, uint64) {
	t.Helper()
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	zw.Write(head)
	zw.Close()
	var member bytes.Buffer
	zw, _ = gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat(unit, (1<<20)/len(unit)))
	zw.Close()
	for i := 0; i < 1024; i++ {
		body.Write(member.Bytes())
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
		}
	}()
	start := time.Now()
	r := w.g.raw(t, http.MethodPost, "/"+w.target.PathWithNamespace+".git/"+service, "root", w.g.RootToken, bytes.NewReader(body.Bytes()),
		"Content-Type", "application/x-"+service+"-request", "Content-Encoding", "gzip")
	close(done)
	wg.Wait()
	t.Logf("%s bomb (%d KiB): %d %q after %s, heap peak +%d MiB", service, body.Len()>>10, r.status, clip(r.body), time.Since(start).Round(time.Millisecond), peak.Load()>>20)
	return r, peak.Load()
}

// checkPeak fails when the heap grew by more than 384 MiB of the bomb's
// 1 GiB (the margin is for the other tests running in this process).
func checkPeak(t *testing.T, peak uint64) {
	t.Helper()
	if peak > 384<<20 {
		t.Errorf("the heap grew by %d MiB while the server read a gzip bomb", peak>>20)
	}
}

// A project created with import_url pointing at another Fennec project's
// HTTP URL gets its refs (this server's own: local requests allowed); file
// URLs and local paths are refused.
func TestGitImportURL(t *testing.T) {
	t.Parallel()
	g := startGit(t, allowLocal)
	src := g.project(t, "source", gitlab.PublicVisibility)
	work := g.cli.newWork(t)
	g.cli.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.cli.commit(t, work, "two", map[string]string{"b/c.txt": "2\n"})
	g.cli.ok(t, work, "tag", "-a", "v1", "-m", "v one")
	g.cli.ok(t, work, "branch", "side", "HEAD~1")
	g.cli.ok(t, work, "tag", "light", "HEAD~1")
	g.seed(t, src, work, "--tags", "master", "side")
	want := refsOf(t, g.bare(src))

	for _, bad := range []string{
		"file://" + g.bare(src),
		"file:///etc",
		g.bare(src),
		"../" + filepath.Base(g.bare(src)),
		"ssh://git@" + g.host + "/root/source.git",
		"ftp://" + g.host + "/root/source.git",
	} {
		body, _ := json.Marshal(map[string]string{"name": "bad-import", "import_url": bad})
		var out map[string]any
		r, raw := g.JSON(t, http.MethodPost, "/api/v4/projects", bytes.NewReader(body), &out, "PRIVATE-TOKEN", g.RootToken, "Content-Type", "application/json")
		if r.StatusCode != 400 || !strings.Contains(string(raw), "import_url") {
			t.Errorf("import_url %q: %d %s", bad, r.StatusCode, raw)
		}
	}
	if r, _ := g.JSON(t, http.MethodGet, "/api/v4/projects/root%2Fbad-import", nil, nil, "PRIVATE-TOKEN", g.RootToken); r.StatusCode != 404 {
		t.Errorf("a refused import made a project: %d", r.StatusCode)
	}

	p, resp, err := g.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{
		Name: gitlab.Ptr("imported"), ImportURL: gitlab.Ptr(g.URL + "/" + src.PathWithNamespace + ".git"),
		Visibility: gitlab.Ptr(gitlab.PrivateVisibility),
	})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create with import_url: %v", err)
	}
	var got string
	if !eventually(func() bool {
		if _, err := os.Stat(filepath.Join(g.bare(p), "HEAD")); err != nil {
			return false
		}
		got = refsNow(g.bare(p))
		return got == want
	}) {
		t.Fatalf("imported refs:\n%s\nwant:\n%s", got, want)
	}
	fsck(t, g.bare(p))
	c := newGitCLI(t)
	if a, b := c.lsRemote(t, g.rootURL(p)), c.lsRemote(t, g.url(src, "", "")); a != b {
		t.Errorf("ls-remote of the import:\n%s\nof the source:\n%s", a, b)
	}
	dst := filepath.Join(t.TempDir(), "c")
	c.ok(t, t.TempDir(), "clone", "-q", g.rootURL(p), dst)
	if b, err := os.ReadFile(filepath.Join(dst, "b", "c.txt")); err != nil || string(b) != "2\n" {
		t.Errorf("clone of the import: %q %v", b, err)
	}
}
