package cicd

import (
	"errors"
	"fmt"
	"strings"
)

// The Service's errors; the implementation wraps them with %w, so test
// them with errors.Is. The HTTP adapter maps each to GitLab's answer.
var (
	// ErrPipelineNotFound, ErrJobNotFound: none of that id in the project.
	ErrPipelineNotFound = errors.New("ci: pipeline not found")
	ErrJobNotFound      = errors.New("ci: job not found")
	// ErrProtectedRef: the caller (or a trigger's owner) may not push or
	// merge to the protected branch a job, pipeline or trigger runs on;
	// a job there gets the branch's protected variables, and runs as
	// whoever played or retried it.
	ErrProtectedRef = errors.New("ci: may not run on the protected ref")

	// ErrRefRequired: a pipeline needs a branch or tag.
	ErrRefRequired = errors.New("ci: a ref is required")
	// ErrRefNotFound: the project has no branch or tag of that name.
	ErrRefNotFound = errors.New("ci: no branch or tag of that name")
	// ErrNoConfig: the commit has no .gitlab-ci.yml (or the tag names no
	// commit), so there is no pipeline.
	ErrNoConfig = errors.New("ci: no .gitlab-ci.yml at the commit")
	// ErrNoJobs: the CI file has no job for this ref and source.
	ErrNoJobs = errors.New("ci: no stages / jobs for this pipeline")
	// ErrFilteredByWorkflow: the CI file's `workflow: rules` create no
	// pipeline for this ref and source. It is an ErrNoJobs too, so that
	// callers that make no pipeline for one make none for the other.
	ErrFilteredByWorkflow = fmt.Errorf("ci: pipeline filtered out by workflow rules: %w", ErrNoJobs)
	// ErrUnknownTriggerToken: no trigger of the project has that token.
	ErrUnknownTriggerToken = errors.New("ci: no trigger of the project has that token")
	// ErrTriggerNotFound: the project has no trigger of that id.
	ErrTriggerNotFound = errors.New("ci: trigger not found")
	// ErrNotTriggerOwner: only its owner edits a trigger.
	ErrNotTriggerOwner = errors.New("ci: only the trigger's owner may edit it")
	// ErrTriggerDescriptionBlank, ErrTriggerDescriptionTooLong: a
	// trigger's description is some text, at most 255 characters.
	ErrTriggerDescriptionBlank   = errors.New("ci: a trigger's description can't be blank")
	ErrTriggerDescriptionTooLong = errors.New("ci: a trigger's description is too long (maximum is 255 characters)")
	// ErrTriggerOwnerMayNotRun: the trigger's owner is gone, blocked, or
	// may no longer run the project's pipelines.
	ErrTriggerOwnerMayNotRun = errors.New("ci: the trigger's owner may not create a pipeline")
	// ErrPipelinesDisabled: the project's builds are turned off.
	ErrPipelinesDisabled = errors.New("ci: the project's pipelines are disabled")

	// ErrNotRetryable: only a finished job that ran (success, failed,
	// canceled) and was not retried already may be retried.
	ErrNotRetryable = errors.New("ci: the job is not retryable")
	// ErrNotPlayable: only a manual job may be played.
	ErrNotPlayable = errors.New("ci: the job is not playable")
	// ErrNotScheduled: only a scheduled (delayed) job may be unscheduled.
	ErrNotScheduled = errors.New("ci: the job is not scheduled")
	// ErrNotErasable: only a finished job with a trace or artifacts, not
	// erased yet, may be erased.
	ErrNotErasable = errors.New("ci: the job is not erasable")
	// ErrMayNotErase: only Masters and the job's own user erase a job.
	ErrMayNotErase = errors.New("ci: only a Master or the job's user may erase it")
	// ErrInvalidScope: a job scope that is not a job status.
	ErrInvalidScope = errors.New("ci: scope contains invalid values")

	// ErrNoTrace: the job has no trace (erased, or not begun).
	ErrNoTrace = errors.New("ci: the job has no trace")
	// ErrNoArtifacts: the job has no archive (none, erased, expired), or
	// no successful job of that name on the ref has one.
	ErrNoArtifacts = errors.New("ci: no artifacts")
	// ErrJobNameRequired: the artifacts of a ref are asked by job name.
	ErrJobNameRequired = errors.New("ci: a job name is required")
	// ErrInvalidArtifactPath: a path in an archive is UTF-8 without NUL.
	ErrInvalidArtifactPath = errors.New("ci: invalid artifact path")
	// ErrArtifactFileNotFound: the archive has no regular file of that
	// path (or is not a zip).
	ErrArtifactFileNotFound = errors.New("ci: no such file in the artifacts")
)

// CI variables.
var (
	// ErrVariableNotFound: the project or group has no variable of that
	// key.
	ErrVariableNotFound = errors.New("ci: variable not found")
	// ErrInvalidVariableKey: a key is letters, digits and '_', 1 to 255.
	ErrInvalidVariableKey = errors.New("ci: a variable's key can contain only letters, digits and '_'")
	// ErrVariableKeyTaken: the project or group has a variable of that
	// key already.
	ErrVariableKeyTaken = errors.New("ci: the variable's key has already been taken")
	// ErrMissing: a command lacks required fields; a *MissingError names
	// them.
	ErrMissing = errors.New("ci: required fields missing")
)

// Environments and deployments.
var (
	ErrEnvironmentNotFound = errors.New("ci: environment not found")
	ErrDeploymentNotFound  = errors.New("ci: deployment not found")
	// ErrInvalidEnvironmentName: a name is letters, digits, spaces and
	// - _ / $ { } ., neither starting nor ending with a slash.
	ErrInvalidEnvironmentName = errors.New("ci: invalid environment name")
	ErrEnvironmentNameTooLong = errors.New("ci: an environment's name is too long (maximum is 255 characters)")
	ErrEnvironmentNameTaken   = errors.New("ci: the environment's name has already been taken")
	ErrExternalURLTooLong     = errors.New("ci: an external URL is too long (maximum is 255 characters)")
	// ErrExternalURLBlocked: an external URL is http or https.
	ErrExternalURLBlocked = errors.New("ci: only allowed protocols are http, https")
	// ErrNoEnvironmentChange: an update gives neither a name nor an
	// external URL.
	ErrNoEnvironmentChange = errors.New("ci: an environment's update gives no field")
)

// ErrInvalidConfig: the CI file has errors, and the caller asked for no
// pipeline in that case (the web form's run, CreatePipelineInput.Web); a
// *ConfigError says what they are.
var ErrInvalidConfig = errors.New("ci: the CI file has errors")

// ConfigError is ErrInvalidConfig with the file's errors, as a failed
// pipeline's YAMLErrors would hold them.
type ConfigError struct {
	Errors string
}

func (e *ConfigError) Error() string { return "ci: the CI file has errors: " + e.Errors }

// Unwrap makes a ConfigError an ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// MissingError names the required fields a command was not given, in the
// order the command takes them.
type MissingError struct {
	Fields []string
}

func (e *MissingError) Error() string {
	return "ci: missing " + strings.Join(e.Fields, ", ")
}

// Unwrap makes a MissingError an ErrMissing.
func (e *MissingError) Unwrap() error { return ErrMissing }
