package target

import (
	"context"
	"errors"
	"time"
)

// Labels and milestones are attached to every kind of target that has
// them (issues, merge requests). The module that keeps them (issues)
// provides Labels and Milestones (collab.ProvideLabels), so a module that
// attaches them (merge requests) needs no import of it. Each method called
// with the context of an open store transaction joins it.

// Milestone is a project's milestone, or a group's (GroupID set,
// ProjectID 0).
type Milestone struct {
	ID          int64
	IID         int64
	ProjectID   int64
	GroupID     int64
	Title       string
	Description string
	State       string // "active", "closed"
	DueDate     string // YYYY-MM-DD, "" for none
	StartDate   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// View is the milestone as the API renders it (GitLab 9.x's
	// milestone), for the views of the targets that carry it: rendered by
	// the keeping module, so the milestone of an issue and of a merge
	// request read the same.
	View any
}

// ErrLabelEventNotFound: no such label event on the target (GitLab's
// find: 404 "Not found").
var ErrLabelEventNotFound = errors.New("labels: label event not found")

// LabelColor is a label as a list's chip shows it: its name and its
// colour as stored ("#rrggbb"; the page checks it before use).
type LabelColor struct {
	ID          int64
	Name, Color string
}

// Labels is how a module attaches a project's labels to its targets.
type Labels interface {
	// Ensure finds the labels the project sees by name (its own, else
	// those of its groups, nearest first), creating missing ones in the
	// project as GitLab does for labels named on an issue, and returns
	// their ids in the order given. A name with a comma, blank or too long
	// is a validation error (400).
	Ensure(ctx context.Context, projectID int64, names []string) ([]int64, error)
	// Names returns the names of label ids, sorted (the views' labels);
	// ids of deleted labels are skipped.
	Names(ctx context.Context, ids []int64) ([]string, error)
	// Colors returns the names and colours of label ids (the lists'
	// chips), in the order given; ids of deleted labels are skipped.
	Colors(ctx context.Context, ids []int64) ([]LabelColor, error)
	// Available are the labels the project sees (its own, then its
	// groups', nearest first), at most limit of them: the choices of an
	// edit form.
	Available(ctx context.Context, projectID int64, limit int) ([]LabelColor, error)
	// Find returns the ids of the labels with these names that the
	// project sees (its own and its groups'), skipping unknown names (for
	// list filters).
	Find(ctx context.Context, projectID int64, names []string) ([]int64, error)
	// RecordLabelChange records that userID changed the labels of a
	// target (its type and global id) from before to after: a label event
	// per label added or removed.
	RecordLabelChange(ctx context.Context, projectID int64, resourceType string, resourceID, userID int64, before, after []int64) error
	// LabelEvents are a target's label events as the API renders them
	// (GitLab's resource label events, with their users and labels, as the
	// caller in ctx is answered), oldest first: at most limit of them from
	// the offset-th on (a page), and how many there are.
	LabelEvents(ctx context.Context, resourceType string, resourceID int64, offset, limit int) ([]any, int, error)
	// LabelEvent is one of them; ErrLabelEventNotFound for another's.
	LabelEvent(ctx context.Context, resourceType string, resourceID int64, eventID int64) (any, error)
	// RemoveLabelEvents deletes the label events of a deleted target.
	RemoveLabelEvents(ctx context.Context, resourceType string, resourceID int64) error
}

// Milestones is how a module attaches a project's milestones to its
// targets. A milestone that is not there is the keeping module's
// not-found error (answered "404 Not found").
type Milestones interface {
	// Milestone returns milestone id of the project.
	Milestone(ctx context.Context, projectID, id int64) (Milestone, error)
	// Assignable is a milestone a target of the project may take: the
	// project's own, or one of a group the project is in (its group or a
	// group above).
	Assignable(ctx context.Context, projectID, id int64) (Milestone, error)
	// ByTitle returns the project's milestone of that title (list filters).
	ByTitle(ctx context.Context, projectID int64, title string) (Milestone, error)
	// Open are the active milestones a target of the project may take
	// (the project's own, then its groups', nearest first), at most limit
	// of them: the choices of an edit form.
	Open(ctx context.Context, projectID int64, limit int) ([]Milestone, error)
}
