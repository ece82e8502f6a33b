package issues

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/internal"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Module is the issues module for fennec.WithModules. It provides
// issue.Service, the contract every caller goes through, and the collab
// contract's labels, milestones and closer.
func Module() fennec.Module {
	return fennec.NewModule("issues",
		fennec.Tables(internal.Tables()...),
		fennec.Tables(internal.LabelEventTables()...),
		fennec.Migrations(internal.Migrations()...),
		fennec.Provide(internal.NewService,
			func(s *internal.Service) issue.Service { return s }),
		// The labels and milestones merge requests attach, and what a merge
		// would close: the collab contract's seams, so merge requests need
		// no import of this module.
		collab.ProvideLabels(func(s *internal.Service) (target.Labels, target.Milestones) {
			return internal.Seams{Service: s}, internal.Seams{Service: s}
		}),
		// closes_issues and the merge message of merge requests, which do
		// not import this module: the collab contract's seam.
		collab.ProvideCloser(func(s *internal.Service) target.Closer { return internal.Seams{Service: s} }),
		projects.ProvideOpenIssuesCounter(func(s *internal.Service) projects.OpenIssuesCounter { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.ProvideRoutes(internal.NewLabelEventRoutes),
		fennec.ProvideSubscribers(internal.Subscribers),
		fennec.ProvideSubscribers(internal.LabelEventSubscribers),
		fennec.ProvideSubscribers(internal.GroupSubscribers),
		collab.ProvideKinds(internal.Kinds),
	)
}
