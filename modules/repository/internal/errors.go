package internal

// The module's domain errors. Services return them (wrapped with %w where
// context helps) and never an HTTP answer; mapErrors tells the API, once,
// which GitLab body each one gets. The exported ones are re-exported by the
// root package for other modules, which decide with errors.Is.
// ErrRefMoved (storage.go) is not mapped: what a lost compare-and-set means
// to the client depends on the operation, so each handler words it.

import (
	"errors"

	"github.com/fennec-forge/fennec/core/api"
)

var (
	// ErrBranchNotFound: the project's repository has no such branch.
	ErrBranchNotFound = errors.New("repository: branch not found")
	// ErrTagNotFound: the project's repository has no such tag.
	ErrTagNotFound = errors.New("repository: tag not found")
	// ErrCommitNotFound: a ref or sha that names no commit of the project.
	ErrCommitNotFound = errors.New("repository: commit not found")

	// errCannotPick: a cherry-pick does not apply cleanly (a conflict,
	// nothing left to apply, or a merge commit).
	errCannotPick = errors.New("repository: the commit cannot be cherry-picked")
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
	a.MapError(errCannotPick, func(error) *api.Error {
		return api.BadRequest("Sorry, we cannot cherry-pick this commit automatically. " +
			"This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.")
	})
}
