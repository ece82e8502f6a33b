package internal

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
)

type participantsOutput struct {
	api.PageHeaders
	Body []identity.BasicUser
}

// participants answers GET /projects/:id/<kind>/:ref/participants: the
// participants the caller's noteable has who may see it (a confidential
// issue's: Reporter+, its author and assignees), as basic users.
func (s *Service) participants(ctx context.Context, k target.Kind, in *listInput) (*participantsOutput, error) {
	_, n, err := s.resolve(ctx, k, in.ID)
	if err != nil {
		return nil, err
	}
	var ids []int64
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err = participantIDs(tx, n)
		return err
	}); err != nil {
		return nil, err
	}
	var users []identity.UserInfo
	for _, id := range ids {
		u, err := s.users.UserByID(ctx, id)
		if errors.Is(err, identity.ErrUserNotFound) {
			continue // deleted
		}
		if err != nil {
			return nil, err
		}
		ok, err := s.canSee(ctx, u, n)
		if err != nil {
			return nil, err
		}
		if ok {
			users = append(users, u)
		}
	}
	base := api.ExternalURLFrom(ctx)
	out := &participantsOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(users)), Body: []identity.BasicUser{}}
	for _, u := range api.Window(users, in.PageParams) {
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
