package internal

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
)

type participantsOutput struct {
	api.PageHeaders
	Body []identity.BasicUser
}

// participants answers GET /projects/:id/<kind>/:ref/participants.
func (s *Service) participants(ctx context.Context, k target.Kind, in *listInput) (*participantsOutput, error) {
	users, total, err := s.Participants(ctx, where(ctx, k, in.ID), target.Page{Offset: in.Offset(), Limit: in.Limit()})
	if err != nil {
		return nil, err
	}
	base := api.ExternalURLFrom(ctx)
	out := &participantsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, total), Body: []identity.BasicUser{}}
	for _, u := range users {
		out.Body = append(out.Body, identity.NewBasicUser(base, u))
	}
	return out, nil
}

func (s *Service) registerParticipants(a *api.API, k target.Kind) {
	if !k.Participants {
		return
	}
	api.Register(a, api.Op{ID: "list-" + k.Path + "-participants", Method: http.MethodGet,
		Path: "/projects/{id}/" + k.Path + "/{" + k.Param + "}/participants", Tags: []string{k.Path}, Access: api.Public,
		Summary: "The participants of a " + k.Type + " the caller may see"},
		func(ctx context.Context, in *listInput) (*participantsOutput, error) {
			return s.participants(ctx, k, in)
		})
}
