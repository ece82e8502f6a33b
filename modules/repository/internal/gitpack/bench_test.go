package gitpack

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// The benchmarks use the default reference repository (20,000 commits,
// about 235,000 objects).

var benchLists struct {
	once    sync.Once
	commits []Hash
	trees   []Hash
	all     []Hash
}

func benchRepo(b *testing.B) string {
	dir := repotest.Reference(b, repotest.Shape{})
	benchLists.once.Do(func() {
		out := git(b, dir, nil, "cat-file", "--batch-all-objects", "--batch-check")
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			h, _ := ParseHex(f[0])
			benchLists.all = append(benchLists.all, h)
			switch f[1] {
			case "commit":
				benchLists.commits = append(benchLists.commits, h)
			case "tree":
				benchLists.trees = append(benchLists.trees, h)
			}
		}
	})
	return dir
}

func BenchmarkOpen(b *testing.B) {
	dir := benchRepo(b)
	for b.Loop() {
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Has(benchLists.all[0])
		s.Close()
	}
}

// BenchmarkReadCommits reads every commit (rev-list order is close to
// the pack's, as a history walk reads them).
func BenchmarkReadCommits(b *testing.B) {
	dir := benchRepo(b)
	order := git(b, dir, nil, "rev-list", "--all")
	var hs []Hash
	for _, l := range strings.Fields(string(order)) {
		h, _ := ParseHex(l)
		hs = append(hs, h)
	}
	defer cpuTime(b)()
	for b.Loop() {
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range hs {
			if _, _, err := s.Read(h); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
	b.ReportMetric(float64(len(hs)), "commits")
}

// BenchmarkReadCommitsAndTrees reads what an object walk reads: every
// commit and tree, in the order git rev-list --objects gives.
func BenchmarkReadCommitsAndTrees(b *testing.B) {
	dir := benchRepo(b)
	out := git(b, dir, nil, "rev-list", "--objects", "--all")
	isTree := make(map[Hash]bool, len(benchLists.trees))
	for _, h := range benchLists.trees {
		isTree[h] = true
	}
	isCommit := make(map[Hash]bool, len(benchLists.commits))
	for _, h := range benchLists.commits {
		isCommit[h] = true
	}
	var hs []Hash
	for _, l := range strings.Split(string(out), "\n") {
		if len(l) < 40 {
			continue
		}
		h, _ := ParseHex(l[:40])
		if isTree[h] || isCommit[h] {
			hs = append(hs, h)
		}
	}
	defer cpuTime(b)()
	for b.Loop() {
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range hs {
			if _, _, err := s.Read(h); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
	b.ReportMetric(float64(len(hs)), "objects")
}

// BenchmarkGitRevListObjects is C git's object walk on the same
// repository, for comparison.
func BenchmarkGitRevListObjects(b *testing.B) {
	dir := benchRepo(b)
	for b.Loop() {
		cmd := exec.Command("git", "rev-list", "--objects", "--all")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// gitBench runs a git command per iteration and reports its peak RSS
// (measured by /usr/bin/time, which forks it from a small process).
func gitBench(b *testing.B, dir string, stdin func() io.Reader, args ...string) {
	var rss float64
	for b.Loop() {
		rss = max(rss, timed(b, dir, stdin, nil, "git", args...))
	}
	b.ReportMetric(rss, "peak-MB")
}

// timed runs a command under /usr/bin/time and returns its peak RSS in MB.
func timed(b *testing.B, dir string, stdin func() io.Reader, env []string, name string, args ...string) float64 {
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", name}, args...)...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = stdin()
	}
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, stderr.Bytes())
	}
	lines := strings.Fields(stderr.String())
	kb, _ := strconv.Atoi(lines[len(lines)-1])
	return float64(kb) / 1024
}

// selfPeak runs one operation in a fresh test process (TestBenchHelper)
// and reports its peak RSS, comparable with git's.
func selfPeak(b *testing.B, op string, env ...string) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return
	}
	env = append(env, "GITPACK_BENCH_OP="+op)
	mb := timed(b, "", nil, env, os.Args[0], "-test.run=^TestBenchHelper$", "-test.count=1")
	b.ReportMetric(mb, "peak-MB")
}

// TestBenchHelper is the subprocess selfPeak runs; skipped otherwise.
func TestBenchHelper(t *testing.T) {
	op := os.Getenv("GITPACK_BENCH_OP")
	if op == "" {
		t.Skip("benchmark helper")
	}
	s, err := Open(os.Getenv("GITPACK_BENCH_REPO"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	switch op {
	case "writepack", "writepack-ref":
		var all []Hash
		for _, p := range s.snap.Load().packs {
			for i := 0; i < p.idx.n; i++ {
				all = append(all, p.idx.name(i))
			}
		}
		if err := s.WritePack(io.Discard, all, WriteOptions{OfsDelta: op == "writepack"}); err != nil {
			t.Fatal(err)
		}
	case "receive":
		f, err := os.Open(os.Getenv("GITPACK_BENCH_PACK"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		in, err := s.Receive(f, ReceiveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		in.Discard()
	}
}

// BenchmarkWritePackAll writes every object (a full clone's pack).
func BenchmarkWritePackAll(b *testing.B) {
	dir := benchRepo(b)
	s, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	defer cpuTime(b)()
	for b.Loop() {
		if err := s.WritePack(io.Discard, benchLists.all, WriteOptions{OfsDelta: true}); err != nil {
			b.Fatal(err)
		}
	}
	selfPeak(b, "writepack", "GITPACK_BENCH_REPO="+dir)
}

// BenchmarkWritePackAllEntries writes every object entry by entry (the
// whole-pack path disabled by asking for ref deltas only).
func BenchmarkWritePackAllRefDeltas(b *testing.B) {
	dir := benchRepo(b)
	s, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	defer cpuTime(b)()
	for b.Loop() {
		if err := s.WritePack(io.Discard, benchLists.all, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	selfPeak(b, "writepack-ref", "GITPACK_BENCH_REPO="+dir)
}

// BenchmarkGitPackObjectsAll is C git's pack-objects on the same
// repository, for comparison.
func BenchmarkGitPackObjectsAll(b *testing.B) {
	dir := benchRepo(b)
	gitBench(b, dir, nil, "pack-objects", "--all", "--stdout", "-q", "--delta-base-offset")
}

var benchPack struct {
	once sync.Once
	data []byte
}

// fullPack is the reference repository's pack (every object).
func fullPack(b *testing.B, dir string) []byte {
	benchPack.once.Do(func() {
		benchPack.data = git(b, dir, nil, "pack-objects", "--all", "--stdout", "-q", "--delta-base-offset")
	})
	return benchPack.data
}

// BenchmarkReceiveFull receives a full clone's pack into an empty
// repository (quarantine, index, discard).
func BenchmarkReceiveFull(b *testing.B) {
	pk := fullPack(b, benchRepo(b))
	dir := emptyRepo(b)
	s, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(int64(len(pk)))
	defer cpuTime(b)()
	for b.Loop() {
		in, err := s.Receive(bytes.NewReader(pk), ReceiveOptions{})
		if err != nil {
			b.Fatal(err)
		}
		in.Discard()
	}
	pf := filepath.Join(b.TempDir(), "full.pack")
	if err := os.WriteFile(pf, pk, 0o644); err != nil {
		b.Fatal(err)
	}
	selfPeak(b, "receive", "GITPACK_BENCH_REPO="+dir, "GITPACK_BENCH_PACK="+pf)
}

// BenchmarkGitIndexPack is git index-pack --stdin on the same pack.
func BenchmarkGitIndexPack(b *testing.B) {
	pk := fullPack(b, benchRepo(b))
	dir := emptyRepo(b)
	b.SetBytes(int64(len(pk)))
	gitBench(b, dir, func() io.Reader { return bytes.NewReader(pk) }, "index-pack", "--stdin", "--fix-thin")
}

// cpuTime reports the process's CPU time per iteration (user + system,
// every thread: GC included), steadier than wall time on a busy machine.
func cpuTime(b *testing.B) func() {
	start := cpuNow()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuNow()-start)/1e6/float64(b.N), "cpu-ms/op")
		}
	}
}

func cpuNow() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkRepack repacks the reference repository into one closed pack
// (after the first round the pack is already closed and is streamed).
func BenchmarkRepack(b *testing.B) {
	dir := copyRepo(b, benchRepo(b))
	s, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tip, _ := ParseHex(strings.TrimSpace(string(git(b, dir, nil, "rev-parse", "master"))))
	defer cpuTime(b)()
	for b.Loop() {
		if err := s.Repack(benchLists.all, []Hash{tip}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitRepack is git repack -a -d on the same repository (reusing
// deltas, as Repack does; with the bitmap git writes too).
func BenchmarkGitRepack(b *testing.B) {
	dir := copyRepo(b, benchRepo(b))
	gitBench(b, dir, nil, "repack", "-a", "-d", "-q")
}

// BenchmarkGitRevListCommits is C git reading every commit (git rev-list
// --all), for comparison with BenchmarkReadCommits.
func BenchmarkGitRevListCommits(b *testing.B) {
	dir := benchRepo(b)
	gitBench(b, dir, nil, "rev-list", "--all")
}
