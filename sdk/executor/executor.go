package executor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/fennec-forge/fennec/sdk/plugin"
)

// APIVersion is the version of this contract; an executor lists it in
// Description.APIVersions.
const APIVersion = "v1"

// Features an executor may announce in Description.Features.
const (
	// FeatureIsolation: a job cannot read other jobs' work directories or
	// the server's data directory, and cannot write outside its own
	// directories (the conformance suite checks it when announced).
	FeatureIsolation = "isolation"
	// FeatureNetworkByTag: jobs have no network unless one of their tags
	// is one the settings name (network_tags).
	FeatureNetworkByTag = "network_by_tag"
)

// Errors. The base plugin errors are shared by every kind, so errors.Is
// works with either name.
var (
	// ErrUnavailable: the executor or its machine failed; the host fails
	// the job as a system failure (retryable).
	ErrUnavailable = plugin.ErrUnavailable
	// ErrInvalidSettings: Configure could not use the settings.
	ErrInvalidSettings = plugin.ErrInvalidSettings
	// ErrNotSupported: an optional method the executor does not implement.
	ErrNotSupported = plugin.ErrNotSupported
	// ErrNoArtifacts: the job has no artifacts archive (none asked for,
	// none matched, its when did not apply, or it was cleaned up). An
	// outcome, not a failure.
	ErrNoArtifacts = errors.New("executor: the job has no artifacts archive")
)

// Description is what an executor says about itself (the base plugin
// description; APIVersions must contain APIVersion).
type Description = plugin.Description

// Capabilities say which jobs a configured executor takes. They follow from
// its settings (see CommonSettings), so the host asks after each start.
type Capabilities struct {
	// Tags the executor serves: it takes a job whose tags are all among
	// them (GitLab's rule for runners).
	Tags []string
	// RunUntagged: it also takes jobs without tags.
	RunUntagged bool
	// Concurrency is how many jobs it runs at once, at least 1; the host
	// never hands it more.
	Concurrency int
}

// Serves reports whether an executor with these capabilities takes a job
// with tags: every tag is one of c.Tags, and an untagged job needs
// RunUntagged.
func (c Capabilities) Serves(tags []string) bool {
	if len(tags) == 0 {
		return c.RunUntagged
	}
	for _, t := range tags {
		found := false
		for _, have := range c.Tags {
			if have == t {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Job is what the host hands an executor: close to GitLab Runner's job
// payload (GITLAB-FACTS section 11), so a later runner-protocol module is
// only translation.
type Job struct {
	// ID names the job in Cancel, Artifacts and Cleanup; unique among the
	// jobs an executor holds.
	ID int64
	// Token is the job token: CI_JOB_TOKEN, the password of the clone
	// (user gitlab-ci-token) and the credential of dependency downloads.
	Token string
	Name  string
	Stage string
	// ProjectID and ProjectPath ("namespace/project") name the project.
	ProjectID   int64
	ProjectPath string
	Git         Git
	// Variables become the steps' environment, in order (a later key
	// wins). The host sends every predefined variable it knows; the
	// executor adds CI_PROJECT_DIR, CI_BUILDS_DIR and
	// CI_DISPOSABLE_ENVIRONMENT where they apply.
	Variables []Variable
	// Steps run in order, each in a fresh shell (ScriptSteps builds the
	// usual script and after_script pair).
	Steps []Step
	// Artifacts, when not nil, is the archive to build after the steps.
	Artifacts *ArtifactsSpec
	// Dependencies are earlier jobs whose archives are extracted into the
	// work directory before the steps run.
	Dependencies []Dependency
	// Image, Services and Cache are the keywords' JSON from .gitlab-ci.yml,
	// passed through untouched; an executor ignores what it cannot do.
	Image, Services, Cache json.RawMessage
	// Tags are the job's tags (an executor may use them, as bwrap does for
	// network access).
	Tags []string
	// Timeout bounds the whole job; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxTraceBytes caps the trace: past it the job is stopped and fails
	// with FailureTraceLimit (one final line explaining it may pass the
	// cap). 0: unlimited.
	MaxTraceBytes int64
	// MaxArtifactsBytes caps the archive: past it the job fails with
	// FailureArtifactsLimit and has no archive. 0: unlimited.
	MaxArtifactsBytes int64
}

// DefaultTimeout bounds a job whose Timeout is 0 (GitLab's default).
const DefaultTimeout = time.Hour

// Git says what to check out.
type Git struct {
	// RepoURL is http(s)://gitlab-ci-token:<token>@host/namespace/project.git,
	// used to fetch; empty means no clone (GIT_STRATEGY=none) and an empty
	// work directory.
	RepoURL string
	// Ref is the branch or (Tag) tag name the sha was pushed to; it is
	// fetched first, then every branch and tag if the sha is not under it.
	Ref       string
	Tag       bool
	SHA       string
	BeforeSHA string
	// Depth > 0 fetches only that many commits.
	Depth int
}

// Variable is one CI variable.
type Variable struct {
	Key   string
	Value string
	// Public variables may be shown; Masked ones are hidden in the trace
	// by the host, never by the executor.
	Public bool
	Masked bool
	// File: the executor writes Value to a file outside the work
	// directory and the variable holds that file's path.
	File bool
}

// Step names.
const (
	StepScript      = "script"
	StepAfterScript = "after_script"
)

// When says when a step runs (or an archive is built), given whether the
// job has failed so far.
type When string

const (
	WhenOnSuccess When = "on_success"
	WhenOnFailure When = "on_failure"
	WhenAlways    When = "always"
)

// Applies reports whether something with this When runs after a job that
// has (failed) or has not failed; "" is on_success.
func (w When) Applies(failed bool) bool {
	switch w {
	case WhenAlways:
		return true
	case WhenOnFailure:
		return failed
	default:
		return !failed
	}
}

// Step is one script run in a fresh shell, like GitLab Runner's steps. Its
// lines run in order and the first one that fails ends it (bash -e and
// pipefail); each line is echoed to the trace as "$ line" before it runs.
type Step struct {
	Name   string
	Script []string
	// Timeout bounds the step; 0 means only the job's timeout. Steps
	// reached after the job timed out run only if they have one of their
	// own.
	Timeout time.Duration
	When    When
	// AllowFailure: the step failing does not fail the job (GitLab sends
	// it for after_script).
	AllowFailure bool
}

// AfterScriptTimeout bounds the after_script step ScriptSteps builds
// (GitLab's default).
const AfterScriptTimeout = 5 * time.Minute

// ScriptSteps builds the steps of a .gitlab-ci.yml job as GitLab does:
// before_script and script joined into one step that runs on success, and
// after_script as a step of its own that runs always, in a fresh shell,
// whose failure does not change the job's result. An empty afterScript
// gives no after_script step.
func ScriptSteps(beforeScript, script, afterScript []string) []Step {
	steps := []Step{{
		Name:   StepScript,
		Script: append(append([]string(nil), beforeScript...), script...),
		When:   WhenOnSuccess,
	}}
	if len(afterScript) > 0 {
		steps = append(steps, Step{
			Name:         StepAfterScript,
			Script:       append([]string(nil), afterScript...),
			Timeout:      AfterScriptTimeout,
			When:         WhenAlways,
			AllowFailure: true,
		})
	}
	return steps
}

// ArtifactsSpec is the job's artifacts keyword.
type ArtifactsSpec struct {
	// Name of the archive without ".zip"; empty means "artifacts".
	Name string
	// Paths are globs relative to the work directory: "*", "?" and "[...]"
	// within a path segment, "**" across segments. A matched directory
	// brings its whole tree. Paths leaving the work directory are ignored
	// with a warning in the trace.
	Paths []string
	// Untracked adds every file git does not track (ignored ones too, as
	// GitLab does), except under .git.
	Untracked bool
	// When the archive is built; "" is on_success. Canceled jobs have none.
	When When
	// ExpireIn is passed through to the Result, untouched.
	ExpireIn string
}

// Filename is the archive's file name: Name (default "artifacts") + ".zip".
func (a ArtifactsSpec) Filename() string {
	if a.Name == "" {
		return "artifacts.zip"
	}
	return a.Name + ".zip"
}

// Dependency is an earlier job whose artifacts the executor downloads: GET
// URL with the header "JOB-TOKEN: <Token>" answers the zip, which is
// extracted into the work directory (entries that would leave it are
// refused). Downloads rather than bytes from the host keep the contract
// the runner's and let an executor on another machine fetch them itself.
type Dependency struct {
	ID    int64
	Name  string
	URL   string
	Token string
}

// TraceChunk is a piece of a job's trace. Offset is where Data starts in
// the whole trace, so a chunk sent twice is appended once. An executor
// sends chunks in order, without gaps, each at most MaxTraceChunk bytes.
type TraceChunk struct {
	Offset int64
	Data   []byte
}

// MaxTraceChunk bounds a chunk's Data, so neither side holds much of a
// large trace in memory.
const MaxTraceChunk = 64 << 10

// FailureKind says why a job did not succeed.
type FailureKind string

const (
	FailureNone FailureKind = ""
	// FailureScript: a step's script exited non-zero.
	FailureScript FailureKind = "script"
	// FailureTimeout: the job or a step ran out of time.
	FailureTimeout FailureKind = "timeout"
	// FailureCanceled: Cancel, or the host ended Run's context.
	FailureCanceled FailureKind = "canceled"
	// FailureSystem: the executor could not run the job (a disk full, a
	// shell that would not start); retryable.
	FailureSystem FailureKind = "system"
	// FailurePrepare: the repository could not be fetched at the sha.
	FailurePrepare FailureKind = "prepare"
	// FailureDependency: a dependency's artifacts could not be fetched or
	// extracted.
	FailureDependency FailureKind = "dependency"
	// FailureTraceLimit: the trace passed Job.MaxTraceBytes.
	FailureTraceLimit FailureKind = "trace_limit"
	// FailureArtifactsLimit: the archive passed Job.MaxArtifactsBytes.
	FailureArtifactsLimit FailureKind = "artifacts_limit"
)

// Result is how a job ended: data, not an error.
type Result struct {
	// ExitCode of the step that decided the outcome; 0 on success, -1 when
	// the executor stopped the job (timeout, cancel, limits).
	ExitCode int
	Failure  FailureKind
	// Message explains a failure in a sentence (also the trace's last line).
	Message string
	// Artifacts describes the archive, if one was built.
	Artifacts ArtifactsArchive
}

// Success reports whether the job succeeded.
func (r Result) Success() bool { return r.Failure == FailureNone }

// ArtifactsArchive describes a built archive; Filename is empty when there
// is none.
type ArtifactsArchive struct {
	Filename string
	Size     int64
	ExpireIn string
}

// Executor runs jobs. Its methods are called concurrently, for many jobs at
// once.
type Executor interface {
	plugin.Base
	// Capabilities say which jobs it takes under its current settings.
	Capabilities(ctx context.Context) (Capabilities, error)
	// Run prepares the job's work directory (clone at the sha,
	// dependencies), runs its steps, builds its artifacts archive and
	// returns the Result. The trace goes to trace as it grows, in order;
	// when trace returns an error the job is stopped and Run returns that
	// error. Ending ctx is the hard stop: the job's processes are killed
	// and Run returns FailureCanceled. An error means the executor failed.
	Run(ctx context.Context, job Job, trace func(TraceChunk) error) (Result, error)
	// Cancel asks job jobID to stop; its Run ends with FailureCanceled
	// within 2 seconds, its processes gone. Unknown and finished jobs are
	// not an error.
	Cancel(ctx context.Context, jobID int64) error
	// Artifacts writes the job's archive (a zip) to w after Run ended and
	// returns its size; ErrNoArtifacts when there is none.
	Artifacts(ctx context.Context, jobID int64, w io.Writer) (int64, error)
	// Cleanup removes what the job left behind (work directory, archive).
	// Unknown jobs are not an error; one may have run in an earlier
	// process of the executor that died, and what it left (processes
	// included) should go too when the executor can find it.
	Cleanup(ctx context.Context, jobID int64) error
}
