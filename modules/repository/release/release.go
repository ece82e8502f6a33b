// Package release is the repository module's contract for making a
// release from another module (issue 34: CI's `release:` keyword): a
// release of a tag, with its links, made as the user in ctx under the
// releases API's rules. The module's releases API does the same through
// the same command.
package release

import (
	"context"
	"errors"
	"time"
)

// Service makes releases.
type Service interface {
	// Create makes the release of in.TagName in project projectID as the
	// user in ctx, who must be allowed to push code, as for the releases
	// API. A missing tag is created at in.Ref (with in.TagMessage) first;
	// the release and its links are stored in one transaction. Errors are
	// ErrExists, a *RefusedError (GitLab's reason), or the store's.
	Create(ctx context.Context, projectID int64, in Input) (Created, error)
}

// Input is what a new release is.
type Input struct {
	TagName     string
	TagMessage  string
	Name        string // blank: the tag's name
	Description string
	Ref         string // what a missing tag is made from
	ReleasedAt  *time.Time
	Links       []Link
}

// Link is a release's asset link; a blank LinkType is "other".
type Link struct {
	Name, URL, LinkType string
}

// Created is the release Create made.
type Created struct {
	TagName string
	// CommitID is the commit the release's tag points at.
	CommitID string
	Links    int
}

// ErrExists: the tag has a release already (release-cli's "Release
// already exists", the API's 409).
var ErrExists = errors.New("Release already exists")

// ErrRefused is what every *RefusedError wraps.
var ErrRefused = errors.New("release: refused")

// RefusedError is a release refused, with GitLab's reason (the releases
// API's message: "Ref is not specified", a tag refusal, invalid links,
// "403 Forbidden").
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }
func (e *RefusedError) Unwrap() error { return ErrRefused }
