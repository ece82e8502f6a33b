package collab

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/collab/internal"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// Kinds is the registry of target kinds: the modules that own a kind
// contribute it (ProvideKinds), and the collab service reads them all
// once the app is assembled.
var Kinds = fennec.NewExtension[target.Kind]("fennec.collab.kinds")

// ProvideKinds registers the target kinds a module owns; ctor's parameter
// is one of the app's values (the owner's service), or fennec.None.
func ProvideKinds[D any](ctor func(D) []target.Kind) fennec.Part {
	return fennec.Contribute(Kinds, ctor)
}

// ProvideCloser registers the module that closes issues (the issues
// module), which merge requests ask through target.Closer.
func ProvideCloser[D any](ctor func(D) target.Closer) fennec.Part {
	return fennec.Provide(ctor)
}

// ProvideLabels registers the module that keeps labels and milestones.
func ProvideLabels[D any](ctor func(D) (target.Labels, target.Milestones)) fennec.Part {
	return fennec.Provide(ctor)
}

// Module is the collab module for fennec.WithModules. It provides
// target.Service.
func Module() fennec.Module {
	return fennec.NewModule("collab",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		// The kinds come from the modules that own them (issues, snippets,
		// merge requests), so a new kind needs no change here. They reach
		// the service after it is built (the routes and an invoke hand
		// them over), so an owner's kinds may be built from a service that
		// is itself built from target.Service.
		fennec.Provide(internal.NewService, func(s *internal.Service) target.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideRoutes(internal.NewTodoRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.Use(Kinds, (*internal.Service).SetKinds),
		fennec.ProvideSubscribers(internal.Subscribers),
	)
}
