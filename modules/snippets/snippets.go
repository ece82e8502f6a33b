package snippets

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/collab"
	"github.com/fennec-forge/fennec/modules/snippets/internal"
	"github.com/fennec-forge/fennec/modules/snippets/snippet"
)

// Module is the snippets module for fennec.WithModules. It provides
// snippet.Service, the contract every caller (the HTTP adapter included)
// goes through.
func Module() fennec.Module {
	return fennec.NewModule("snippets",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fennec.Provide(internal.NewService, func(s *internal.Service) snippet.Service { return s }),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvidePages(internal.NewPages),
		fennec.ProvideSubscribers(internal.Subscribers),
		collab.ProvideKinds(internal.Kinds),
	)
}
