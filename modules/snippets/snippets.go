package snippets

import (
	"go.uber.org/fx"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/modules/notes"
	"github.com/fennec-forge/fennec/modules/snippets/internal"
)

// ErrNotFound: no such snippet, or one the caller may not see; answered
// 404 Snippet Not Found.
var ErrNotFound = internal.ErrSnippetNotFound

// NoteableType is the noteable_type of notes on project snippets.
const NoteableType = internal.NoteableType

// Module is the snippets module for fennec.WithModules.
func Module() fennec.Module {
	return fennec.NewModule("snippets",
		fennec.Tables(internal.Tables()...),
		fennec.Migrations(internal.Migrations()...),
		fx.Provide(internal.NewService),
		fennec.ProvideRoutes(internal.NewRoutes),
		fennec.ProvideSubscribers(internal.Subscribers),
		notes.ProvideKinds(internal.NoteKinds),
	)
}
