package internal

import (
	"errors"
	"time"
)

// Config is the CI module's section of the configuration ("ci").
type Config struct {
	// MaxTraceBytes caps one job's trace; past it the job fails with a
	// line saying so.
	MaxTraceBytes int64 `yaml:"max_trace_bytes" env:"FENNEC_CI_MAX_TRACE_BYTES" help:"largest trace one job may write, in bytes (the job fails past it)"`
	// MaxArtifactsBytes caps one job's artifacts archive.
	MaxArtifactsBytes int64 `yaml:"max_artifacts_bytes" env:"FENNEC_CI_MAX_ARTIFACTS_BYTES" help:"largest artifacts archive of one job, in bytes (the job fails past it)"`
	// JobTimeout bounds a job.
	JobTimeout time.Duration `yaml:"job_timeout" env:"FENNEC_CI_JOB_TIMEOUT" help:"how long a job may run before it fails"`
}

// DefaultConfig is the section with nothing set: GitLab's defaults (a 4 MiB
// trace as GitLab Runner's output_limit, 100 MB of artifacts, an hour).
func DefaultConfig() Config {
	return Config{MaxTraceBytes: 4 << 20, MaxArtifactsBytes: 100 << 20, JobTimeout: time.Hour}
}

// Validate refuses values that would fail late or obscurely.
func (c Config) Validate() error {
	if c.MaxTraceBytes <= 0 || c.MaxArtifactsBytes <= 0 {
		return errors.New("config: ci.max_trace_bytes and ci.max_artifacts_bytes must be positive")
	}
	if c.JobTimeout <= 0 {
		return errors.New("config: ci.job_timeout must be positive")
	}
	return nil
}
