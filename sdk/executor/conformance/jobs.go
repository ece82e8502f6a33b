package conformance

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/sdk/executor"
)

// archiveOf fetches job's archive and lists its files (directories left out).
func (s *suite) archiveOf(t *testing.T, e executor.Executor, job executor.Job, res executor.Result) []string {
	t.Helper()
	var buf bytes.Buffer
	n, err := e.Artifacts(s.ctx(t), job.ID, &buf)
	if err != nil {
		t.Fatalf("Artifacts: %v", err)
	}
	if n != int64(buf.Len()) || n != res.Artifacts.Size {
		t.Errorf("Artifacts wrote %d bytes (said %d), the result says %d", buf.Len(), n, res.Artifacts.Size)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("the archive is not a zip: %v", err)
	}
	var files []string
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, "/") {
			files = append(files, f.Name)
		}
	}
	slices.Sort(files)
	return files
}

const makeFiles = "mkdir -p out/sub logs deep/er && echo a > out/a.txt && echo b > out/sub/b.txt && echo x > logs/x.log && echo y > deep/er/y.log && echo junk > junk.tmp && echo other > other.txt && ln -s /etc/passwd out/passwd"

func (s *suite) artifacts(t *testing.T) {
	e := s.executor(t)
	job := s.job(makeFiles)
	job.Artifacts = &executor.ArtifactsSpec{Name: "my-art", Paths: []string{"out/", "**/*.log", "../outside", "missing/*"}, ExpireIn: "1 week"}
	res, trace := s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureNone, 0)
	if res.Artifacts.Filename != "my-art.zip" || res.Artifacts.ExpireIn != "1 week" || res.Artifacts.Size <= 0 {
		t.Errorf("result artifacts %+v", res.Artifacts)
	}
	got := s.archiveOf(t, e, job, res)
	want := []string{"deep/er/y.log", "logs/x.log", "out/a.txt", "out/sub/b.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("archive holds %q, want %q (symbolic links are never archived)", got, want)
	}
	wantIn(t, trace, "missing/*")

	// untracked: what git does not track, ignored files included, .git never.
	job = s.job(makeFiles)
	job.Artifacts = &executor.ArtifactsSpec{Untracked: true}
	res, trace = s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureNone, 0)
	if res.Artifacts.Filename != "artifacts.zip" {
		t.Errorf("default archive name %q", res.Artifacts.Filename)
	}
	got = s.archiveOf(t, e, job, res)
	want = []string{"deep/er/y.log", "junk.tmp", "logs/x.log", "other.txt", "out/a.txt", "out/sub/b.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("untracked archive holds %q, want %q", got, want)
	}

	// No archive asked for, or nothing matched: none.
	job = s.job("true")
	job.Artifacts = &executor.ArtifactsSpec{Paths: []string{"nothing-here"}}
	res, trace = s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureNone, 0)
	if res.Artifacts.Filename != "" {
		t.Errorf("an archive of nothing: %+v", res.Artifacts)
	}
	if _, err := e.Artifacts(s.ctx(t), job.ID, new(bytes.Buffer)); !errors.Is(err, executor.ErrNoArtifacts) {
		t.Errorf("Artifacts of a job without one: %v, want ErrNoArtifacts", err)
	}
}

func (s *suite) artifactsWhen(t *testing.T) {
	e := s.executor(t)
	for _, c := range []struct {
		when    executor.When
		fail    bool
		archive bool
	}{
		{"", false, true}, {"", true, false},
		{executor.WhenOnSuccess, false, true}, {executor.WhenOnSuccess, true, false},
		{executor.WhenOnFailure, false, false}, {executor.WhenOnFailure, true, true},
		{executor.WhenAlways, false, true}, {executor.WhenAlways, true, true},
	} {
		script := []string{"echo a > a.txt"}
		if c.fail {
			script = append(script, "exit 2")
		}
		job := s.noClone(script...)
		job.Artifacts = &executor.ArtifactsSpec{Paths: []string{"a.txt"}, When: c.when}
		res, trace := s.run(t, e, job)
		if (res.Artifacts.Filename != "") != c.archive {
			t.Errorf("when %q, job failed %v: archive %+v, want one: %v\n%s", c.when, c.fail, res.Artifacts, c.archive, trace)
		}
		if c.fail && res.Failure != executor.FailureScript || !c.fail && res.Failure != executor.FailureNone {
			t.Errorf("when %q, job failed %v: result %+v", c.when, c.fail, res)
		}
	}
}

func (s *suite) artifactsLimit(t *testing.T) {
	e := s.executor(t)
	job := s.noClone("head -c 200000 /dev/urandom > big.bin")
	job.Artifacts = &executor.ArtifactsSpec{Paths: []string{"big.bin"}}
	job.MaxArtifactsBytes = 10000
	res, trace := s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureArtifactsLimit, anyExit)
	if res.Artifacts.Filename != "" {
		t.Errorf("an archive past the limit was kept: %+v", res.Artifacts)
	}
	if _, err := e.Artifacts(s.ctx(t), job.ID, new(bytes.Buffer)); !errors.Is(err, executor.ErrNoArtifacts) {
		t.Errorf("Artifacts past the limit: %v, want ErrNoArtifacts", err)
	}
}

func (s *suite) dependencies(t *testing.T) {
	e := s.executor(t)
	job := s.job("cat dep/file.txt", "cat version.txt")
	depToken := "dep-token-" + randomWord()
	job.Dependencies = []executor.Dependency{{ID: 11, Name: "build", Token: depToken,
		URL: s.deps.add(t, 11, depToken, [][2]string{{"dep/file.txt", "from-dependency"}})}}
	res, trace := s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantIn(t, trace, "from-dependency", "\ntwo\n")

	job = s.noClone("echo MUST-NOT-RUN")
	job.Dependencies = []executor.Dependency{{ID: 12, Name: "build", Token: "wrong",
		URL: s.deps.add(t, 12, depToken, [][2]string{{"f", "x"}})}}
	res, trace = s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureDependency, anyExit)
	wantNotIn(t, trace, "MUST-NOT-RUN\n")

	// Zip slip: an entry leaving the work directory fails the job and is
	// written nowhere.
	name := "zip-slip-" + randomWord()
	job = s.noClone("echo MUST-NOT-RUN")
	job.Dependencies = []executor.Dependency{{ID: 13, Name: "evil", Token: depToken,
		URL: s.deps.add(t, 13, depToken, [][2]string{{"../../../../../../../../tmp/" + name, "x"}, {"/tmp/" + name, "x"}})}}
	res, trace = s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureDependency, anyExit)
	wantNotIn(t, trace, "MUST-NOT-RUN\n")
	if s.f.SameMachine {
		if _, err := os.Stat(filepath.Join("/tmp", name)); err == nil {
			os.Remove(filepath.Join("/tmp", name))
			t.Errorf("a zip-slip entry was written to /tmp/%s", name)
		}
	}
}

// sleeper is a script that starts a sleep of a unique length in the
// background and another in the foreground, then says it has: a process
// tree to kill, with a marker to find it by.
func sleeper() (marker string, script []string) {
	marker = fmt.Sprintf("300.%d", time.Now().UnixNano()%1e9)
	return marker, []string{
		"sleep " + marker + " &",
		"(sleep " + marker + " & wait) &",
		"echo sleepers-started",
		"sleep " + marker,
	}
}

// processesWith lists live processes whose command line contains marker.
func processesWith(marker string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue // a zombie is dead already
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// wantGone checks, on the same machine, that no process with marker is
// left within d.
func (s *suite) wantGone(t *testing.T, marker string, d time.Duration) {
	t.Helper()
	if !s.f.SameMachine {
		return
	}
	deadline := time.Now().Add(d)
	for {
		left := processesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left behind:\n%s", strings.Join(left, "\n"))
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopJob starts a sleeper job, waits until it runs, stops it with stop
// and checks Run ends within 2 s with want, and its processes are gone.
func (s *suite) stopJob(t *testing.T, e executor.Executor, stop func(ctx context.CancelFunc, job executor.Job), want executor.FailureKind) {
	t.Helper()
	marker, script := sleeper()
	job := s.noClone(script...)
	c := &collector{watch: "sleepers-started\n", seen: make(chan struct{})}
	seen := c.seen
	ctx, cancel := context.WithCancel(s.ctx(t))
	defer cancel()
	type outcome struct {
		res executor.Result
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.Run(ctx, job, c.add)
		done <- outcome{res, err, time.Now()}
	}()
	t.Cleanup(func() { e.Cleanup(context.Background(), job.ID) })
	select {
	case <-seen:
	case o := <-done:
		t.Fatalf("the job ended before it was stopped: %+v, %v\n%s", o.res, o.err, c.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the job did not start:\n%s", c.String())
	}
	began := time.Now()
	stop(cancel, job)
	select {
	case o := <-done:
		took := o.at.Sub(began)
		if took > 2*time.Second {
			t.Errorf("Run ended %s after the stop, more than 2 s", took)
		}
		if want == executor.FailureCanceled && o.err != nil && errors.Is(o.err, context.Canceled) {
			// A host-side client may report the hard stop as its own
			// context's end; the job is stopped either way.
		} else if o.err != nil || o.res.Failure != want {
			t.Errorf("Run = %+v, %v; want failure %q", o.res, o.err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end within 10 s of the stop")
	}
	s.wantGone(t, marker, 2*time.Second-time.Since(began)+200*time.Millisecond)
	c.check(t)
}

func (s *suite) cancel(t *testing.T) {
	e := s.executor(t)
	s.stopJob(t, e, func(_ context.CancelFunc, job executor.Job) {
		if err := e.Cancel(s.ctx(t), job.ID); err != nil {
			t.Errorf("Cancel: %v", err)
		}
	}, executor.FailureCanceled)
}

func (s *suite) hardStop(t *testing.T) {
	e := s.executor(t)
	s.stopJob(t, e, func(cancel context.CancelFunc, _ executor.Job) { cancel() }, executor.FailureCanceled)
}

func (s *suite) timeout(t *testing.T) {
	e := s.executor(t)
	marker, script := sleeper()
	job := s.noClone()
	job.Steps = executor.ScriptSteps(nil, script, []string{"echo after-script-ran"})
	job.Timeout = 2 * time.Second
	began := time.Now()
	res, trace := s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureTimeout, anyExit)
	if took := time.Since(began); took > 8*time.Second {
		t.Errorf("a 2 s timeout ended the job after %s", took)
	}
	wantIn(t, trace, "after-script-ran\n")
	s.wantGone(t, marker, time.Second)

	// A step's own timeout.
	marker, script = sleeper()
	job = s.noClone(script...)
	job.Steps[0].Timeout = time.Second
	res, trace = s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureTimeout, anyExit)
	s.wantGone(t, marker, time.Second)
}

func (s *suite) traceOrder(t *testing.T) {
	e := s.executor(t)
	res, trace := s.run(t, e, s.noClone(`for i in $(seq 1 3000); do echo out$i; echo err$i >&2; done`))
	wantResult(t, res, trace, executor.FailureNone, 0)
	var want strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&want, "out%d\nerr%d\n", i, i)
	}
	if !strings.Contains(trace, want.String()) {
		t.Errorf("stdout and stderr are not in the order they were written")
	}
}

func (s *suite) traceIsLive(t *testing.T) {
	e := s.executor(t)
	c := &collector{watch: "first-line\n", seen: make(chan struct{})}
	seen := c.seen
	job := s.noClone("echo first-line", "sleep 2", "echo second-line")
	done := make(chan struct{})
	var res executor.Result
	var err error
	go func() {
		defer close(done)
		res, err = e.Run(s.ctx(t), job, c.add)
	}()
	t.Cleanup(func() { e.Cleanup(context.Background(), job.ID) })
	select {
	case <-seen:
		select {
		case <-done:
			t.Error("the first line arrived only with the end of the job")
		default:
		}
	case <-done:
		t.Error("the trace arrived only with the end of the job")
	case <-time.After(30 * time.Second):
		t.Fatal("no trace")
	}
	<-done
	if err != nil || res.Failure != executor.FailureNone {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	c.check(t)
}

func (s *suite) largeTrace(t *testing.T) {
	e := s.executor(t)
	const size = 10 << 20
	c := &collector{countOnly: true}
	var xs int64
	var tail []byte
	count := func(ch executor.TraceChunk) error {
		xs += int64(bytes.Count(ch.Data, []byte("x")))
		tail = append(tail, ch.Data...)
		tail = tail[max(0, len(tail)-4096):]
		return c.add(ch)
	}
	job := s.noClone(fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", size), "echo", "echo done-after-10mb")
	res, err := e.Run(s.ctx(t), job, count)
	t.Cleanup(func() { e.Cleanup(context.Background(), job.ID) })
	c.check(t)
	if err != nil || res.Failure != executor.FailureNone {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if xs < size {
		t.Errorf("the trace carried %d of the %d bytes", xs, size)
	}
	if c.chunks < size/executor.MaxTraceChunk {
		t.Errorf("%d chunks for %d bytes: chunks must be at most %d bytes", c.chunks, size, executor.MaxTraceChunk)
	}
	if !bytes.Contains(tail, []byte("done-after-10mb\n")) {
		t.Errorf("the trace does not end with the job's last line:\n%s", tail)
	}
}

func (s *suite) traceLimit(t *testing.T) {
	e := s.executor(t)
	job := s.noClone("echo before-the-flood", "yes flood")
	job.MaxTraceBytes = 20000
	c := &collector{}
	began := time.Now()
	res, err := e.Run(s.ctx(t), job, c.add)
	t.Cleanup(func() { e.Cleanup(context.Background(), job.ID) })
	c.check(t)
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, res, c.String(), executor.FailureTraceLimit, anyExit)
	if n := len(c.String()); n > 20000+500 {
		t.Errorf("the trace grew to %d bytes past a limit of 20000", n)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the job went on for %s after passing the trace limit", took)
	}
}

func (s *suite) concurrent(t *testing.T) {
	e := s.executor(t)
	c, err := e.Capabilities(s.ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	n := min(c.Concurrency, 4)
	var wg sync.WaitGroup
	for range n {
		job := s.job(`echo "job=$CI_JOB_ID"`, "echo $CI_JOB_ID > mine.txt", "sleep 0.3", `test "$(cat mine.txt)" = "$CI_JOB_ID"`)
		wg.Go(func() {
			col := &collector{}
			res, err := e.Run(s.ctx(t), job, col.add)
			defer e.Cleanup(context.Background(), job.ID)
			if err != nil || res.Failure != executor.FailureNone {
				t.Errorf("concurrent job %d: %+v, %v\n%s", job.ID, res, err, col.String())
				return
			}
			if !strings.Contains(col.String(), fmt.Sprintf("job=%d\n", job.ID)) {
				t.Errorf("concurrent job %d saw another job's variables:\n%s", job.ID, col.String())
			}
			col.check(t)
		})
	}
	wg.Wait()
}
