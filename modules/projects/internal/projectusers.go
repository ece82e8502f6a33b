package internal

// GET /projects/:id/users: the users with access to a project through
// membership (GitLab's project.team.users): the owner of a personal
// namespace, project members, members of the owning group and of groups the
// project is shared with. Expired memberships and shares do not count.

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// projectTeamIDs collects the ids of the users with a membership on p.
func (s *Service) projectTeamIDs(ctx context.Context, p *Project) ([]int64, error) {
	now := s.now()
	set := map[int64]bool{}
	err := s.db.View(ctx, func(tx *store.Tx) error {
		addMembers := func(kind string, source int64) error {
			ids, err := members.IDsBy(tx, "source", sourceKey(kind, source))
			if err != nil {
				return err
			}
			for _, id := range ids {
				m, err := members.Get(tx, id)
				if err != nil {
					return err
				}
				if m.AccessLevel >= project.Guest && (m.ExpiresAt == nil || !now.After(*m.ExpiresAt)) {
					set[m.UserID] = true
				}
			}
			return nil
		}
		ns, err := namespaces.Get(tx, p.NamespaceID)
		if err != nil {
			return err
		}
		switch ns.Kind {
		case KindUser:
			set[ns.OwnerID] = true
		case KindGroup:
			for _, gid := range groupAndAncestorIDs(tx, ns.ID) {
				if err := addMembers(KindGroup, gid); err != nil {
					return err
				}
			}
		}
		if err := addMembers("project", p.ID); err != nil {
			return err
		}
		for _, sh := range p.SharedWith {
			if sh.ExpiresAt != nil && now.After(*sh.ExpiresAt) {
				continue
			}
			for _, gid := range groupAndAncestorIDs(tx, sh.GroupID) {
				if err := addMembers(KindGroup, gid); err != nil {
					return err
				}
			}
		}
		return nil
	})
	ids := make([]int64, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, err
}

// projectUsers is a page of the team in id order, and its size. Without
// search only the page's users are looked up; with it every member is, to
// filter by username or name.
func (s *Service) projectUsers(ctx context.Context, ref, search string, offset, limit int) ([]identity.UserInfo, int, error) {
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, 0, err
	}
	ids, err := s.projectTeamIDs(ctx, r.p)
	if err != nil {
		return nil, 0, err
	}
	q := strings.ToLower(strings.TrimSpace(search))
	candidates := ids
	if q == "" {
		candidates = store.Window(ids, offset, limit)
	}
	var users []identity.UserInfo
	for _, id := range candidates {
		u, err := s.users.UserByID(ctx, id)
		if errors.Is(err, identity.ErrUserNotFound) {
			continue // deleted; its memberships go with the user's cleanup
		}
		if err != nil {
			return nil, 0, err
		}
		if q != "" && !strings.Contains(strings.ToLower(u.Username), q) && !strings.Contains(strings.ToLower(u.Name), q) {
			continue
		}
		users = append(users, u)
	}
	if q == "" {
		return users, len(ids), nil
	}
	return store.Window(users, offset, limit), len(users), nil
}
