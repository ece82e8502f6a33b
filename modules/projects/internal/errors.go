package internal

// The module's domain errors. Services return them (wrapped with %w where
// context helps) and never an HTTP answer; mapErrors tells the API, once,
// which GitLab body each one gets. The exported ones are re-exported by the
// root package for other modules, which decide with errors.Is.

import (
	"errors"

	"github.com/fennec-forge/fennec/core/api"
)

var (
	// ErrProjectNotFound: no such project, or one the caller may not see;
	// the two are never told apart (API-CONVENTIONS.md).
	ErrProjectNotFound = errors.New("projects: project not found")
	// ErrForbidden: the caller sees the project or group but may not do
	// what was asked.
	ErrForbidden = errors.New("projects: forbidden")
	// ErrGroupNotFound: no such group, or one the caller may not see.
	ErrGroupNotFound = errors.New("projects: group not found")

	errNamespaceNotFound = errors.New("projects: namespace not found")
	errHookNotFound      = errors.New("projects: hook not found")
	errMemberNotFound    = errors.New("projects: member not found")
	errLastOwner         = errors.New("projects: a group must keep at least one Owner")
)

// mapErrors is the module's table from its domain errors to GitLab's
// answers; every answer is built anew, so no request shares one.
func mapErrors(a *api.API) {
	a.MapError(ErrProjectNotFound, func(error) *api.Error { return api.NotFound("Project") })
	a.MapError(ErrForbidden, func(error) *api.Error { return api.Forbidden("") })
	a.MapError(ErrGroupNotFound, func(error) *api.Error { return api.NotFound("Group") })
	a.MapError(errNamespaceNotFound, func(error) *api.Error { return api.NotFound("Namespace") })
	// hooks.find(id) raising RecordNotFound.
	a.MapError(errHookNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(errMemberNotFound, func(error) *api.Error { return api.NotFound("Member") })
	a.MapError(errLastOwner, func(error) *api.Error { return api.Forbidden("a group must keep at least one Owner") })
}
