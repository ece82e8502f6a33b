package executor

import (
	"context"
	"io"

	"github.com/fennec-forge/fennec/sdk/plugin"
)

// APIVersion is the version of this contract; an executor lists it in
// Description.APIVersions.
const APIVersion = "v1"

// Errors are the base plugin errors, shared by every kind.
var (
	// ErrUnavailable: the executor or its machine failed; the host fails
	// the job as a system failure.
	ErrUnavailable = plugin.ErrUnavailable
	// ErrInvalidSettings: Configure could not use the settings.
	ErrInvalidSettings = plugin.ErrInvalidSettings
	// ErrNotSupported: an optional method the executor does not implement.
	ErrNotSupported = plugin.ErrNotSupported
)

// Job is what the host hands an executor: close to what GitLab Runner
// receives, so a later runner-protocol module is only translation. The CI
// issue fills in steps, variables, git info, artifact rules and
// dependencies.
type Job struct {
	// ID is the job's id; Cancel, Artifacts and Cleanup name it.
	ID int64
}

// TraceChunk is a piece of a job's log. Offset is where Data starts in the
// whole trace, so a chunk sent twice is appended once.
type TraceChunk struct {
	Offset int64
	Data   []byte
}

// FailureKind says why a job did not succeed.
type FailureKind string

const (
	FailureNone     FailureKind = ""
	FailureScript   FailureKind = "script"
	FailureTimeout  FailureKind = "timeout"
	FailureCanceled FailureKind = "canceled"
	FailureSystem   FailureKind = "system"
)

// Result is how a job ended: data, not an error.
type Result struct {
	ExitCode int
	Failure  FailureKind
}

// Executor runs jobs. Its methods are called concurrently, for many jobs at
// once.
type Executor interface {
	plugin.Base
	// Run runs job, sending its trace to trace as it grows, and returns its
	// Result; an error means the executor failed (a system failure).
	Run(ctx context.Context, job Job, trace func(TraceChunk) error) (Result, error)
	// Cancel asks the job to stop gracefully; Run then ends with
	// FailureCanceled.
	Cancel(ctx context.Context, jobID int64) error
	// Artifacts streams the job's file at path (a tree as an archive), for
	// the host to store.
	Artifacts(ctx context.Context, jobID int64, path string) (io.ReadCloser, error)
	// Cleanup frees what the job left behind (its work directory).
	Cleanup(ctx context.Context, jobID int64) error
}
