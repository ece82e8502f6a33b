package collab

import (
	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/collab/internal"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// KindsGroup is the fx value group of the registered target kinds.
const KindsGroup = "fennec.collab.kinds"

// ProvideKinds registers a module's target kinds (target.Kind, one per
// type it owns: its notes, threads, award emoji, participants, todos and
// feed entries); ctor is a constructor of []target.Kind whose parameters
// fx fills.
func ProvideKinds(ctor any) fx.Option {
	return fx.Provide(fx.Annotate(ctor, fx.ResultTags(`group:"`+KindsGroup+`,flatten"`)))
}

// ProvideCloser registers the issue closer (target.Closer) of the module
// that owns issues; ctor is a constructor of target.Closer whose parameters
// fx fills. One module provides it; without it, nothing is closed by the
// targets that close issues.
func ProvideCloser(ctor any) fx.Option {
	return fx.Provide(ctor)
}

// ProvideLabels registers the labels and milestones (target.Labels,
// target.Milestones) of the module that keeps them; ctor is a constructor
// whose parameters fx fills, returning both. One module provides them;
// without it, targets have no labels or milestones.
func ProvideLabels(ctor any) fx.Option {
	return fx.Provide(ctor)
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
		fx.Provide(internal.NewService, func(s *internal.Service) target.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideRoutes(internal.NewTodoRoutes),
		fx.Invoke(fx.Annotate((*internal.Service).SetKinds, fx.ParamTags("", `group:"`+KindsGroup+`"`))),
		fennec.ProvideSubscribers(internal.Subscribers),
	)
}
