package internal

import (
	"errors"

	"github.com/fennec-forge/fennec/modules/collab/target"
)

// The module's domain errors; the root package re-exports them and the
// routes map each to its GitLab answer once.
var (
	// ErrIssueNotFound: no such issue in the project, or one the caller may
	// not see (a confidential one); GitLab 9.x finds issues with find_by!,
	// whose miss is answered "404 Not found".
	ErrIssueNotFound = target.NotFound("issues: issue not found")
	// ErrLabelNotFound: answered "404 Label Not Found".
	ErrLabelNotFound = errors.New("issues: label not found")
	// ErrMilestoneNotFound: answered "404 Not found" (a find miss in 9.x).
	ErrMilestoneNotFound = errors.New("issues: milestone not found")
	// ErrLabelExists: a label of that name exists; answered 409 "Label
	// already exists".
	ErrLabelExists = errors.New("issues: label already exists")
)
