package cicd

import (
	"errors"
	"time"
)

// Config is the CI module's section of the configuration ("ci").
type Config struct {
	// MaxTraceBytes caps one job's trace; past it the job fails with a
	// line saying so (a GitLab Runner's trace gets a little slack, for the
	// notice the runner adds once its own cap is reached).
	MaxTraceBytes int64 `yaml:"max_trace_bytes" env:"FENNEC_CI_MAX_TRACE_BYTES" help:"largest trace one job may write, in bytes (the job fails past it)"`
	// MaxArtifactsBytes caps one job's artifacts archive.
	MaxArtifactsBytes int64 `yaml:"max_artifacts_bytes" env:"FENNEC_CI_MAX_ARTIFACTS_BYTES" help:"largest artifacts archive of one job, in bytes (the job fails past it)"`
	// JobTimeout bounds a job.
	JobTimeout time.Duration `yaml:"job_timeout" env:"FENNEC_CI_JOB_TIMEOUT" help:"how long a job may run before it fails"`
	// MaxPipelineJobs caps the jobs of one pipeline. A CI file that would
	// make more gives a failed pipeline whose yaml_errors says so. Jobs
	// are stored and decided in bounded chunks, but canceling a pipeline
	// changes all of its jobs in one transaction: the cap is what keeps
	// that one short (see the module's DefaultConfig).
	MaxPipelineJobs int `yaml:"max_pipeline_jobs" env:"FENNEC_CI_MAX_PIPELINE_JOBS" help:"most jobs one pipeline may have (a CI file making more gives a failed pipeline with a yaml error)"`

	// RemoteIncludes lets CI files include https URLs (`include: remote`),
	// fetched through the guard of allow_local_requests, bounded in size
	// (1 MiB) and time (10 s). Off, such a file is refused with a yaml
	// error saying so.
	RemoteIncludes bool `yaml:"remote_includes" env:"FENNEC_CI_REMOTE_INCLUDES" help:"let CI files include https URLs (include: remote), fetched through the allow_local_requests guard"`

	// RunnersRegistrationToken fixes the instance's shared runners
	// registration token; empty, one is made and kept in the store (the
	// admin command `fennec ci runners-token` prints it).
	RunnersRegistrationToken string `yaml:"runners_registration_token" env:"FENNEC_CI_RUNNERS_REGISTRATION_TOKEN" help:"the shared runners registration token (empty: generated, printed by 'fennec ci runners-token')"`
	// RunnerPollTimeout is how long a runner's POST /jobs/request waits
	// for a job before it answers 204 (long polling; under the runner's
	// own request timeout).
	RunnerPollTimeout time.Duration `yaml:"runner_poll_timeout" env:"FENNEC_CI_RUNNER_POLL_TIMEOUT" help:"how long a runner's job request waits for a job (long polling)"`
	// RunnerSilenceTimeout: a runner's job with no trace nor keep-alive
	// for longer fails as a runner system failure (runners send a
	// keep-alive at least every 30 s).
	RunnerSilenceTimeout time.Duration `yaml:"runner_silence_timeout" env:"FENNEC_CI_RUNNER_SILENCE_TIMEOUT" help:"a runner's job that reports nothing for longer fails (stuck)"`
	// RunnerStartTimeout: a job handed to a runner that never reports is
	// queued again after it.
	RunnerStartTimeout time.Duration `yaml:"runner_start_timeout" env:"FENNEC_CI_RUNNER_START_TIMEOUT" help:"a job handed to a runner that never reports is queued again after this"`
	// RunnerTraceInterval is how often runners are asked to send their
	// trace (X-GitLab-Trace-Update-Interval).
	RunnerTraceInterval time.Duration `yaml:"runner_trace_interval" env:"FENNEC_CI_RUNNER_TRACE_INTERVAL" help:"how often runners send a running job's trace"`
}

// Validate refuses values that would fail late or obscurely.
func (c Config) Validate() error {
	if c.MaxTraceBytes <= 0 || c.MaxArtifactsBytes <= 0 {
		return errors.New("config: ci.max_trace_bytes and ci.max_artifacts_bytes must be positive")
	}
	if c.JobTimeout <= 0 {
		return errors.New("config: ci.job_timeout must be positive")
	}
	if c.MaxPipelineJobs <= 0 {
		return errors.New("config: ci.max_pipeline_jobs must be positive")
	}
	if c.RunnerPollTimeout < 0 || c.RunnerPollTimeout > 10*time.Minute {
		return errors.New("config: ci.runner_poll_timeout must be between 0 and 10m")
	}
	if c.RunnerSilenceTimeout <= 0 || c.RunnerStartTimeout <= 0 {
		return errors.New("config: ci.runner_silence_timeout and ci.runner_start_timeout must be positive")
	}
	if c.RunnerTraceInterval < time.Second {
		return errors.New("config: ci.runner_trace_interval must be at least 1s")
	}
	if len(c.RunnersRegistrationToken) > 0 && len(c.RunnersRegistrationToken) < 16 {
		return errors.New("config: ci.runners_registration_token must be at least 16 characters")
	}
	return nil
}
