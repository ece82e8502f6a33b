package mergerequest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/repository"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
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

// Fields are what a create or an update gives; nil is "not given". A
// create needs the source branch, the target branch and the title (the
// source project is the one named, the target project the same or, with
// TargetProjectID, the one it was forked from); an update needs any one
// field but the source branch and the target project, or a StateEvent.
type Fields struct {
	SourceBranch    *string
	TargetBranch    *string
	TargetProjectID *int64
	Title           *string // trimmed; one line, at most 255 characters
	Description     *string // at most 1,000,000 bytes
	// AssigneeID: 0 clears; one who may not read the target's merge
	// requests is dropped, as GitLab filters them.
	AssigneeID *int64
	// Labels are label names of the target project (missing ones are
	// made); empty clears.
	Labels *[]string
	// MilestoneID: 0 clears; one that is not the project's is ignored.
	MilestoneID        *int64
	RemoveSourceBranch *bool
}

// StateEvent closes or reopens a merge request with an update.
type StateEvent string

const (
	Close  StateEvent = "close"
	Reopen StateEvent = "reopen"
)

// Valid says whether e is one of the two events.
func (e StateEvent) Valid() bool { return e == Close || e == Reopen }

// Order is how a list is sorted: by creation (the default) or by the
// last update, newest first unless Ascending.
type Order string

const (
	ByCreated Order = "created_at"
	ByUpdated Order = "updated_at"
)

// ListQuery is what a list of a project's merge requests gives.
type ListQuery struct {
	// IIDs, when given, are the only ones listed (unknown ones skipped).
	IIDs []IID
	// State keeps only those in it: Opened (reopened and locked count),
	// Closed or Merged; "" is every state.
	State     State
	OrderBy   Order
	Ascending bool
	// Offset and Limit are the page: Limit of them from the Offset-th on.
	Offset, Limit int
	// Labels keeps those with every label named (the project's or its
	// groups'; an unknown name keeps none). "None" keeps those without any
	// label, "Any" those with one, as GitLab's labels filter.
	Labels []string
	// Milestone keeps those of the project's milestone of that title
	// (an unknown title keeps none); "None" those without a milestone,
	// "Any" those with one.
	Milestone string
	// Search keeps those whose title or description holds it, in any
	// case.
	Search string
	// AuthorID, when not 0, keeps those the user opened.
	AuthorID int64
	// AssigneeID, when above 0, keeps those assigned to the user;
	// AssignedToNone those assigned to nobody, AssignedToAny to anybody.
	AssigneeID int64
}

// The assignee filters of ListQuery.AssigneeID beside a user's id
// (GitLab's assignee_id=None and assignee_id=Any).
const (
	AssignedToNone int64 = -1
	AssignedToAny  int64 = -2
)

// Scope is whose merge requests ListMine lists: the caller's own, those
// assigned to them, or every one they may read.
type Scope string

const (
	CreatedByMe  Scope = "created-by-me"
	AssignedToMe Scope = "assigned-to-me"
	AllScope     Scope = "all"
)

// MineQuery is what a list of the caller's merge requests across
// projects gives.
type MineQuery struct {
	Scope Scope // "" is CreatedByMe
	// State and Search as in ListQuery.
	State     State
	Search    string
	OrderBy   Order
	Ascending bool
	Offset    int
	Limit     int
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
//
// Lists return a page and how many there are in all.
type Service interface {
	// List is a project's merge requests (project as the API's :id).
	List(ctx context.Context, project string, q ListQuery) ([]MergeRequest, int, error)
	// ListMine is the caller's merge requests (q.Scope) across the
	// projects whose merge requests they may read; ErrInvalid for an
	// unknown scope.
	ListMine(ctx context.Context, q MineQuery) ([]MergeRequest, int, error)
	// Get reads one merge request (its merge status computed first when
	// unchecked, as GitLab checks lazily).
	Get(ctx context.Context, ref Ref) (MergeRequest, error)
	// Commits are the source's commits not in the target (for a merged
	// one, not in the target as it was merged), newest first.
	Commits(ctx context.Context, ref Ref) ([]gitread.Commit, error)
	// Changes are the merge request and its diffs against the same base.
	Changes(ctx context.Context, ref Ref) (MergeRequest, []repository.DiffView, error)
	// ClosesIssues are the open issues merging would close, among those
	// the caller may see (only a merge into the default branch closes), as
	// the issues module renders them (target.Closer; none without it).
	ClosesIssues(ctx context.Context, ref Ref) ([]any, error)
	// CommitMergeRequests are the project's merge requests that hold a
	// commit (sha, branch or tag; repository.ErrCommitNotFound), newest
	// first: it is their merge commit, or one of their commits.
	CommitMergeRequests(ctx context.Context, project, rev string, offset, limit int) ([]MergeRequest, int, error)
	// MilestoneMergeRequests are the project's merge requests of one of its
	// milestones (the milestone's keeper's not-found error: 404 "Not
	// found"), every state, newest first.
	MilestoneMergeRequests(ctx context.Context, project string, milestoneID int64, offset, limit int) ([]MergeRequest, int, error)
	// LabelEvents are the merge request's label events as the module that
	// keeps labels renders them (target.Labels), oldest first
	// (ErrUnavailable without it).
	LabelEvents(ctx context.Context, ref Ref, offset, limit int) ([]any, int, error)
	// LabelEvent is one of them (target.ErrLabelEventNotFound).
	LabelEvent(ctx context.Context, ref Ref, eventID int64) (any, error)

	// Create opens a merge request in the project named (the source
	// project) as the caller, who must be able to push code there
	// (Developer): ErrMissing, ErrInvalid, ErrBranchesRequired, ErrSameBranch,
	// ErrBranchNotFound, ErrNotUpstream, ErrExists.
	Create(ctx context.Context, project string, in Fields) (MergeRequest, error)
	// Update changes the fields given and, with event, closes or reopens,
	// in one change (Developer): ErrNothingGiven, ErrInvalid,
	// ErrBranchNotFound, ErrSameBranch; ErrNotChangeable for the branches or
	// the state of a merged one; ErrExists when reopening would make a
	// second open one of the same branches. An event that does not apply
	// (closing a closed one) is no change.
	Update(ctx context.Context, ref Ref, in Fields, event StateEvent) (MergeRequest, error)
	// Close and Reopen are Update with the event alone.
	Close(ctx context.Context, ref Ref) (MergeRequest, error)
	Reopen(ctx context.Context, ref Ref) (MergeRequest, error)
	// Delete deletes a merge request with its notes, todos and label
	// events (the project's owners and administrators: projects.ErrForbidden);
	// its iid is never used again.
	Delete(ctx context.Context, ref Ref) error

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
	// noteable's not-found (target.ErrNotFound) for the modules that
	// know no owner.
	ErrNotFound = target.NotFound("mergerequests: merge request not found")
	// ErrUnavailable: a part of the bundle the operation needs (labels)
	// is missing.
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
	// ErrPipelineMustSucceed is ErrNotMergeable for one reason: the
	// project merges only when the pipeline succeeds
	// (only_allow_merge_if_pipeline_succeeds) and the head commit's
	// pipeline has not succeeded.
	ErrPipelineMustSucceed = fmt.Errorf("%w: the pipeline must succeed first", ErrNotMergeable)
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

// The errors of Create and Update.
var (
	// ErrMissing: a create lacks required fields (a *ParamsError names
	// them); the collab contract's, as for every target.
	ErrMissing = target.ErrMissing
	// ErrNothingGiven: an update gives no field (a *ParamsError names
	// those it may give); the collab contract's.
	ErrNothingGiven = target.ErrNothingGiven
	// ErrInvalid: a field with a value a merge request may not have (an
	// *InvalidError says which and why).
	ErrInvalid = errors.New("mergerequests: invalid field")
	// ErrBranchesRequired: a create's branches are blank.
	ErrBranchesRequired = errors.New("mergerequests: the source and target branches are required")
	// ErrSameBranch: the source and the target are the same branch of the
	// same project.
	ErrSameBranch = errors.New("mergerequests: the source and the target are the same branch")
	// ErrNotUpstream: a create's target project is neither the source
	// project nor the one it was forked from.
	ErrNotUpstream = errors.New("mergerequests: the target project is not the source project's upstream")
	// ErrBranchNotFound: a branch named does not exist (a
	// *BranchNotFoundError says which).
	ErrBranchNotFound = errors.New("mergerequests: branch does not exist")
	// ErrExists: an open merge request of the same branches exists (an
	// *ExistsError names it).
	ErrExists = errors.New("mergerequests: this merge request already exists")
)

// ParamsError is ErrMissing or ErrNothingGiven with the parameters it is
// about, named as GitLab's API names them (the collab contract's).
type ParamsError = target.ParamsError

// InvalidError is ErrInvalid with the field ("title", "description",
// "source_branch", "target_branch") and what is wrong with it.
type InvalidError struct {
	Field, Text string
}

func (e *InvalidError) Error() string        { return ErrInvalid.Error() + ": " + e.Field + " " + e.Text }
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// BranchNotFoundError is ErrBranchNotFound for the source branch (Source)
// or the target branch.
type BranchNotFoundError struct {
	Source bool
	Branch string
}

func (e *BranchNotFoundError) Error() string {
	which := "Target"
	if e.Source {
		which = "Source"
	}
	return which + " branch \"" + e.Branch + "\" does not exist"
}
func (e *BranchNotFoundError) Is(target error) bool { return target == ErrBranchNotFound }

// ExistsError is ErrExists with the title of the open merge request.
type ExistsError struct {
	Title string
}

func (e *ExistsError) Error() string        { return ErrExists.Error() + ": " + e.Title }
func (e *ExistsError) Is(target error) bool { return target == ErrExists }

// SHAMismatchError is ErrSHAMismatch with the source branch's head.
type SHAMismatchError struct {
	Head string
}

func (e *SHAMismatchError) Error() string        { return ErrSHAMismatch.Error() + ": " + e.Head }
func (e *SHAMismatchError) Is(target error) bool { return target == ErrSHAMismatch }
