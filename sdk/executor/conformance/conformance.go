// Package conformance is the test suite every job executor must pass, in
// process or behind a plugin host:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, func(t *testing.T) executor.Executor { return newExecutor() }, conformance.Fixtures{...})
//	}
//
// It starts what a job needs around the executor: a real git smart-HTTP
// server (git http-backend behind net/http/cgi, the job token checked as
// the password of gitlab-ci-token) and a server of dependencies' archives
// checking JOB-TOKEN. Then it checks the contract of package executor:
// Describe, Configure and Capabilities; the clone at the job's sha (not
// the branch's head) and a refused token; exit codes and bash -e; the
// before_script/script/after_script steps (after_script runs after a
// failure, in a fresh shell, and its failure changes nothing); variables,
// file variables included; separate work directories for two jobs (and,
// when the executor announces FeatureIsolation, that one job cannot read
// another's files or the server's data and cannot write outside its own
// directories); artifacts with globs, untracked and each when, and the
// size cap; dependencies' archives, a wrong token and a zip-slip archive;
// Cancel and the hard stop within 2 seconds, a sleep 300 and its children
// gone; the job and step timeouts; the trace in order, live, without gaps,
// 10 MB of it in bounded chunks, and the trace cap; concurrent jobs;
// Cleanup; and, when the fixtures can kill the executor's process, that
// the next process kills what the dead one's jobs left running. The suite needs bash, git and coreutils on the machine the jobs
// run on; it imports only sdk/ and the standard library.
package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/sdk/executor"
)

// Fixtures describe the executor under test.
type Fixtures struct {
	// Settings is the JSON object Configure is given.
	Settings []byte
	// SameMachine: the jobs' processes run on this machine, so the suite
	// can look for them in /proc after a cancel or a timeout, and for a
	// cleaned-up work directory on disk.
	SameMachine bool
	// ServerDataDir, with SameMachine and FeatureIsolation, is the
	// server_data_dir in Settings: the suite puts a secret there that no
	// job may read.
	ServerDataDir string
	// JobTimeout bounds every job the suite runs; default 60 s.
	JobTimeout time.Duration
	// Restart, when set, kills the executor's process as a crash would
	// (SIGKILL) and returns once another process of it serves, which
	// newExecutor then reaches (a host-side route does). In process, with
	// no process to kill, it may do nothing when newExecutor returns a
	// fresh executor on the same builds directory: that one plays the next
	// process. The Restart subtest, which needs SameMachine, runs last; it
	// is skipped without Restart.
	Restart func(t *testing.T)
}

// Run runs the suite as subtests of t. newExecutor is called once per
// subtest; it may return a fresh executor or the same one (a host-side
// plugin route): Run configures it with f.Settings before use.
func Run(t *testing.T, newExecutor func(t *testing.T) executor.Executor, f Fixtures) {
	t.Helper()
	if f.JobTimeout <= 0 {
		f.JobTimeout = 60 * time.Second
	}
	s := &suite{f: f, newExecutor: newExecutor, git: startGitServer(t), deps: startArtifactServer(t)}
	s.nextID.Store(time.Now().UnixNano() % 1e9 * 100)
	t.Run("Describe", s.describe)
	t.Run("Configure", s.configure)
	t.Run("Clone", s.clone)
	t.Run("CloneRefused", s.cloneRefused)
	t.Run("ExitCodes", s.exitCodes)
	t.Run("BeforeAndAfterScript", s.beforeAndAfterScript)
	t.Run("Variables", s.variables)
	t.Run("WorkDirectories", s.workDirectories)
	t.Run("Artifacts", s.artifacts)
	t.Run("ArtifactsWhen", s.artifactsWhen)
	t.Run("ArtifactsLimit", s.artifactsLimit)
	t.Run("Dependencies", s.dependencies)
	t.Run("Cancel", s.cancel)
	t.Run("HardStop", s.hardStop)
	t.Run("Timeout", s.timeout)
	t.Run("TraceOrder", s.traceOrder)
	t.Run("TraceIsLive", s.traceIsLive)
	t.Run("LargeTrace", s.largeTrace)
	t.Run("TraceLimit", s.traceLimit)
	t.Run("Concurrent", s.concurrent)
	t.Run("Cleanup", s.cleanup)
	t.Run("Restart", s.restart)
}

type suite struct {
	f           Fixtures
	newExecutor func(t *testing.T) executor.Executor
	git         *gitServer
	deps        *artifactServer
	nextID      atomic.Int64
}

func randomWord() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), s.f.JobTimeout)
	t.Cleanup(cancel)
	return ctx
}

// executor returns a configured executor.
func (s *suite) executor(t *testing.T) executor.Executor {
	t.Helper()
	e := s.newExecutor(t)
	if err := e.Configure(s.ctx(t), s.f.Settings); err != nil {
		t.Fatalf("Configure(fixture settings): %v", err)
	}
	return e
}

// job is a job of the suite's project at its second commit (main's head)
// with script as its only step; the caller adjusts the rest.
func (s *suite) job(script ...string) executor.Job {
	id := s.nextID.Add(1)
	return executor.Job{
		ID: id, Token: s.git.Token, Name: "test", Stage: "test",
		ProjectID: 7, ProjectPath: "group/project",
		Git: executor.Git{RepoURL: s.git.RepoURL(s.git.Token), Ref: "main", SHA: s.git.Second},
		Variables: []executor.Variable{
			{Key: "CI_JOB_ID", Value: fmt.Sprint(id), Public: true},
			{Key: "CI_JOB_TOKEN", Value: s.git.Token, Masked: true},
		},
		Steps:   executor.ScriptSteps(nil, script, nil),
		Timeout: s.f.JobTimeout,
	}
}

// noClone is a job without a repository (GIT_STRATEGY=none).
func (s *suite) noClone(script ...string) executor.Job {
	j := s.job(script...)
	j.Git = executor.Git{}
	return j
}

// collector receives a trace and checks the contract as it comes: offsets
// without gaps or repeats, chunks of at most MaxTraceChunk bytes. It keeps
// the bytes unless countOnly.
type collector struct {
	mu        sync.Mutex
	countOnly bool
	buf       bytes.Buffer
	n         int64
	chunks    int
	problems  []string
	watch     string // when set, seen is closed once watch appears in the trace
	seen      chan struct{}
}

func (c *collector) add(ch executor.TraceChunk) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch.Offset != c.n {
		c.problems = append(c.problems, fmt.Sprintf("chunk %d at offset %d, want %d", c.chunks, ch.Offset, c.n))
	}
	if len(ch.Data) > executor.MaxTraceChunk {
		c.problems = append(c.problems, fmt.Sprintf("chunk %d has %d bytes, more than MaxTraceChunk", c.chunks, len(ch.Data)))
	}
	c.n += int64(len(ch.Data))
	c.chunks++
	if !c.countOnly {
		c.buf.Write(ch.Data)
		if c.watch != "" && c.seen != nil && strings.Contains(c.buf.String(), c.watch) {
			close(c.seen)
			c.seen = nil
		}
	}
	return nil
}

func (c *collector) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func (c *collector) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		t.Errorf("trace: %s", p)
	}
}

// run runs job on e and returns its result and trace; an error fails the
// test.
func (s *suite) run(t *testing.T, e executor.Executor, job executor.Job) (executor.Result, string) {
	t.Helper()
	c := &collector{}
	res, err := e.Run(s.ctx(t), job, c.add)
	c.check(t)
	if err != nil {
		t.Fatalf("Run(job %d): %v\ntrace:\n%s", job.ID, err, c.String())
	}
	t.Cleanup(func() { e.Cleanup(context.Background(), job.ID) })
	return res, c.String()
}

func wantResult(t *testing.T, res executor.Result, trace string, failure executor.FailureKind, exit int) {
	t.Helper()
	if res.Failure != failure || (exit != anyExit && res.ExitCode != exit) {
		t.Fatalf("result %+v, want failure %q and exit code %d\ntrace:\n%s", res, failure, exit, trace)
	}
}

const anyExit = -1000

func wantIn(t *testing.T, trace string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(trace, w) {
			t.Errorf("trace lacks %q:\n%s", w, trace)
		}
	}
}

func wantNotIn(t *testing.T, trace string, nots ...string) {
	t.Helper()
	for _, w := range nots {
		if strings.Contains(trace, w) {
			t.Errorf("trace has %q:\n%s", w, trace)
		}
	}
}

func (s *suite) describe(t *testing.T) {
	e := s.executor(t)
	d, err := e.Describe(s.ctx(t))
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if d.Name == "" || d.Version == "" || !d.Speaks(executor.APIVersion) {
		t.Errorf("Describe = %+v: want a name, a version and API version %s", d, executor.APIVersion)
	}
	if d.SettingsSchema != "" {
		var schema map[string]any
		if err := json.Unmarshal([]byte(d.SettingsSchema), &schema); err != nil {
			t.Errorf("SettingsSchema is not a JSON object: %v", err)
		}
	}
	c, err := e.Capabilities(s.ctx(t))
	if err != nil {
		t.Fatalf("Capabilities: %v", err)
	}
	if c.Concurrency < 1 {
		t.Errorf("Capabilities = %+v: concurrency must be at least 1", c)
	}
}

func (s *suite) configure(t *testing.T) {
	e := s.executor(t)
	for _, bad := range []string{`{"`, `not json`, `[]`, `"a string"`} {
		if err := e.Configure(s.ctx(t), []byte(bad)); !errors.Is(err, executor.ErrInvalidSettings) {
			t.Errorf("Configure(%q) = %v, want ErrInvalidSettings", bad, err)
		}
	}
	// The refusals left the settings in force.
	res, trace := s.run(t, e, s.noClone("echo still-configured"))
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantIn(t, trace, "still-configured")
}

func (s *suite) clone(t *testing.T) {
	e := s.executor(t)
	// The first commit, not main's head: the executor checks out the sha.
	job := s.job("cat version.txt", "git rev-parse HEAD", `test "$(pwd)" = "$CI_PROJECT_DIR"`, "echo dir=$CI_PROJECT_DIR",
		"if grep -r "+s.git.Token+" .git/config; then echo TOKEN-IN-CONFIG; fi")
	job.Git.SHA = s.git.First
	res, trace := s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantIn(t, trace, "\none\n", s.git.First)
	wantNotIn(t, trace, "\ntwo\n", "TOKEN-IN-CONFIG\n")

	// A sha that is not under the ref (a tag, a moved branch) is fetched too.
	job = s.job("cat version.txt")
	job.Git.Ref, job.Git.SHA = "no-such-branch", s.git.Second
	res, trace = s.run(t, e, job)
	if res.Failure == executor.FailureNone {
		wantIn(t, trace, "\ntwo\n")
	}
}

func (s *suite) cloneRefused(t *testing.T) {
	e := s.executor(t)
	job := s.job("echo MUST-NOT-RUN")
	job.Git.RepoURL = s.git.RepoURL("wrong-token")
	job.Token = "wrong-token"
	res, trace := s.run(t, e, job)
	wantResult(t, res, trace, executor.FailurePrepare, anyExit)
	wantNotIn(t, trace, "MUST-NOT-RUN\n")

	job = s.job("echo MUST-NOT-RUN")
	job.Git.SHA = strings.Repeat("0", 40)
	res, trace = s.run(t, e, job)
	wantResult(t, res, trace, executor.FailurePrepare, anyExit)
}

func (s *suite) exitCodes(t *testing.T) {
	e := s.executor(t)
	res, trace := s.run(t, e, s.noClone("echo hello", "true"))
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantIn(t, trace, "$ echo hello\nhello\n")

	res, trace = s.run(t, e, s.noClone("echo before", "exit 3", "echo MUST-NOT-RUN"))
	wantResult(t, res, trace, executor.FailureScript, 3)
	wantNotIn(t, trace, "MUST-NOT-RUN\n")

	// bash -e: a failing command ends the script; pipefail: so does a
	// failing pipeline.
	res, trace = s.run(t, e, s.noClone("false", "echo MUST-NOT-RUN"))
	wantResult(t, res, trace, executor.FailureScript, 1)
	wantNotIn(t, trace, "MUST-NOT-RUN\n")
	res, trace = s.run(t, e, s.noClone("false | true", "echo MUST-NOT-RUN"))
	wantResult(t, res, trace, executor.FailureScript, 1)

	// A multi-line entry is one command, as in .gitlab-ci.yml.
	res, trace = s.run(t, e, s.noClone("for i in 1 2; do\n  echo line$i\ndone"))
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantIn(t, trace, "line1\nline2\n")
}

func (s *suite) beforeAndAfterScript(t *testing.T) {
	e := s.executor(t)
	job := s.noClone()
	job.Steps = executor.ScriptSteps(
		[]string{"echo in-before", "export FROM_SCRIPT=set", "cd /"},
		[]string{"echo in-script $FROM_SCRIPT", "exit 4"},
		[]string{"echo in-after [$FROM_SCRIPT]", `test "$(pwd)" = "$CI_PROJECT_DIR" && echo after-in-project-dir`, "exit 7"},
	)
	res, trace := s.run(t, e, job)
	// The script's failure decides; after_script ran anyway, in a fresh
	// shell (no exported variable, back in the project directory).
	wantResult(t, res, trace, executor.FailureScript, 4)
	wantIn(t, trace, "in-before\n", "in-script set\n", "in-after []\n", "after-in-project-dir\n")

	job = s.noClone()
	job.Steps = executor.ScriptSteps([]string{"echo b"}, []string{"echo s"}, []string{"echo a", "exit 9"})
	res, trace = s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantIn(t, trace, "\na\n")

	// on_failure steps run only after a failure.
	job = s.noClone("true")
	job.Steps = append(job.Steps, executor.Step{Name: "on_failure", Script: []string{"echo MUST-NOT-RUN"}, When: executor.WhenOnFailure})
	res, trace = s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantNotIn(t, trace, "MUST-NOT-RUN\n")
}

func (s *suite) variables(t *testing.T) {
	e := s.executor(t)
	tricky := "it's \"quoted\" $HOME `date` \\ and\na second line"
	job := s.noClone(
		`printf '%s' "$TRICKY" > tricky.out`,
		`cat "$SECRET_FILE" > file.out`,
		`test -f "$SECRET_FILE"`,
		`echo "plain=$PLAIN"`,
		`echo "job=$CI_JOB_ID"`,
		`test "$LATER" = second && echo later-wins`,
		`test "$(pwd)" = "$CI_PROJECT_DIR" && echo in-project-dir`,
		`cmp tricky.out file.out && echo file-matches`,
	)
	job.Variables = append(job.Variables,
		executor.Variable{Key: "TRICKY", Value: tricky},
		executor.Variable{Key: "SECRET_FILE", Value: tricky, File: true},
		executor.Variable{Key: "PLAIN", Value: "value", Public: true},
		executor.Variable{Key: "LATER", Value: "first"},
		executor.Variable{Key: "LATER", Value: "second"},
	)
	res, trace := s.run(t, e, job)
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantIn(t, trace, "plain=value\n", fmt.Sprintf("job=%d\n", job.ID), "later-wins\n", "in-project-dir\n", "file-matches\n")
}

func (s *suite) workDirectories(t *testing.T) {
	e := s.executor(t)
	a := s.job("echo secret-of-a > secret.txt", "echo A=$(pwd)")
	resA, traceA := s.run(t, e, a)
	wantResult(t, resA, traceA, executor.FailureNone, 0)
	dirA := lineAfter(traceA, "A=")
	b := s.job("echo B=$(pwd)", "ls -a", "if test -e secret.txt; then echo SAW-A; fi")
	resB, traceB := s.run(t, e, b)
	wantResult(t, resB, traceB, executor.FailureNone, 0)
	if dirB := lineAfter(traceB, "B="); dirA == "" || dirA == dirB {
		t.Errorf("two jobs share a work directory: %q and %q", dirA, dirB)
	}
	wantNotIn(t, traceB, "SAW-A\n")

	d, err := e.Describe(s.ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Has(executor.FeatureIsolation) {
		return
	}
	// Job A is not cleaned up yet: its files are on disk.
	probe := []string{
		"if cat " + shq(dirA+"/secret.txt") + " 2>/dev/null; then echo READ-OTHER-JOB; fi",
		"if ls " + shq(dirA) + " >/dev/null 2>&1; then echo LISTED-OTHER-JOB; fi",
		"if touch /usr/fennec-conformance 2>/dev/null || touch /fennec-conformance 2>/dev/null; then echo WROTE-SYSTEM; fi",
		"touch /tmp/private-tmp-is-writable && echo tmp-ok",
	}
	if s.f.SameMachine && s.f.ServerDataDir != "" {
		secret := filepath.Join(s.f.ServerDataDir, "fennec-conformance-secret")
		if err := os.WriteFile(secret, []byte("server secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(secret) })
		probe = append(probe, "if cat "+shq(secret)+" 2>/dev/null; then echo READ-SERVER-DATA; fi")
	}
	res, trace := s.run(t, e, s.noClone(probe...))
	wantResult(t, res, trace, executor.FailureNone, 0)
	wantNotIn(t, trace, "READ-OTHER-JOB\n", "LISTED-OTHER-JOB\n", "WROTE-SYSTEM\n", "READ-SERVER-DATA\n", "secret-of-a\n", "server secret\n")
	wantIn(t, trace, "tmp-ok\n")
	if s.f.SameMachine {
		if _, err := os.Stat("/tmp/private-tmp-is-writable"); err == nil {
			os.Remove("/tmp/private-tmp-is-writable")
			t.Errorf("an isolated job wrote into the machine's /tmp")
		}
	}
}

// lineAfter returns the rest of the first trace line starting with prefix.
func lineAfter(trace, prefix string) string {
	for _, l := range strings.Split(trace, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v
		}
	}
	return ""
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (s *suite) cleanup(t *testing.T) {
	e := s.executor(t)
	job := s.job("echo DIR=$CI_PROJECT_DIR", "mkdir locked && touch locked/f && chmod 000 locked")
	job.Artifacts = &executor.ArtifactsSpec{Paths: []string{"README"}}
	c := &collector{}
	res, err := e.Run(s.ctx(t), job, c.add)
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, res, c.String(), executor.FailureNone, 0)
	dir := lineAfter(c.String(), "DIR=")
	if err := e.Cleanup(s.ctx(t), job.ID); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if _, err := e.Artifacts(s.ctx(t), job.ID, new(bytes.Buffer)); !errors.Is(err, executor.ErrNoArtifacts) {
		t.Errorf("Artifacts after Cleanup: %v, want ErrNoArtifacts", err)
	}
	if s.f.SameMachine && dir != "" {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the work directory %s is still there after Cleanup (%v)", dir, err)
		}
	}
	if err := e.Cleanup(s.ctx(t), job.ID); err != nil {
		t.Errorf("a second Cleanup: %v", err)
	}
	if err := e.Cleanup(s.ctx(t), 1); err != nil {
		t.Errorf("Cleanup of an unknown job: %v", err)
	}
	if err := e.Cancel(s.ctx(t), 1); err != nil {
		t.Errorf("Cancel of an unknown job: %v", err)
	}
}
