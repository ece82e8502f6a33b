package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fennec-forge/fennec/sdk/executor"
	"github.com/fennec-forge/fennec/sdk/executor/archive"
)

// Causes a job's context ends with.
var (
	errCanceled     = errors.New("canceled")
	errJobTimeout   = errors.New("job timeout")
	errStepTimeout  = errors.New("step timeout")
	errTraceLimit   = errors.New("trace limit")
	errTraceFailure = errors.New("trace could not be sent")
	errStopped      = errors.New("the executor stopped")
)

// job is one job this executor holds, from Run to Cleanup.
type job struct {
	spec    executor.Job
	dirs    Dirs
	mark    string // the value of markVar: the job's directory, Dirs.Root
	stop    context.CancelCauseFunc
	done    chan struct{} // closed when Run returns
	archive string        // the archive's path once built
	tracked map[string]bool
}

// Run runs a job; see the package documentation for its phases.
func (e *Executor) Run(ctx context.Context, spec executor.Job, send func(executor.TraceChunk) error) (executor.Result, error) {
	e.mu.Lock()
	if !e.configured {
		e.mu.Unlock()
		return executor.Result{}, errors.New("not configured")
	}
	if _, dup := e.jobs[spec.ID]; dup {
		e.mu.Unlock()
		return executor.Result{}, fmt.Errorf("job %d is already held by this executor", spec.ID)
	}
	s, sandbox, bash, git := e.settings, e.sandbox, e.bash, e.git
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// The job's directory is its processes' mark (see markVar), so it is
	// named now, before any other process of the executor could look.
	root := filepath.Join(s.BuildsDir, fmt.Sprintf("job-%d-%s", spec.ID, randomHex(4)))
	j := &job{spec: spec, stop: stop, done: make(chan struct{}), mark: root}
	e.jobs[spec.ID] = j
	e.mu.Unlock()
	defer close(j.done)

	t := &trace{send: send, max: spec.MaxTraceBytes,
		onLimit: func() { stop(errTraceLimit) },
		onError: func(error) { stop(errTraceFailure) },
	}
	r := &runner{e: e, s: s, sandbox: sandbox, bash: bash, git: git, j: j, t: t}
	res, err := r.run(ctx)
	if serr := t.sendErr(); serr != nil {
		return executor.Result{}, serr
	}
	if err != nil {
		return executor.Result{}, err
	}
	if res.Failure == executor.FailureNone {
		t.Printf("Job succeeded")
	} else {
		t.Printf("ERROR: Job failed: %s", res.Message)
	}
	if serr := t.sendErr(); serr != nil {
		return executor.Result{}, serr
	}
	return res, nil
}

// runner carries one Run.
type runner struct {
	e         *Executor
	s         Settings
	sandbox   Sandbox
	bash, git string
	j         *job
	t         *trace
	owned     bool          // the work directory was given to the sandbox's user
	timeout   time.Duration // the job's, default applied
}

func (r *runner) run(ctx context.Context) (executor.Result, error) {
	spec := r.j.spec
	d, err := r.makeDirs()
	if err != nil {
		return executor.Result{}, err
	}
	r.j.dirs = d
	desc, _ := r.e.Describe(ctx)
	r.t.Printf("Running with %s %s on job %d", desc.Name, desc.Version, spec.ID)

	timeout := spec.Timeout
	if timeout <= 0 {
		timeout = executor.DefaultTimeout
	}
	r.timeout = timeout
	jobCtx, cancelTimeout := context.WithTimeoutCause(ctx, timeout, errJobTimeout)
	defer cancelTimeout()

	if res, stop := r.prepare(jobCtx); stop {
		return r.finish(ctx, jobCtx, res, timeout)
	}
	env, err := r.environment()
	if err != nil {
		return executor.Result{}, err
	}
	res := executor.Result{}
	failed := false
	for i, step := range spec.Steps {
		if !step.When.Applies(failed) {
			continue
		}
		parent := jobCtx
		if jobCtx.Err() != nil {
			if ctx.Err() != nil || step.Timeout <= 0 {
				continue // canceled, or no time of its own after the job's ran out
			}
			parent = ctx
		}
		stepCtx, cancel := context.WithCancel(parent)
		if step.Timeout > 0 {
			stepCtx, cancel = context.WithTimeoutCause(parent, step.Timeout, errStepTimeout)
		}
		code, stopped, err := r.runStep(stepCtx, i, step, env)
		cause := context.Cause(stepCtx)
		cancel()
		if err != nil {
			return executor.Result{}, err
		}
		if stopped {
			kind, msg := r.stoppedBy(cause, timeout, step)
			if kind == executor.FailureTimeout && step.AllowFailure {
				r.t.Printf("WARNING: %s", msg)
				continue
			}
			if !failed || kind != executor.FailureTimeout {
				res = executor.Result{ExitCode: -1, Failure: kind, Message: msg}
			}
			failed = true
			if kind != executor.FailureTimeout {
				break // canceled, or the trace is over its limit: nothing more runs
			}
			continue
		}
		if code != 0 {
			if step.AllowFailure {
				r.t.Printf("WARNING: %s failed with exit code %d (allowed to fail)", step.Name, code)
				continue
			}
			if !failed {
				res = executor.Result{ExitCode: code, Failure: executor.FailureScript, Message: fmt.Sprintf("exit code %d", code)}
			}
			failed = true
		}
	}
	return r.finish(ctx, jobCtx, res, timeout)
}

// finish builds the archive when it applies and reports how the job ended.
func (r *runner) finish(ctx, jobCtx context.Context, res executor.Result, timeout time.Duration) (executor.Result, error) {
	if cause := context.Cause(ctx); cause != nil && res.Failure == executor.FailureNone {
		kind, msg := r.stoppedBy(cause, timeout, executor.Step{})
		res = executor.Result{ExitCode: -1, Failure: kind, Message: msg}
	}
	a := r.j.spec.Artifacts
	switch res.Failure {
	case executor.FailureCanceled, executor.FailureTraceLimit, executor.FailurePrepare, executor.FailureDependency, executor.FailureSystem:
		return res, nil
	}
	if a == nil || !a.When.Applies(res.Failure != executor.FailureNone) {
		return res, nil
	}
	return r.buildArchive(res, a), nil
}

// stoppedBy names what ended a step or the job.
func (r *runner) stoppedBy(cause error, timeout time.Duration, step executor.Step) (executor.FailureKind, string) {
	switch {
	case errors.Is(cause, errTraceLimit):
		return executor.FailureTraceLimit, fmt.Sprintf("the log passed its limit of %d bytes", r.j.spec.MaxTraceBytes)
	case errors.Is(cause, errJobTimeout):
		return executor.FailureTimeout, fmt.Sprintf("execution took longer than %s", timeout)
	case errors.Is(cause, errStepTimeout):
		return executor.FailureTimeout, fmt.Sprintf("%s took longer than %s", step.Name, step.Timeout)
	case errors.Is(cause, errTraceFailure):
		return executor.FailureSystem, "the trace could not be sent"
	default:
		return executor.FailureCanceled, "canceled"
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// makeDirs creates the job's directories.
func (r *runner) makeDirs() (Dirs, error) {
	spec := r.j.spec
	project := unsafeName.ReplaceAllString(path.Base(spec.ProjectPath), "-")
	if project == "" || project == "." || project == ".." || project == "-" || project == "tmp" || project == "home" {
		project = "project"
	}
	root := r.j.mark
	d := Dirs{Root: root, Work: filepath.Join(root, "work"), Plugin: filepath.Join(root, "plugin")}
	d.Project = filepath.Join(d.Work, project)
	d.Tmp = filepath.Join(d.Work, "tmp")
	d.Home = filepath.Join(d.Work, "home")
	// root may be traversed, not listed: a sandbox running as another
	// user reaches work/ and plugin/ through it (bwrap also gives the
	// directories it creates for its mounts root's mode). work/ and plugin/
	// are their owner's alone.
	for _, dir := range []struct {
		path string
		mode os.FileMode
	}{{root, 0o711}, {d.Work, 0o700}, {d.Project, 0o755}, {d.Tmp, 0o755}, {d.Home, 0o755}, {d.Plugin, 0o700}} {
		if err := os.Mkdir(dir.path, dir.mode); err != nil {
			return d, fmt.Errorf("job directory: %w", err)
		}
		if err := os.Chmod(dir.path, dir.mode); err != nil { // whatever the umask
			return d, fmt.Errorf("job directory: %w", err)
		}
	}
	return d, nil
}

// baseEnv is the environment every process of the job starts from.
func (r *runner) baseEnv() []string {
	d := r.j.dirs
	return []string{
		"PATH=" + r.s.Path, "HOME=" + d.Home, "TMPDIR=" + d.Tmp, "LANG=C.UTF-8",
		markVar + "=" + r.j.mark,
	}
}

// environment is the steps' environment: the base, the job's variables
// (file ones written under Plugin), and the variables the executor sets.
func (r *runner) environment() ([]string, error) {
	d := r.j.dirs
	env := r.baseEnv()
	vars := filepath.Join(d.Plugin, "vars")
	if err := os.Mkdir(vars, 0o755); err != nil {
		return nil, err
	}
	for i, v := range r.j.spec.Variables {
		if v.Key == "" || strings.ContainsAny(v.Key, "=\x00") || strings.ContainsRune(v.Value, 0) || v.Key == markVar {
			r.t.Printf("WARNING: variable %q cannot be set; skipped", v.Key)
			continue
		}
		value := v.Value
		if v.File {
			p := filepath.Join(vars, fmt.Sprintf("%d-%s", i, unsafeName.ReplaceAllString(v.Key, "_")))
			if err := writeNew(p, []byte(v.Value), 0o644); err != nil {
				return nil, err
			}
			value = p
		}
		env = append(env, v.Key+"="+value)
	}
	return append(env,
		"CI_PROJECT_DIR="+d.Project,
		"CI_BUILDS_DIR="+d.Work,
		"CI_DISPOSABLE_ENVIRONMENT=",
	), nil
}

// writeNew creates a file that must not exist yet (never following a
// symbolic link).
func writeNew(p string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runStep runs one step in a fresh bash.
func (r *runner) runStep(ctx context.Context, i int, step executor.Step, env []string) (int, bool, error) {
	var b strings.Builder
	b.WriteString("set -eo pipefail\n")
	fmt.Fprintf(&b, "cd %s\n", shellQuote(r.j.dirs.Project))
	for _, line := range step.Script {
		fmt.Fprintf(&b, "printf '%%s\\n' %s\n%s\n", shellQuote("$ "+line), line)
	}
	script := filepath.Join(r.j.dirs.Plugin, fmt.Sprintf("step-%d-%s.sh", i, unsafeName.ReplaceAllString(step.Name, "_")))
	if err := writeNew(script, []byte(b.String()), 0o644); err != nil {
		return -1, false, fmt.Errorf("step script: %w", err)
	}
	c := Command{Argv: []string{r.bash, "--noprofile", "--norc", script}}
	if r.sandbox != nil {
		var err error
		if c, err = r.sandbox.Wrap(r.j.spec, r.j.dirs, c.Argv); err != nil {
			return -1, false, fmt.Errorf("sandbox: %w", err)
		}
		if o := c.Owner; o != nil && !r.owned {
			for _, dir := range []string{r.j.dirs.Work, r.j.dirs.Plugin} {
				if err := chownTree(dir, int(o.Uid), int(o.Gid)); err != nil {
					return -1, false, fmt.Errorf("job directory: %w", err)
				}
			}
			r.owned = true
		}
	}
	cmd := command{argv: c.Argv, dir: r.j.dirs.Project, env: env, cred: c.StartAs, out: r.t, mark: r.j.mark, fd3: c.Fd3, procs: &r.e.procs}
	code, stopped, err := cmd.run(ctx)
	if err != nil {
		return -1, false, fmt.Errorf("start %s: %w", step.Name, err)
	}
	return code, stopped, nil
}

// chownTree gives dir and everything in it to uid:gid, never following a
// symbolic link.
func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// buildArchive writes the artifacts archive; a failure to do so, or one
// past the size cap, fails the job.
func (r *runner) buildArchive(res executor.Result, a *executor.ArtifactsSpec) executor.Result {
	r.t.Printf("Uploading artifacts...")
	sel, err := archive.Select(r.j.dirs.Project, a.Paths, a.Untracked, r.j.tracked)
	for _, w := range sel.Warnings {
		r.t.Printf("WARNING: %s", w)
	}
	if err != nil {
		return fail(res, executor.FailureSystem, "artifacts: "+err.Error())
	}
	if sel.Empty() {
		r.t.Printf("ERROR: no files to upload")
		return res
	}
	p := filepath.Join(r.j.dirs.Root, "artifacts.zip")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fail(res, executor.FailureSystem, "artifacts: "+err.Error())
	}
	n, err := archive.Write(f, r.j.dirs.Project, sel, r.j.spec.MaxArtifactsBytes)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		if errors.Is(err, archive.ErrTooLarge) {
			msg := fmt.Sprintf("the artifacts archive is larger than its limit of %d bytes", r.j.spec.MaxArtifactsBytes)
			r.t.Printf("ERROR: %s", msg)
			return fail(res, executor.FailureArtifactsLimit, msg)
		}
		return fail(res, executor.FailureSystem, "artifacts: "+err.Error())
	}
	r.j.archive = p
	r.t.Printf("Created %s with %d files (%s bytes)", a.Filename(), len(sel.Files), strconv.FormatInt(n, 10))
	res.Artifacts = executor.ArtifactsArchive{Filename: a.Filename(), Size: n, ExpireIn: a.ExpireIn}
	return res
}

// fail turns res into a failure unless it already is one.
func fail(res executor.Result, kind executor.FailureKind, msg string) executor.Result {
	if res.Failure != executor.FailureNone {
		return res
	}
	return executor.Result{ExitCode: -1, Failure: kind, Message: msg}
}
