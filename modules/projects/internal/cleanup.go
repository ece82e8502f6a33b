package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/event"
)

// Subscribers are the projects module's event handlers.
func Subscribers(s *Service) []events.Subscriber {
	return []events.Subscriber{
		events.Subscribe("projects.user-deleted", s.onUserDeleted),
	}
}

// onUserDeleted removes what a deleted user owned here, as GitLab does: the
// projects of their personal namespace (each announced as deleted, so other
// modules drop their data too), the namespace, their memberships and stars.
// Group projects stay with their groups. Running it twice changes nothing.
func (s *Service) onUserDeleted(ctx context.Context, ev identity.UserDeleted) error {
	uid := ev.UserID
	return s.db.Update(ctx, func(tx *store.Tx) error {
		if ns, err := namespaces.GetBy(tx, "owner", store.IDString(uid)); err == nil {
			ids, err := projects.IDsBy(tx, "namespace", store.IDString(ns.ID))
			if err != nil {
				return err
			}
			for _, id := range ids {
				if _, err := members.DeleteBy(tx, "source", sourceKey("project", id)); err != nil {
					return err
				}
				if _, err := stars.DeleteBy(tx, "project", store.IDString(id)); err != nil {
					return err
				}
				if err := projects.Delete(tx, id); err != nil {
					return err
				}
				if err := s.bus.Publish(tx, event.ProjectEvent{Action: event.ProjectDeleted, ProjectID: id, UserID: ev.UserID}); err != nil {
					return err
				}
			}
			if err := namespaces.Delete(tx, ns.ID); err != nil {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		mids, err := members.IDsBy(tx, "user", store.IDString(uid))
		if err != nil {
			return err
		}
		for _, id := range mids {
			if err := members.Delete(tx, id); err != nil {
				return err
			}
		}
		sids, err := stars.IDsBy(tx, "user", store.IDString(uid))
		if err != nil {
			return err
		}
		for _, id := range sids {
			st, err := stars.Get(tx, id)
			if err != nil {
				return err
			}
			if p, err := projects.Get(tx, st.ProjectID); err == nil && p.StarCount > 0 {
				p.StarCount--
				if err := projects.Update(tx, p); err != nil {
					return err
				}
			}
			if err := stars.Delete(tx, id); err != nil {
				return err
			}
		}
		return nil
	})
}
