package internal

// A noteable's participants (GitLab 10.x's GET .../participants, for the
// kinds that ask for it): the people its conversation involves, those
// Subscribed counts as taking part (author, assignees, commenters,
// mentioned), each only if they may see the noteable.

import (
	"context"
	"errors"
	"slices"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
)

// participantIDs are n's participants, each once: the author, the
// assignees, the commenters in the order of their notes, then those
// mentioned (in a description or a note) in the order they were first
// mentioned. System notes make nobody a participant, as for Subscribed:
// recording a change is not taking part.
func participantIDs(tx *store.Tx, n target.Noteable) ([]int64, error) {
	out := append([]int64{n.AuthorID}, n.AssigneeIDs...)
	list, err := noteableNotes(tx, n.Type, n.ID)
	if err != nil {
		return nil, err
	}
	type joined struct {
		user  int64
		order int64 // a note's or subscription row's id: both grow with time
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

// Participants implements target.Service: the participants of the target
// w names who may see it (a confidential issue's: Reporter+, its author
// and assignees), a page of them and how many there are.
func (s *Service) Participants(ctx context.Context, w target.Where, page target.Page) ([]identity.UserInfo, int, error) {
	_, _, n, err := s.locate(ctx, w)
	if err != nil {
		return nil, 0, err
	}
	var ids []int64
	if err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err = participantIDs(tx, n)
		return err
	}); err != nil {
		return nil, 0, err
	}
	var users []identity.UserInfo
	for _, id := range ids {
		u, err := s.users.UserByID(ctx, id)
		if errors.Is(err, identity.ErrUserNotFound) {
			continue // deleted
		}
		if err != nil {
			return nil, 0, err
		}
		ok, err := s.canSee(ctx, u, n)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			users = append(users, u)
		}
	}
	return store.Window(users, page.Offset, page.Limit), len(users), nil
}
