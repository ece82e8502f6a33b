package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gitRunner runs the git CLI with a private HOME and fixed identities.
func gitRunner(t *testing.T) func(dir string, args ...string) (string, error) {
	home := t.TempDir()
	return func(dir string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
}

func login(t *testing.T, s *server) string {
	t.Helper()
	resp, err := http.Post(s.url("/api/v4/session"), "application/json", strings.NewReader(`{"login":"root","password":"password-123"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var session struct {
		Token string `json:"private_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&session); err != nil || session.Token == "" {
		t.Fatalf("login: %v", err)
	}
	return session.Token
}

// upload posts content as a file of the project; it returns the upload's URL.
func upload(s *server, token string, projectID int, name, content string) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, s.url(fmt.Sprintf("/api/v4/projects/%d/uploads", projectID)), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("PRIVATE-TOKEN", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var v struct {
		URL string `json:"url"`
	}
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("upload: %s", resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&v)
	return v.URL, err
}

// ack is a write the server acknowledged, and when.
type ack struct {
	at    time.Time
	what  string // a project's path, an upload's URL, a pushed commit
	extra string // the upload's content
}

type acks struct {
	mu   sync.Mutex
	list []ack
}

func (a *acks) add(what, extra string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.list = append(a.list, ack{at: time.Now(), what: what, extra: extra})
}

func (a *acks) before(t time.Time) []ack {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []ack
	for _, x := range a.list {
		if x.at.Before(t) {
			out = append(out, x)
		}
	}
	return out
}

// TestBackupRestoreWhileServing backs up a server while pushes, project
// creations and uploads keep landing, restores the archive into a new data
// directory and starts a server on it: every write acknowledged before the
// backup began is there, every repository clones, its refs agree with the
// push events of the restored store, and git fsck --strict is clean. A
// restore into a directory that is not empty, and of a damaged archive,
// are refused; a store restored without its repositories reports them.
func TestBackupRestoreWhileServing(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, data, "FENNEC_ROOT_PASSWORD=password-123")
	token := login(t, s)
	c := newCrashClient(s, token)
	defer c.close()
	git := gitRunner(t)
	mustGit := func(dir string, args ...string) string {
		t.Helper()
		out, err := git(dir, args...)
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return out
	}
	for i := range 3 {
		var u map[string]any
		c.mustJSON(t, http.MethodPost, "/users", map[string]any{"username": fmt.Sprintf("user%d", i), "name": fmt.Sprintf("User %d", i),
			"email": fmt.Sprintf("user%d@example.com", i), "password": "password-123-user"}, http.StatusCreated, &u)
	}
	const nproj = 3
	ids := make([]int, nproj)
	works := make([]string, nproj)
	remote := func(s *server, i int) string {
		return fmt.Sprintf("http://root:password-123@%s/root/p%d.git", s.addr, i)
	}
	uploads := &acks{}
	for i := range nproj {
		var p struct {
			ID int `json:"id"`
		}
		c.mustJSON(t, http.MethodPost, "/projects", map[string]any{"name": fmt.Sprintf("p%d", i)}, http.StatusCreated, &p)
		ids[i] = p.ID
		works[i] = t.TempDir()
		mustGit(works[i], "init", "-q", "-b", "main")
		for j := range 3 {
			if err := os.WriteFile(filepath.Join(works[i], "f.txt"), fmt.Appendf(nil, "p%d commit %d\n", i, j), 0o644); err != nil {
				t.Fatal(err)
			}
			mustGit(works[i], "add", "f.txt")
			mustGit(works[i], "commit", "-q", "-m", fmt.Sprintf("commit %d", j))
		}
		mustGit(works[i], "tag", "-a", "v1", "-m", "v1")
		mustGit(works[i], "push", "-q", remote(s, i), "main", "v1")
		mustGit(works[i], "push", "-q", remote(s, i), "main:feature")
		content := fmt.Sprintf("upload of p%d", i)
		u, err := upload(s, token, p.ID, "notes.txt", content)
		if err != nil {
			t.Fatal(err)
		}
		uploads.add(fmt.Sprintf("/root/p%d%s", i, u), content)
	}

	// The load: a pusher per project, a writer creating projects and
	// uploading files, all recording what was acknowledged and when.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	pushes := make([]*acks, nproj)
	for i := range nproj {
		pushes[i] = &acks{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := os.WriteFile(filepath.Join(works[i], "load.txt"), fmt.Appendf(nil, "%d\n", n), 0o644); err != nil {
					t.Logf("p%d: %v", i, err)
					return
				}
				if out, err := git(works[i], "add", "load.txt"); err != nil {
					t.Logf("p%d: add: %v %s", i, err, out)
					return
				}
				if out, err := git(works[i], "commit", "-q", "-m", fmt.Sprintf("load %d", n)); err != nil {
					t.Logf("p%d: commit: %v %s", i, err, out)
					return
				}
				sha, _ := git(works[i], "rev-parse", "HEAD")
				if out, err := git(works[i], "push", "-q", remote(s, i), "main"); err == nil {
					pushes[i].add(sha, "")
				} else {
					t.Logf("p%d: push %d: %v %s", i, n, err, out)
				}
			}
		}()
	}
	created := &acks{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("w-%d", n)
			if status, _, _, err := c.do(http.MethodPost, "/projects", map[string]any{"name": name}); err == nil && status == http.StatusCreated {
				created.add("root/"+name, "")
			}
			content := fmt.Sprintf("load upload %d", n)
			if u, err := upload(s, token, ids[0], "load.txt", content); err == nil {
				uploads.add("/root/p0"+u, content)
			}
		}
	}()
	// Until every pusher has had a push acknowledged (a push takes a
	// few hundred milliseconds of git's own work).
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ready := true
		for i := range nproj {
			ready = ready && len(pushes[i].before(time.Now())) > 0
		}
		if ready {
			break
		}
	}

	archive := filepath.Join(t.TempDir(), "backup.tar.gz")
	backupStart := time.Now()
	out, err := exec.Command(binary, "backup", "--data", data, archive).CombinedOutput()
	took := time.Since(backupStart)
	time.Sleep(time.Second) // writes go on after it too
	close(stop)
	wg.Wait()
	if err != nil || !strings.Contains(string(out), "wrote "+archive) || !strings.Contains(string(out), "holds secret.key") {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	fi, _ := os.Stat(archive)
	t.Logf("online backup under load: %s, %d bytes gzipped\n%s", took, fi.Size(), out)
	var n int
	for i := range nproj {
		n += len(pushes[i].before(backupStart))
	}
	for i := range nproj {
		t.Logf("p%d: %d pushes in all", i, len(pushes[i].before(time.Now())))
	}
	if n == 0 || len(created.before(backupStart)) == 0 {
		t.Fatalf("no load before the backup: %d pushes, %d projects", n, len(created.before(backupStart)))
	}
	t.Logf("acknowledged before the backup: %d load pushes, %d projects, %d uploads", n, len(created.before(backupStart)), len(uploads.before(backupStart)))

	// Restore into a new directory and serve it.
	restored := filepath.Join(t.TempDir(), "restored")
	start := time.Now()
	out, err = exec.Command(binary, "restore", "--data", restored, archive).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "git fsck clean") || !strings.Contains(string(out), "restored "+archive) {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	t.Logf("restore: %s\n%s", time.Since(start), out)
	out, err = exec.Command(binary, "restore", "--data", restored, archive).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not empty") {
		t.Fatalf("restore into a non-empty directory: %v %s", err, out)
	}
	s2 := startServer(t, restored)
	c2 := newCrashClient(s2, token) // the token is in the restored store
	defer c2.close()
	var users []map[string]any
	c2.mustJSON(t, http.MethodGet, "/users?username=user2", nil, http.StatusOK, &users)
	if len(users) != 1 {
		t.Fatalf("user2 not restored: %v", users)
	}
	for _, a := range created.before(backupStart) {
		if status, _, raw, err := c2.do(http.MethodGet, "/projects/"+url.PathEscape(a.what), nil); err != nil || status != 200 {
			t.Errorf("project %s acknowledged before the backup is not restored: %d %s", a.what, status, raw)
		}
	}
	for _, a := range uploads.before(backupStart) {
		req, _ := http.NewRequest(http.MethodGet, s2.url(a.what), nil)
		req.Header.Set("PRIVATE-TOKEN", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != a.extra {
			t.Errorf("upload %s acknowledged before the backup: %s %q", a.what, resp.Status, body)
		}
	}
	for i := range nproj {
		clone := filepath.Join(t.TempDir(), "clone")
		mustGit(t.TempDir(), "clone", "-q", remote(s2, i), clone)
		tip := mustGit(clone, "rev-parse", "origin/main")
		// The tip is a pushed commit, and not older than the last push
		// acknowledged before the backup began.
		all := pushes[i].before(time.Now())
		acked := pushes[i].before(backupStart)
		at := -1
		for k, a := range all {
			if a.what == tip {
				at = k
			}
		}
		if len(acked) > 0 && at < len(acked)-1 {
			t.Errorf("p%d: restored main at %s (push %d), but push %d was acknowledged before the backup", i, tip, at, len(acked)-1)
		}
		if tags := mustGit(clone, "tag"); tags != "v1" {
			t.Errorf("p%d: tags %q", i, tags)
		}
		// The refs agree with the restored store: the last push event of
		// main (the restored server replays one whose refs moved just
		// before the backup's point) names the tip.
		deadline := time.Now().Add(15 * time.Second)
		for {
			var events []struct {
				PushData *struct {
					Ref      string  `json:"ref"`
					CommitTo *string `json:"commit_to"`
				} `json:"push_data"`
			}
			c2.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d/events?action=pushed&per_page=100", ids[i]), nil, http.StatusOK, &events)
			last := ""
			for _, e := range events {
				if e.PushData != nil && e.PushData.Ref == "main" && e.PushData.CommitTo != nil {
					last = *e.PushData.CommitTo
					break
				}
			}
			if last == tip {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("p%d: the last push event of main names %s, the restored ref is %s", i, last, tip)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	repos, _ := filepath.Glob(filepath.Join(restored, "repositories", "@hashed", "*", "*", "*.git"))
	if len(repos) < nproj {
		t.Fatalf("%d repositories restored", len(repos))
	}
	for _, r := range repos {
		mustGit(r, "fsck", "--strict")
	}

	// A store restored without its repositories: reported, not served empty.
	lost := filepath.Join(t.TempDir(), "lost")
	if out, err := exec.Command(binary, "restore", "--data", lost, archive).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if err := os.RemoveAll(filepath.Join(lost, "repositories")); err != nil {
		t.Fatal(err)
	}
	s3 := startServer(t, lost)
	// The check runs in the background once the server answers.
	if m := s3.logs.await("repository is missing"); m == nil || !strings.Contains(fmt.Sprint(m["projects"]), "root/p1") {
		t.Fatalf("no warning listing the missing repositories; log:\n%s", s3.logs.text())
	}
	c3 := newCrashClient(s3, token)
	defer c3.close()
	var p struct {
		ImportStatus string `json:"import_status"`
		ImportError  string `json:"import_error"`
	}
	c3.mustJSON(t, http.MethodGet, fmt.Sprintf("/projects/%d", ids[1]), nil, http.StatusOK, &p)
	if p.ImportStatus != "failed" || !strings.Contains(p.ImportError, "missing") {
		t.Fatalf("project without its repository: %+v", p)
	}
	if out, err := git(t.TempDir(), "ls-remote", remote(s3, 1)); err == nil {
		t.Fatalf("a missing repository was served: %s", out)
	}
	// (A project whose creation the backup caught before its repository
	// was made gets it now, from its creation event: not this one.)
	sum := sha256.Sum256([]byte(fmt.Sprint(ids[1])))
	h := hex.EncodeToString(sum[:])
	if _, err := os.Stat(filepath.Join(lost, "repositories", "@hashed", h[:2], h[2:4], h+".git")); err == nil {
		t.Fatal("the missing repository of p1 was made anew")
	}

	// --force puts them back, but never under a running server, and
	// touches nothing the archive does not hold.
	if out, err := exec.Command(binary, "restore", "--force", "--data", lost, archive).CombinedOutput(); err == nil || !strings.Contains(string(out), "server is running") {
		t.Fatalf("restore under a running server: %v %s", err, out)
	}
	_ = s3.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s3.done:
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
	if err := os.WriteFile(filepath.Join(lost, "keep.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binary, "restore", "--force", "--data", lost, archive).CombinedOutput(); err != nil {
		t.Fatalf("restore --force: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(lost, "repositories", "@hashed", h[:2], h[2:4], h+".git", "HEAD")); err != nil {
		t.Fatalf("restore --force did not bring the repositories back: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(lost, "keep.txt")); err != nil || string(b) != "mine" {
		t.Fatalf("restore --force touched a file the archive does not hold: %q %v", b, err)
	}

	// A damaged archive fails its checksum, and leaves nothing.
	plain := filepath.Join(t.TempDir(), "plain.tar")
	if out, err := exec.Command(binary, "backup", "--data", data, plain).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(raw, []byte("upload of p2"))
	if i < 0 {
		t.Fatal("upload not found in the archive")
	}
	raw[i] ^= 0x20
	if err := os.WriteFile(plain, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(t.TempDir(), "damaged")
	out, err = exec.Command(binary, "restore", "--data", damaged, plain).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "checksum") {
		t.Fatalf("restore of a damaged archive: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(damaged); len(left) != 0 {
		t.Fatalf("a failed restore left %v", left)
	}
}

// hostileEntry is one entry of a hand-made archive.
type hostileEntry struct {
	name, link string
	typ        byte
	content    string
}

// writeArchive writes a tar whose manifest lists the entries (with right
// checksums) and which holds them.
func writeArchive(t *testing.T, path string, entries []hostileEntry) {
	t.Helper()
	type file struct {
		Path   string `json:"path"`
		Dir    bool   `json:"dir,omitempty"`
		Size   int64  `json:"size"`
		SHA256 string `json:"sha256,omitempty"`
	}
	var files []file
	for _, e := range entries {
		sum := sha256.Sum256([]byte(e.content))
		files = append(files, file{Path: e.name, Size: int64(len(e.content)), SHA256: hex.EncodeToString(sum[:])})
	}
	manifest, _ := json.Marshal(map[string]any{"format": 1, "files": files})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: "manifest.json", Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(manifest))})
	_, _ = tw.Write(manifest)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: 0o644}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.content))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(tw, e.content)
	}
	_ = tw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRefusesHostileArchives: entries that would land outside the
// data directory (.., absolute, through a symbolic or hard link), outside
// its layout, or that do not match their checksum are refused, and nothing
// is written anywhere.
func TestRestoreRefusesHostileArchives(t *testing.T) {
	t.Parallel()
	db := hostileEntry{name: "fennec.db", typ: tar.TypeReg, content: "not a store, never reached"}
	cases := map[string][]hostileEntry{
		"dotdot":       {{name: "../x", typ: tar.TypeReg, content: "escaped"}, db},
		"dotdot-deep":  {{name: "uploads/../../x", typ: tar.TypeReg, content: "escaped"}, db},
		"absolute":     {{name: "/tmp/fennec-hostile-x", typ: tar.TypeReg, content: "escaped"}, db},
		"symlink":      {{name: "uploads/l", typ: tar.TypeSymlink, link: ".."}, {name: "uploads/l/x", typ: tar.TypeReg, content: "escaped"}, db},
		"symlink-abs":  {{name: "repositories", typ: tar.TypeSymlink, link: "/tmp"}, db},
		"hardlink":     {{name: "uploads/h", typ: tar.TypeLink, link: "../x"}, db},
		"outside":      {{name: "etc/passwd", typ: tar.TypeReg, content: "escaped"}, db},
		"device":       {{name: "uploads/dev", typ: tar.TypeChar}, db},
		"not-a-backup": nil,
	}
	for name, entries := range cases {
		parent := t.TempDir()
		target := filepath.Join(parent, "data")
		archive := filepath.Join(t.TempDir(), name+".tar")
		if entries == nil {
			if err := os.WriteFile(archive, []byte("this is no tar"), 0o600); err != nil {
				t.Fatal(err)
			}
		} else {
			writeArchive(t, archive, entries)
		}
		out, err := exec.Command(binary, "restore", "--data", target, archive).CombinedOutput()
		if err == nil {
			t.Errorf("%s: restored:\n%s", name, out)
		}
		if entries != nil && !strings.Contains(string(out), "refused") {
			t.Errorf("%s: %s", name, out)
		}
		left, _ := os.ReadDir(parent)
		if len(left) > 1 || (len(left) == 1 && left[0].Name() != "data") {
			t.Errorf("%s: restore wrote beside the target: %v", name, left)
		}
		if in, _ := os.ReadDir(target); len(in) != 0 {
			t.Errorf("%s: restore left %v in the target", name, in)
		}
	}
	if _, err := os.Stat("/tmp/fennec-hostile-x"); err == nil {
		t.Error("an absolute entry was written")
	}

	// A checksum that does not match.
	archive := filepath.Join(t.TempDir(), "bad-sum.tar")
	writeArchive(t, archive, []hostileEntry{db})
	raw, _ := os.ReadFile(archive)
	i := bytes.Index(raw, []byte("never reached"))
	raw[i] = 'N'
	_ = os.WriteFile(archive, raw, 0o600)
	target := filepath.Join(t.TempDir(), "data")
	out, err := exec.Command(binary, "restore", "--data", target, archive).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "checksum") {
		t.Fatalf("a wrong checksum: %v %s", err, out)
	}

	// A directory that is not empty is refused without --force.
	full := t.TempDir()
	_ = os.WriteFile(filepath.Join(full, "keep"), []byte("x"), 0o600)
	writeArchive(t, archive, []hostileEntry{db})
	out, err = exec.Command(binary, "restore", "--data", full, archive).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not empty") {
		t.Fatalf("restore into a non-empty directory: %v %s", err, out)
	}
}

// storeFromArchive extracts fennec.db from a backup archive into a file.
func storeFromArchive(t *testing.T, archive string) string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != "manifest.json" {
		t.Fatalf("first entry %v %v", hdr, err)
	}
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("no fennec.db in the archive: %v", err)
		}
		if hdr.Name == "fennec.db" {
			dest := filepath.Join(t.TempDir(), "fennec.db")
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dest, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return dest
		}
	}
}
