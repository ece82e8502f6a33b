package internal

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
)

func noteFor(n target.Noteable, author int64, body string, system bool, at time.Time) *Note {
	return &Note{ProjectID: n.ProjectID, NoteableType: n.Type, NoteableID: n.ID, NoteableRef: n.Ref(), NoteableIID: n.IID,
		AuthorID: author, Body: body, System: system, CreatedAt: at, UpdatedAt: at}
}

func noteEvent(action event.NoteAction, n *Note) event.NoteEvent {
	e := event.NoteEvent{Action: action, NoteID: n.ID, Body: n.Body, ProjectID: n.ProjectID, NoteableType: n.NoteableType,
		NoteableID: n.NoteableID, NoteableIID: n.NoteableIID, AuthorID: n.AuthorID, System: n.System,
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, Type: n.Type, DiscussionID: n.DiscussionID}
	if p := n.Position; p != nil {
		e.Position = &event.NotePosition{BaseSHA: p.BaseSHA, StartSHA: p.StartSHA, HeadSHA: p.HeadSHA, PositionType: p.PositionType,
			OldPath: p.OldPath, NewPath: p.NewPath, OldLine: p.OldLine, NewLine: p.NewLine}
	}
	return e
}

// System implements target.Service.
func (s *Service) System(ctx context.Context, n target.Noteable, authorID int64, body string) error {
	if n.ID <= 0 || n.Type == "" || body == "" {
		return errors.New("notes: a system note needs a noteable and a body")
	}
	at := s.now().UTC()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		note := noteFor(n, authorID, body, true, at)
		if err := insertNote(tx, note); err != nil {
			return err
		}
		return s.bus.Publish(tx, noteEvent(event.NoteCreated, note))
	})
}

// UserNotesCounts implements target.Service.
func (s *Service) UserNotesCounts(ctx context.Context, noteableType string, ids []int64) (map[int64]int, error) {
	out := make(map[int64]int, len(ids))
	err := s.db.View(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			out[id] = userCount(tx, noteableType, id)
		}
		return nil
	})
	return out, err
}

// Mentioned implements target.Service: a Mentioned todo for each user
// @mentioned in text who may see n (AddTodos skips the others and the
// author), and those users take part in n's conversation from then on.
func (s *Service) Mentioned(ctx context.Context, n target.Noteable, authorID int64, text string) error {
	return s.mention(ctx, n, authorID, 0, text, nil)
}

// mention is Mentioned, leaving out the names in skip (those the text
// mentioned before an edit: GitLab gives a todo for a new mention only);
// noteID is the note whose text it is (0: the noteable's description).
func (s *Service) mention(ctx context.Context, n target.Noteable, authorID, noteID int64, text string, skip []string) error {
	names := target.Mentions(text)
	if len(names) == 0 {
		return nil
	}
	var add []target.NewTodo
	var mentioned []int64
	for _, name := range names {
		if slices.Contains(skip, name) {
			continue
		}
		u, err := s.users.UserByUsername(ctx, name)
		if errors.Is(err, identity.ErrUserNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if u.ID == authorID {
			continue
		}
		ok, err := s.canSee(ctx, u, n)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		mentioned = append(mentioned, u.ID)
		add = append(add, target.NewTodo{UserID: u.ID, AuthorID: authorID, Action: target.Mentioned, Body: text,
			NoteID: noteID, Target: n.Target()})
	}
	if len(add) == 0 {
		return nil
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		for _, id := range mentioned {
			if err := participate(tx, n, id); err != nil {
				return err
			}
		}
		return s.AddTodos(tx.Context(), add...)
	})
}

// canSee reports whether user u may see n: an active user who may read its
// project and, for a confidential noteable, a Reporter+ member (or an
// administrator), its author or an assignee.
func (s *Service) canSee(ctx context.Context, u identity.UserInfo, n target.Noteable) (bool, error) {
	p, err := auth.ForUser(&auth.User{ID: u.ID, Username: u.Username, Admin: u.Admin, Blocked: u.State != "active", External: u.External})
	if err != nil {
		return false, nil // blocked
	}
	info, err := s.access.RequireID(auth.WithPrincipal(ctx, p), n.ProjectID, projects.ReadProject)
	if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !n.Confidential {
		return true, nil
	}
	return info.Level >= projects.Reporter || u.ID == n.AuthorID || slices.Contains(n.AssigneeIDs, u.ID), nil
}

// participate records that user takes part in n's conversation.
func participate(tx *store.Tx, n target.Noteable, user int64) error {
	sub, err := subscriptions.GetBy(tx, "key", subscriptionKey(n.Type, n.ID, user))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return subscriptions.Insert(tx, &Subscription{ProjectID: n.ProjectID, NoteableType: n.Type, NoteableID: n.ID, UserID: user, Participant: true})
	case err != nil:
		return err
	case sub.Participant:
		return nil
	}
	sub.Participant = true
	return subscriptions.Update(tx, sub)
}

// Subscribe implements target.Service.
func (s *Service) Subscribe(ctx context.Context, n target.Noteable, userID int64, subscribed bool) (changed bool, err error) {
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		changed = false
		sub, err := subscriptionOf(tx, n, userID)
		if err != nil {
			return err
		}
		now, err := isSubscribed(tx, n, userID, sub)
		if err != nil || now == subscribed {
			return err
		}
		changed = true
		if sub == nil {
			return subscriptions.Insert(tx, &Subscription{ProjectID: n.ProjectID, NoteableType: n.Type, NoteableID: n.ID,
				UserID: userID, Subscribed: &subscribed})
		}
		sub.Subscribed = &subscribed
		return subscriptions.Update(tx, sub)
	})
	return changed, err
}

// subscriptionOf is the user's row for n, nil when there is none.
func subscriptionOf(tx *store.Tx, n target.Noteable, user int64) (*Subscription, error) {
	sub, err := subscriptions.GetBy(tx, "key", subscriptionKey(n.Type, n.ID, user))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return sub, err
}

// isSubscribed is GitLab's subscribed?: the explicit choice when there is
// one, else whether the user takes part (author, assignee, mentioned,
// commenter). sub may be nil.
func isSubscribed(tx *store.Tx, n target.Noteable, user int64, sub *Subscription) (bool, error) {
	if sub != nil && sub.Subscribed != nil {
		return *sub.Subscribed, nil
	}
	if (sub != nil && sub.Participant) || (user != 0 && (user == n.AuthorID || slices.Contains(n.AssigneeIDs, user))) {
		return true, nil
	}
	return commented(tx, n.Type, n.ID, user)
}

// Subscribed implements target.Service.
func (s *Service) Subscribed(ctx context.Context, n target.Noteable, userID int64) (bool, error) {
	if userID <= 0 {
		return false, nil
	}
	var out bool
	err := s.db.View(ctx, func(tx *store.Tx) error {
		sub, err := subscriptionOf(tx, n, userID)
		if err != nil {
			return err
		}
		out, err = isSubscribed(tx, n, userID, sub)
		return err
	})
	return out, err
}

// Subscribers implements target.Service: ascending user ids.
func (s *Service) Subscribers(ctx context.Context, n target.Noteable) ([]int64, error) {
	var out []int64
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := subscriptions.IDsBy(tx, "noteable", noteableKey(n.Type, n.ID))
		if err != nil {
			return err
		}
		rows := map[int64]*Subscription{}
		for _, id := range ids {
			sub, err := subscriptions.Get(tx, id)
			if err != nil {
				return err
			}
			rows[sub.UserID] = sub
		}
		candidates := append([]int64{n.AuthorID}, n.AssigneeIDs...)
		for u := range rows {
			candidates = append(candidates, u)
		}
		list, err := noteableNotes(tx, n.Type, n.ID)
		if err != nil {
			return err
		}
		for _, note := range list {
			if !note.System {
				candidates = append(candidates, note.AuthorID)
			}
		}
		for _, u := range candidates {
			if u <= 0 || slices.Contains(out, u) {
				continue
			}
			ok, err := isSubscribed(tx, n, u, rows[u])
			if err != nil {
				return err
			}
			if ok {
				out = append(out, u)
			}
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// Subscriptions implements target.Service: the rows of n that hold an
// explicit choice (Subscribed set), by user.
func (s *Service) Subscriptions(ctx context.Context, n target.Noteable) (map[int64]bool, error) {
	out := map[int64]bool{}
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := subscriptions.IDsBy(tx, "noteable", noteableKey(n.Type, n.ID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			sub, err := subscriptions.Get(tx, id)
			if err != nil {
				return err
			}
			if sub.Subscribed != nil {
				out[sub.UserID] = *sub.Subscribed
			}
		}
		return nil
	})
	return out, err
}

// Remove implements target.Service: the target's notes, awards,
// subscriptions and todos, in one transaction.
func (s *Service) Remove(ctx context.Context, t target.Target) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if err := removeNoteable(tx, t.Type, t.ID); err != nil {
			return err
		}
		_, err := todosTable.DeleteBy(tx, "target", targetKey(t.Type, t.ID))
		return err
	})
}
