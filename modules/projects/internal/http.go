package internal

// The HTTP adapter's table of the module's domain errors: services return
// the sentinels of package project (wrapped with %w where context helps)
// and never an HTTP answer; mapErrors tells the API, once, which GitLab
// body each one gets, for this module's routes and every other module's
// that passes them on.

import (
	"errors"
	"fmt"
	"net/http"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// handlers serve the module's routes over the service.
type handlers struct{ *Service }

// NewRoutes registers the projects module's operations.
func NewRoutes(s *Service) fennec.Routes {
	h := handlers{s}
	return fennec.Routes{Name: "projects", Register: func(a *api.API) {
		mapErrors(a)
		h.registerProjects(a)
		h.registerStars(a)
		h.registerArchive(a)
		h.registerFork(a)
		h.registerShare(a)
		h.registerHooks(a)
		h.registerProjectUsers(a)
		h.registerProjectLists(a)
		h.registerTransfer(a)
		h.registerMembersAll(a)
		h.registerGroups(a)
		h.registerAppSettings(a)
	}}
}

// Texts of GitLab's ProjectGroupLink validations, answered with 409.
const (
	msgAlreadyShared = "Group already shared with this group"
	msgOwnGroup      = "Project cannot be shared with the group it is in or one of its ancestors."
)

// mapErrors is the module's table from its domain errors to GitLab's
// answers; every answer is built anew, so no request shares one.
func mapErrors(a *api.API) {
	a.MapError(project.ErrNotFound, func(error) *api.Error { return api.NotFound("Project") })
	a.MapError(project.ErrForbidden, func(error) *api.Error { return api.Forbidden("") })
	a.MapError(project.ErrGroupNotFound, func(error) *api.Error { return api.NotFound("Group") })
	a.MapError(project.ErrNamespaceNotFound, func(error) *api.Error { return api.NotFound("Namespace") })
	// hooks.find(id) raising RecordNotFound.
	a.MapError(project.ErrHookNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(project.ErrMemberNotFound, func(error) *api.Error { return api.NotFound("Member") })
	a.MapError(project.ErrLastOwner, func(error) *api.Error { return api.Forbidden("a group must keep at least one Owner") })
	a.MapError(project.ErrUserNotFound, func(error) *api.Error { return api.NotFound("User") })
	a.MapError(project.ErrExternalUser, func(error) *api.Error { return api.Forbidden("external users cannot create groups") })
	a.MapError(project.ErrMemberExists, func(error) *api.Error { return api.Conflict("Member already exists") })
	a.MapError(project.ErrAlreadyShared, func(error) *api.Error { return api.Conflict(msgAlreadyShared) })
	a.MapError(project.ErrShareOwnGroup, func(error) *api.Error { return api.Conflict(msgOwnGroup) })
	a.MapError(project.ErrShareNotFound, func(error) *api.Error { return api.NotFound("Group Link") })
	// GitLab 9.x's and later versions' project hooks API answer a url that
	// does not validate so, local-address refusals included.
	a.MapError(project.ErrInvalidHookURL, func(error) *api.Error {
		return &api.Error{Status: http.StatusUnprocessableEntity, Err: "Invalid url given"}
	})
	a.MapError(project.ErrMissing, params(func(p []string) *api.Error { return api.Missing(p...) }))
	a.MapError(project.ErrNothingGiven, params(func(p []string) *api.Error { return api.AtLeastOne(p...) }))
	a.MapError(project.ErrInvalidValue, params(func(p []string) *api.Error { return api.NotValidValue(p[0]) }))
	a.MapError(project.ErrInvalidParam, params(func(p []string) *api.Error { return api.Invalid(p[0]) }))
	a.MapError(project.ErrInvalid, func(err error) *api.Error {
		var fe project.FieldErrors
		if !errors.As(err, &fe) {
			return nil
		}
		return api.Validation(fe)
	})
	// A fork's name or path taken in the target namespace is 409 with the
	// field errors, as GitLab answers (a create's is 400).
	a.MapError(project.ErrTaken, func(err error) *api.Error {
		var te *project.TakenError
		if !errors.As(err, &te) {
			return nil
		}
		return &api.Error{Status: http.StatusConflict, Message: te.Fields}
	})
	// GITLAB-FACTS: a refused transfer is 400 "Failed to transfer project
	// <errors>", the errors printed as a Ruby hash.
	a.MapError(project.ErrTransferRefused, func(err error) *api.Error {
		var te *project.TransferError
		if !errors.As(err, &te) {
			return nil
		}
		return api.BadRequest(fmt.Sprintf("Failed to transfer project {:new_namespace=>[%q]}", te.Reason))
	})
}

// params answers a *project.ParamsError with respond(its parameters).
func params(respond func([]string) *api.Error) func(error) *api.Error {
	return func(err error) *api.Error {
		var pe *project.ParamsError
		if !errors.As(err, &pe) || len(pe.Params) == 0 {
			return nil
		}
		return respond(pe.Params)
	}
}
