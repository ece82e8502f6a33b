package repository_test

// Blob content is streamed from the pack: a large blob that compresses to
// almost nothing must not cost the server its inflated size in memory, on
// any endpoint that serves blob content (raw blob, raw file, archive), and
// the JSON endpoints that inline content refuse it before reading it.

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

// zeros reads n zero bytes without holding them.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > z.n {
		p = p[:z.n]
	}
	clear(p)
	z.n -= int64(len(p))
	return len(p), nil
}

// bigBlobWork makes a local repository whose master holds big.bin, size
// zero bytes, and small.txt; it returns the directory and big.bin's id.
func bigBlobWork(t *testing.T, g *gitServer, size int64) (string, string) {
	t.Helper()
	work := g.cli.newWork(t)
	cmd := exec.Command("git", "hash-object", "-w", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = work, g.cli.env, &zeros{size}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git hash-object: %v", err)
	}
	sha := strings.TrimSpace(string(out))
	// Only in the index: the work tree never holds the big file.
	g.cli.ok(t, work, "update-index", "--add", "--cacheinfo", "100644,"+sha+",big.bin")
	g.cli.ok(t, work, "commit", "-q", "-m", "big")
	return work, sha
}

// heapCost runs fn and reports how much the process allocated meanwhile
// and the peak growth of the heap in use. The server runs in this process,
// so this is what a request costs it (plus the test's own reading, which
// uses a fixed buffer).
func heapCost(fn func()) (allocated, peak uint64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var mu sync.Mutex
	var top uint64
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
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			mu.Lock()
			if ms.HeapInuse > before.HeapInuse && ms.HeapInuse-before.HeapInuse > top {
				top = ms.HeapInuse - before.HeapInuse
			}
			mu.Unlock()
		}
	}()
	fn()
	close(done)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, top
}

// download GETs path anonymously and returns the status, the headers, the
// byte count and the git blob id of the body (the body itself only when
// short).
func download(t *testing.T, g *gitServer, path string) (int, http.Header, int64, string, string) {
	t.Helper()
	resp, err := noRedirects.Get(g.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	// The blob id needs the length up front: hash the body once to count it
	// when no Content-Length says it.
	buf := make([]byte, 64<<10)
	var small []byte
	h := sha1.New()
	var n int64
	cl, _ := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if cl > 0 {
		fmt.Fprintf(h, "blob %d\x00", cl)
	}
	for {
		m, err := resp.Body.Read(buf)
		if m > 0 {
			h.Write(buf[:m])
			if n < 4096 {
				small = append(small, buf[:min(m, 4096)]...)
			}
			n += int64(m)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("GET %s: reading: %v", path, err)
		}
	}
	id := ""
	if cl > 0 {
		id = hex.EncodeToString(h.Sum(nil))
	}
	return resp.StatusCode, resp.Header, n, id, string(small)
}

// maxRequestHeap bounds what one download of the big blob may allocate on
// the server: a fixed buffer's worth, far below the blob's size (a
// download allocates under 1 MiB).
const maxRequestHeap = 8 << 20

// bigBlobSize is three times maxRequestHeap (and over the 10 MiB the JSON
// endpoints inline), so that a server holding the inflated blob in memory
// once fails every bound below; a bigger blob only makes the test slower
// (200 MiB took 24 s of the package under -race).
const bigBlobSize = 3 * maxRequestHeap

func TestRawBlobStreamsLargeBlob(t *testing.T) {
	// Not parallel: the heap figures are the process's, so no other test
	// may allocate meanwhile.
	g := startGit(t)
	p := g.project(t, "big", gitlab.PublicVisibility)
	const size = bigBlobSize
	work, sha := bigBlobWork(t, g, size)
	g.cli.ok(t, work, "push", "-q", g.rootURL(p), "master")
	base := "/api/v4/projects/" + store.IDString(p.ID) + "/repository/"

	for _, path := range []string{"blobs/" + sha + "/raw", "files/big.bin/raw?ref=master"} {
		var status int
		var hdr http.Header
		var n int64
		var id string
		alloc, peak := heapCost(func() { status, hdr, n, id, _ = download(t, g, base+path) })
		t.Logf("%s: %d bytes; the server allocated %d KiB, heap in use peaked at +%d KiB", path, n, alloc>>10, peak>>10)
		if status != 200 || n != size || id != sha || hdr.Get("Content-Length") != strconv.Itoa(size) ||
			hdr.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("%s: %d, %d bytes, blob id %s, Content-Length %q, Content-Type %q", path, status, n, id,
				hdr.Get("Content-Length"), hdr.Get("Content-Type"))
		}
		if alloc > maxRequestHeap || peak > maxRequestHeap {
			t.Errorf("%s: a download of a %d MiB blob allocated %d MiB (heap peak +%d MiB), want under %d MiB",
				path, size>>20, alloc>>20, peak>>20, maxRequestHeap>>20)
		}
	}

	// The JSON endpoints that inline content refuse a blob over 10 MiB,
	// and find out without reading it.
	for path, want := range map[string]string{
		"blobs/" + sha:             `{"message":"400 Bad request - Blob is too large to be returned as JSON (25165824 bytes, at most 10485760); use the raw endpoint"}`,
		"files/big.bin?ref=master": `{"message":"400 Bad request - File is too large to be returned as JSON (25165824 bytes, at most 10485760); use the raw endpoint"}`,
	} {
		var status int
		var body string
		alloc, _ := heapCost(func() { status, _, _, _, body = download(t, g, base+path) })
		if status != 400 || strings.TrimSpace(body) != want {
			t.Errorf("%s: %d %s", path, status, body)
		}
		if alloc > maxRequestHeap {
			t.Errorf("%s: refusing a %d MiB blob allocated %d MiB", path, size>>20, alloc>>20)
		}
	}

	// A commit's stats, its diff and the contributors (who diff every
	// commit) read no blob over 1 MiB: the big file gets an empty diff, as
	// GitLab's too-large diffs, and counts no lines.
	head := g.cli.ok(t, work, "rev-parse", "HEAD")
	for path, want := range map[string]string{
		"commits/" + head:           `"stats":{"additions":0,"deletions":0,"total":0}`,
		"commits/" + head + "/diff": `{"diff":"","new_path":"big.bin","old_path":"big.bin","a_mode":"0","b_mode":"100644","new_file":true,"renamed_file":false,"deleted_file":false}`,
		"contributors":              `"commits":1,"additions":0,"deletions":0`,
	} {
		var status int
		var body string
		alloc, peak := heapCost(func() { status, _, _, _, body = download(t, g, base+path) })
		t.Logf("%s: the server allocated %d KiB, heap peak +%d KiB", path, alloc>>10, peak>>10)
		if status != 200 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s\nwant it to hold %s", path, status, body, want)
		}
		if alloc > maxRequestHeap || peak > maxRequestHeap {
			t.Errorf("%s: allocated %d MiB (heap peak +%d MiB) with a %d MiB blob in the commit", path, alloc>>20, peak>>20, size>>20)
		}
	}

	// An archive streams the blob too.
	var status int
	var n int64
	alloc, peak := heapCost(func() { status, _, n, _, _ = download(t, g, base+"archive.tar") })
	t.Logf("archive.tar: %d bytes; the server allocated %d KiB, heap peak +%d KiB", n, alloc>>10, peak>>10)
	if status != 200 || n < size {
		t.Errorf("archive.tar: %d, %d bytes", status, n)
	}
	if alloc > maxRequestHeap || peak > maxRequestHeap {
		t.Errorf("archive.tar: allocated %d MiB (heap peak +%d MiB) for a %d MiB blob", alloc>>20, peak>>20, size>>20)
	}
}

// Blobs by abbreviated id (found in the pack index, never read to find
// out), Content-Length on raw answers, and 404 for objects that are no
// blob.
func TestRawBlobAbbreviatedIDs(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	sha := gitCmd(t, w.work, "rev-parse", "HEAD:README.md")
	base := "/api/v4/projects/" + store.IDString(w.project.ID) + "/repository/blobs/"
	for _, id := range []string{sha, sha[:7], strings.ToUpper(sha[:10])} {
		r := w.s.Do(t, http.MethodGet, base+id+"/raw", nil)
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || string(body) != "hello\nworld\n" || r.Header.Get("Content-Length") != "12" ||
			r.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("%s/raw: %d %q Content-Length %q Content-Type %q", id, r.StatusCode, body, r.Header.Get("Content-Length"), r.Header.Get("Content-Type"))
		}
		resp, raw := w.s.JSON(t, http.MethodGet, base+id, nil, nil)
		if resp.StatusCode != 200 || !strings.Contains(string(raw), `"sha":"`+sha+`"`) || !strings.Contains(string(raw), `"size":12`) {
			t.Errorf("%s: %d %s", id, resp.StatusCode, raw)
		}
	}
	tree := gitCmd(t, w.work, "rev-parse", "HEAD^{tree}")
	for _, id := range []string{tree, tree[:8], w.head, "abc", sha[:3]} {
		for _, suffix := range []string{"", "/raw"} {
			resp, body := w.s.JSON(t, http.MethodGet, base+id+suffix, nil, nil)
			if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 Blob Not Found"}` {
				t.Errorf("%s%s: %d %s", id, suffix, resp.StatusCode, body)
			}
		}
	}
	// A directory or a submodule is no file.
	resp, body := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/files/docs%2Fguide/raw?ref=master", nil, nil)
	if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 File Not Found"}` {
		t.Errorf("a directory: %d %s", resp.StatusCode, body)
	}
}
