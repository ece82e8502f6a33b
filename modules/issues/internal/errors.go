package internal

import "github.com/fennec-forge/fennec/modules/issues/issue"

// The contract's domain errors under the names the service has always
// used; the HTTP adapter maps each to its GitLab answer once (http.go).
var (
	ErrIssueNotFound      = issue.ErrNotFound
	ErrLabelNotFound      = issue.ErrLabelNotFound
	ErrMilestoneNotFound  = issue.ErrMilestoneNotFound
	ErrLabelExists        = issue.ErrLabelExists
	ErrLabelEventNotFound = issue.ErrLabelEventNotFound
)
