package internal

import (
	"time"

	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// DefaultConfig is the section with nothing set: GitLab's defaults (a 4 MiB
// trace as GitLab Runner's output_limit, 100 MB of artifacts, an hour).
//
// MaxPipelineJobs is Fennec's own: 1,000 jobs, several times the largest
// real pipelines (a few hundred jobs). The transactions that still touch
// every job of a pipeline grow with it: canceling one of 2,000 pending
// jobs held the writer for about 0.3 s on a busy two-core machine, one of
// 1,000 for half that.
func DefaultConfig() cicd.Config {
	return cicd.Config{MaxTraceBytes: 4 << 20, MaxArtifactsBytes: 100 << 20, JobTimeout: time.Hour, MaxPipelineJobs: DefaultMaxPipelineJobs,
		RunnerPollTimeout: 50 * time.Second, RunnerSilenceTimeout: 5 * time.Minute, RunnerStartTimeout: 2 * time.Minute,
		RunnerTraceInterval: 3 * time.Second}
}

// DefaultMaxPipelineJobs is ci.max_pipeline_jobs when unset.
const DefaultMaxPipelineJobs = 1000
