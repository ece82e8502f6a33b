package internal

// Stars: a signed-in user who can see a project may star it once. The stars
// table's unique "star" index (user/project) and bbolt's single writer keep
// star_count exact under concurrent requests.

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// StarProject stars a project for the caller (project.Service).
func (s *Service) StarProject(ctx context.Context, ref string) (project.Project, error) {
	return s.recordOf(ctx)(s.setStar(ctx, ref, true))
}

// UnstarProject unstars a project for the caller (project.Service).
func (s *Service) UnstarProject(ctx context.Context, ref string) (project.Project, error) {
	return s.recordOf(ctx)(s.setStar(ctx, ref, false))
}

// setStar stars (on) or unstars the project for the caller. It is
// project.ErrUnchanged (304) when the state does not change; otherwise
// star_count is recounted from the stars table in the same transaction.
func (s *Service) setStar(ctx context.Context, ref string, on bool) (*resolved, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	pr := auth.FromContext(ctx)
	if pr.IsAnonymous() {
		return nil, project.ErrForbidden // stars are a user's
	}
	uid := pr.UserID()
	key := store.IDString(uid) + "/" + store.IDString(r.p.ID)
	changed := false
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		changed = false // set per run: the function may run again
		p, err := projects.Get(tx, r.p.ID)
		if err != nil {
			return err
		}
		st, err := stars.GetBy(tx, "star", key)
		switch {
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		case on && err == nil, !on && err != nil:
			return nil // already in the wanted state
		case on:
			err = stars.Insert(tx, &Star{UserID: uid, ProjectID: p.ID})
		default:
			err = stars.Delete(tx, st.ID)
		}
		if err != nil {
			return err
		}
		ids, err := stars.IDsBy(tx, "project", store.IDString(p.ID))
		if err != nil {
			return err
		}
		p.StarCount = len(ids)
		changed = true
		return projects.Update(tx, p)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !changed {
		return nil, project.ErrUnchanged
	}
	return s.resolve(ctx, store.IDString(r.p.ID))
}
