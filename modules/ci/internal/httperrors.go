package internal

import (
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline/ciexpr"
)

// mapErrors is the module's table from its domain errors to GitLab's
// answers (the runner API and the triggers add theirs where they are
// registered).
func mapErrors(a *api.API) {
	base := func(msg string) func(error) *api.Error {
		return func(error) *api.Error { return api.Validation(map[string][]string{"base": {msg}}) }
	}
	notFound := func(error) *api.Error { return api.NotFound("") }
	a.MapError(cicd.ErrJobNotFound, func(error) *api.Error { return api.NotFound("Job") })
	a.MapError(cicd.ErrPipelineNotFound, func(error) *api.Error { return api.NotFound("Pipeline") })
	a.MapError(cicd.ErrProtectedRef, func(error) *api.Error { return api.Forbidden("") })

	// Creating a pipeline: GitLab's base errors.
	a.MapError(cicd.ErrRefRequired, func(error) *api.Error { return api.Missing("ref") })
	a.MapError(cicd.ErrRefNotFound, base("Reference not found"))
	a.MapError(cicd.ErrNoConfig, base("Missing .gitlab-ci.yml file"))
	a.MapError(cicd.ErrFilteredByWorkflow, base(ciexpr.ErrWorkflowFiltered.Error()))
	a.MapError(cicd.ErrNoJobs, base(pipeline.NoJobsMessage))
	a.MapError(cicd.ErrUnknownTriggerToken, notFound)
	a.MapError(cicd.ErrTriggerOwnerMayNotRun, base("Insufficient permissions to create a new pipeline"))
	a.MapError(cicd.ErrPipelinesDisabled, base("Pipeline is disabled"))

	// Job commands.
	a.MapError(cicd.ErrNotRetryable, func(error) *api.Error { return api.Forbidden("Job is not retryable") })
	a.MapError(cicd.ErrNotErasable, func(error) *api.Error { return api.Forbidden("Job is not erasable!") })
	a.MapError(cicd.ErrMayNotErase, func(error) *api.Error { return api.Forbidden("") })
	a.MapError(cicd.ErrNotPlayable, func(error) *api.Error {
		// GitLab 9.x answers its quirky 400 here.
		return &api.Error{Status: http.StatusBadRequest, Message: `400 (Bad request) "Unplayable Job" not given`}
	})
	a.MapError(cicd.ErrNotScheduled, func(error) *api.Error { return api.Forbidden("Job is not scheduled") })
	a.MapError(cicd.ErrInvalidScope, func(error) *api.Error { return api.BadRequest("Scope contains invalid value(s)") })

	// The files of jobs.
	a.MapError(cicd.ErrNoTrace, notFound)
	a.MapError(cicd.ErrNoArtifacts, notFound)
	a.MapError(cicd.ErrArtifactFileNotFound, notFound)
	a.MapError(cicd.ErrJobNameRequired, func(error) *api.Error { return api.Missing("job") })
	a.MapError(cicd.ErrInvalidArtifactPath, func(error) *api.Error { return api.BadRequest("400 (Bad request)") })
	a.MapError(errJobTokenRefused, func(error) *api.Error { return api.Forbidden("") })

	// CI variables.
	a.MapError(cicd.ErrVariableNotFound, func(error) *api.Error { return api.NotFound("Variable") })
	a.MapError(cicd.ErrInvalidVariableKey, func(error) *api.Error {
		return api.Validation(map[string][]string{"key": {"can contain only letters, digits and '_'."}})
	})
	a.MapError(cicd.ErrVariableKeyTaken, func(error) *api.Error {
		return api.Validation(map[string][]string{"key": {"has already been taken"}})
	})
	// Environments and deployments.
	a.MapError(cicd.ErrEnvironmentNotFound, func(error) *api.Error { return api.NotFound("Environment") })
	a.MapError(cicd.ErrDeploymentNotFound, func(error) *api.Error { return api.NotFound("Deployment") })
	field := func(name, text string) func(error) *api.Error {
		return func(error) *api.Error { return api.Validation(map[string][]string{name: {text}}) }
	}
	a.MapError(cicd.ErrEnvironmentNameTooLong, field("name", "is too long (maximum is 255 characters)"))
	a.MapError(cicd.ErrInvalidEnvironmentName, field("name", "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"))
	a.MapError(cicd.ErrEnvironmentNameTaken, field("name", "has already been taken"))
	a.MapError(cicd.ErrExternalURLTooLong, field("external_url", "is too long (maximum is 255 characters)"))
	a.MapError(cicd.ErrExternalURLBlocked, field("external_url", "is blocked: Only allowed protocols are http, https"))
	a.MapError(cicd.ErrNoEnvironmentChange, func(error) *api.Error {
		return api.BadRequest("400 (Bad request) \"name, external_url\" are missing, at least one parameter must be provided")
	})

	a.MapError(cicd.ErrMissing, func(err error) *api.Error {
		var m *cicd.MissingError
		if errors.As(err, &m) {
			return api.Missing(m.Fields...)
		}
		return nil // an ErrMissing that names nothing: a 500 (a bug)
	})
}
