package internal

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Groups follow GitLab v4 as of 9.x, without subgroups:
//
//   - Anyone signed in who is not external may create a group (identity does
//     not expose can_create_group); the creator becomes its Owner (50) in the
//     same transaction. A group path must be unique among groups and must not
//     be a username; a group name must be unique among groups.
//   - A group is visible to administrators, its members, anyone when public,
//     signed-in non-external users when internal, and users with membership
//     access to one of its projects.
//   - Owners and administrators edit and delete groups. Deleting a group
//     deletes its projects, as GitLab does (each announced with a
//     projects.project "deleted" event so other modules drop their data),
//     removes its shares and memberships.
//   - GET /groups lists every group the caller can see (public, internal
//     for signed-in non-external users, their own; everything for
//     administrators). all_available=false narrows it to the caller's own
//     groups (memberships, and groups of projects they are members of).
//     GitLab 9.x used that narrower list as its default for signed-in users;
//     Fennec's default is the wider one.

// groupFilter is what a list of groups (GET /groups, a group's subgroups
// and descendants) filters and orders by, and the page it wants.
type groupFilter struct {
	Search         string
	OrderBy        string // name (default), path or id
	Sort           string // asc (default) or desc
	Owned          bool
	AllAvailable   string // "false": only the caller's own groups
	MinAccessLevel int
	SkipGroups     []int64
	TopLevelOnly   bool
	Offset         int
	Limit          int
}

// listGroups is GET /groups: a page of the groups the caller can see, and
// how many there are.
// A search of store.MinSearch bytes or more reads only the groups whose
// name or path hold its trigrams, in id order as the scan would.
func (s *Service) listGroups(ctx context.Context, in *groupFilter) ([]*Namespace, int, error) {
	return s.groupList(ctx, in, func(tx *store.Tx, each func(*Namespace) (bool, error)) error {
		if q := strings.TrimSpace(in.Search); q != "" {
			ids, ok, err := namespaces.Search(tx, "search", q)
			if err != nil {
				return err
			}
			if ok {
				for _, id := range ids {
					g, err := namespaces.Get(tx, id)
					if err != nil {
						return err
					}
					if more, err := each(g); err != nil || !more {
						return err
					}
				}
				return nil
			}
		}
		return namespaces.Scan(tx, false, 0, each)
	})
}

// groupList is a page of a list of groups: the candidates come from scan
// (every group, a group's subgroups, its descendants), the caller's rights
// and the filters of in decide which are listed.
func (s *Service) groupList(ctx context.Context, in *groupFilter, scan func(*store.Tx, func(*Namespace) (bool, error)) error) ([]*Namespace, int, error) {
	pr := auth.FromContext(ctx)
	if in.MinAccessLevel != 0 && !validLevel(in.MinAccessLevel, project.Owner) {
		return nil, 0, project.Params(project.ErrInvalidValue, "min_access_level")
	}
	if pr.IsAnonymous() && (in.Owned || in.MinAccessLevel > 0 || in.AllAvailable == "false") {
		return nil, 0, nil
	}
	skip := map[int64]bool{}
	for _, id := range in.SkipGroups {
		skip[id] = true
	}
	var rows []*Namespace
	err := s.db.View(ctx, func(tx *store.Tx) error {
		levels, via, err := callerGroups(tx, pr, s.now())
		if err != nil {
			return err
		}
		// A member of a subgroup sees the groups above it.
		for gid := range levels {
			via[gid] = true
		}
		addAncestors(tx, via)
		return scan(tx, func(g *Namespace) (bool, error) {
			if g.Kind != KindGroup || skip[g.ID] || (in.TopLevelOnly && g.ParentID != 0) || !matchesGroup(g, in.Search) {
				return true, nil
			}
			chain, err := groupChain(tx, g)
			if err != nil {
				return false, err
			}
			lvl := project.NoAccess
			for _, c := range chain {
				lvl = max(lvl, levels[c.ID])
			}
			var keep bool
			switch {
			case in.Owned:
				keep = lvl >= project.Owner
			case in.MinAccessLevel > 0:
				keep = lvl >= in.MinAccessLevel
			case in.AllAvailable == "false":
				keep = lvl >= project.Guest || via[g.ID]
			default:
				keep = pr.IsAdmin() || lvl >= project.Guest || via[g.ID] || g.Visibility == project.Public ||
					(g.Visibility == project.Internal && !pr.IsAnonymous() && !pr.User.External)
			}
			if keep {
				rows = append(rows, g)
			}
			return true, nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	sortGroups(rows, in.OrderBy, in.Sort == "desc")
	return store.Window(rows, in.Offset, in.Limit), len(rows), nil
}

// callerGroups returns the caller's unexpired group memberships (group id
// -> level) and the groups they reach through project access: groups of
// projects they are members of, and of projects shared with their groups.
func callerGroups(tx *store.Tx, p *auth.Principal, t time.Time) (map[int64]int, map[int64]bool, error) {
	levels := map[int64]int{}
	via := map[int64]bool{}
	if p.IsAnonymous() {
		return levels, via, nil
	}
	mids, err := members.IDsBy(tx, "user", store.IDString(p.UserID()))
	if err != nil {
		return nil, nil, err
	}
	for _, mid := range mids {
		m, err := members.Get(tx, mid)
		if err != nil {
			return nil, nil, err
		}
		if m.ExpiresAt != nil && t.After(*m.ExpiresAt) {
			continue
		}
		switch m.SourceKind {
		case KindGroup:
			levels[m.SourceID] = m.AccessLevel
		case "project":
			if proj, err := projects.Get(tx, m.SourceID); err == nil {
				via[proj.NamespaceID] = true
			}
		}
	}
	for gid := range levels {
		ids, err := projects.IDsBy(tx, "shared_with", store.IDString(gid))
		if err != nil {
			return nil, nil, err
		}
		for _, id := range ids {
			proj, err := projects.Get(tx, id)
			if err != nil {
				continue
			}
			for _, sh := range proj.SharedWith {
				if sh.GroupID == gid && (sh.ExpiresAt == nil || !t.After(*sh.ExpiresAt)) {
					via[proj.NamespaceID] = true
				}
			}
		}
	}
	return levels, via, nil
}

func sortGroups(rows []*Namespace, by string, desc bool) {
	key := func(g *Namespace) string { return strings.ToLower(g.Name) }
	switch by {
	case "path":
		key = func(g *Namespace) string { return strings.ToLower(g.Path) }
	case "id":
		key = func(*Namespace) string { return "" }
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if desc {
			a, b = b, a
		}
		if ka, kb := key(a), key(b); ka != kb {
			return ka < kb
		}
		return a.ID < b.ID
	})
}

var groupFields = []string{"name", "path", "description", "visibility", "lfs_enabled", "request_access_enabled"}

// CreateGroup makes a group (project.Service).
func (s *Service) CreateGroup(ctx context.Context, in project.GroupFields) (project.Group, error) {
	return s.groupRecordOf(ctx)(s.createGroup(ctx, in))
}

// createGroup is POST /groups: a group, or a subgroup of b.ParentID, whose
// Owner is the caller.
func (s *Service) createGroup(ctx context.Context, b project.GroupFields) (*Namespace, error) {
	pr := auth.FromContext(ctx)
	var missing []string
	if b.Name == nil {
		missing = append(missing, "name")
	}
	if b.Path == nil {
		missing = append(missing, "path")
	}
	if len(missing) > 0 {
		return nil, project.Params(project.ErrMissing, missing...)
	}
	if b.Visibility != nil && !validVisibility(*b.Visibility) {
		return nil, project.Params(project.ErrInvalidValue, "visibility")
	}
	var parent *resolvedGroup
	if b.ParentID != nil && *b.ParentID != 0 {
		var err error
		if parent, err = s.resolveGroup(ctx, strconv.FormatInt(*b.ParentID, 10)); err != nil {
			return nil, err
		}
		if !pr.IsAdmin() && parent.level < project.Master {
			return nil, project.ErrForbidden
		}
	} else if pr.IsAnonymous() {
		return nil, project.ErrForbidden
	} else if pr.User.External {
		return nil, project.ErrExternalUser
	}
	name, path := strings.TrimSpace(*b.Name), strings.TrimSpace(*b.Path)
	g := &Namespace{Kind: KindGroup, Name: name, Path: path, Visibility: project.Private, CreatedAt: s.now().UTC()}
	if parent != nil {
		g.ParentID = parent.g.ID
	}
	if b.Description != nil {
		g.Description = *b.Description
	}
	if b.Visibility != nil {
		g.Visibility = *b.Visibility
	} else {
		settings, err := s.currentSettings(ctx)
		if err != nil {
			return nil, err
		}
		g.Visibility = settings.DefaultGroupVisibility
		// A default above the parent's would refuse a create that named
		// no visibility: the subgroup gets the parent's instead.
		if parent != nil && visibilityRank[g.Visibility] > visibilityRank[parent.g.Visibility] {
			g.Visibility = parent.g.Visibility
		}
	}
	v := project.FieldErrors{}
	validateName(v, name)
	validateGroupPath(v, "path", path)
	if len(v) == 0 && parent == nil {
		if err := s.pathIsUsername(ctx, v, path); err != nil {
			return nil, err
		}
	}
	if len(v) > 0 {
		return nil, v
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		if parent != nil {
			// The parent is read again in this transaction: it may have
			// gone, or become less visible, since it was resolved.
			p, err := namespaces.Get(tx, parent.g.ID)
			if err != nil {
				return err
			}
			if err := checkGroupVisibility(tx, g, g.Visibility); err != nil {
				return err
			}
			chain, err := groupChain(tx, p)
			if err != nil {
				return err
			}
			if len(chain) >= maxGroupDepth {
				return project.FieldErrors{"parent_id": {"has too deep level of nesting"}}
			}
		}
		if err := groupNameTaken(tx, g); err != nil {
			return err
		}
		if projectAt(tx, g.ParentID, g.Path) {
			return project.FieldErrors{"path": {"has already been taken"}}
		}
		if err := namespaces.Insert(tx, g); err != nil {
			return err
		}
		m := &Member{SourceKind: KindGroup, SourceID: g.ID, UserID: pr.UserID(), AccessLevel: project.Owner, CreatedAt: g.CreatedAt}
		if err := members.Insert(tx, m); err != nil {
			return err
		}
		return s.bus.Publish(tx, event.MemberEvent{Action: event.MemberJoined, GroupID: g.ID, UserID: pr.UserID(), AuthorID: pr.UserID()})
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrGroupNotFound // the parent went meanwhile
	}
	if err = groupConflict(err); err != nil {
		return nil, err
	}
	return g, nil
}

// pathIsUsername adds "has already been taken" when a user has the path as
// username: users and groups share the top-level namespace.
func (s *Service) pathIsUsername(ctx context.Context, v project.FieldErrors, path string) error {
	_, err := s.users.UserByUsername(ctx, path)
	switch {
	case err == nil:
		v["path"] = append(v["path"], "has already been taken")
	case !errors.Is(err, identity.ErrUserNotFound):
		return err
	}
	return nil
}

// groupNameTaken refuses a name a sibling group has (case-insensitive),
// as GitLab's namespace name uniqueness does: among top-level groups, or
// among one parent's subgroups.
func groupNameTaken(tx *store.Tx, g *Namespace) error {
	name := store.Fold(g.Name)
	taken := func(o *Namespace) bool {
		return o.Kind == KindGroup && o.ID != g.ID && o.ParentID == g.ParentID && store.Fold(o.Name) == name
	}
	if g.ParentID != 0 {
		ids, err := namespaces.IDsBy(tx, "parent", store.IDString(g.ParentID))
		if err != nil {
			return err
		}
		for _, id := range ids {
			if o, err := namespaces.Get(tx, id); err == nil && taken(o) {
				return project.FieldErrors{"name": {"has already been taken"}}
			}
		}
		return nil
	}
	return namespaces.Scan(tx, false, 0, func(o *Namespace) (bool, error) {
		if taken(o) {
			return false, project.FieldErrors{"name": {"has already been taken"}}
		}
		return true, nil
	})
}

// groupConflict turns a unique-index conflict into the path error.
func groupConflict(err error) error {
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return project.FieldErrors{conflict.Index: {"has already been taken"}}
	}
	return err
}

var visibilityRank = map[string]int{project.Private: 0, project.Internal: 10, project.Public: 20}

// UpdateGroup changes a group (project.Service).
func (s *Service) UpdateGroup(ctx context.Context, ref string, in project.GroupFields) (project.Group, error) {
	return s.groupRecordOf(ctx)(s.updateGroup(ctx, ref, in))
}

// updateGroup is PUT /groups/:id: the group (Owner) as changed.
func (s *Service) updateGroup(ctx context.Context, ref string, b project.GroupFields) (*Namespace, error) {
	pr := auth.FromContext(ctx)
	if b == (project.GroupFields{}) {
		return nil, project.Params(project.ErrNothingGiven, groupFields...)
	}
	if b.Visibility != nil && !validVisibility(*b.Visibility) {
		return nil, project.Params(project.ErrInvalidValue, "visibility")
	}
	r, err := s.resolveGroup(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !r.isOwner(pr) {
		return nil, project.ErrForbidden
	}
	v := project.FieldErrors{}
	if b.Name != nil {
		validateName(v, strings.TrimSpace(*b.Name))
	}
	if b.Path != nil {
		path := strings.TrimSpace(*b.Path)
		validateGroupPath(v, "path", path)
		if len(v["path"]) == 0 && r.g.ParentID == 0 && store.Fold(path) != store.Fold(r.g.Path) {
			if err := s.pathIsUsername(ctx, v, path); err != nil {
				return nil, err
			}
		}
	}
	if b.ParentID != nil && max(*b.ParentID, 0) != r.g.ParentID {
		v["parent_id"] = append(v["parent_id"], "cannot be changed: groups are not moved")
	}
	if len(v) > 0 {
		return nil, v
	}
	var g *Namespace
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if g, err = namespaces.Get(tx, r.g.ID); err != nil {
			return err
		}
		if b.Name != nil {
			g.Name = strings.TrimSpace(*b.Name)
			if err := groupNameTaken(tx, g); err != nil {
				return err
			}
		}
		if b.Path != nil {
			newPath := strings.TrimSpace(*b.Path)
			if store.Fold(newPath) != store.Fold(g.Path) && projectAt(tx, g.ParentID, newPath) {
				return project.FieldErrors{"path": {"has already been taken"}}
			}
			g.Path = newPath
		}
		if b.Description != nil {
			g.Description = *b.Description
		}
		if b.Visibility != nil && *b.Visibility != g.Visibility {
			if err := checkGroupVisibility(tx, g, *b.Visibility); err != nil {
				return err
			}
			// A group may not be less visible than its projects.
			ids, err := projects.IDsBy(tx, "namespace", store.IDString(g.ID))
			if err != nil {
				return err
			}
			for _, id := range ids {
				p, err := projects.Get(tx, id)
				if err != nil {
					return err
				}
				if visibilityRank[p.Visibility] > visibilityRank[*b.Visibility] {
					return project.FieldErrors{"visibility_level": {*b.Visibility + " is not allowed since this group contains projects with higher visibility."}}
				}
			}
			g.Visibility = *b.Visibility
		}
		return namespaces.Update(tx, g)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, project.ErrGroupNotFound
	}
	if err = groupConflict(err); err != nil {
		return nil, err
	}
	return g, nil
}

// DeleteGroup is DELETE /groups/:id (project.Service): the group and its
// subgroups, their projects (each announced as deleted), their
// memberships, and their shares of other groups' projects go.
func (s *Service) DeleteGroup(ctx context.Context, ref string) error {
	pr := auth.FromContext(ctx)
	r, err := s.resolveGroup(ctx, ref)
	if err != nil {
		return err
	}
	if !r.isOwner(pr) {
		return project.ErrForbidden
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		below, err := descendantGroups(tx, r.g.ID)
		if err != nil {
			return err
		}
		// Children go before their parents.
		for i := len(below) - 1; i >= 0; i-- {
			if err := s.removeGroupRows(tx, below[i].ID, pr.UserID()); err != nil {
				return err
			}
		}
		return s.removeGroupRows(tx, r.g.ID, pr.UserID())
	})
	if errors.Is(err, store.ErrNotFound) {
		return project.ErrGroupNotFound
	}
	return err
}

// removeGroupRows deletes one group inside tx: its projects (announced),
// its shares of other projects, its memberships and its row.
func (s *Service) removeGroupRows(tx *store.Tx, gid int64, by int64) error {
	ids, err := projects.IDsBy(tx, "namespace", store.IDString(gid))
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.removeProjectRows(tx, id, by); err != nil {
			return err
		}
	}
	if ids, err = projects.IDsBy(tx, "shared_with", store.IDString(gid)); err != nil {
		return err
	}
	for _, id := range ids {
		p, err := projects.Get(tx, id)
		if err != nil {
			return err
		}
		kept := make([]Share, 0, len(p.SharedWith))
		for _, sh := range p.SharedWith {
			if sh.GroupID != gid {
				kept = append(kept, sh)
			}
		}
		p.SharedWith = kept
		if err := projects.Update(tx, p); err != nil {
			return err
		}
	}
	if _, err := members.DeleteBy(tx, "source", sourceKey(KindGroup, gid)); err != nil {
		return err
	}
	if err := namespaces.Delete(tx, gid); err != nil {
		return err
	}
	return s.bus.Publish(tx, event.GroupEvent{Action: event.GroupDeleted, GroupID: gid, UserID: by})
}

// removeProjectRows deletes a project with its memberships and stars inside
// tx, as DELETE /projects/:id does, and announces it.
func (s *Service) removeProjectRows(tx *store.Tx, id int64, by int64) error {
	p, err := projects.Get(tx, id)
	if err != nil {
		return err
	}
	if _, err := members.DeleteBy(tx, "source", sourceKey("project", id)); err != nil {
		return err
	}
	if _, err := stars.DeleteBy(tx, "project", store.IDString(id)); err != nil {
		return err
	}
	if p.ForkedFromID != 0 {
		if src, err := projects.Get(tx, p.ForkedFromID); err == nil && src.ForksCount > 0 {
			src.ForksCount--
			if err := projects.Update(tx, src); err != nil {
				return err
			}
		}
	}
	if err := projects.Delete(tx, id); err != nil {
		return err
	}
	return s.bus.Publish(tx, event.ProjectEvent{Action: event.ProjectDeleted, ProjectID: id, UserID: by})
}

// groupProjects is GET /groups/:id/projects: a page of the projects of
// the group (and of the groups below it, with subgroups) the caller can
// see, namespaces complete, and how many there are.
func (s *Service) groupProjects(ctx context.Context, ref string, filter *listFilter, subgroups bool) ([]*resolved, int, error) {
	pr := auth.FromContext(ctx)
	r, err := s.resolveGroup(ctx, ref)
	if err != nil {
		return nil, 0, err
	}
	var page []*resolved
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		groups := []int64{r.g.ID}
		if subgroups {
			if groups, err = groupAndDescendantIDs(tx, r.g.ID); err != nil {
				return err
			}
		}
		var ids []int64
		for _, gid := range groups {
			list, err := projects.IDsBy(tx, "namespace", store.IDString(gid))
			if err != nil {
				return err
			}
			ids = append(ids, list...)
		}
		rows, err := visibleProjects(tx, pr, ids, s.now())
		if err != nil {
			return err
		}
		byProject := make(map[*Project]*resolved, len(rows))
		list := make([]*Project, 0, len(rows))
		for _, row := range rows {
			if matches(row.p, filter) {
				byProject[row.p] = row
				list = append(list, row.p)
			}
		}
		sortProjects(list, filter.OrderBy, filter.Sort != "asc")
		total = len(list)
		for _, p := range store.Window(list, filter.Offset, filter.Limit) {
			page = append(page, byProject[p])
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	page, err = s.withNamespaces(ctx, page)
	return page, total, err
}

// groupRecord is a group as the contract gives it.
func (s *Service) groupRecord(ctx context.Context, g *Namespace) (project.Group, error) {
	ni, err := s.namespaceInfo(ctx, g)
	if err != nil {
		return project.Group{}, err
	}
	return project.Group{ID: g.ID, ParentID: g.ParentID, Name: g.Name, Path: g.Path, FullName: ni.name,
		FullPath: ni.path, Description: g.Description, Visibility: g.Visibility, CreatedAt: g.CreatedAt}, nil
}

// groupRecordOf turns the answer of a command on a group into the
// contract's.
func (s *Service) groupRecordOf(ctx context.Context) func(*Namespace, error) (project.Group, error) {
	return func(g *Namespace, err error) (project.Group, error) {
		if err != nil {
			return project.Group{}, err
		}
		return s.groupRecord(ctx, g)
	}
}
