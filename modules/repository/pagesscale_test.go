package repository_test

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestCodePagesAtScale: the hostile sizes, at their full size: a
// tree of 100,000 entries, a 100 MB blob, a commit touching 10,000 files.
// Each page answers with a bounded page that says what it left out,
// rather than hanging, running out of memory or sending megabytes.
func TestCodePagesAtScale(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("pushes a 100 MB file")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	var repos repository.Store
	s := stocktest.Start(t, fennectest.WithExtract(&repos))
	p := stocktest.NewProject(t, s.Client, "scale", "public")
	w := t.TempDir()
	gitCmd(t, w, "init", "-q", "-b", "master")

	// The repository is written with git's plumbing (fast-import would
	// insert 100,000 entries into one tree one by one, for half a
	// minute): the blobs by hash-object, the 100 MB one streamed through
	// a pipe and never held whole by the test, the trees by mktree.
	const entries, touched, hugeSize = 100_000, 10_000, 100 << 20
	plumb := func(stdin func(io.Writer), args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = w
		pipe, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		in := bufio.NewWriterSize(pipe, 1<<20)
		stdin(in)
		if err := in.Flush(); err != nil {
			t.Fatal(err)
		}
		pipe.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(out.String())
	}
	text := func(s string) func(io.Writer) { return func(w io.Writer) { io.WriteString(w, s) } }
	x := plumb(text("x\n"), "hash-object", "-w", "--stdin")
	y := plumb(text("y\n"), "hash-object", "-w", "--stdin")
	huge := plumb(func(w io.Writer) {
		line := strings.Repeat("all work and no play ", 4) + "\n"
		for written := 0; written < hugeSize; written += len(line) {
			io.WriteString(w, line[:min(len(line), hugeSize-written)])
		}
	}, "hash-object", "-w", "--stdin")
	wideTree := func(changed int) string {
		return plumb(func(w io.Writer) {
			for i := range entries {
				blob := x
				if i < changed {
					blob = y
				}
				fmt.Fprintf(w, "100644 blob %s\tf%06d\n", blob, i)
			}
		}, "mktree")
	}
	commit := func(wide, msg string, parents ...string) string {
		root := plumb(text(fmt.Sprintf("040000 tree %s\twide\n100644 blob %s\thuge.txt\n", wide, huge)), "mktree")
		args := []string{"commit-tree", root, "-m", msg}
		for _, p := range parents {
			args = append(args, "-p", p)
		}
		return plumb(text(""), args...)
	}
	first := commit(wideTree(0), "wide")
	gitCmd(t, w, "update-ref", "refs/heads/master", commit(wideTree(touched), "many", first))
	touchRepository(t, s.Client, int64(p.ID))
	gitCmd(t, w, "push", "-q", repos.Path(int64(p.ID)), "master")
	head := gitCmd(t, w, "rev-parse", "master")
	parent := gitCmd(t, w, "rev-parse", "master~1")

	c := s.NewBrowser(t)
	// A page over this is not bounded (the root tree's bound is 100 KB;
	// these pages list up to 1,000 entries or 500 files).
	const maxPage = 2 << 20
	get := func(what, path string, fragments ...string) {
		t.Helper()
		start := time.Now()
		page := c.Get(t, path)
		took := time.Since(start)
		wantPage(t, what, page, 200, fragments...)
		if len(page.Body) > maxPage {
			t.Errorf("%s: %d bytes", what, len(page.Body))
		}
		t.Logf("%s: %d bytes in %v", what, len(page.Body), took.Round(time.Millisecond))
	}
	get("a tree of 100,000 entries", "/root/scale/-/tree/master/wide",
		`Entries 1–1000 of 100000`, `>f000999</bdi>`, `<a href="/root/scale/-/tree/master/wide?page=2" rel="next">Next</a>`)
	get("its last page", "/root/scale/-/tree/master/wide?page=100", `Entries 99001–100000 of 100000`, `>f099999</bdi>`)
	get("a 100 MB blob", "/root/scale/-/blob/master/huge.txt",
		`This file is too large to display (100.0 MiB). <a href="/root/scale/-/raw/master/huge.txt">View it raw</a>.`)
	get("its blame", "/root/scale/-/blame/master/huge.txt", `/root/scale/-/raw/master/huge.txt`)
	get("a commit of 10,000 files", "/root/scale/-/commit/"+head,
		`10000 files changed`, `Only the first 500 changed files are shown; 9500 more files left out.`)
	get("their comparison", "/root/scale/-/compare/"+parent+"...master", `Only the first 500 changed files are shown`)

	// The raw file streams, whole.
	res := s.Do(t, "GET", "/root/scale/-/raw/master/huge.txt", nil)
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || n != hugeSize {
		t.Errorf("raw: %d, %d bytes, %v", res.StatusCode, n, err)
	}
}
