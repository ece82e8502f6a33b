package internal

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// GET /projects/:id/members/all and /groups/:id/members/all (and
// .../all/:user_id): everyone with a membership-given level, not only the
// explicit members. For a project that is its members, the members of its
// group, the members of the groups it is shared with (at the lower of the
// share's and their own level) and the owner of its personal namespace (at
// Owner, the level the namespace gives them); a user reached several ways
// is listed once, at the highest level, with that membership's expiry.
// Every group counts with the groups above it: a group's list is its
// members and its ancestors'. Who may list is who may list the members.

// effectiveMembers is every user with a membership-given level on src, at
// their highest level, by user id.
func (s *Service) effectiveMembers(ctx context.Context, src *memberSource) ([]*Member, error) {
	best := map[int64]*Member{}
	now := s.now()
	consider := func(m *Member) {
		if expired(m, now) {
			return
		}
		if b, ok := best[m.UserID]; !ok || m.AccessLevel > b.AccessLevel {
			best[m.UserID] = m
		}
	}
	err := s.db.View(ctx, func(tx *store.Tx) error {
		of := func(kind string, id int64, capAt int) error {
			ids, err := members.IDsBy(tx, "source", sourceKey(kind, id))
			if err != nil {
				return err
			}
			for _, mid := range ids {
				m, err := members.Get(tx, mid)
				if err != nil {
					return err
				}
				if capAt > 0 && m.AccessLevel > capAt {
					c := *m
					c.AccessLevel = capAt
					m = &c
				}
				consider(m)
			}
			return nil
		}
		ofGroup := func(gid int64, capAt int) error {
			for _, id := range groupAndAncestorIDs(tx, gid) {
				if err := of(KindGroup, id, capAt); err != nil {
					return err
				}
			}
			return nil
		}
		if src.kind == KindGroup {
			return ofGroup(src.id, 0)
		}
		p, err := projects.Get(tx, src.id)
		if errors.Is(err, store.ErrNotFound) {
			return project.ErrNotFound
		}
		if err != nil {
			return err
		}
		if err := of(sourceProject, p.ID, 0); err != nil {
			return err
		}
		ns, err := namespaces.Get(tx, p.NamespaceID)
		if err != nil {
			return err
		}
		switch ns.Kind {
		case KindGroup:
			if err := ofGroup(ns.ID, 0); err != nil {
				return err
			}
		case KindUser:
			consider(&Member{SourceKind: sourceProject, SourceID: p.ID, UserID: ns.OwnerID, AccessLevel: project.Owner, CreatedAt: ns.CreatedAt})
		}
		for _, sh := range p.SharedWith {
			if sh.ExpiresAt != nil && now.After(*sh.ExpiresAt) {
				continue
			}
			if err := ofGroup(sh.GroupID, sh.Access); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Member, 0, len(best))
	for _, m := range best {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UserID < out[j].UserID })
	return out, nil
}

// listAllMembers is a page of everyone with a membership-given level on a
// group or project (effectiveMembers) whose username or name holds query,
// and how many there are.
func (s *Service) listAllMembers(ctx context.Context, kind, ref, query string, offset, limit int) ([]memberRow, int, error) {
	src, err := s.memberSource(ctx, kind, ref)
	if err != nil {
		return nil, 0, err
	}
	rows, err := s.effectiveMembers(ctx, src)
	if err != nil {
		return nil, 0, err
	}
	q := strings.ToLower(strings.TrimSpace(query))
	var out []memberRow
	for _, m := range rows {
		u, err := s.users.UserByID(ctx, m.UserID)
		if errors.Is(err, identity.ErrUserNotFound) {
			continue // being deleted; cleanup removes the rows
		}
		if err != nil {
			return nil, 0, err
		}
		if q != "" && !strings.Contains(strings.ToLower(u.Username), q) && !strings.Contains(strings.ToLower(u.Name), q) {
			continue
		}
		out = append(out, memberRow{m, u})
	}
	return store.Window(out, offset, limit), len(out), nil
}

// getAllMember is one user of effectiveMembers.
func (s *Service) getAllMember(ctx context.Context, kind, ref string, userID int64) (memberRow, error) {
	src, err := s.memberSource(ctx, kind, ref)
	if err != nil {
		return memberRow{}, err
	}
	rows, err := s.effectiveMembers(ctx, src)
	if err != nil {
		return memberRow{}, err
	}
	for _, m := range rows {
		if m.UserID != userID {
			continue
		}
		u, err := s.users.UserByID(ctx, userID)
		if errors.Is(err, identity.ErrUserNotFound) {
			return memberRow{}, project.ErrMemberNotFound
		}
		if err != nil {
			return memberRow{}, err
		}
		return memberRow{m, u}, nil
	}
	return memberRow{}, project.ErrMemberNotFound
}
