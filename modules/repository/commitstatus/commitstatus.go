// Package commitstatus is the contract by which other modules (CI) record
// statuses of commits in the repository module: the statuses list and a
// commit's status show them beside those posted through the API. A package
// of its own, not the module's root, because the root imports internal/
// and internal/ implements the contract with these types.
package commitstatus

import (
	"context"
	"time"
)

// Status is one status of a commit, identified by project, sha, name and
// ref: setting it again updates it in place.
type Status struct {
	ProjectID    int64
	SHA          string
	Ref          string
	Name         string
	Stage        string // the job's stage; empty for "external" (a status posted through the API)
	State        string // a job status: created, pending, running, success, failed, canceled, skipped, manual
	TargetURL    string
	Description  string
	Coverage     *float64
	AllowFailure bool
	AuthorID     int64
	StartedAt    *time.Time
	FinishedAt   *time.Time
}

// Recorder records statuses. Called with the context of an open store
// transaction (store.Tx.Context()), Set joins it, so a status changes
// together with what it reflects.
type Recorder interface {
	Set(ctx context.Context, s Status) error
}
