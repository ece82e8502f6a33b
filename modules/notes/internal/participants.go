package internal

// A noteable's participants (GitLab 10.x's GET .../participants, for the
// kinds that ask for it): the people its conversation involves, those
// Subscribed counts as taking part (author, assignees, commenters,
// mentioned), each only if they may see the noteable.

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/notes/noteable"
)

type participantsOutput struct {
	api.PageHeaders
	Body []identity.BasicUser
}

// participantIDs are n's participants, each once: the author, the
// assignees, the commenters in the order of their notes, then those
// mentioned (in a description or a note) in the order they were first
// mentioned. System notes make nobody a participant, as for Subscribed:
// recording a change is not taking part.
func participantIDs(tx *store.Tx, n noteable.Noteable) ([]int64, error) {
	out := append([]int64{n.AuthorID}, n.AssigneeIDs...)
	list, err := noteableNotes(tx, n.Type, n.ID)
	if err != nil {
		return nil, err
	}
	type joined struct {
		user  int64
		order uint64 // a note's or subscription row's id: both grow with time
		note  bool
	}
	var later []joined
	for _, note := range list {
		if !note.System {
			later = append(later, joined{note.AuthorID, note.ID, true})
		}
	}
	ids, err := subscriptions.IDsBy(tx, "noteable", noteableKey(n.Type, n.ID))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		sub, err := subscriptions.Get(tx, id)
		if err != nil {
			return nil, err
		}
		if sub.Participant {
			later = append(later, joined{sub.UserID, sub.ID, false})
		}
	}
	// Notes and subscription rows are numbered apart: notes first.
	slices.SortStableFunc(later, func(a, b joined) int {
		if a.note != b.note {
			if a.note {
				return -1
			}
			return 1
		}
		return int(a.order) - int(b.order)
	})
	for _, j := range later {
		out = append(out, j.user)
	}
	seen := map[int64]bool{}
	uniq := out[:0]
	for _, u := range out {
		if u > 0 && !seen[u] {
			seen[u] = true
			uniq = append(uniq, u)
		}
	}
	return uniq, nil
}

// participants answers GET /projects/:id/<kind>/:ref/participants: the
// participants the caller's noteable has who may see it (a confidential
// issue's: Reporter+, its author and assignees), as basic users.
func (s *Service) participants(ctx context.Context, k noteable.Kind, in *listInput) (*participantsOutput, error) {
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

func (s *Service) registerParticipants(a *api.API, k noteable.Kind) {
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
