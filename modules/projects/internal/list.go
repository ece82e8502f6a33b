package internal

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// listFilter is what GET /projects (and the lists cut from the same
// cloth) filters and orders by, and the page it wants.
type listFilter struct {
	Archived   string // "true", "false" or "" (either)
	Visibility string
	OrderBy    string // id, name, path, created_at (default), updated_at, last_activity_at
	Sort       string // asc or desc (default)
	Search     string
	Owned      bool
	Membership bool
	Starred    bool
	// NotPrivate leaves private projects out, the visitor's own too (the
	// explore page; the API has no such filter).
	NotPrivate bool
	Offset     int
	Limit      int
}

// visibleIDs gathers the ids of the projects the caller may see, from
// indexes only (no record is decoded): public ones, internal ones for
// signed-in non-external users, and those reached through the caller's own
// namespace, memberships, groups and group shares. Administrators see all.
// The cost follows what the caller can see, not the size of the store.
func visibleIDs(tx *store.Tx, p *auth.Principal, in *listFilter) (map[int64]bool, error) {
	ids := map[int64]bool{}
	add := func(list []int64) {
		for _, id := range list {
			ids[id] = true
		}
	}
	mine, err := memberIDs(tx, p)
	if err != nil {
		return nil, err
	}
	switch {
	case in.Owned || in.Membership:
		// Only projects reached through the caller's own namespace or memberships.
	case p.IsAdmin():
		all, err := projects.IDs(tx)
		if err != nil {
			return nil, err
		}
		add(all)
		return filterOwned(tx, p, in, ids, mine), nil
	default:
		for _, vis := range []string{project.Public, project.Internal} {
			if vis == project.Internal && (p.IsAnonymous() || p.User.External) {
				continue
			}
			list, err := projects.IDsBy(tx, "visibility", vis)
			if err != nil {
				return nil, err
			}
			add(list)
		}
	}
	for id := range mine {
		ids[id] = true
	}
	return filterOwned(tx, p, in, ids, mine), nil
}

// memberIDs: projects of the caller's namespace, project memberships, the
// projects of groups the caller belongs to and those shared with them.
func memberIDs(tx *store.Tx, p *auth.Principal) (map[int64]bool, error) {
	out := map[int64]bool{}
	if p.IsAnonymous() {
		return out, nil
	}
	uid := p.UserID()
	if ns, err := namespaces.GetBy(tx, "owner", store.IDString(uid)); err == nil {
		list, err := projects.IDsBy(tx, "namespace", store.IDString(ns.ID))
		if err != nil {
			return nil, err
		}
		for _, id := range list {
			out[id] = true
		}
	}
	mids, err := members.IDsBy(tx, "user", store.IDString(uid))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for _, mid := range mids {
		m, err := members.Get(tx, mid)
		if err != nil {
			return nil, err
		}
		if m.ExpiresAt != nil && now.After(*m.ExpiresAt) {
			continue // an expired membership gives nothing
		}
		switch m.SourceKind {
		case "project":
			out[m.SourceID] = true
		case KindGroup:
			// A group's membership reaches down into its subgroups.
			groups, err := groupAndDescendantIDs(tx, m.SourceID)
			if err != nil {
				return nil, err
			}
			for _, gid := range groups {
				if err := addGroupProjects(tx, out, gid, now); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// addGroupProjects adds the projects of group gid and those shared with it
// (unexpired shares) to out.
func addGroupProjects(tx *store.Tx, out map[int64]bool, gid int64, now time.Time) error {
	list, err := projects.IDsBy(tx, "namespace", store.IDString(gid))
	if err != nil {
		return err
	}
	for _, id := range list {
		out[id] = true
	}
	shared, err := projects.IDsBy(tx, "shared_with", store.IDString(gid))
	if err != nil {
		return err
	}
	for _, id := range shared {
		p, err := projects.Get(tx, id)
		if err != nil {
			return err
		}
		for _, sh := range p.SharedWith {
			if sh.GroupID == gid && (sh.ExpiresAt == nil || !now.After(*sh.ExpiresAt)) {
				out[id] = true
			}
		}
	}
	return nil
}

func filterOwned(tx *store.Tx, p *auth.Principal, in *listFilter, ids, mine map[int64]bool) map[int64]bool {
	if in.Membership {
		for id := range ids {
			if !mine[id] {
				delete(ids, id)
			}
		}
	}
	if in.Owned {
		owned := map[int64]bool{}
		if ns, err := namespaces.GetBy(tx, "owner", store.IDString(p.UserID())); err == nil {
			list, _ := projects.IDsBy(tx, "namespace", store.IDString(ns.ID))
			for _, id := range list {
				owned[id] = true
			}
		}
		for id := range ids {
			if !owned[id] {
				delete(ids, id)
			}
		}
	}
	if in.Starred {
		starred := map[int64]bool{}
		sids, _ := stars.IDsBy(tx, "user", store.IDString(p.UserID()))
		for _, sid := range sids {
			if st, err := stars.Get(tx, sid); err == nil {
				starred[st.ProjectID] = true
			}
		}
		for id := range ids {
			if !starred[id] {
				delete(ids, id)
			}
		}
	}
	return ids
}

// listProjects is GET /projects: a page of the projects the caller can
// see, namespaces complete, and how many there are in all.
func (s *Service) listProjects(ctx context.Context, in *listFilter) ([]*resolved, int, error) {
	pr := auth.FromContext(ctx)
	if (in.Owned || in.Membership || in.Starred) && pr.IsAnonymous() {
		return nil, 0, nil
	}
	var page []*resolved
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		if pr.IsAdmin() && !in.Owned && !in.Membership && !in.Starred && !in.NotPrivate && in.Archived == "" && in.Visibility == "" &&
			in.Search == "" && (in.OrderBy == "" || in.OrderBy == "id" || in.OrderBy == "created_at") {
			// An administrator sees everything: page straight off the table
			// in id order (O(page), whatever the store holds).
			rows, n, err := projects.Page(tx, in.Sort != "asc", in.Offset, in.Limit)
			if err != nil {
				return err
			}
			total = n
			for _, p := range rows {
				ns, err := namespaces.Get(tx, p.NamespaceID)
				if err != nil {
					return err
				}
				page = append(page, &resolved{p: p, l: levelsOf(tx, pr, p, s.now()), ni: nsInfo{ns: ns}})
			}
			return nil
		}
		desc := in.Sort != "asc"
		if rows, ok, err := searchProjects(tx, pr, in); err != nil || ok {
			if err != nil {
				return err
			}
			sortProjects(rows, in.OrderBy, desc)
			total = len(rows)
			for _, p := range store.Window(rows, in.Offset, in.Limit) {
				ns, err := namespaces.Get(tx, p.NamespaceID)
				if err != nil {
					return err
				}
				page = append(page, &resolved{p: p, l: levelsOf(tx, pr, p, s.now()), ni: nsInfo{ns: ns}})
			}
			return nil
		}
		set, err := visibleIDs(tx, pr, in)
		if err != nil {
			return err
		}
		ids := make([]int64, 0, len(set))
		for id := range set {
			ids = append(ids, id)
		}
		// created_at and id orders follow the id (ids grow with time), so a
		// page is found without decoding the others.
		needRecords := in.Archived != "" || in.Visibility != "" || in.Search != "" || in.NotPrivate ||
			(in.OrderBy != "" && in.OrderBy != "id" && in.OrderBy != "created_at")
		var rows []*Project
		if needRecords {
			for _, id := range ids {
				p, err := projects.Get(tx, id)
				if err != nil {
					return err
				}
				if matches(p, in) {
					rows = append(rows, p)
				}
			}
			sortProjects(rows, in.OrderBy, desc)
			total = len(rows)
			rows = store.Window(rows, in.Offset, in.Limit)
		} else {
			sort.Slice(ids, func(i, j int) bool {
				if desc {
					return ids[i] > ids[j]
				}
				return ids[i] < ids[j]
			})
			total = len(ids)
			for _, id := range store.Window(ids, in.Offset, in.Limit) {
				p, err := projects.Get(tx, id)
				if err != nil {
					return err
				}
				rows = append(rows, p)
			}
		}
		for _, p := range rows {
			ns, err := namespaces.Get(tx, p.NamespaceID)
			if err != nil {
				return err
			}
			page = append(page, &resolved{p: p, l: levelsOf(tx, pr, p, s.now()), ni: nsInfo{ns: ns}})
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	page, err = s.withNamespaces(ctx, page)
	return page, total, err
}

// searchProjects is listProjects' answer for a search, through the
// projects' search index: the candidates holding the query's trigrams are
// decoded and kept when they match (matches, the rule of the scan) and
// the caller may see them, by the rules of visibleIDs applied to the
// record. Their cost follows the candidates, not the store. ok is false
// when there is no search or it is too short for the index (under
// store.MinSearch bytes): the caller scans the visible projects as before.
func searchProjects(tx *store.Tx, pr *auth.Principal, in *listFilter) ([]*Project, bool, error) {
	if in.Search == "" {
		return nil, false, nil
	}
	cands, ok, err := projects.Search(tx, "search", in.Search)
	if err != nil || !ok {
		return nil, ok, err
	}
	var found []*Project
	for _, id := range cands {
		p, err := projects.Get(tx, id)
		if err != nil {
			return nil, true, err
		}
		if matches(p, in) {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return found, true, nil
	}
	mine, err := memberIDs(tx, pr)
	if err != nil {
		return nil, true, err
	}
	internalToo := !pr.IsAnonymous() && !pr.User.External
	ids := map[int64]bool{}
	for _, p := range found {
		switch {
		case in.Owned || in.Membership:
			ids[p.ID] = mine[p.ID]
		case pr.IsAdmin(), mine[p.ID], p.Visibility == project.Public:
			ids[p.ID] = true
		case p.Visibility == project.Internal:
			ids[p.ID] = internalToo
		}
	}
	for id, ok := range ids {
		if !ok {
			delete(ids, id)
		}
	}
	ids = filterOwned(tx, pr, in, ids, mine)
	rows := found[:0]
	for _, p := range found {
		if ids[p.ID] {
			rows = append(rows, p)
		}
	}
	return rows, true, nil
}

func matches(p *Project, in *listFilter) bool {
	if in.Archived != "" && p.Archived != (in.Archived == "true") {
		return false
	}
	if in.Visibility != "" && p.Visibility != in.Visibility {
		return false
	}
	if in.NotPrivate && p.Visibility == project.Private {
		return false
	}
	if q := strings.ToLower(in.Search); q != "" && !strings.Contains(strings.ToLower(p.Name), q) &&
		!strings.Contains(strings.ToLower(p.Path), q) && (p.Description == nil || !strings.Contains(strings.ToLower(*p.Description), q)) {
		return false
	}
	return true
}

func sortProjects(rows []*Project, by string, desc bool) {
	less := func(a, b *Project) bool { return a.ID < b.ID }
	switch by {
	case "name":
		less = func(a, b *Project) bool { return strings.ToLower(a.Name) < strings.ToLower(b.Name) }
	case "path":
		less = func(a, b *Project) bool { return strings.ToLower(a.Path) < strings.ToLower(b.Path) }
	case "updated_at":
		less = func(a, b *Project) bool { return a.UpdatedAt.Before(b.UpdatedAt) }
	case "last_activity_at":
		less = func(a, b *Project) bool { return a.LastActivityAt.Before(b.LastActivityAt) }
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if desc {
			return less(rows[j], rows[i])
		}
		return less(rows[i], rows[j])
	})
}
