package internal

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
)

// The list filters of a project's merge requests (labels, milestone,
// search, author, assignee: GitLab's later list API) answered from the
// store's indexes (store.go): each filter an index answers is a set of
// ids read from its keys, the sets are intersected, and the project's
// ordering keys are walked keeping the ids in the result and out of the
// excluded ones. The walk reads keys only; a merge request is decoded
// when the page shows it or a search must be checked against its text.
// So a filtered list costs the project's keys plus the matching rows,
// never a decode of every merge request.

// listFilter is a ListQuery's filters but the state and the iids.
type listFilter struct {
	labels    []string
	milestone string
	search    string // lower case
	author    int64
	assignee  int64
}

func filterOf(q mergerequest.ListQuery) listFilter {
	f := listFilter{milestone: strings.TrimSpace(q.Milestone), search: strings.ToLower(strings.TrimSpace(q.Search)),
		author: q.AuthorID, assignee: q.AssigneeID}
	seen := make(map[string]bool, len(q.Labels))
	for _, l := range q.Labels {
		if l = strings.TrimSpace(l); l != "" && !seen[l] {
			seen[l] = true
			f.labels = append(f.labels, l)
		}
	}
	return f
}

// none says whether nothing filters.
func (f listFilter) none() bool {
	return len(f.labels) == 0 && f.milestone == "" && f.search == "" && f.author == 0 && f.assignee == 0
}

// The special values of the labels and milestone filters: GitLab 9.x's
// titles ("No Label", "No Milestone", "Any Milestone") and the short
// forms later versions take ("None", "Any").
func isNone(v string) bool {
	return v == "No Milestone" || v == "No Label" || strings.EqualFold(v, "none")
}

func isAny(v string) bool {
	return v == "Any Milestone" || v == "Any Label" || strings.EqualFold(v, "any")
}

// idSet is a set of merge request ids.
type idSet map[int64]bool

func setOf(ids []int64) idSet {
	out := make(idSet, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// sets are the ids the filters keep (only; nil: every one) and those
// they drop (not), as the indexes answer them. only may hold other
// projects' merge requests (a group label's, a search's candidates): the
// walk over the project's keys never meets them.
type sets struct {
	only, not idSet
}

func (s *sets) keep(ids idSet) {
	if s.only == nil {
		s.only = ids
		return
	}
	for id := range s.only {
		if !ids[id] {
			delete(s.only, id)
		}
	}
}

func (s *sets) drop(ids idSet) {
	if s.not == nil {
		s.not = idSet{}
	}
	for id := range ids {
		s.not[id] = true
	}
}

// allows says whether id passes the sets.
func (s *sets) allows(id int64) bool { return (s.only == nil || s.only[id]) && !s.not[id] }

// empty says whether the sets keep nothing at all.
func (s *sets) empty() bool { return s.only != nil && len(s.only) == 0 }

// resolve reads the sets of f's filters in project.
func (s *Service) resolve(tx *store.Tx, project int64, f listFilter) (*sets, error) {
	ctx := tx.Context()
	out := &sets{}
	by := func(index, key string) (idSet, error) {
		ids, err := mrs.IDsBy(tx, index, key)
		return setOf(ids), err
	}
	apply := func(v, has string, named func() (idSet, error)) error {
		var ids idSet
		var err error
		switch {
		case isNone(v) || isAny(v):
			if ids, err = by("has", hasKey(project, has)); err != nil {
				return err
			}
			if isNone(v) {
				out.drop(ids)
				return nil
			}
		default:
			if ids, err = named(); err != nil {
				return err
			}
		}
		out.keep(ids)
		return nil
	}
	for _, name := range f.labels {
		if out.empty() {
			// A label already kept nothing (an unknown name): the
			// others cannot bring any back, and are not looked up.
			return out, nil
		}
		if err := apply(name, hasLabels, func() (idSet, error) {
			// Every label of the name the project sees (its own, its
			// groups'); an unknown name keeps nothing.
			set := idSet{}
			if s.Labels == nil {
				return set, nil
			}
			ids, err := s.Labels.Find(ctx, project, []string{name})
			if err != nil {
				return nil, err
			}
			for _, l := range ids {
				with, err := mrs.IDsBy(tx, "label", store.IDString(l))
				if err != nil {
					return nil, err
				}
				for _, id := range with {
					set[id] = true
				}
			}
			return set, nil
		}); err != nil {
			return nil, err
		}
	}
	if f.milestone != "" {
		if err := apply(f.milestone, hasMilestone, func() (idSet, error) {
			// An unknown title keeps nothing.
			if s.Milestones == nil {
				return idSet{}, nil
			}
			ms, err := s.Milestones.ByTitle(ctx, project, f.milestone)
			if err != nil {
				return idSet{}, nil
			}
			return by("milestone", store.IDString(ms.ID))
		}); err != nil {
			return nil, err
		}
	}
	if f.author != 0 {
		ids, err := by("author", projectUserKey(project, f.author))
		if err != nil {
			return nil, err
		}
		out.keep(ids)
	}
	switch {
	case f.assignee > 0:
		ids, err := by("assignee", projectUserKey(project, f.assignee))
		if err != nil {
			return nil, err
		}
		out.keep(ids)
	case f.assignee == mergerequest.AssignedToNone || f.assignee == mergerequest.AssignedToAny:
		ids, err := by("has", hasKey(project, hasAssignee))
		if err != nil {
			return nil, err
		}
		if f.assignee == mergerequest.AssignedToNone {
			out.drop(ids)
		} else {
			out.keep(ids)
		}
	case f.assignee != 0:
		out.keep(idSet{})
	}
	if err := s.searchSet(tx, f.search, out); err != nil {
		return nil, err
	}
	return out, nil
}

// searchSet narrows out to the search index's candidates for q (a
// superset: textMatches decides); a query too short for the index
// (under store.MinSearch bytes) narrows nothing and every row is checked.
func (s *Service) searchSet(tx *store.Tx, q string, out *sets) error {
	if q == "" {
		return nil
	}
	ids, ok, err := mrs.Search(tx, "search", q)
	if err != nil || !ok {
		return err
	}
	out.keep(setOf(ids))
	return nil
}

// textMatches is the search's exact rule: the title or the description
// holds q (lower case) in any case.
func textMatches(m *MR, q string) bool {
	return q == "" || strings.Contains(strings.ToLower(m.Title), q) || strings.Contains(strings.ToLower(m.Description), q)
}

// page counts the merge requests a walk keeps and holds those of the
// page [offset, offset+limit), decoding one only when the page needs it
// and the walk did not decode it already.
type page struct {
	offset, limit, total int
	rows                 []*MR
}

func (p *page) add(tx *store.Tx, id int64, m *MR) error {
	p.total++
	if p.total <= p.offset || len(p.rows) >= p.limit {
		return nil
	}
	if m == nil {
		var err error
		if m, err = mrs.Get(tx, id); err != nil {
			return err
		}
	}
	p.rows = append(p.rows, m)
	return nil
}

// walkFiltered visits, in the order of bucket's keys, the project's
// merge requests that f keeps (m when the walk decoded it to check the
// search, else nil) until fn returns false or an error.
func (s *Service) walkFiltered(tx *store.Tx, project int64, bucket []byte, desc bool, f listFilter,
	fn func(id int64, flag byte, m *MR) error) error {
	set := &sets{}
	if !f.none() {
		var err error
		if set, err = s.resolve(tx, project, f); err != nil || set.empty() {
			return err
		}
	}
	var walkErr error
	store.WalkTimeKeys(tx, bucket, project, desc, func(id int64, flag byte) bool {
		if !set.allows(id) {
			return true
		}
		var m *MR
		if f.search != "" {
			if m, walkErr = mrs.Get(tx, id); walkErr != nil {
				return false
			}
			if !textMatches(m, f.search) {
				return true
			}
		}
		walkErr = fn(id, flag, m)
		return walkErr == nil
	})
	return walkErr
}

// filtered is the page of project's merge requests in state that f keeps,
// in the order of bucket's keys, and how many f keeps in all.
func (s *Service) filtered(tx *store.Tx, project int64, bucket []byte, desc bool, state mergerequest.State, f listFilter, offset, limit int) ([]*MR, int, error) {
	p := page{offset: max(offset, 0), limit: max(limit, 0)}
	err := s.walkFiltered(tx, project, bucket, desc, f, func(id int64, flag byte, m *MR) error {
		if !stateMatches(state, flag) {
			return nil
		}
		return p.add(tx, id, m)
	})
	return p.rows, p.total, err
}

// StateCounts are how many merge requests a list keeps in each of its
// state tabs: Opened (reopened and locked count), Merged, Closed.
type StateCounts map[mergerequest.State]int

func (c StateCounts) add(flag byte) {
	switch flag {
	case flagOpen:
		c[mergerequest.Opened]++
	case flagMerged:
		c[mergerequest.Merged]++
	case flagClosed:
		c[mergerequest.Closed]++
	}
}

// Counts is how many of the project's merge requests q's filters keep in
// each state (q's state, iids, order and page aside), in one walk: the
// list page's tabs, which would otherwise be a List per state.
func (s *Service) Counts(ctx context.Context, project string, q mergerequest.ListQuery) (StateCounts, error) {
	f := filterOf(q)
	out := StateCounts{}
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		info, err := s.readProject(tx.Context(), project)
		if err != nil {
			return err
		}
		return s.walkFiltered(tx, info.ID, byCreated, true, f, func(_ int64, flag byte, _ *MR) error {
			out.add(flag)
			return nil
		})
	})
	return out, err
}

// keeper is f's check of single merge requests of project (those a list
// reads by iid), its sets read once.
func (s *Service) keeper(tx *store.Tx, project int64, f listFilter) (func(m *MR) bool, error) {
	if f.none() {
		return func(*MR) bool { return true }, nil
	}
	set, err := s.resolve(tx, project, f)
	if err != nil {
		return nil, err
	}
	return func(m *MR) bool { return set.allows(m.ID) && textMatches(m, f.search) }, nil
}

// mineKeys are the byUser prefix of a ListMine query: its scope and
// order, and the user (0 for every one's). ok is false for an anonymous
// caller's own scopes, which hold nothing.
func mineKeys(ctx context.Context, q mergerequest.MineQuery) (kind byte, user int64, ok bool, err error) {
	switch q.Scope {
	case "", mergerequest.CreatedByMe, "created_by_me":
		kind = byAuthorCreated
	case mergerequest.AssignedToMe, "assigned_to_me":
		kind = byAssigneeCreated
	case mergerequest.AllScope:
		kind = byAllCreated
	default:
		return 0, 0, false, invalid("scope", "does not have a valid value")
	}
	if q.OrderBy == mergerequest.ByUpdated {
		kind++ // the same scope by updated_at
	}
	if kind >= byAllCreated {
		return kind, 0, true, nil
	}
	user = principalID(ctx)
	return kind, user, user != 0, nil
}

// walkMine visits, in order, the merge requests of q's scope (q's state
// aside) in projects whose merge requests the caller may read (one access
// check per project) that q's search keeps, until fn returns false or an
// error; infos are the projects met.
func (s *Service) walkMine(tx *store.Tx, q mergerequest.MineQuery, kind byte, user int64, infos map[int64]*projects.ProjectInfo,
	fn func(id int64, flag byte, m *MR) error) error {
	search := strings.ToLower(strings.TrimSpace(q.Search))
	set := &sets{}
	if err := s.searchSet(tx, search, set); err != nil || set.empty() {
		return err
	}
	readable := func(pid int64) (*projects.ProjectInfo, error) {
		info, seen := infos[pid]
		if !seen {
			pi, err := s.readProjectID(tx.Context(), pid)
			switch {
			case err == nil:
				info = &pi
			case !projectHidden(err):
				return nil, err
			}
			infos[pid] = info
		}
		return info, nil
	}
	var walkErr error
	store.WalkPrefix(tx, byUser, userPrefix(kind, user), !q.Ascending, func(k, v []byte) bool {
		if len(k) != userKeyLen || len(v) != 9 {
			return true
		}
		id, pid := int64(store.KeyID(k[userKeyLen-8:])), int64(store.KeyID(v[1:]))
		if !set.allows(id) {
			return true
		}
		info, err := readable(pid)
		if err != nil || info == nil {
			walkErr = err
			return err == nil
		}
		var m *MR
		if search != "" {
			if m, walkErr = mrs.Get(tx, id); walkErr != nil {
				return false
			}
			if !textMatches(m, search) {
				return true
			}
		}
		walkErr = fn(id, v[0], m)
		return walkErr == nil
	})
	return walkErr
}

// ListMine implements mergerequest.Service: a walk over the byUser keys
// of the scope (the caller's, or every one's for "all"), keeping the
// state asked and the projects whose merge requests the caller may read,
// with a search narrowed by the search index and checked on the rows it
// leaves; only the page's merge requests are decoded otherwise.
func (s *Service) ListMine(ctx context.Context, q mergerequest.MineQuery) ([]mergerequest.MergeRequest, int, error) {
	kind, user, ok, err := mineKeys(ctx, q)
	if err != nil || !ok {
		return []mergerequest.MergeRequest{}, 0, err
	}
	var out []mergerequest.MergeRequest
	total := 0
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		infos := map[int64]*projects.ProjectInfo{}
		p := page{offset: max(q.Offset, 0), limit: max(q.Limit, 0)}
		if err := s.walkMine(tx, q, kind, user, infos, func(id int64, flag byte, m *MR) error {
			if !stateMatches(q.State, flag) {
				return nil
			}
			return p.add(tx, id, m)
		}); err != nil {
			return err
		}
		total = p.total
		out = make([]mergerequest.MergeRequest, 0, len(p.rows))
		for _, m := range p.rows {
			out = append(out, s.record(*infos[m.ProjectID], m))
		}
		return nil
	})
	return out, total, err
}

// MineCounts is how many merge requests ListMine keeps in each state (q's
// state, order and page aside), in one walk: the dashboard's tabs.
func (s *Service) MineCounts(ctx context.Context, q mergerequest.MineQuery) (StateCounts, error) {
	out := StateCounts{}
	kind, user, ok, err := mineKeys(ctx, q)
	if err != nil || !ok {
		return out, err
	}
	err = s.DB.View(ctx, func(tx *store.Tx) error {
		return s.walkMine(tx, q, kind, user, map[int64]*projects.ProjectInfo{}, func(_ int64, flag byte, _ *MR) error {
			out.add(flag)
			return nil
		})
	})
	return out, err
}

// sortByTime orders merge requests as the ordering keys do: by time
// (created or updated), then id; newest first when desc.
func sortByTime(list []*MR, updated, desc bool) {
	slices.SortFunc(list, func(a, b *MR) int {
		ta, tb := a.CreatedAt, b.CreatedAt
		if updated {
			ta, tb = a.UpdatedAt, b.UpdatedAt
		}
		c := ta.Compare(tb)
		if c == 0 {
			c = cmp.Compare(a.ID, b.ID)
		}
		if desc {
			return -c
		}
		return c
	})
}

// principalID is the caller's user id, 0 when anonymous.
func principalID(ctx context.Context) int64 { return auth.FromContext(ctx).UserID() }

// projectHidden says whether an access check's error only means the
// caller may not read the project (skipped in a list across projects).
func projectHidden(err error) bool {
	return errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden)
}
