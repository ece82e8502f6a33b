package internal

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// resolvedGroup is a group with the caller's (unexpired) membership level,
// inherited from the groups above it.
type resolvedGroup struct {
	g     *Namespace
	level int
}

// isOwner: Owner of the group, or an administrator.
func (r *resolvedGroup) isOwner(p *auth.Principal) bool {
	return p.IsAdmin() || r.level >= project.Owner
}

// findGroup finds a group by number or path (case-insensitive).
func findGroup(tx *store.Tx, ref string) (*Namespace, error) {
	id, path := parseRef(ref)
	if id > 0 {
		g, err := namespaces.Get(tx, id)
		if err != nil {
			return nil, err
		}
		if g.Kind != KindGroup {
			return nil, store.ErrNotFound
		}
		return g, nil
	}
	if strings.TrimSpace(path) == "" {
		return nil, store.ErrNotFound
	}
	return findGroupByPath(tx, path)
}

// canSeeGroup: administrators and members (inherited membership counts)
// always; public groups anyone; internal groups signed-in users who are
// not external; and anyone with a membership below the group: in one of
// its subgroups, or on a project of the group or of a subgroup, as
// GitLab's GroupPolicy does. A public project alone does not reveal a
// private group.
func canSeeGroup(tx *store.Tx, p *auth.Principal, g *Namespace, level int, now time.Time) bool {
	switch {
	case p.IsAdmin(), level >= project.Guest, g.Visibility == project.Public:
		return true
	case p.IsAnonymous():
		return false
	case g.Visibility == project.Internal && !p.User.External:
		return true
	}
	return membershipBelow(tx, p.UserID(), g.ID, now)
}

// membershipBelow reports whether user has an unexpired membership on a
// group below groupID or on a project in groupID or below it. It walks the
// user's memberships upwards, so its cost follows what the user belongs
// to, not the size of the group.
func membershipBelow(tx *store.Tx, user, groupID int64, now time.Time) bool {
	mids, err := members.IDsBy(tx, "user", store.IDString(user))
	if err != nil {
		return false
	}
	for _, mid := range mids {
		m, err := members.Get(tx, mid)
		if err != nil || (m.ExpiresAt != nil && now.After(*m.ExpiresAt)) {
			continue
		}
		var start int64
		switch m.SourceKind {
		case KindGroup:
			g, err := namespaces.Get(tx, m.SourceID)
			if err != nil {
				continue
			}
			start = g.ParentID // the group itself is a direct membership
		case "project":
			proj, err := projects.Get(tx, m.SourceID)
			if err != nil {
				continue
			}
			start = proj.NamespaceID
		}
		for i := 0; i <= maxGroupDepth && start != 0; i++ {
			if start == groupID {
				return true
			}
			n, err := namespaces.Get(tx, start)
			if err != nil || n.Kind != KindGroup {
				break
			}
			start = n.ParentID
		}
	}
	return false
}

// resolveGroup finds a group the caller may see; anything else is 404 Group
// Not Found, never 403.
func (s *Service) resolveGroup(ctx context.Context, ref string) (*resolvedGroup, error) {
	return s.resolveGroupWith(ctx, func(tx *store.Tx) (*Namespace, error) { return findGroup(tx, ref) })
}

// resolveGroupPath is resolveGroup for a full path only: a web page's
// "/groups/123" is the group whose path is 123, never the group of id 123.
func (s *Service) resolveGroupPath(ctx context.Context, path string) (*resolvedGroup, error) {
	return s.resolveGroupWith(ctx, func(tx *store.Tx) (*Namespace, error) { return findGroupByPath(tx, path) })
}

func (s *Service) resolveGroupWith(ctx context.Context, find func(*store.Tx) (*Namespace, error)) (*resolvedGroup, error) {
	pr := auth.FromContext(ctx)
	var r resolvedGroup
	err := s.db.View(ctx, func(tx *store.Tx) error {
		g, err := find(tx)
		if err != nil {
			return err
		}
		r.g = g
		now := s.now()
		if !pr.IsAnonymous() {
			chain, err := groupChain(tx, g)
			if err != nil {
				return err
			}
			r.level = chainLevel(tx, chain, pr.UserID(), now)
		}
		if !canSeeGroup(tx, pr, g, r.level, now) {
			return store.ErrNotFound
		}
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrGroupNotFound
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// visibleProjects loads the projects with the given ids that the caller may
// see, newest first, with their levels and namespaces.
func visibleProjects(tx *store.Tx, p *auth.Principal, ids []int64, now time.Time) ([]*resolved, error) {
	sorted := append([]int64(nil), ids...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] > sorted[j] })
	out := make([]*resolved, 0, len(sorted))
	for _, id := range sorted {
		proj, err := projects.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		l := levelsOf(tx, p, proj, now)
		if !canSee(p, proj, l) {
			continue
		}
		ns, err := namespaces.Get(tx, proj.NamespaceID)
		if err != nil {
			return nil, err
		}
		out = append(out, &resolved{p: proj, l: l, ni: nsInfo{ns: ns}})
	}
	return out, nil
}

// groupDetail is what a single group shows besides itself: its projects
// and the projects shared with it that the caller may see, newest first,
// at most groupDetailProjects of each, namespaces complete.
func (s *Service) groupDetail(ctx context.Context, g *Namespace) (own, shared []*resolved, err error) {
	pr := auth.FromContext(ctx)
	err = s.db.View(ctx, func(tx *store.Tx) error {
		now := s.now()
		ids, err := projects.IDsBy(tx, "namespace", store.IDString(g.ID))
		if err != nil {
			return err
		}
		if own, err = visibleProjects(tx, pr, ids, now); err != nil {
			return err
		}
		if ids, err = projects.IDsBy(tx, "shared_with", store.IDString(g.ID)); err != nil {
			return err
		}
		shared, err = visibleProjects(tx, pr, ids, now)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if own, err = s.withNamespaces(ctx, own[:min(len(own), groupDetailProjects)]); err != nil {
		return nil, nil, err
	}
	if shared, err = s.withNamespaces(ctx, shared[:min(len(shared), groupDetailProjects)]); err != nil {
		return nil, nil, err
	}
	return own, shared, nil
}

// groupDetailProjects caps the project lists of a single group's view
// (the full lists are GET /groups/:id/projects and /projects).
const groupDetailProjects = 100

// matchesGroup applies search (name or path, case-insensitive).
func matchesGroup(g *Namespace, search string) bool {
	q := strings.ToLower(strings.TrimSpace(search))
	return q == "" || strings.Contains(strings.ToLower(g.Name), q) || strings.Contains(strings.ToLower(g.Path), q)
}
