package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// ResolveGroup finds a group by id or path as the caller of ctx sees it; a
// group they may not see is ErrGroupNotFound (projects.Teams).
func (s *Service) ResolveGroup(ctx context.Context, ref string) (project.GroupInfo, error) {
	r, err := s.resolveGroup(ctx, ref)
	if err != nil {
		return project.GroupInfo{}, err
	}
	level := r.level
	if auth.FromContext(ctx).IsAdmin() {
		level = project.Owner
	}
	ni, err := s.namespaceInfo(ctx, r.g)
	if err != nil {
		return project.GroupInfo{}, err
	}
	return project.GroupInfo{ID: r.g.ID, Name: r.g.Name, FullPath: ni.path, Level: level, AncestorIDs: ni.groupIDs()[1:]}, nil
}

// ProjectTeam returns the group that owns a project (0 for a personal
// namespace) and the ids of the users with a membership on it, as GET
// /projects/:id/users counts them (projects.Teams).
func (s *Service) ProjectTeam(ctx context.Context, projectID int64) (groupID int64, userIDs []int64, err error) {
	var p *Project
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if p, err = projects.Get(tx, projectID); err != nil {
			return err
		}
		ns, err := namespaces.Get(tx, p.NamespaceID)
		if err == nil && ns.Kind == KindGroup {
			groupID = ns.ID
		}
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil, project.ErrNotFound
	}
	if err != nil {
		return 0, nil, err
	}
	ids, err := s.projectTeamIDs(ctx, p)
	if err != nil {
		return 0, nil, err
	}
	userIDs = make([]int64, len(ids))
	for i, id := range ids {
		userIDs[i] = id
	}
	return groupID, userIDs, nil
}
