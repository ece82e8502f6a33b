package internal

// The HTTP side of errors.go: mapErrors, the one table from the module's
// domain errors to GitLab's answers.

import (
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
)

// mapErrors is the module's table from its domain errors to GitLab's
// answers; every answer is built anew, so no request shares one.
func mapErrors(a *api.API) {
	a.MapError(ErrBranchNotFound, func(error) *api.Error { return api.NotFound("Branch") })
	a.MapError(ErrTagNotFound, func(error) *api.Error { return api.NotFound("Tag") })
	a.MapError(ErrCommitNotFound, func(error) *api.Error { return api.NotFound("Commit") })
	a.MapError(ErrRepositoryMissing, func(error) *api.Error {
		return &api.Error{Status: 503, Message: "The repository is missing from the server's data directory; see the project's import_error"}
	})
	// The tags API answers its refusals with 9.x's 405; the releases API,
	// which creates a tag as one of its steps, with a 400.
	a.MapError(errTagRefused, func(err error) *api.Error {
		var r *tagRefusal
		errors.As(err, &r)
		return api.MethodNotAllowed(r.reason)
	})
	a.MapError(errReleaseTagRefused, func(err error) *api.Error {
		var r *releaseTagRefusal
		errors.As(err, &r)
		return api.BadRequest(r.reason)
	})
	a.MapError(errReleaseMissing, func(error) *api.Error { return &api.Error{Status: 404, Message: "Release does not exist"} })
	a.MapError(errTagMissing, func(error) *api.Error { return &api.Error{Status: 404, Message: "Tag does not exist"} })
	a.MapError(errCommitDiscussionNotFound, func(error) *api.Error { return api.NotFound("Discussion") })
	a.MapError(errCommitNoteNotFound, func(error) *api.Error { return api.NotFound("Note") })
	a.MapError(errCommitBadPosition, func(error) *api.Error {
		// GitLab's answer prints the note's errors.
		return api.BadRequest(`400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}`)
	})
	a.MapError(errProtectionNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(errInvalid, func(err error) *api.Error {
		var e *invalidError
		errors.As(err, &e)
		return api.BadRequest(e.msg)
	})
	a.MapError(errRefused, func(err error) *api.Error {
		var e *refusedError
		errors.As(err, &e)
		return api.Forbidden(e.reason)
	})
	a.MapError(errCannotRevert, func(error) *api.Error {
		return api.BadRequest("Sorry, we cannot revert this commit automatically. " +
			"This commit may already have been reverted, or a more recent commit may have updated some of its content.")
	})
	a.MapError(errNotAllowed, func(err error) *api.Error {
		var e *notAllowedError
		errors.As(err, &e)
		return api.MethodNotAllowed(e.msg)
	})
	a.MapError(errRaced, func(err error) *api.Error {
		var e *racedError
		errors.As(err, &e)
		return api.Conflict(e.msg)
	})
	a.MapError(errCannotPick, func(error) *api.Error {
		return api.BadRequest("Sorry, we cannot cherry-pick this commit automatically. " +
			"This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.")
	})
	a.MapError(errReleaseExists, func(error) *api.Error { return api.Conflict("Release already exists") })
	a.MapError(errReleaseNotFound, func(error) *api.Error { return api.NotFound("Release") })
	a.MapError(errReleaseLinkNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(errRefNotSpecified, func(error) *api.Error {
		return &api.Error{Status: http.StatusUnprocessableEntity, Message: "Ref is not specified"}
	})
	a.MapError(errLinkNothingGiven, func(error) *api.Error { return api.AtLeastOne("name", "url") })
	// GitLab answers a link its model refuses with the list of the
	// record's messages.
	a.MapError(errLinksInvalid, func(err error) *api.Error {
		var e *linksInvalidError
		errors.As(err, &e)
		return &api.Error{Status: http.StatusBadRequest, Message: e.msgs}
	})
	a.MapError(errFieldsInvalid, func(err error) *api.Error {
		var e *fieldsInvalidError
		errors.As(err, &e)
		return api.Validation(e.fields)
	})
	a.MapError(errMissing, func(err error) *api.Error {
		var e *missingError
		errors.As(err, &e)
		return api.Missing(e.param)
	})
	a.MapError(errNotValidValue, func(err error) *api.Error {
		var e *notValidValueError
		errors.As(err, &e)
		return api.NotValidValue(e.param)
	})
	// GitLab 9.x: the model's validation, 422 with its full messages.
	a.MapError(errProtectionNameBlank, func(error) *api.Error {
		return &api.Error{Status: http.StatusUnprocessableEntity, Message: []string{"Name can't be blank"}}
	})
	a.MapError(errProtectionExists, func(err error) *api.Error {
		var e *protectionExistsError
		errors.As(err, &e)
		return api.Conflict("Protected branch '" + e.name + "' already exists")
	})
}
