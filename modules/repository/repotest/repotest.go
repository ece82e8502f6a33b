// Package repotest builds the deterministic reference repository the
// repository benchmarks (and git-over-HTTP's) measure against: fixed seed,
// fixed dates, generated as one git fast-import stream, then fully repacked
// with a reachability bitmap. It needs the git CLI; it is for tests and
// benchmarks only.
package repotest

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// building serialises the builds of this process.
var building sync.Mutex

// Shape is the size of a reference repository.
type Shape struct {
	Commits  int // default 20,000
	Files    int // default 5,000, in nested directories
	Binaries int // default 3, of 0.5-2 MB each
}

func (s Shape) withDefaults() Shape {
	if s.Commits <= 0 {
		s.Commits = 20000
	}
	if s.Files <= 0 {
		s.Files = 5000
	}
	if s.Binaries < 0 {
		s.Binaries = 0
	} else if s.Binaries == 0 {
		s.Binaries = 3
	}
	return s
}

// Reference returns the path of a bare reference repository of the given
// shape, building it once and caching it under the system temp directory
// (the same shape always gives the same commits).
func Reference(tb testing.TB, shape Shape) string {
	tb.Helper()
	shape = shape.withDefaults()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git CLI not installed")
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("fennec-refrepo-v1-%d-%d-%d.git", shape.Commits, shape.Files, shape.Binaries))
	// Parallel tests of one process wait for one build rather than each
	// building (they once shared a directory named after the process, and
	// removed it under each other); other processes build in their own
	// temporary directory, and the first rename wins.
	building.Lock()
	defer building.Unlock()
	if _, err := os.Stat(filepath.Join(dir, "fennec-ready")); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(os.TempDir(), filepath.Base(dir)+".building-*")
	if err != nil {
		tb.Fatal(err)
	}
	run := func(stdin *os.File, args ...string) {
		tb.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = tmp
		cmd.Stdin = stdin
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(nil, "init", "-q", "--bare", "-b", "master")
	stream := filepath.Join(tmp, "import.stream")
	if err := writeStream(stream, shape); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(stream)
	if err != nil {
		tb.Fatal(err)
	}
	run(f, "fast-import", "--quiet")
	f.Close()
	os.Remove(stream)
	run(nil, "repack", "-a", "-d", "-b", "-q")
	if err := os.WriteFile(filepath.Join(tmp, "fennec-ready"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process built it meanwhile: use theirs.
		os.RemoveAll(tmp)
	}
	return dir
}

// FilePath is the path of generated file i ("src/d07/e3/file-00042.txt").
func FilePath(i int) string {
	return fmt.Sprintf("src/d%02d/e%d/file-%05d.txt", i%50, (i/50)%10, i)
}

func writeStream(path string, s Shape) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewSource(42))
	start := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	authors := []string{"Ada", "Brian", "Cleo", "Dmitri", "Eun", "Farah", "Goran", "Hana", "Ivo", "Jun"}
	contents := make([][]byte, s.Files)
	for i := range contents {
		var b strings.Builder
		for l := 0; l < 8; l++ {
			fmt.Fprintf(&b, "file %d line %d %08x\n", i, l, rng.Uint32())
		}
		contents[i] = []byte(b.String())
	}
	data := func(b []byte) {
		fmt.Fprintf(w, "data %d\n", len(b))
		w.Write(b)
		w.WriteByte('\n')
	}
	for c := 0; c < s.Commits; c++ {
		who := authors[c%len(authors)]
		when := start.Add(time.Duration(c) * 17 * time.Minute).Unix()
		fmt.Fprintf(w, "commit refs/heads/master\nmark :%d\n", c+1)
		fmt.Fprintf(w, "author %s <%s@example.com> %d +0000\n", who, strings.ToLower(who), when)
		fmt.Fprintf(w, "committer %s <%s@example.com> %d +0000\n", who, strings.ToLower(who), when)
		data([]byte(fmt.Sprintf("Change %d by %s\n\nGenerated for the reference repository.\n", c, who)))
		if c > 0 {
			fmt.Fprintf(w, "from :%d\n", c)
		}
		if c == 0 {
			for i := range contents {
				fmt.Fprintf(w, "M 100644 inline %s\n", FilePath(i))
				data(contents[i])
			}
		} else {
			for k := 0; k < 1+rng.Intn(3); k++ {
				i := rng.Intn(s.Files)
				contents[i] = append(contents[i], []byte(fmt.Sprintf("change %d %08x\n", c, rng.Uint32()))...)
				fmt.Fprintf(w, "M 100644 inline %s\n", FilePath(i))
				data(contents[i])
			}
		}
		if c > 0 && s.Binaries > 0 && c%(s.Commits/(s.Binaries+1)+1) == 0 {
			size := 512<<10 + rng.Intn(1536<<10)
			blob := make([]byte, size)
			rng.Read(blob)
			fmt.Fprintf(w, "M 100644 inline assets/binary-%d.bin\n", c)
			data(blob)
		}
		w.WriteString("\n")
	}
	return w.Flush()
}
