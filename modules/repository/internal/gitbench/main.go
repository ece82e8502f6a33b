package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// The targets of the issue, Fennec against C git.
const (
	wallTarget = 1.5
	rssTarget  = 2.0
)

// server is one git HTTP server under measurement.
type server interface {
	key() string
	name() string
	// setup prepares the server's copy of the reference repository.
	setup() error
	// fresh makes the next run a cold one.
	fresh() error
	// begin starts measuring a run and returns the repository's URL; end
	// stops measuring and returns the server's CPU time and peak RSS since
	// begin; finish ends the run (after its verification).
	begin() (string, error)
	end() (time.Duration, int64, error)
	finish() error
	repoDir() string
	notes() []string
	initialPush() *sample
	close()
}

type sample struct {
	wall, cpu time.Duration
	rss       int64
}

type outcome struct {
	cold *sample
	warm []sample
	err  error
}

type bench struct {
	runs         int
	fetchCommits int
	pushCommits  int
	fsck         bool
	load         string
	work         string
	cl           *gitClient
	stderr       io.Writer

	ref     string // the cached reference repository (never written to)
	source  string // a local clone of it, the source of every local copy
	tip     string
	commits int

	fetchBase  string
	pushClient string
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.stderr, "gitbench: "+format+"\n", args...)
}

func main() {
	if code, ok := serveMode(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// serveMode runs the hidden mode `-serve-cgi ROOT [-addr ADDR]` in which
// gitbench is the C git server; ok is false for any other command line.
func serveMode(args []string) (code int, ok bool) {
	if len(args) < 2 || (args[0] != "-serve-cgi" && args[0] != "--serve-cgi") {
		return 0, false
	}
	fs := flag.NewFlagSet("gitbench -serve-cgi", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	if err := fs.Parse(args[2:]); err != nil {
		return 2, true
	}
	return serveCGI(args[1], *addr), true
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gitbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "gitbench: git over smart HTTP, Fennec against C git's http-backend (see its package documentation).\n\nUsage: gitbench [flags]")
		fs.PrintDefaults()
	}
	runs := fs.Int("runs", 3, "warm runs per scenario and server; the median is reported")
	commits := fs.Int("commits", 0, "commits of the reference repository (0: repotest's default, 20,000)")
	files := fs.Int("files", 0, "files of the reference repository (0: repotest's default, 5,000)")
	binaries := fs.Int("binaries", 0, "binaries of the reference repository (0: repotest's default, 3; -1: none)")
	serverList := fs.String("servers", "git,fennec", "servers to measure: git, fennec")
	scenarioList := fs.String("scenarios", "clone,shallow,fetch,push", "scenarios to run: clone, shallow, fetch, push")
	fennecBin := fs.String("fennec", "", "fennec binary (default: go build ./hostapp into the work directory)")
	load := fs.String("load", "push", "how the reference gets into Fennec: push (git push --mirror, timed) or copy (its files)")
	fetchCommits := fs.Int("fetch-commits", 100, "commits the fetch scenario fetches")
	pushCommits := fs.Int("push-commits", 1000, "commits the push scenario pushes")
	fsck := fs.Bool("fsck", true, "git fsck every clone (the server's repository after a push)")
	workFlag := fs.String("work", "", "directory for the temporary files (default: the system's)")
	keep := fs.Bool("keep", false, "keep the temporary files")
	timeout := fs.Duration("timeout", 30*time.Minute, "limit of each git command")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *runs < 1 || *fetchCommits < 1 || *pushCommits < 1 {
		fs.Usage()
		return 2
	}
	if *fennecBin != "" {
		abs, err := filepath.Abs(*fennecBin)
		if err != nil {
			fmt.Fprintln(stderr, "gitbench:", err)
			return 2
		}
		*fennecBin = abs
	}

	b := &bench{runs: *runs, fetchCommits: *fetchCommits, pushCommits: *pushCommits, fsck: *fsck, load: *load, stderr: stderr}
	var servers []server
	for _, k := range splitList(*serverList) {
		switch k {
		case "git", "cgit":
			servers = append(servers, &cgitServer{b: b})
		case "fennec":
			servers = append(servers, &fennecServer{b: b, bin: *fennecBin})
		default:
			fmt.Fprintf(stderr, "gitbench: unknown server %q (want git, fennec)\n", k)
			return 2
		}
	}
	var chosen []scenario
	all := b.scenarios()
	for _, k := range splitList(*scenarioList) {
		found := false
		for _, sc := range all {
			if sc.key == k {
				chosen, found = append(chosen, sc), true
			}
		}
		if !found {
			fmt.Fprintf(stderr, "gitbench: unknown scenario %q (want clone, shallow, fetch, push)\n", k)
			return 2
		}
	}
	if len(servers) == 0 || len(chosen) == 0 {
		fs.Usage()
		return 2
	}

	if *workFlag != "" {
		if err := os.MkdirAll(*workFlag, 0o755); err != nil {
			fmt.Fprintln(stderr, "gitbench:", err)
			return 1
		}
	}
	work, err := os.MkdirTemp(*workFlag, "gitbench-")
	if err != nil {
		fmt.Fprintln(stderr, "gitbench:", err)
		return 1
	}
	b.work = work
	cleanup := func() {
		for _, s := range servers {
			s.close()
		}
		if *keep {
			b.logf("kept %s", work)
		} else {
			os.RemoveAll(work)
		}
	}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-interrupted:
			b.logf("interrupted")
			cleanup()
			os.Exit(130)
		case <-finished:
		}
	}()
	defer cleanup()
	defer func() {
		signal.Stop(interrupted)
		close(finished)
	}()

	shape := repotest.Shape{Commits: *commits, Files: *files, Binaries: *binaries}
	if err := b.prepare(shape, *timeout); err != nil {
		fmt.Fprintln(stderr, "gitbench:", err)
		return 1
	}

	var errs []string
	setupErr := map[string]error{}
	for _, s := range servers {
		b.logf("%s: setting up", s.name())
		t0 := time.Now()
		if err := s.setup(); err != nil {
			setupErr[s.key()] = err
			errs = append(errs, fmt.Sprintf("%s setup: %v", s.name(), err))
			b.logf("%s: setup failed: %v", s.name(), err)
			s.close()
			continue
		}
		b.logf("%s: ready in %.1fs", s.name(), time.Since(t0).Seconds())
	}
	for _, s := range servers {
		if f, ok := s.(*fennecServer); ok && f.gcErr != nil {
			errs = append(errs, fmt.Sprintf("Fennec repo gc: %v", f.gcErr))
		}
	}

	results := map[string]map[string]*outcome{}
	for _, sc := range chosen {
		results[sc.key] = map[string]*outcome{}
		var scErr error
		if sc.setup != nil && len(setupErr) < len(servers) {
			b.logf("%s: preparing the client side", sc.title)
			scErr = sc.setup(b)
			if scErr != nil {
				errs = append(errs, fmt.Sprintf("%s: setup: %v", sc.title, scErr))
			}
		}
		for _, s := range servers {
			o := &outcome{err: scErr}
			if err := setupErr[s.key()]; err != nil {
				o.err = errors.New("server setup failed")
			} else if o.err == nil {
				if err := s.fresh(); err != nil {
					o.err = err
					errs = append(errs, fmt.Sprintf("%s, %s: restart: %v", sc.title, s.name(), err))
				}
			}
			results[sc.key][s.key()] = o
		}
		for r := 0; r <= b.runs; r++ {
			for _, s := range servers {
				o := results[sc.key][s.key()]
				if o.err != nil {
					continue
				}
				smp, err := b.measure(sc, s, r)
				if err != nil {
					o.err = err
					errs = append(errs, fmt.Sprintf("%s, %s, run %d: %v", sc.title, s.name(), r, err))
					b.logf("%s, %s, run %d: FAILED: %v", sc.title, s.name(), r, err)
					continue
				}
				label := "cold"
				if r == 0 {
					o.cold = &smp
				} else {
					o.warm = append(o.warm, smp)
					label = fmt.Sprintf("run %d/%d", r, b.runs)
				}
				b.logf("%-30s %-7s %-9s wall %8.3fs  cpu %8.3fs  rss %7.1f MiB", sc.title, s.name(), label, smp.wall.Seconds(), smp.cpu.Seconds(), mib(smp.rss))
			}
		}
	}

	b.report(stdout, servers, chosen, results, setupErr)
	if len(errs) > 0 {
		fmt.Fprintln(stdout, "\nErrors:")
		for _, e := range errs {
			fmt.Fprintln(stdout, "  "+e)
		}
		return 1
	}
	return 0
}

// prepare finds the reference repository and makes the local clone all
// copies come from.
func (b *bench) prepare(shape repotest.Shape, timeout time.Duration) error {
	var err error
	if b.cl, err = newGitClient(filepath.Join(b.work, "home"), timeout); err != nil {
		return err
	}
	b.logf("reference repository %+v: building or reusing the cached one", shape)
	t0 := time.Now()
	if b.ref, err = reference(shape, b.logf); err != nil {
		return err
	}
	b.logf("reference repository %s (%.1fs)", b.ref, time.Since(t0).Seconds())
	b.source = filepath.Join(b.work, "source.git")
	if _, err := b.cl.git("", "clone", "--bare", "-q", b.ref, b.source); err != nil {
		return err
	}
	if _, err := b.cl.git(b.source, "remote", "remove", "origin"); err != nil {
		return err
	}
	out, err := b.cl.git(b.source, "rev-parse", "refs/heads/master")
	if err != nil {
		return err
	}
	b.tip = strings.TrimSpace(out)
	if out, err = b.cl.git(b.source, "rev-list", "--count", "refs/heads/master"); err != nil {
		return err
	}
	b.commits, _ = strconv.Atoi(strings.TrimSpace(out))
	return nil
}

// measure runs one scenario once against one server.
func (b *bench) measure(sc scenario, s server, r int) (smp sample, err error) {
	dir := filepath.Join(b.work, "runs", fmt.Sprintf("%s-%s-%d", sc.key, s.key(), r))
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return smp, err
	}
	defer os.RemoveAll(dir)
	if sc.prepare != nil {
		if err := sc.prepare(b, dir, r); err != nil {
			return smp, fmt.Errorf("prepare: %w", err)
		}
	}
	url, err := s.begin()
	if err != nil {
		return smp, err
	}
	defer func() {
		if ferr := s.finish(); ferr != nil && err == nil {
			err = ferr
		}
	}()
	t0 := time.Now()
	err = sc.run(b, url, dir, r)
	smp.wall = time.Since(t0)
	if err != nil {
		return smp, err
	}
	if smp.cpu, smp.rss, err = s.end(); err != nil {
		return smp, err
	}
	if err := sc.verify(b, s, url, dir, r); err != nil {
		return smp, fmt.Errorf("verify: %w", err)
	}
	return smp, nil
}

// checkMirror verifies that the server at url has the source's refs.
func (b *bench) checkMirror(url string) error {
	got, _, err := b.cl.remoteRefs(url)
	if err != nil {
		return err
	}
	want, err := b.cl.localRefs(b.source, "refs/")
	if err != nil {
		return err
	}
	if d := want.diff(got); d != "" {
		return fmt.Errorf("the server's refs differ from the pushed ones: %s", d)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// medianSample is the median of each figure separately.
func medianSample(xs []sample) sample {
	pick := func(get func(sample) float64) float64 {
		v := make([]float64, len(xs))
		for i, x := range xs {
			v[i] = get(x)
		}
		sort.Float64s(v)
		n := len(v)
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	}
	return sample{
		wall: time.Duration(pick(func(s sample) float64 { return float64(s.wall) })),
		cpu:  time.Duration(pick(func(s sample) float64 { return float64(s.cpu) })),
		rss:  int64(pick(func(s sample) float64 { return float64(s.rss) })),
	}
}
