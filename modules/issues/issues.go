package issues

import (
	"context"

	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/event"
	"github.com/fennec-forge/fennec/modules/issues/internal"
	"github.com/fennec-forge/fennec/modules/projects"
)

// The event the module publishes; its contract is package event.
type (
	IssueEvent = event.IssueEvent
	Action     = event.Action
)

// The actions of IssueEvent.
const (
	Opened   = event.Open
	Updated  = event.Update
	Closed   = event.Close
	Reopened = event.Reopen
)

// The views other modules embed (closes_issues, a merge request's
// milestone), as GitLab 9.x renders them.
type (
	IssueView     = internal.IssueView
	MilestoneView = internal.MilestoneView
	LabelView     = internal.LabelView
	// LabelEventView is a resource label event (GitLab 11.2).
	LabelEventView = internal.LabelEventView
)

// The module's domain errors, for callers to test with errors.Is; the
// module maps them to GitLab's answers at the API edge.
var (
	ErrIssueNotFound     = internal.ErrIssueNotFound
	ErrLabelNotFound     = internal.ErrLabelNotFound
	ErrMilestoneNotFound = internal.ErrMilestoneNotFound
	ErrLabelExists       = internal.ErrLabelExists
	// ErrLabelEventNotFound: no such label event on the resource; 404
	// "Not found".
	ErrLabelEventNotFound = internal.ErrLabelEventNotFound
)

// Labels is how other modules (merge requests) attach a project's labels.
// Each method called with the context of an open store transaction joins it.
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
	// Find returns the ids of the labels with these names that the
	// project sees (its own and its groups'), skipping unknown names (for
	// list filters).
	Find(ctx context.Context, projectID int64, names []string) ([]int64, error)
	// RecordLabelChange records that userID changed the labels of a
	// resource ("MergeRequest", its global id) from before to after: a
	// resource label event per label added or removed.
	RecordLabelChange(ctx context.Context, projectID int64, resourceType string, resourceID, userID int64, before, after []int64) error
	// LabelEvents are a resource's label events, oldest first: at most
	// limit of them from the offset-th on (a page), and how many there are.
	LabelEvents(ctx context.Context, resourceType string, resourceID int64, offset, limit int) ([]LabelEventView, int, error)
	// LabelEvent is one of them; ErrLabelEventNotFound for another's.
	LabelEvent(ctx context.Context, resourceType string, resourceID int64, eventID uint64) (LabelEventView, error)
	// RemoveLabelEvents deletes the label events of a deleted resource.
	RemoveLabelEvents(ctx context.Context, resourceType string, resourceID int64) error
}

// Milestones is how other modules attach a project's milestones.
type Milestones interface {
	// Milestone returns milestone id of the project as GitLab renders it;
	// ErrMilestoneNotFound when the project has no such milestone.
	Milestone(ctx context.Context, projectID, id int64) (MilestoneView, error)
	// Assignable is a milestone an issue or a merge request of the project
	// may take: the project's own, or one of a group the project is in (its
	// group or a group above). ErrMilestoneNotFound otherwise.
	Assignable(ctx context.Context, projectID, id int64) (MilestoneView, error)
	// ByTitle returns the project's milestone of that title (list filters).
	ByTitle(ctx context.Context, projectID int64, title string) (MilestoneView, error)
}

// Module is the issues module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("issues",
		fennec.Tables(internal.Tables()...),
		fennec.Tables(internal.LabelEventTables()...),
		fennec.Migrations(internal.Migrations()...),
		fx.Provide(internal.NewService,
			func(s *internal.Service) Labels { return s },
			func(s *internal.Service) Milestones { return s }),
		// closes_issues and the merge message of merge requests, which do
		// not import this module: the collab contract's seam.
		collab.ProvideCloser(func(s *internal.Service) target.Closer { return s }),
		projects.ProvideOpenIssuesCounter(func(s *internal.Service) projects.OpenIssuesCounter { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideRoutes(internal.NewLabelEventRoutes),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideSubscribers(internal.LabelEventSubscribers),
		fennec.ProvideSubscribers(internal.GroupSubscribers),
		collab.ProvideKinds(internal.Kinds),
	)
}
