package internal

// Stars: a signed-in user who can see a project may star it once. The stars
// table's unique "star" index (user/project) and bbolt's single writer keep
// star_count exact under concurrent requests.

import (
	"context"
	"errors"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

func (s *Service) registerStars(a *api.API) {
	tags := []string{"projects"}
	api.Register(a, api.Op{ID: "star-project", Method: http.MethodPost, Path: "/projects/{id}/star", Tags: tags,
		Summary: "Star a project; 304 when already starred", Access: api.SignedIn},
		func(ctx context.Context, in *ProjectPath) (*projectOutput, error) { return s.setStar(ctx, in.ID, true) })
	api.Register(a, api.Op{ID: "unstar-project", Method: http.MethodPost, Path: "/projects/{id}/unstar", Tags: tags,
		Summary: "Unstar a project; 304 when not starred", Access: api.SignedIn},
		func(ctx context.Context, in *ProjectPath) (*projectOutput, error) {
			return s.setStar(ctx, in.ID, false)
		})
}

// setStar stars (on) or unstars the project for the caller. It answers 304
// when the state does not change; otherwise star_count is recounted from the
// stars table in the same transaction.
func (s *Service) setStar(ctx context.Context, ref string, on bool) (*projectOutput, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	uid := uint64(auth.FromContext(ctx).UserID())
	key := u64(uid) + "/" + u64(r.p.ID)
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
		ids, err := stars.IDsBy(tx, "project", u64(p.ID))
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
		return nil, api.NotModified
	}
	return s.actionOutput(ctx, r.p.ID)
}
