package internal

// Sharing a project with a group: the group's members get the lower of
// their group level and the share's level (levelsOf). Shares live in the
// project record (Project.SharedWith), one per group.

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/fennec-forge/fennec/core/isotime"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// shareGroupVisible: members and administrators always; public groups to anyone,
// internal ones to signed-in users who are not external.
func shareGroupVisible(tx *store.Tx, pr *auth.Principal, g *Namespace, now time.Time) bool {
	switch {
	case pr.IsAdmin():
		return true
	case !pr.IsAnonymous() && groupMemberLevel(tx, g.ID, pr.UserID(), now) >= project.Guest:
		return true
	case g.Visibility == project.Public:
		return true
	case g.Visibility == project.Internal:
		return !pr.IsAnonymous() && !pr.User.External
	}
	return false
}

// ShareProject shares a project with a group the caller can see
// (project.Service): project.ErrGroupNotFound for any other,
// ErrAlreadyShared or ErrShareOwnGroup (409) when the project is already
// shared with it or belongs to it.
func (s *Service) ShareProject(ctx context.Context, ref string, in project.ShareFields) (project.Share, error) {
	r, err := s.require(ctx, ref, project.AdminProject)
	if err != nil {
		return project.Share{}, err
	}
	var expires *time.Time
	if in.ExpiresAt != nil && *in.ExpiresAt != "" {
		// As in GitLab, access ends when the given day begins (UTC).
		day, err := isotime.Day(*in.ExpiresAt)
		if err != nil {
			return project.Share{}, project.Params(project.ErrInvalidParam, "expires_at")
		}
		expires = &day
	}
	if !validLevel(in.GroupAccess, project.Owner) {
		return project.Share{}, project.Params(project.ErrInvalidValue, "group_access")
	}
	pr := auth.FromContext(ctx)
	now := s.now()
	sh := Share{GroupID: in.GroupID, Access: in.GroupAccess, ExpiresAt: expires}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, r.p.ID)
		if err != nil {
			return project.ErrNotFound
		}
		if in.GroupID <= 0 {
			return project.ErrGroupNotFound
		}
		g, err := namespaces.Get(tx, sh.GroupID)
		if err != nil || g.Kind != KindGroup || !shareGroupVisible(tx, pr, g, now) {
			return project.ErrGroupNotFound
		}
		if slices.Contains(groupAndAncestorIDs(tx, p.NamespaceID), g.ID) {
			return project.ErrShareOwnGroup
		}
		for _, old := range p.SharedWith {
			if old.GroupID == g.ID {
				return project.ErrAlreadyShared
			}
		}
		p.SharedWith = append(p.SharedWith, sh)
		p.UpdatedAt = now.UTC()
		return projects.Update(tx, p)
	})
	if err != nil {
		return project.Share{}, err
	}
	return shareRecord(r.p.ID, sh), nil
}

// UnshareProject removes the share with a group (project.Service):
// project.ErrShareNotFound (404 Group Link Not Found) when there is none.
func (s *Service) UnshareProject(ctx context.Context, ref string, groupID int64) error {
	r, err := s.require(ctx, ref, project.AdminProject)
	if err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := projects.Get(tx, r.p.ID)
		if err != nil {
			return project.ErrNotFound
		}
		kept := make([]Share, 0, len(p.SharedWith))
		for _, sh := range p.SharedWith {
			if groupID <= 0 || sh.GroupID != groupID {
				kept = append(kept, sh)
			}
		}
		if len(kept) == len(p.SharedWith) {
			return project.ErrShareNotFound
		}
		p.SharedWith = kept
		p.UpdatedAt = s.now().UTC()
		return projects.Update(tx, p)
	})
	if errors.Is(err, store.ErrNotFound) {
		return project.ErrNotFound
	}
	return err
}
