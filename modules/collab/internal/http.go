package internal

import (
	"errors"
	"strings"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

// NewRoutes registers the notes operations (notes, discussions, award
// emoji, participants) of every registered kind that has notes. The kinds
// are the service's by then: the module's fennec.Use hands them over while
// the app is assembled, before any routes register.
func NewRoutes(s *Service) fennec.Routes {
	s.SetPresenter(presenter{s})
	return fennec.Routes{Name: "notes", Register: s.register}
}

func (s *Service) register(a *api.API) {
	a.MapError(target.ErrNoteNotFound, func(error) *api.Error { return api.NotFound("Note") })
	a.MapError(ErrDiscussionNotFound, func(error) *api.Error { return api.NotFound("Discussion") })
	a.MapError(target.ErrBadPosition, func(error) *api.Error { return errBadPosition })
	a.MapError(ErrAwardNotFound, func(error) *api.Error { return api.NotFound("Award Emoji") })
	a.MapError(target.ErrMissing, func(err error) *api.Error { return api.Missing(target.ParamsOf(err)...) })
	a.MapError(target.ErrBadParam, func(err error) *api.Error { return api.Invalid(strings.Join(target.ParamsOf(err), ", ")) })
	a.MapError(target.ErrBadRequest, func(err error) *api.Error {
		var e *target.BadRequestError
		errors.As(err, &e)
		return badRequest(e.Reason)
	})
	for _, k := range s.noteKinds {
		s.registerKind(a, k)
		s.registerDiscussions(a, k)
		s.registerAwards(a, k)
		s.registerParticipants(a, k)
		s.registerTargetOps(a, k)
	}
}
