package internal

import (
	"errors"

	"github.com/fennec-forge/fennec/modules/notes/noteable"
)

// The module's domain errors; NewRoutes maps them to GitLab's answers.
var (
	// ErrNotFound: no such merge request (or a deleted one).
	ErrNotFound = noteable.NotFound("mergerequests: merge request not found")
	// ErrUnavailable: a part of the bundle the operation needs (notes,
	// todos) is missing.
	ErrUnavailable = errors.New("mergerequests: not available in this bundle")
)
