package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/fennec-forge/fennec/sdk/executor"
)

// DefaultPath is the jobs' PATH unless the settings say otherwise. The
// plugin itself runs without the host's environment, so it has none to
// pass on.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Settings are what the local executor reads from a plugin's settings.
type Settings struct {
	executor.CommonSettings
	// BuildsDir holds the jobs' directories; default <data_dir>/builds.
	BuildsDir string `json:"builds_dir,omitempty"`
	// Path is the jobs' PATH, also where bash and git are looked up;
	// default DefaultPath.
	Path string `json:"path,omitempty"`
}

// Dirs are a job's directories (host paths).
type Dirs struct {
	// Root is the job's own directory; Work what its steps may write
	// (Project, Tmp and Home are inside it); Plugin holds what the plugin
	// writes for it (scripts, file variables), read-only to a sandbox.
	Root, Work, Project, Tmp, Home, Plugin string
}

// Sandbox puts a job's steps in isolation.
type Sandbox interface {
	// Wrap returns how to run argv (a step's shell, whose paths are the
	// host's) inside the sandbox.
	Wrap(job executor.Job, dirs Dirs, argv []string) (Command, error)
}

// Command is a step's command line as a Sandbox wraps it.
type Command struct {
	Argv []string
	// StartAs is the credential the first process starts with; nil: the
	// plugin's own.
	StartAs *syscall.Credential
	// Owner, when not nil, is who the step's processes end up running as:
	// the work directory is given to them before the first step.
	Owner *syscall.Credential
	// Fd3, when not nil, is what the first process reads on file
	// descriptor 3: a pipe that carries these bytes, then ends. A sandbox
	// passes its own settings this way (bwrap --args 3) rather than on its
	// command line, which every process of the job can read in /proc.
	Fd3 []byte
}

// Options build an Executor.
type Options struct {
	// Name, Version and Features are what Describe says.
	Name, Version  string
	Features       []string
	SettingsSchema string
	// Parse reads the plugin's settings (a JSON object; DecodeSettings
	// helps) into the local executor's Settings and the Sandbox they
	// configure (nil: steps run as they are).
	Parse func(raw []byte) (Settings, Sandbox, error)
	// Log receives the executor's own messages; nil discards them.
	Log hclog.Logger
}

// Executor runs jobs on this machine; see the package documentation.
type Executor struct {
	o Options

	mu         sync.Mutex
	configured bool
	settings   Settings
	sandbox    Sandbox
	bash, git  string
	caps       executor.Capabilities
	jobs       map[int64]*job
	procs      procs // the process groups of the commands running
}

// New returns an executor that needs Configure before it runs jobs.
func New(o Options) *Executor {
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	return &Executor{o: o, jobs: map[int64]*job{}}
}

// DecodeSettings decodes raw, a JSON object, into v, refusing unknown keys
// so that a typo does not silently fall back to a default.
func DecodeSettings(raw []byte, v any) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return errors.New("settings must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if dec.More() {
		return errors.New("settings: trailing data after the JSON object")
	}
	return nil
}

func (e *Executor) Describe(context.Context) (executor.Description, error) {
	return executor.Description{
		Name: e.o.Name, Version: e.o.Version, APIVersions: []string{executor.APIVersion},
		Features: e.o.Features, SettingsSchema: e.o.SettingsSchema,
	}, nil
}

// Configure takes new settings. The first successful one also kills the
// processes and removes the job directories an earlier process of this
// executor left behind.
func (e *Executor) Configure(_ context.Context, raw []byte) error {
	s, sandbox, err := e.o.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", executor.ErrInvalidSettings, err)
	}
	caps, err := s.Capabilities()
	if err != nil {
		return fmt.Errorf("%w: %v", executor.ErrInvalidSettings, err)
	}
	if s.Path == "" {
		s.Path = DefaultPath
	}
	if s.BuildsDir == "" {
		if s.DataDir == "" {
			return fmt.Errorf("%w: builds_dir or data_dir is required", executor.ErrInvalidSettings)
		}
		s.BuildsDir = filepath.Join(s.DataDir, "builds")
	}
	if !filepath.IsAbs(s.BuildsDir) {
		return fmt.Errorf("%w: builds_dir %q must be an absolute path", executor.ErrInvalidSettings, s.BuildsDir)
	}
	s.BuildsDir = filepath.Clean(s.BuildsDir) // the jobs' marks start with it
	bash, err := lookPath("bash", s.Path)
	if err != nil {
		return fmt.Errorf("%w: %v", executor.ErrInvalidSettings, err)
	}
	git, err := lookPath("git", s.Path)
	if err != nil {
		return fmt.Errorf("%w: %v", executor.ErrInvalidSettings, err)
	}
	if err := os.MkdirAll(s.BuildsDir, 0o755); err != nil {
		return fmt.Errorf("%w: builds_dir: %v", executor.ErrInvalidSettings, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.configured {
		e.removeLeftovers(s.BuildsDir)
	}
	e.configured = true
	e.settings, e.sandbox, e.caps, e.bash, e.git = s, sandbox, caps, bash, git
	return nil
}

// removeLeftovers kills the processes of the jobs of earlier processes,
// then deletes their directories: a process of the executor that died
// (crashed, or was killed) took its jobs' shells with it (they have it as
// parent-death signal) but not what those started, re-parented to init
// and still carrying their job's mark. Called before this process runs any
// job, so every job directory and mark under dir is a leftover.
func (e *Executor) removeLeftovers(dir string) {
	e.killLeftovers(dir, "", nil)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, d := range entries {
		if d.IsDir() && strings.HasPrefix(d.Name(), "job-") {
			if err := removeAll(filepath.Join(dir, d.Name())); err != nil {
				e.o.Log.Warn("cannot remove a job directory left behind", "dir", d.Name(), "error", err)
			} else {
				e.o.Log.Info("removed a job directory left behind by an earlier process", "dir", d.Name())
			}
		}
	}
}

// killLeftovers kills the processes whose mark is a job directory under
// dir whose name starts with prefix ("" for every job, "job-<id>-" for
// one), except the jobs held (their marks).
func (e *Executor) killLeftovers(dir, prefix string, held map[string]bool) {
	start := filepath.Join(dir, "job-"+strings.TrimPrefix(prefix, "job-"))
	var killed []string
	match := func(mark string) bool {
		ok := strings.HasPrefix(mark, start) && filepath.Dir(mark) == dir && !held[mark]
		if ok && !slices.Contains(killed, mark) {
			killed = append(killed, mark)
		}
		return ok
	}
	if !sweep(match) {
		e.o.Log.Warn("processes of jobs of an earlier process survived SIGKILL", "jobs", killed)
	}
	for _, m := range killed {
		e.o.Log.Info("killed the processes an earlier process of the executor left running", "dir", filepath.Base(m))
	}
}

// Stop ends every job of this process at once, for a plugin about to exit
// (sdk/plugin.Stopper: the host closed the connection, or is gone): it
// SIGKILLs the process group of every command running and every process
// carrying the mark of a job held, and no command starts after it. The
// jobs' directories are left to the first Configure of the next process,
// as after a crash.
func (e *Executor) Stop() {
	e.procs.killAll()
	e.mu.Lock()
	jobs := make([]*job, 0, len(e.jobs))
	for _, j := range e.jobs {
		jobs = append(jobs, j)
	}
	e.mu.Unlock()
	for _, j := range jobs {
		j.stop(errStopped)
		sweep(func(m string) bool { return m == j.mark })
	}
}

func (e *Executor) Capabilities(context.Context) (executor.Capabilities, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.configured {
		return executor.Capabilities{}, errors.New("not configured")
	}
	return e.caps, nil
}

// Cancel stops a running job; its Run ends with FailureCanceled.
func (e *Executor) Cancel(_ context.Context, jobID int64) error {
	e.mu.Lock()
	j := e.jobs[jobID]
	e.mu.Unlock()
	if j != nil {
		j.stop(errCanceled)
	}
	return nil
}

// Artifacts copies the job's archive to w.
func (e *Executor) Artifacts(ctx context.Context, jobID int64, w io.Writer) (int64, error) {
	e.mu.Lock()
	j := e.jobs[jobID]
	e.mu.Unlock()
	if j == nil {
		return 0, executor.ErrNoArtifacts
	}
	select {
	case <-j.done:
	default:
		return 0, fmt.Errorf("job %d is still running", jobID)
	}
	if j.archive == "" {
		return 0, executor.ErrNoArtifacts
	}
	f, err := os.Open(j.archive)
	if errors.Is(err, os.ErrNotExist) {
		return 0, executor.ErrNoArtifacts
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

// Cleanup stops the job if it still runs, kills what is left of its
// processes and removes its directory. A job this process does not hold
// may be one an earlier process of the executor ran: its processes and
// directories are looked for under the builds directory.
func (e *Executor) Cleanup(ctx context.Context, jobID int64) error {
	e.mu.Lock()
	j := e.jobs[jobID]
	dir, configured := e.settings.BuildsDir, e.configured
	e.mu.Unlock()
	if j == nil {
		if configured {
			return e.cleanupLeftover(dir, jobID)
		}
		return nil
	}
	j.stop(errCanceled)
	select {
	case <-j.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	sweep(func(m string) bool { return m == j.mark })
	if err := removeAll(j.dirs.Root); err != nil {
		return fmt.Errorf("cleanup of job %d: %w", jobID, err)
	}
	e.mu.Lock()
	if e.jobs[jobID] == j {
		delete(e.jobs, jobID)
	}
	e.mu.Unlock()
	return nil
}

// cleanupLeftover kills the processes and removes the directories that
// job jobID left under dir when it ran in an earlier process.
func (e *Executor) cleanupLeftover(dir string, jobID int64) error {
	prefix := fmt.Sprintf("job-%d-", jobID)
	held := map[string]bool{}
	e.mu.Lock()
	for _, j := range e.jobs {
		held[j.mark] = true
	}
	e.mu.Unlock()
	e.killLeftovers(dir, prefix, held)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, d := range entries {
		if !d.IsDir() || !strings.HasPrefix(d.Name(), prefix) || held[filepath.Join(dir, d.Name())] {
			continue
		}
		if err := removeAll(filepath.Join(dir, d.Name())); err != nil {
			return fmt.Errorf("cleanup of job %d: %w", jobID, err)
		}
	}
	return nil
}

// removeAll is os.RemoveAll that also gets through directories a job made
// unwritable (chmod 000), which RemoveAll cannot empty.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// Interface guard.
var _ executor.Executor = (*Executor)(nil)
