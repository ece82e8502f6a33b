package gitserve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/internal/gitpack"
	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// TestMain doubles as a server process for the benchmarks (see
// childServer), so that its peak memory can be measured apart.
func TestMain(m *testing.M) {
	if dir := os.Getenv("GITSERVE_SERVE_DIR"); dir != "" {
		os.Exit(serveChild(dir))
	}
	code := m.Run()
	removeFixtures()
	os.Exit(code)
}

// serveChild serves dir on a loopback port in this process (a child of
// the benchmark) until stdin closes, so that its peak RSS can be taken.
func serveChild(dir string) int {
	var opt gitpack.Options
	if mb, err := strconv.Atoi(os.Getenv("GITSERVE_CACHE_MB")); err == nil {
		opt.CacheBytes = int64(mb) << 20
	}
	st, err := gitpack.Open(dir, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := &testServer{tb: childTB{}, dir: dir, store: st}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go http.Serve(ln, s)
	if path := os.Getenv("GITSERVE_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			pprof.StartCPUProfile(f)
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	fmt.Printf("http://%s/repo.git\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	// Peak RSS of this process image (not ru_maxrss, which counts the RSS
	// of the parent at exec time).
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			fmt.Println(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	if os.Getenv("GITSERVE_DEBUG_MEM") != "" {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		status, _ := os.ReadFile("/proc/self/status")
		fmt.Fprintf(os.Stderr, "heap sys %d MiB, heap in use %d MiB, sys %d MiB, %d GCs\n", m.HeapSys>>20, m.HeapInuse>>20, m.Sys>>20, m.NumGC)
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "VmHWM") || strings.HasPrefix(l, "Rss") {
				fmt.Fprintln(os.Stderr, l)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, err := range s.errs {
		fmt.Fprintln(os.Stderr, "server:", err)
		return 1
	}
	return 0
}

// childTB is the testing.TB of serveChild: errors go to stderr.
type childTB struct{ testing.TB }

func (childTB) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// childServer starts serveChild in a new process and returns its URL and
// a function that stops it and returns its peak RSS in MiB.
func childServer(tb testing.TB, dir string) (string, func() float64) {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "GITSERVE_SERVE_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	rd := bufio.NewReader(stdout)
	url, err := rd.ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	stopped := false
	stop := func() float64 {
		if stopped {
			return 0
		}
		stopped = true
		stdin.Close()
		line, _ := rd.ReadString('\n')
		if err := cmd.Wait(); err != nil {
			tb.Errorf("server process: %v", err)
		}
		kb, _ := strconv.Atoi(strings.TrimSpace(line))
		return float64(kb) / 1024
	}
	tb.Cleanup(func() { stop() })
	return strings.TrimSpace(url), stop
}

// cgitServerMeasured serves dir through C git's http-backend, with
// protocol v2 as the client asks (the server of this package speaks v2
// too), under GNU time,
// which records the peak RSS (KiB) of the backend and the largest of its
// children (upload-pack, pack-objects) into the returned file.
func cgitServerMeasured(tb testing.TB, dir string) (url, rssFile string) {
	tb.Helper()
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return cgitServer(tb, dir), ""
	}
	rssFile = filepath.Join(tb.TempDir(), "rss")
	url = cgitServerWith(tb, dir, true, func(h *cgi.Handler) {
		h.Args = []string{"-f", "%M", "-a", "-o", rssFile, h.Path}
		h.Path = "/usr/bin/time"
	})
	return url, rssFile
}

// maxRSSFile returns the largest value recorded in an rss file, in MiB.
func maxRSSFile(path string) float64 {
	data, _ := os.ReadFile(path)
	best := 0
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil && n > best {
			best = n
		}
	}
	os.Remove(path)
	return float64(best) / 1024
}

// benchClone clones url b.N times, timing the clones only.
func benchClone(b *testing.B, c *gitClient, url string, args ...string) {
	b.Helper()
	work := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dst := filepath.Join(work, fmt.Sprintf("c%d", i))
		c.run(work, append(append([]string{"clone", "--bare", "-q"}, args...), url, dst)...)
		b.StopTimer()
		os.RemoveAll(dst)
		b.StartTimer()
	}
}

// benchSides runs fn against this package's server (optionally with a
// closed pack) and C git's http-backend, reporting peak memory.
func benchSides(b *testing.B, dir string, closedDir string, fn func(b *testing.B, c *gitClient, url string)) {
	c := newGitClient(b)
	// This package's server runs in a child process of its own, so that
	// its peak RSS compares with that of C git's processes.
	b.Run("fennec", func(b *testing.B) {
		url, stop := childServer(b, dir)
		fn(b, c, url)
		b.ReportMetric(stop(), "peak-MiB")
	})
	if closedDir != "" {
		b.Run("fennec-closed", func(b *testing.B) {
			url, stop := childServer(b, closedDir)
			fn(b, c, url)
			b.ReportMetric(stop(), "peak-MiB")
		})
	}
	b.Run("cgit", func(b *testing.B) {
		url, rss := cgitServerMeasured(b, dir)
		fn(b, c, url)
		b.ReportMetric(maxRSSFile(rss), "peak-MiB")
	})
}

// closedCopy is a copy of the reference repository repacked into one
// closed pack by gitpack.Repack.
func closedCopy(b *testing.B, dir string) string {
	b.Helper()
	c := newGitClient(b)
	dst := copyRepo(b, dir)
	markClosed(b, c, dst)
	return dst
}

func BenchmarkClone(b *testing.B) {
	dir := repotest.Reference(b, repotest.Shape{})
	benchSides(b, dir, closedCopy(b, dir), func(b *testing.B, c *gitClient, url string) {
		benchClone(b, c, url)
	})
}

func BenchmarkCloneDepth1(b *testing.B) {
	dir := repotest.Reference(b, repotest.Shape{})
	benchSides(b, dir, closedCopy(b, dir), func(b *testing.B, c *gitClient, url string) {
		benchClone(b, c, url, "--depth", "1")
	})
}

// BenchmarkFetch100 fetches the last 100 commits into a clone that has
// everything before them.
func BenchmarkFetch100(b *testing.B) {
	dir := repotest.Reference(b, repotest.Shape{})
	c := newGitClient(b)
	// The client: a clone of the repository as it was 100 commits ago.
	old := copyRepo(b, dir)
	c.run(old, "update-ref", "refs/heads/master", "master~100")
	client := filepath.Join(b.TempDir(), "client.git")
	c.run(filepath.Dir(client), "clone", "-q", "--bare", "--no-local", old, client)
	os.RemoveAll(old)
	benchSides(b, dir, closedCopy(b, dir), func(b *testing.B, c *gitClient, url string) {
		work := b.TempDir()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dst := filepath.Join(work, fmt.Sprintf("f%d", i))
			if out, err := exec.Command("cp", "-a", client, dst).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v %s", err, out)
			}
			b.StartTimer()
			c.run(dst, "fetch", "-q", url, "master:refs/heads/master")
			b.StopTimer()
			os.RemoveAll(dst)
			b.StartTimer()
		}
	})
}

func (s *testServer) checkNoErrorsTB(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, err := range s.errs {
		tb.Errorf("server: %v", err)
	}
}

// BenchmarkEnumerate walks every object of the reference repository.
func BenchmarkEnumerate(b *testing.B) {
	dir := repotest.Reference(b, repotest.Shape{})
	c := newGitClient(b)
	st, err := gitpack.Open(dir, gitpack.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	tips := refTips(b, c, dir)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		objs, err := Enumerate(st, tips)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(objs)), "objects")
	}
}
