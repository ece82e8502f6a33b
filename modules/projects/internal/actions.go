package internal

import (
	"context"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
)

// registerActions adds star, archive, fork, share, hooks and the project
// users list. Uploads need the configuration and are registered by
// NewUploadRoutes.
func (s *Service) registerActions(a *api.API) {
	s.registerStars(a)
	s.registerArchive(a)
	s.registerFork(a)
	s.registerShare(a)
	s.registerHooks(a)
	s.registerProjectUsers(a)
	s.registerProjectLists(a)
	s.registerTransfer(a)
	s.registerMembersAll(a)
}

// actionOutput renders the project id as the caller now sees it, the answer
// of every project action.
func (s *Service) actionOutput(ctx context.Context, id uint64) (*projectOutput, error) {
	r, err := s.resolve(ctx, u64(id))
	if err != nil {
		return nil, err
	}
	v := s.render(ctx, r)
	return &projectOutput{Body: &v}, nil
}

// forkedFrom is the source of a fork when the caller may see it (GitLab
// hides a source the caller cannot read), else nil.
func (s *Service) forkedFrom(ctx context.Context, p *Project) *ForkedFromView {
	if p.ForkedFromID == 0 {
		return nil
	}
	pr := auth.FromContext(ctx)
	var src *Project
	var ns *Namespace
	visible := false
	_ = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if src, err = projects.Get(tx, p.ForkedFromID); err != nil {
			return err
		}
		if ns, err = namespaces.Get(tx, src.NamespaceID); err != nil {
			return err
		}
		visible = canSee(pr, src, levelsOf(tx, pr, src, s.now()))
		return nil
	})
	if !visible {
		return nil
	}
	ni, err := s.namespaceInfo(ctx, ns)
	if err != nil {
		return nil
	}
	sv := s.simpleView(ctx, src, ni)
	return &ForkedFromView{ID: sv.ID, Name: sv.Name, NameWithNamespace: sv.NameWithNamespace, Path: sv.Path,
		PathWithNamespace: sv.PathWithNamespace, HTTPURLToRepo: sv.HTTPURLToRepo, WebURL: sv.WebURL}
}
