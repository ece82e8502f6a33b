package internal

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Subgroups (GitLab 9.0 onwards, as GitLab behaves today):
//
//   - A group may have a parent group (parent_id); its full path is the
//     parent's full path, "/", and its own path, and every API parameter
//     that takes a group or project path takes the full one
//     ("team/backend/api"). Paths are unique among a parent's subgroups;
//     only top-level groups share their namespace with usernames. Names are
//     unique among siblings as well.
//   - The tree is at most maxGroupDepth groups deep.
//   - Membership is inherited downwards: a member of a group has at least
//     the same level in every subgroup and every project below it. Each
//     list of members shows direct members; members/all adds the inherited
//     ones.
//   - A member of a subgroup (or of a project in one) may see the groups
//     above it, as GitLab lets them browse to their subgroup.
//   - Creating a subgroup needs Master (GitLab's Maintainer, the default of
//     its subgroup_creation_level) in the parent; external users may do it
//     too, since only top-level groups need can_create_group.
//   - A subgroup is never more visible than its parent, and a group never
//     less visible than one of its subgroups.
//   - Deleting a group deletes its subgroups, their projects and
//     memberships with it.
//   - Moving a group to another parent is not offered (GitLab added it to
//     the API much later); parent_id on edit must name the current parent.

// maxGroupDepth is how deep subgroups may nest (GitLab's limit).
const maxGroupDepth = 20

// errGroupTooDeep answers a subgroup that would nest too deep.
var errGroupTooDeep = errors.New("group nesting too deep")

// groupPathKey is the "path" index key of a group: the folded path for a
// top-level group (as before subgroups, so existing rows keep their keys),
// the parent's id and the folded path for a subgroup. A group path never
// holds "/", so the two shapes cannot collide.
func groupPathKey(parent int64, path string) string {
	if parent == 0 {
		return store.Fold(path)
	}
	return store.IDString(parent) + "/" + store.Fold(path)
}

// Groups and projects share one tree of paths, as GitLab's routes do: a
// subgroup "team/x" and a project "team/x" cannot both exist, or the path
// (the pages', the API's :id) would name two things. Each table's unique
// index guards its own kind; these two guard the other's.

// subgroupAt reports whether namespace ns has a subgroup at path (only
// groups have subgroups; a user's namespace never does).
func subgroupAt(tx *store.Tx, ns int64, path string) bool {
	if ns == 0 {
		return false
	}
	_, err := namespaces.GetBy(tx, "path", groupPathKey(ns, path))
	return err == nil
}

// projectAt reports whether group parent holds a project at path (a
// top-level group, parent 0, has no parent to hold one).
func projectAt(tx *store.Tx, parent int64, path string) bool {
	if parent == 0 {
		return false
	}
	_, err := projects.GetBy(tx, "path", projectPathKey(parent, path))
	return err == nil
}

// groupChain returns g's ancestors and g, root first.
func groupChain(tx *store.Tx, g *Namespace) ([]*Namespace, error) {
	chain := []*Namespace{g}
	for cur := g; cur.ParentID != 0; {
		if len(chain) > maxGroupDepth {
			return nil, errGroupTooDeep // a cycle no write should make
		}
		parent, err := namespaces.Get(tx, cur.ParentID)
		if err != nil {
			return nil, err
		}
		chain = append(chain, parent)
		cur = parent
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

// fullPath and fullName join a chain as GitLab renders a group's
// full_path and full_name.
func fullPath(chain []*Namespace) string {
	parts := make([]string, len(chain))
	for i, g := range chain {
		parts[i] = g.Path
	}
	return strings.Join(parts, "/")
}

func fullName(chain []*Namespace) string {
	parts := make([]string, len(chain))
	for i, g := range chain {
		parts[i] = g.Name
	}
	return strings.Join(parts, " / ")
}

// findGroupByPath walks a full path ("team/backend") from the top.
func findGroupByPath(tx *store.Tx, path string) (*Namespace, error) {
	segs := strings.Split(path, "/")
	if len(segs) > maxGroupDepth {
		return nil, store.ErrNotFound
	}
	var g *Namespace
	parent := int64(0)
	for _, seg := range segs {
		if strings.TrimSpace(seg) == "" {
			return nil, store.ErrNotFound
		}
		var err error
		if g, err = namespaces.GetBy(tx, "path", groupPathKey(parent, seg)); err != nil {
			return nil, err
		}
		parent = g.ID
	}
	return g, nil
}

// groupMemberLevel is a user's level in a group, inherited: the highest
// unexpired membership on the group or one of its ancestors.
func groupMemberLevel(tx *store.Tx, groupID, user int64, now time.Time) int {
	g, err := namespaces.Get(tx, groupID)
	if err != nil || g.Kind != KindGroup {
		return project.NoAccess
	}
	chain, err := groupChain(tx, g)
	if err != nil {
		return project.NoAccess
	}
	return chainLevel(tx, chain, user, now)
}

func chainLevel(tx *store.Tx, chain []*Namespace, user int64, now time.Time) int {
	level := project.NoAccess
	for _, c := range chain {
		level = max(level, memberLevel(tx, KindGroup, c.ID, user, now))
	}
	return level
}

// principalGroupLevel is groupMemberLevel for a principal; anonymous
// callers have none.
func principalGroupLevel(tx *store.Tx, p *auth.Principal, groupID int64, now time.Time) int {
	if p.IsAnonymous() {
		return project.NoAccess
	}
	return groupMemberLevel(tx, groupID, p.UserID(), now)
}

// descendantGroups returns the groups below g, parents before children.
func descendantGroups(tx *store.Tx, groupID int64) ([]*Namespace, error) {
	var out []*Namespace
	queue := []int64{groupID}
	for len(queue) > 0 {
		ids, err := namespaces.IDsBy(tx, "parent", store.IDString(queue[0]))
		if err != nil {
			return nil, err
		}
		queue = queue[1:]
		for _, id := range ids {
			g, err := namespaces.Get(tx, id)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
			queue = append(queue, id)
		}
	}
	return out, nil
}

// subtreeHeight is how many levels g and the groups below it take (1 for a
// group without subgroups).
func subtreeHeight(tx *store.Tx, g *Namespace) (int, error) {
	below, err := descendantGroups(tx, g.ID)
	if err != nil {
		return 0, err
	}
	depth := map[int64]int{g.ID: 1}
	height := 1
	for _, d := range below { // parents come first
		depth[d.ID] = depth[d.ParentID] + 1
		height = max(height, depth[d.ID])
	}
	return height, nil
}

// ancestorIDs adds to set every ancestor of the groups already in it, so a
// member of a subgroup reaches the groups above it.
func addAncestors(tx *store.Tx, set map[int64]bool) {
	seeds := make([]int64, 0, len(set))
	for id := range set {
		seeds = append(seeds, id)
	}
	for _, id := range seeds {
		for i := 0; i < maxGroupDepth && id != 0; i++ {
			g, err := namespaces.Get(tx, id)
			if err != nil || g.Kind != KindGroup {
				break
			}
			set[g.ID] = true
			id = g.ParentID
		}
	}
}

// checkGroupVisibility refuses a visibility above the parent's or below
// one of the group's subgroups'.
func checkGroupVisibility(tx *store.Tx, g *Namespace, vis string) error {
	if g.ParentID != 0 {
		parent, err := namespaces.Get(tx, g.ParentID)
		if err != nil {
			return err
		}
		if visibilityRank[vis] > visibilityRank[parent.Visibility] {
			return project.FieldErrors{"visibility_level": {vis + " is not allowed since the parent group has " + parent.Visibility + " visibility."}}
		}
	}
	ids, err := namespaces.IDsBy(tx, "parent", store.IDString(g.ID))
	if err != nil {
		return err
	}
	for _, id := range ids {
		sub, err := namespaces.Get(tx, id)
		if err != nil {
			return err
		}
		if visibilityRank[sub.Visibility] > visibilityRank[vis] {
			return project.FieldErrors{"visibility_level": {vis + " is not allowed since there are subgroups with higher visibility."}}
		}
	}
	return nil
}

// groupAndAncestorIDs are a group's id and its ancestors', nearest first:
// the groups whose members a group's members list inherits. A group that
// is gone yields nothing.
func groupAndAncestorIDs(tx *store.Tx, groupID int64) []int64 {
	var out []int64
	for i := 0; i <= maxGroupDepth && groupID != 0; i++ {
		g, err := namespaces.Get(tx, groupID)
		if err != nil || g.Kind != KindGroup {
			break
		}
		out = append(out, g.ID)
		groupID = g.ParentID
	}
	return out
}

// groupAndDescendantIDs are a group's id and those of every group below
// it: where a membership of the group gives access.
func groupAndDescendantIDs(tx *store.Tx, groupID int64) ([]int64, error) {
	below, err := descendantGroups(tx, groupID)
	if err != nil {
		return nil, err
	}
	out := []int64{groupID}
	for _, g := range below {
		out = append(out, g.ID)
	}
	return out, nil
}

// listBelow is a page of a group's subgroups, or all its descendants, with
// the filters of GET /groups, and how many there are.
func (s *Service) listBelow(ctx context.Context, ref string, in *groupFilter, all bool) ([]*Namespace, int, error) {
	r, err := s.resolveGroup(ctx, ref)
	if err != nil {
		return nil, 0, err
	}
	return s.groupList(ctx, in, func(tx *store.Tx, each func(*Namespace) (bool, error)) error {
		var below []*Namespace
		if all {
			if below, err = descendantGroups(tx, r.g.ID); err != nil {
				return err
			}
		} else {
			ids, err := namespaces.IDsBy(tx, "parent", store.IDString(r.g.ID))
			if err != nil {
				return err
			}
			for _, id := range ids {
				g, err := namespaces.Get(tx, id)
				if err != nil {
					return err
				}
				below = append(below, g)
			}
		}
		for _, g := range below {
			if more, err := each(g); err != nil || !more {
				return err
			}
		}
		return nil
	})
}
