package internal

import (
	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
)

// NewRoutes registers the notes operations of every registered kind.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "notes", Register: s.register}
}

func (s *Service) register(a *api.API) {
	a.MapError(ErrNoteNotFound, func(error) *api.Error { return api.NotFound("Note") })
	for _, k := range s.kinds {
		s.registerKind(a, k)
	}
}
