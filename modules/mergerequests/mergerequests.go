package mergerequests

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/mergerequests/internal"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
)

// Module is the merge requests module for fennec.WithModules. It provides
// mergerequest.Service, the contract every caller (the HTTP adapter, the
// merge when pipeline succeeds subscriber included) goes through.
func Module() fennec.Module {
	return fennec.NewModule("mergerequests",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fennec.Provide(internal.NewService,
			func(s *internal.Service) mergerequest.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.ProvideRoutes(internal.NewCommitMRRoutes),
		fennec.ProvideRoutes(internal.NewMilestoneRoutes),
		fennec.ProvideSubscribers(internal.Subscribers),
		collab.ProvideKinds(internal.Kinds),
		fennec.ProvideRoutes(internal.NewLabelEventRoutes),
	)
}
