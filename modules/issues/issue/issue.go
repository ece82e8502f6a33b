package issue

import (
	"context"
	"errors"
	"time"

	"github.com/fennec-forge/fennec/modules/collab/target"
)

// ID is an issue's id, unique in the server.
type ID int64

// IID is an issue's number in its project (#IID).
type IID int64

// LabelID is a label's id: a project's and a group's labels share one
// sequence, so an id names either.
type LabelID int64

// MilestoneID is a milestone's id: a project's and a group's milestones
// share one sequence.
type MilestoneID int64

// NoteableType is the noteable_type of notes on issues, and the target
// type of their todos, feed entries and label events.
const NoteableType = "Issue"

// Ref names an issue: Project as the API's :id gives it (its id or its
// full path), IID its number there.
type Ref struct {
	Project string
	IID     IID
}

// State is an issue's state in GitLab 9.x: a reopened one stays Reopened
// until closed again (the "opened" filter matches both).
type State string

const (
	Opened   State = "opened"
	Reopened State = "reopened"
	Closed   State = "closed"
)

// Issue is an issue as the Service returns it. Users, labels and the
// milestone are named by id; whoever shows it looks them up (the HTTP
// adapter renders GitLab's view with them).
type Issue struct {
	ID           ID
	IID          IID
	ProjectID    int64
	Title        string
	Description  string
	State        State
	AuthorID     int64
	AssigneeIDs  []int64
	LabelIDs     []LabelID
	MilestoneID  MilestoneID // 0: none
	Confidential bool
	DueDate      string // YYYY-MM-DD, "" for none
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// WebURL is the issue's page, under the server's external URL.
	WebURL string
}

// Fields are what a create or an update of an issue gives; nil is "not
// given". A create needs the title; an update any one field or a
// StateEvent. The assignees, the labels and the milestone are taken from
// a Reporter or more only (others' are ignored, as GitLab's).
type Fields struct {
	Title       *string // trimmed; one line, at most 255 characters
	Description *string // at most 1,000,000 bytes
	// AssigneeIDs: the first one who may read the project's issues is
	// kept (GitLab CE has one assignee); empty clears.
	AssigneeIDs *[]int64
	// MilestoneID: 0 clears; one the project may not take is ignored.
	MilestoneID *int64
	// Labels are label names the project sees (missing ones are made in
	// the project); empty clears.
	Labels       *[]string
	Confidential *bool
	// DueDate is an ISO 8601 date or time (its date is kept); "" clears.
	DueDate *string
	// CreatedAt (ISO 8601) backdates: taken from the project's owners and
	// administrators only.
	CreatedAt *string
}

// FieldNames are the parameters an update may give, as GitLab's API names
// them (ErrNothingGiven lists them).
var FieldNames = []string{"assignee_id", "assignee_ids", "confidential", "created_at", "description", "due_date",
	"labels", "milestone_id", "state_event", "title"}

// StateEvent closes or reopens an issue (an update's state_event); ""
// is none.
type StateEvent string

const (
	Close  StateEvent = "close"
	Reopen StateEvent = "reopen"
)

// ListQuery is what a list of issues gives. The strings are the API's
// parameters as given: a value the list does not know is ErrInvalidValue.
type ListQuery struct {
	State     string   // opened, closed, all or "" (all)
	Labels    []string // issues must have all; "None" and "Any" as GitLab's
	Milestone string   // a title, "None" (No Milestone) or "Any"
	IIDs      []int64
	Search    string // in titles and descriptions
	OrderBy   string // created_at (""), updated_at
	Sort      string // desc (""), asc
	// Scope is GET /issues': created-by-me (""), assigned-to-me or all.
	Scope string
	// Offset and Limit are the page: Limit of them from the Offset-th on.
	Offset, Limit int
}

// Label is a project's label (ProjectID set) or a group's (GroupID set),
// with the counts of issues of the project (or, for a group's list, of
// the projects) the caller may see.
type Label struct {
	ID          LabelID
	ProjectID   int64
	GroupID     int64
	Name        string
	Color       string
	Description string
	Priority    *int // a project label's; nil: none
	// Counted: the counts are filled (a group's list gives them when
	// asked, with WithCounts).
	Counted           bool
	OpenIssuesCount   int
	ClosedIssuesCount int
}

// LabelFields are what a create or an edit of a label gives; nil is "not
// given". A create needs the name and the color.
type LabelFields struct {
	Name        *string // trimmed; no comma, at most 255 characters
	Color       *string // #RGB or #RRGGBB
	Description *string
	// Priority orders a project's labels; below 0 clears. A group label
	// has none (ignored).
	Priority *int
}

// LabelQuery is what a list of labels gives.
type LabelQuery struct {
	// Ancestors: the labels of every group above too (else the owning
	// group's only, for a project; the group's own, for a group).
	Ancestors bool
	Search    string // the name or the description contains it, in any case
	// WithCounts: a group's list counts the issues too.
	WithCounts    bool
	Offset, Limit int
}

// Milestone is a project's milestone, or a group's (GroupID set,
// ProjectID 0).
type Milestone struct {
	ID          MilestoneID
	IID         int64
	ProjectID   int64
	GroupID     int64
	Title       string
	Description string
	State       string // active, closed
	DueDate     string // YYYY-MM-DD, "" for none
	StartDate   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// MilestoneFields are what a create or an edit of a milestone gives; nil
// is "not given". A create needs the title.
type MilestoneFields struct {
	Title       *string
	Description *string
	DueDate     *string // an ISO 8601 date or time; "" clears
	StartDate   *string
}

// MilestoneEvent closes or activates a milestone (state_event); "" is
// none.
type MilestoneEvent string

const (
	CloseMilestone    MilestoneEvent = "close"
	ActivateMilestone MilestoneEvent = "activate"
)

// MilestoneQuery is what a list of milestones gives.
type MilestoneQuery struct {
	State         string // active, closed or "" (both)
	IIDs          []int64
	Search        string // the title or the description contains it
	Offset, Limit int
}

// LabelEvent is a label added to (Action "add") or removed from
// ("remove") an issue or a merge request, by UserID; Label is nil once the
// label is deleted.
type LabelEvent struct {
	ID           int64
	UserID       int64
	CreatedAt    time.Time
	ResourceType string
	ResourceID   int64
	Label        *Label
	Action       string
}

// Service is the issues module. The caller is the principal in ctx; an
// issue of a project the caller may not read is the projects module's
// error (projects.ErrNotFound, ErrForbidden), one that is not there (or a
// confidential one the caller may not see) ErrNotFound. Lists return a
// page and how many there are in all. With a store transaction in ctx, the
// queries read in it.
type Service interface {
	// List is a project's issues (project as the API's :id).
	List(ctx context.Context, project string, q ListQuery) ([]Issue, int, error)
	// ListMine is the caller's issues across projects (q.Scope).
	ListMine(ctx context.Context, q ListQuery) ([]Issue, int, error)
	// Get reads one issue.
	Get(ctx context.Context, ref Ref) (Issue, error)
	// Create opens an issue as the caller: ErrMissing, ErrInvalid,
	// ErrInvalidParam.
	Create(ctx context.Context, project string, in Fields) (Issue, error)
	// Update changes the fields given and, with event, closes or
	// reopens, in one change (Reporter+, the author or an assignee):
	// ErrNothingGiven, ErrInvalidValue, ErrInvalid, ErrInvalidParam.
	Update(ctx context.Context, ref Ref, in Fields, event StateEvent) (Issue, error)
	// Delete deletes an issue with its notes, todos and label events (the
	// project's owners and administrators).
	Delete(ctx context.Context, ref Ref) error
	// LabelEvents are the issue's label events, oldest first.
	LabelEvents(ctx context.Context, ref Ref, offset, limit int) ([]LabelEvent, int, error)
	// LabelEvent is one of them (target.ErrLabelEventNotFound).
	LabelEvent(ctx context.Context, ref Ref, eventID int64) (LabelEvent, error)

	// Labels are the labels a project sees, by name.
	Labels(ctx context.Context, project string, q LabelQuery) ([]Label, int, error)
	// GetLabel is a label the project sees, named or numbered.
	GetLabel(ctx context.Context, project, label string) (Label, error)
	// CreateLabel makes a project label (Reporter+): ErrMissing,
	// ErrInvalid, ErrLabelExists.
	CreateLabel(ctx context.Context, project string, in LabelFields) (Label, error)
	// UpdateLabel edits the project's own label, named or numbered
	// (Reporter+); in.Name is the new name.
	UpdateLabel(ctx context.Context, project, label string, in LabelFields) (Label, error)
	// DeleteLabel deletes the project's own label and takes it off its
	// issues (Reporter+).
	DeleteLabel(ctx context.Context, project, label string) error
	// GroupLabels, GetGroupLabel, CreateGroupLabel, UpdateGroupLabel and
	// DeleteGroupLabel are the same for a group's labels (group as the
	// API's :id; changes take Reporter+ in the group).
	GroupLabels(ctx context.Context, group string, q LabelQuery) ([]Label, int, error)
	GetGroupLabel(ctx context.Context, group, label string) (Label, error)
	CreateGroupLabel(ctx context.Context, group string, in LabelFields) (Label, error)
	UpdateGroupLabel(ctx context.Context, group, label string, in LabelFields) (Label, error)
	DeleteGroupLabel(ctx context.Context, group, label string) error

	// Milestones are a project's milestones.
	Milestones(ctx context.Context, project string, q MilestoneQuery) ([]Milestone, int, error)
	// GetMilestone is one of them (ErrMilestoneNotFound).
	GetMilestone(ctx context.Context, project string, id MilestoneID) (Milestone, error)
	// CreateMilestone and UpdateMilestone take Master+: ErrMissing,
	// ErrNothingGiven, ErrInvalidValue, ErrInvalidParam,
	// ErrMilestoneInvalid.
	CreateMilestone(ctx context.Context, project string, in MilestoneFields) (Milestone, error)
	UpdateMilestone(ctx context.Context, project string, id MilestoneID, in MilestoneFields, event MilestoneEvent) (Milestone, error)
	// MilestoneIssues are the issues of a milestone the caller may see.
	MilestoneIssues(ctx context.Context, project string, id MilestoneID, offset, limit int) ([]Issue, int, error)
	// GroupMilestones, GetGroupMilestone, CreateGroupMilestone,
	// UpdateGroupMilestone and GroupMilestoneIssues are the same for a
	// group's milestones (changes take Master+ in the group).
	GroupMilestones(ctx context.Context, group string, q MilestoneQuery) ([]Milestone, int, error)
	GetGroupMilestone(ctx context.Context, group string, id MilestoneID) (Milestone, error)
	CreateGroupMilestone(ctx context.Context, group string, in MilestoneFields) (Milestone, error)
	UpdateGroupMilestone(ctx context.Context, group string, id MilestoneID, in MilestoneFields, event MilestoneEvent) (Milestone, error)
	GroupMilestoneIssues(ctx context.Context, group string, id MilestoneID, offset, limit int) ([]Issue, int, error)
}

var (
	// ErrNotFound: no such issue in the project, or one the caller may
	// not see (a confidential one); answered "404 Not found". It is a
	// noteable's not-found (target.ErrNotFound) for the modules that know
	// no owner.
	ErrNotFound = target.NotFound("issues: issue not found")
	// ErrLabelNotFound: answered "404 Label Not Found".
	ErrLabelNotFound = errors.New("issues: label not found")
	// ErrMilestoneNotFound: answered "404 Not found".
	ErrMilestoneNotFound = errors.New("issues: milestone not found")
	// ErrLabelExists: a label of that name exists; answered 409 "Label
	// already exists".
	ErrLabelExists = errors.New("issues: label already exists")
	// ErrLabelEventNotFound: no such label event on the issue (the collab
	// contract's, which merge requests see too).
	ErrLabelEventNotFound = target.ErrLabelEventNotFound

	// ErrMissing: required parameters are missing (a *ParamsError names
	// them); the collab contract's, as for every target.
	ErrMissing = target.ErrMissing
	// ErrNothingGiven: an update gives nothing (a *ParamsError names what
	// it may give); the collab contract's.
	ErrNothingGiven = target.ErrNothingGiven
	// ErrInvalidValue: a parameter has a value it may not (a *ParamError
	// names it): "state does not have a valid value".
	ErrInvalidValue = errors.New("issues: parameter does not have a valid value")
	// ErrInvalidParam: a parameter cannot be read (a *ParamError names
	// it): "due_date is invalid"; the collab contract's.
	ErrInvalidParam = target.ErrBadParam
	// ErrMilestoneInvalid: a milestone's field breaks a rule (a
	// *MilestoneError says which).
	ErrMilestoneInvalid = errors.New("issues: invalid milestone")
)

// ErrInvalid is the text rules' failed validation of a field (a title,
// a description, a label's name or color): a *target.InvalidError says
// which and why.
var ErrInvalid = target.ErrInvalid

// ParamsError is ErrMissing or ErrNothingGiven with the parameters it is
// about, named as GitLab's API names them (the collab contract's).
type ParamsError = target.ParamsError

// ParamError is ErrInvalidValue or ErrInvalidParam with the parameter
// (the collab contract's).
type ParamError = target.ParamError

// MilestoneError is ErrMilestoneInvalid: Verb is "create" or "update",
// Field and Text what is wrong ("title", "has already been taken").
type MilestoneError struct {
	Verb, Field, Text string
}

func (e *MilestoneError) Error() string {
	return ErrMilestoneInvalid.Error() + ": " + e.Field + " " + e.Text
}
func (e *MilestoneError) Unwrap() error { return ErrMilestoneInvalid }
