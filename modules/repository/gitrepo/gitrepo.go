package gitrepo

import "errors"

// The module's domain errors, for errors.Is. The module's HTTP adapter
// maps the not-found ones (and ErrRepositoryMissing) to their GitLab
// answers, so a handler of any module may return them as they come.
var (
	// ErrBranchNotFound: the project's repository has no such branch;
	// answered 404 Branch Not Found.
	ErrBranchNotFound = errors.New("repository: branch not found")
	// ErrTagNotFound: the project's repository has no such tag; answered
	// 404 Tag Not Found.
	ErrTagNotFound = errors.New("repository: tag not found")
	// ErrCommitNotFound: a ref or sha that names no commit of the project;
	// answered 404 Commit Not Found.
	ErrCommitNotFound = errors.New("repository: commit not found")
	// ErrRefMoved: a ref was not where a compare-and-set expected it (a
	// push landed meanwhile); nothing was written. It has no answer of its
	// own: the operation that lost the race says what it means ("The
	// branch moved; try again").
	ErrRefMoved = errors.New("repository: the ref moved")
	// ErrMergeConflict: the two revisions of a merge do not merge cleanly.
	ErrMergeConflict = errors.New("repository: the branches do not merge cleanly")
	// ErrRepositoryMissing: the project's repository directory is gone
	// (answered 503, the project's import_error says why).
	ErrRepositoryMissing = errors.New("repository: the project's repository is missing from the data directory")
)

// MergeSpec says what a merge does: merge commit Source into Branch with
// Message, by the user in ctx (author and committer).
type MergeSpec struct {
	Branch  string
	Source  string
	Message string
	// SourceProject, when set and not the target, is the fork Source
	// comes from: its objects are copied in under the same locks.
	SourceProject int64
}

// Diff is one file's change between two commits, as the repository and
// merge request endpoints render it (GitLab's diff entry).
type Diff struct {
	Diff        string  `json:"diff"`
	NewPath     string  `json:"new_path"`
	OldPath     string  `json:"old_path"`
	AMode       *string `json:"a_mode"`
	BMode       *string `json:"b_mode"`
	NewFile     bool    `json:"new_file"`
	RenamedFile bool    `json:"renamed_file"`
	DeletedFile bool    `json:"deleted_file"`
}
