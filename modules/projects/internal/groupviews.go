package internal

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// GroupView is the Group resource of GitLab v4: full_name and full_path
// start with the ancestors' names and paths, parent_id is a subgroup's
// parent (null for a top-level group).
// lfs_enabled and request_access_enabled are not stored per group: they
// show the instance defaults (true, false).
type GroupView struct {
	ID                   uint64  `json:"id"`
	Name                 string  `json:"name"`
	Path                 string  `json:"path"`
	Description          string  `json:"description"`
	Visibility           string  `json:"visibility"`
	LFSEnabled           bool    `json:"lfs_enabled"`
	AvatarURL            *string `json:"avatar_url"`
	WebURL               string  `json:"web_url"`
	RequestAccessEnabled bool    `json:"request_access_enabled"`
	FullName             string  `json:"full_name"`
	FullPath             string  `json:"full_path"`
	ParentID             *uint64 `json:"parent_id"`
}

// GroupDetailView is a single group: the group, its projects and the
// projects shared with it, each list holding only what the caller may see
// (at most groupDetailProjects of each, newest first; the full lists are
// GET /groups/:id/projects and /projects).
type GroupDetailView struct {
	GroupView
	Projects       []ProjectView `json:"projects"`
	SharedProjects []ProjectView `json:"shared_projects"`
}

// groupDetailProjects caps the project lists of a single group's view.
const groupDetailProjects = 100

func (s *Service) groupView(ctx context.Context, g *Namespace) (GroupView, error) {
	ni, err := s.namespaceInfo(ctx, g)
	if err != nil {
		return GroupView{}, err
	}
	return GroupView{
		ID: g.ID, Name: g.Name, Path: g.Path, Description: g.Description, Visibility: g.Visibility,
		LFSEnabled: true, WebURL: api.ExternalURLFrom(ctx) + "/groups/" + ni.path,
		FullName: ni.name, FullPath: ni.path, ParentID: ni.parentID(),
	}, nil
}

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
	id, path := api.ParseID(ref)
	if id > 0 {
		g, err := namespaces.Get(tx, uint64(id))
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
	return membershipBelow(tx, uint64(p.UserID()), g.ID, now)
}

// membershipBelow reports whether user has an unexpired membership on a
// group below groupID or on a project in groupID or below it. It walks the
// user's memberships upwards, so its cost follows what the user belongs
// to, not the size of the group.
func membershipBelow(tx *store.Tx, user, groupID uint64, now time.Time) bool {
	mids, err := members.IDsBy(tx, "user", u64(user))
	if err != nil {
		return false
	}
	for _, mid := range mids {
		m, err := members.Get(tx, mid)
		if err != nil || (m.ExpiresAt != nil && now.After(*m.ExpiresAt)) {
			continue
		}
		var start uint64
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
	pr := auth.FromContext(ctx)
	var r resolvedGroup
	err := s.db.View(ctx, func(tx *store.Tx) error {
		g, err := findGroup(tx, ref)
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
			r.level = chainLevel(tx, chain, uint64(pr.UserID()), now)
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
func visibleProjects(tx *store.Tx, p *auth.Principal, ids []uint64, now time.Time) ([]*resolved, error) {
	sorted := append([]uint64(nil), ids...)
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

// renderProjects renders resolved projects (namespaces filled in by
// visibleProjects) as the full project view, or the simple one; projects
// whose owner is gone are skipped.
func (s *Service) renderProjects(ctx context.Context, rows []*resolved, simple bool) ([]any, error) {
	rows, err := s.withNamespaces(ctx, rows)
	if err != nil {
		return nil, err
	}
	return handlers{s}.renderList(ctx, rows, simple), nil
}

// groupDetail renders a single group with the projects the caller may see.
func (s *Service) groupDetail(ctx context.Context, g *Namespace) (*GroupDetailView, error) {
	pr := auth.FromContext(ctx)
	var own, shared []*resolved
	err := s.db.View(ctx, func(tx *store.Tx) error {
		now := s.now()
		ids, err := projects.IDsBy(tx, "namespace", u64(g.ID))
		if err != nil {
			return err
		}
		if own, err = visibleProjects(tx, pr, ids, now); err != nil {
			return err
		}
		if ids, err = projects.IDsBy(tx, "shared_with", u64(g.ID)); err != nil {
			return err
		}
		shared, err = visibleProjects(tx, pr, ids, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	gv, err := s.groupView(ctx, g)
	if err != nil {
		return nil, err
	}
	v := &GroupDetailView{GroupView: gv, Projects: []ProjectView{}, SharedProjects: []ProjectView{}}
	for _, list := range []struct {
		rows []*resolved
		dst  *[]ProjectView
	}{{own, &v.Projects}, {shared, &v.SharedProjects}} {
		rows := list.rows[:min(len(list.rows), groupDetailProjects)]
		views, err := s.renderProjects(ctx, rows, false)
		if err != nil {
			return nil, err
		}
		for _, pv := range views {
			*list.dst = append(*list.dst, *pv.(*ProjectView))
		}
	}
	return v, nil
}

// matchesGroup applies search (name or path, case-insensitive).
func matchesGroup(g *Namespace, search string) bool {
	q := strings.ToLower(strings.TrimSpace(search))
	return q == "" || strings.Contains(strings.ToLower(g.Name), q) || strings.Contains(strings.ToLower(g.Path), q)
}
