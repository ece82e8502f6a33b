package pipeline

import (
	"errors"
	"strings"
)

// ErrInvalidConfig matches every *ConfigError through errors.Is.
var ErrInvalidConfig = errors.New("pipeline: invalid CI configuration")

// NoJobsMessage is GitLab's answer when a configuration is valid but none of
// its jobs applies to the pipeline's ref and source (JobsFor returned no
// jobs): the pipeline is not created.
const NoJobsMessage = "No stages / jobs for this pipeline."

// ConfigError is an invalid `.gitlab-ci.yml`. Messages are in the order found;
// Error returns the first, which is what GitLab 9.x stores as the pipeline's
// yaml_errors (it reports one problem at a time).
type ConfigError struct {
	Messages []string
}

func (e *ConfigError) Error() string {
	if len(e.Messages) == 0 {
		return "Invalid configuration format"
	}
	return e.Messages[0]
}

// Is makes errors.Is(err, ErrInvalidConfig) hold.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// All returns every message joined, for logs and lint output.
func (e *ConfigError) All() string { return strings.Join(e.Messages, "; ") }

func configError(msg string) *ConfigError { return &ConfigError{Messages: []string{msg}} }
