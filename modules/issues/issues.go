package issues

import (
	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/internal"
	"github.com/fennec-forge/fennec/modules/projects"
)

// The views of issues and labels, as GitLab 9.x renders them (what
// target.Closer's Closed.View holds is an IssueView).
type (
	IssueView = internal.IssueView
	LabelView = internal.LabelView
)

// The module's domain errors, for callers to test with errors.Is; the
// module maps them to GitLab's answers at the API edge.
var (
	ErrIssueNotFound     = internal.ErrIssueNotFound
	ErrLabelNotFound     = internal.ErrLabelNotFound
	ErrMilestoneNotFound = internal.ErrMilestoneNotFound
	ErrLabelExists       = internal.ErrLabelExists
	// ErrLabelEventNotFound: no such label event on the resource; 404
	// "Not found" (the collab contract's target.ErrLabelEventNotFound).
	ErrLabelEventNotFound = internal.ErrLabelEventNotFound
)

// Module is the issues module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("issues",
		fennec.Tables(internal.Tables()...),
		fennec.Tables(internal.LabelEventTables()...),
		fennec.Migrations(internal.Migrations()...),
		fx.Provide(internal.NewService),
		// The labels and milestones merge requests attach, and what a merge
		// would close: the collab contract's seams, so merge requests need
		// no import of this module.
		collab.ProvideLabels(func(s *internal.Service) (target.Labels, target.Milestones) {
			return internal.Seams{Service: s}, internal.Seams{Service: s}
		}),
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
