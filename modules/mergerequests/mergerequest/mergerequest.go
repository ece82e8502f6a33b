package mergerequest

import (
	"context"
	"errors"
	"time"

	"github.com/fennec-forge/fennec/modules/notes/noteable"
)

// ID is a merge request's id, unique in the server.
type ID int64

// IID is a merge request's number in its target project (!IID).
type IID int64

// NoteableType is the noteable_type of notes on merge requests, and the
// target type of their todos and feed entries.
const NoteableType = "MergeRequest"

// Ref names a merge request: Project is its target project as the API's
// :id gives it (its id or its full path), IID its number there.
type Ref struct {
	Project string
	IID     IID
}

// State is a merge request's state in GitLab 9.x: a reopened one is
// Reopened until closed or merged again (the "opened" filter matches
// both); Locked while its merge is being made.
type State string

const (
	Opened   State = "opened"
	Reopened State = "reopened"
	Closed   State = "closed"
	Merged   State = "merged"
	Locked   State = "locked"
)

// Open says whether the state counts as open (opened, reopened, locked).
func (s State) Open() bool { return s == Opened || s == Reopened || s == Locked }

// MergeStatus is whether the source merges cleanly into the target, as
// last computed (Unchecked until it is, and after either branch moves).
type MergeStatus string

const (
	Unchecked      MergeStatus = "unchecked"
	CanBeMerged    MergeStatus = "can_be_merged"
	CannotBeMerged MergeStatus = "cannot_be_merged"
)

// MergeRequest is a merge request as the Service returns it. Users,
// labels and the milestone are named by id; whoever shows it looks them
// up (the HTTP adapter renders GitLab's view with them).
type MergeRequest struct {
	ID              ID
	IID             IID
	ProjectID       int64 // the target project
	SourceProjectID int64 // the target, or a fork of it
	SourceBranch    string
	TargetBranch    string
	Title           string
	Description     string
	State           State
	AuthorID        int64
	AssigneeID      int64 // 0: none
	LabelIDs        []int64
	MilestoneID     int64 // 0: none
	// SHA is the source branch's head as last seen; MergeStatus is
	// against the target's head then.
	SHA         string
	MergeStatus MergeStatus
	// MergeWhenPipelineSucceeds: an automatic merge waits for the head
	// pipeline (SetAutoMerge).
	MergeWhenPipelineSucceeds bool
	// ForceRemoveSourceBranch is remove_source_branch of a create or an
	// update; ShouldRemoveSourceBranch is the merge's choice.
	ForceRemoveSourceBranch  bool
	ShouldRemoveSourceBranch bool
	WorkInProgress           bool // the title says WIP
	MergeCommitSHA           string
	MergedByID               int64
	MergedAt                 *time.Time
	CreatedAt                time.Time
	UpdatedAt                time.Time
	// WebURL is the merge request's page, under the server's external URL.
	WebURL string
}

// MergeInput is what a merge gives; nil is "not given".
type MergeInput struct {
	// SHA, when given, must be the source branch's head: what the caller
	// saw is what is merged (ErrSHAMismatch otherwise).
	SHA *string
	// Message is the merge commit's message; none (or "") is GitLab's.
	Message *string
	// RemoveSourceBranch: remove the source branch once merged; not
	// given, the merge request's remove_source_branch decides.
	RemoveSourceBranch *bool
	// WhenPipelineSucceeds asks for the merge when the head commit's
	// pipeline succeeds (SetAutoMerge) if one runs or is on its way;
	// with none to wait for, the merge is made at once.
	WhenPipelineSucceeds bool
	// AutoMerge carries out the caller's recorded automatic merge (the
	// module's own subscriber does, as the user who set it, when the
	// pipeline succeeded): it merges only while the intent is still the
	// caller's, for SHA, on an open merge request (ErrAutoMergeCanceled
	// otherwise), with the recorded message and branch removal.
	AutoMerge bool
}

// Service is the merge requests module. The caller is the principal in
// ctx; a merge request of a project the caller may not read is the
// projects module's error (projects.ErrNotFound, ErrForbidden), one that
// is not there ErrNotFound.
type Service interface {
	// Get reads one merge request (its merge status computed first when
	// unchecked, as GitLab checks lazily).
	Get(ctx context.Context, ref Ref) (MergeRequest, error)

	// Merge merges the merge request into its target branch as the
	// caller, who must be allowed to merge into that branch now
	// (ErrMergeNotAllowed): the merge commit lands on the target by
	// compare-and-set, the merge request is merged, the issues it closes
	// are closed and, when asked, the source branch removed. An open
	// merge request only (ErrNotOpen); ErrNotMergeable when it cannot be
	// merged as it is (work in progress, unresolved threads where the
	// project requires them resolved, a missing branch, conflicts);
	// ErrSHAMismatch, ErrTargetMoved. With in.WhenPipelineSucceeds and a
	// pipeline to wait for, it records the intent instead (SetAutoMerge).
	Merge(ctx context.Context, ref Ref, in MergeInput) (MergeRequest, error)
	// SetAutoMerge records the caller's intent to merge when the head
	// commit's pipeline succeeds (in.WhenPipelineSucceeds is implied); the
	// same rules as Merge hold, and ErrNothingToWaitFor when no pipeline
	// runs and none is on its way.
	SetAutoMerge(ctx context.Context, ref Ref, in MergeInput) (MergeRequest, error)
	// CancelAutoMerge drops the recorded intent, with a system note: who
	// may merge may cancel (ErrMergeNotAllowed); an open merge request
	// only (ErrNotChangeable); ErrNoAutoMerge when none is set.
	CancelAutoMerge(ctx context.Context, ref Ref) (MergeRequest, error)
}

var (
	// ErrNotFound: no such merge request (or a deleted one). It is a
	// noteable's not-found (noteable.ErrNotFound) for the modules that
	// know no owner.
	ErrNotFound = noteable.NotFound("mergerequests: merge request not found")
	// ErrUnavailable: a part of the bundle the operation needs (notes,
	// todos, labels) is missing.
	ErrUnavailable = errors.New("mergerequests: not available in this bundle")
	// ErrMergeNotAllowed: the caller may not merge into the target branch
	// (its protection, their access, an archived project).
	ErrMergeNotAllowed = errors.New("mergerequests: not allowed to merge into the target branch")
	// ErrNotOpen: the merge request is merged, closed or being merged, so
	// it cannot be merged.
	ErrNotOpen = errors.New("mergerequests: the merge request is not open")
	// ErrNotChangeable: what was asked does not apply to the merge request
	// in its state (a merged one keeps its branches and state; a closed or
	// merged one has no automatic merge to cancel).
	ErrNotChangeable = errors.New("mergerequests: not possible in the merge request's state")
	// ErrNotMergeable: the merge request cannot be merged as it is (work
	// in progress, unresolved threads, a missing branch, conflicts).
	ErrNotMergeable = errors.New("mergerequests: branch cannot be merged")
	// ErrSHAMismatch: the SHA a merge gave is not the source branch's head
	// (a *SHAMismatchError says which is).
	ErrSHAMismatch = errors.New("mergerequests: SHA does not match HEAD of source branch")
	// ErrTargetMoved: pushes kept landing on the target branch while
	// merging; nothing was merged, the merge may be tried again.
	ErrTargetMoved = errors.New("mergerequests: the target branch moved while merging")
	// ErrNothingToWaitFor: SetAutoMerge found no pipeline of the head
	// commit running and none on its way.
	ErrNothingToWaitFor = errors.New("mergerequests: no pipeline to wait for")
	// ErrNoAutoMerge: CancelAutoMerge found no automatic merge set.
	ErrNoAutoMerge = errors.New("mergerequests: no automatic merge is set")
	// ErrAutoMergeCanceled: the automatic merge a MergeInput.AutoMerge
	// was to carry out was dropped or changed meanwhile (whatever did it
	// wrote its note); nothing merged.
	ErrAutoMergeCanceled = errors.New("mergerequests: the automatic merge was canceled meanwhile")
)

// SHAMismatchError is ErrSHAMismatch with the source branch's head.
type SHAMismatchError struct {
	Head string
}

func (e *SHAMismatchError) Error() string        { return ErrSHAMismatch.Error() + ": " + e.Head }
func (e *SHAMismatchError) Is(target error) bool { return target == ErrSHAMismatch }
