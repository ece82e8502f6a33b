package cicd

import (
	"context"
	"io"

	"github.com/fennec-forge/fennec/sdk/executor"
)

// Executors is where the scheduler finds places to run jobs: the executor
// plugins' pool (core/executors) in the stock host; an embedder or a test
// may provide its own. Without one, jobs wait for GitLab Runners.
type Executors interface {
	// TryAcquire reserves a free place for a job with these tags without
	// waiting; ok is false when no executor serving them is free.
	TryAcquire(tags []string) (Slot, bool)
}

// Slot is one reserved place on an executor, for one job (the shape of
// core/executors.Slot).
type Slot interface {
	// Executor names the executor (recorded on the job).
	Executor() string
	Run(ctx context.Context, job executor.Job, trace func(executor.TraceChunk) error) (executor.Result, error)
	Cancel(ctx context.Context) error
	Artifacts(ctx context.Context, w io.Writer) (int64, error)
	// Release gives the place back and has the executor clean up after
	// the job.
	Release()
}
