package merge

import "errors"

// Sentinel errors, tested with errors.Is.
var (
	// ErrBinary is returned by Merge3 when one of its inputs is binary (a
	// NUL byte in its first 8000 bytes, git's test) or too large to merge
	// by lines. The merged result returned with it is "ours", as git keeps.
	ErrBinary = errors.New("merge: cannot merge binary files")

	// ErrConflict is what Result.Err returns for a merge that left
	// conflicts; the wrapping error names the conflicted paths.
	ErrConflict = errors.New("merge: conflicts")

	// ErrMissingObject means a tree or blob that a merge input refers to is
	// not in the object storer.
	ErrMissingObject = errors.New("merge: object not found")

	// ErrUnsupportedEntry means a tree holds an entry whose mode is none of
	// the ones git writes (regular, executable, symlink, gitlink, tree).
	ErrUnsupportedEntry = errors.New("merge: unsupported tree entry")
)
