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

	// errTagRefused: the tags API refuses a new tag (a bad name or target,
	// a taken name, a name that would hide a protected branch); a
	// *tagRefusal carries GitLab's reason.
	errTagRefused = errors.New("repository: tag refused")
	// errReleaseTagRefused: the tag a release was to create is refused
	// (a *releaseTagRefusal carries the reason).
	errReleaseTagRefused = errors.New("repository: the release's tag refused")
	// errReleaseMissing and errTagMissing: an update or delete of a
	// release that does not exist, or for a tag that does not.
	errReleaseMissing = errors.New("repository: release does not exist")
	errTagMissing     = errors.New("repository: tag does not exist")
	// errCommitDiscussionNotFound: no such thread on the commit.
	errCommitDiscussionNotFound = errors.New("repository: commit discussion not found")
	// errCommitBadPosition: a line comment's position names no line of
	// the commit.
	errCommitBadPosition = errors.New("repository: the position names no line of the commit")
)

// tagRefusal is why a new tag is refused, in GitLab's words.
type tagRefusal struct{ reason string }

func (e *tagRefusal) Error() string { return "repository: tag refused: " + e.reason }
func (e *tagRefusal) Unwrap() error { return errTagRefused }

// releaseTagRefusal is a tagRefusal met while creating a release.
type releaseTagRefusal struct{ reason string }

func (e *releaseTagRefusal) Error() string {
	return "repository: the release's tag refused: " + e.reason
}
func (e *releaseTagRefusal) Unwrap() error { return errReleaseTagRefused }

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
	a.MapError(errCommitBadPosition, func(error) *api.Error {
		// GitLab's answer prints the note's errors.
		return api.BadRequest(`400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}`)
	})
	a.MapError(errProtectionNotFound, func(error) *api.Error { return api.RecordNotFound() })
	a.MapError(errCannotPick, func(error) *api.Error {
		return api.BadRequest("Sorry, we cannot cherry-pick this commit automatically. " +
			"This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.")
	})
}
