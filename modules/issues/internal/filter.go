package internal

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// filter is a list's parameters, resolved against one project.
type filter struct {
	state   string // "", all, opened, closed
	labels  []string
	mile    string
	iids    []int64
	search  string
	updated bool // order by updated_at
	asc     bool
}

func (f *filter) simple() bool {
	return len(f.labels) == 0 && f.mile == "" && len(f.iids) == 0 && f.search == ""
}

func (f *filter) stateOK(flags byte) bool {
	switch f.state {
	case StateOpened:
		return flags&flagClosed == 0
	case StateClosed:
		return flags&flagClosed != 0
	}
	return true
}

// The special values of the labels and milestone filters (GitLab 9.x's
// Label::None, Milestone::None and Milestone::Any titles, and the short
// forms later versions accept).
func isNone(v string) bool {
	return v == "No Milestone" || v == "No Label" || strings.EqualFold(v, "none")
}
func isAny(v string) bool {
	return v == "Any Milestone" || v == "Any Label" || strings.EqualFold(v, "any")
}

// idSets resolves the label, milestone and iid filters of a project (and
// the groups it inherits labels and milestones from) to the issue ids they
// allow (only: nil means no constraint; an empty map allows nothing) and
// the ids they exclude (not). Ids of other projects' issues (a group
// label's) may be in them: the caller walks the project's issues only.
func (f *filter) idSets(tx *store.Tx, project int64, groups []int64) (only, not map[int64]bool, err error) {
	intersect := func(ids []int64) {
		next := make(map[int64]bool, len(ids))
		for _, id := range ids {
			if only == nil || only[id] {
				next[id] = true
			}
		}
		only = next
	}
	union := func(index string, keys []int64) (map[int64]bool, error) {
		set := map[int64]bool{}
		for _, k := range keys {
			ids, err := issues.IDsBy(tx, index, store.IDString(k))
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				set[id] = true
			}
		}
		return set, nil
	}
	for _, name := range f.labels {
		switch {
		case isNone(name) || isAny(name):
			all, err := ownAndGroups(tx, labels.IDsBy, project, groups)
			if err != nil {
				return nil, nil, err
			}
			with, err := union("label", all)
			if err != nil {
				return nil, nil, err
			}
			if isNone(name) {
				not = merge(not, with)
			} else {
				intersect(keys(with))
			}
		default:
			// Every label of the name the project sees: its own and its
			// groups' (an unknown name matches nothing).
			named, err := labelsNamed(tx, project, groups, name)
			if err != nil {
				return nil, nil, err
			}
			with, err := union("label", named)
			if err != nil {
				return nil, nil, err
			}
			intersect(keys(with))
		}
	}
	switch {
	case f.mile == "":
	case isNone(f.mile) || isAny(f.mile):
		all, err := ownAndGroups(tx, milestones.IDsBy, project, groups)
		if err != nil {
			return nil, nil, err
		}
		with, err := union("milestone", all)
		if err != nil {
			return nil, nil, err
		}
		if isNone(f.mile) {
			not = merge(not, with)
		} else {
			intersect(keys(with))
		}
	default:
		// The project's milestone of the title and its groups' (an
		// unknown title matches nothing).
		var named []int64
		for _, owner := range append([]string{store.IDString(project)}, groupKeys(groups, "g")...) {
			if m, err := milestones.GetBy(tx, "title", owner+"/"+f.mile); err == nil {
				named = append(named, m.ID)
			}
		}
		with, err := union("milestone", named)
		if err != nil {
			return nil, nil, err
		}
		intersect(keys(with))
	}
	if len(f.iids) > 0 {
		var ids []int64
		for _, iid := range f.iids {
			if i, err := issues.GetBy(tx, "iid", store.IDString(project)+"/"+store.IDString(iid)); err == nil {
				ids = append(ids, i.ID)
			}
		}
		intersect(ids)
	}
	return only, not, nil
}

// ownAndGroups are the ids a table's "project" index holds for the
// project and its "group" index for each of groups.
func ownAndGroups(tx *store.Tx, idsBy func(*store.Tx, string, string) ([]int64, error), project int64, groups []int64) ([]int64, error) {
	all, err := idsBy(tx, "project", store.IDString(project))
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		more, err := idsBy(tx, "group", store.IDString(g))
		if err != nil {
			return nil, err
		}
		all = append(all, more...)
	}
	return all, nil
}

// groupKeys are the groups' ids, each after prefix.
func groupKeys(groups []int64, prefix string) []string {
	out := make([]string, len(groups))
	for n, g := range groups {
		out[n] = prefix + store.IDString(g)
	}
	return out
}

func merge(a, b map[int64]bool) map[int64]bool {
	if a == nil {
		return b
	}
	for k := range b {
		a[k] = true
	}
	return a
}

func keys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// matches applies the filters that need the issue itself.
func (f *filter) matches(i *Issue) bool {
	if !f.stateOK(flagsOf(i)) {
		return false
	}
	if f.search != "" && !strings.Contains(strings.ToLower(i.Title), f.search) &&
		!strings.Contains(strings.ToLower(i.Description), f.search) {
		return false
	}
	return true
}

// listProject returns the page [offset, offset+limit) of a project's issues
// that match f and uid may see, and how many match in all. The common list
// (no label, milestone, iid or search filter, by a caller who sees every
// issue or of a project without confidential ones) is a walk over the
// ordering keys to the page and a count read; the others walk every key of
// the project and decode only the issues a filter needs to look into.
func listProject(tx *store.Tx, info projects.ProjectInfo, uid int64, f *filter, offset, limit int) ([]*Issue, int, error) {
	pid := info.ID
	bucket := byCreated
	if f.updated {
		bucket = byUpdated
	}
	seesConfidential := info.Level >= projects.Reporter
	var page []*Issue
	var walkErr error
	if f.simple() && (seesConfidential || getCount(tx, pid, countConfidential) == 0) {
		total := getCount(tx, pid, countOpen) + getCount(tx, pid, countClosed)
		switch f.state {
		case StateOpened:
			total = getCount(tx, pid, countOpen)
		case StateClosed:
			total = getCount(tx, pid, countClosed)
		}
		if offset >= total || limit <= 0 {
			return []*Issue{}, total, nil
		}
		seen := 0
		store.WalkTimeKeys(tx, bucket, pid, !f.asc, func(id int64, flags byte) bool {
			if !f.stateOK(flags) {
				return true
			}
			seen++
			if seen <= offset {
				return true
			}
			i, err := issues.Get(tx, id)
			if err != nil {
				walkErr = err
				return false
			}
			page = append(page, i)
			return len(page) < limit
		})
		return page, total, walkErr
	}
	only, not, err := f.idSets(tx, pid, info.GroupIDs)
	if err != nil {
		return nil, 0, err
	}
	if only != nil && len(only) == 0 {
		return []*Issue{}, 0, nil
	}
	if page, total, ok, err := searchProject(tx, info, uid, f, only, not, offset, limit); ok || err != nil {
		return page, total, err
	}
	// A search for plain ASCII text looks at the stored row's bytes first:
	// JSON writes such text as it is, so a row without it (in any case)
	// cannot match, and only the others are decoded.
	var raw func([]byte) []byte
	var term []byte
	if f.search != "" && plainASCII(f.search) {
		rows := store.Keys(issues.Name())
		raw = func(key []byte) []byte { return rows.Get(tx, key) }
		term = []byte(f.search)
	}
	w := window{offset: offset, limit: limit}
	store.WalkTimeKeys(tx, bucket, pid, !f.asc, func(id int64, flags byte) bool {
		if !f.stateOK(flags) || (only != nil && !only[id]) || not[id] {
			return true
		}
		if raw != nil && !containsFold(raw(store.Key(id)), term) {
			return true
		}
		var i *Issue
		if f.search != "" || (flags&flagConfidential != 0 && !seesConfidential) {
			if i, walkErr = issues.Get(tx, id); walkErr != nil {
				return false
			}
			if !f.matches(i) || !visible(info, i, uid) {
				return true
			}
		}
		walkErr = w.add(tx, id, i)
		return walkErr == nil
	})
	if w.page == nil {
		w.page = []*Issue{}
	}
	return w.page, w.total, walkErr
}

// searchProject is listProject's answer to a search through the issues'
// search index (title and description): the candidates holding the
// query's trigrams are decoded and kept when they are the project's and
// pass every filter listProject applies, then put in the order of the
// project's time keys (time, then id). ok is false when the query is too
// short for the index (under store.MinSearch bytes) or has more candidates,
// in every project, than this project has issues: walking the project's
// keys then costs less, and listProject does.
func searchProject(tx *store.Tx, info projects.ProjectInfo, uid int64, f *filter, only, not map[int64]bool, offset, limit int) ([]*Issue, int, bool, error) {
	if f.search == "" {
		return nil, 0, false, nil
	}
	cands, ok, err := issues.Search(tx, "search", f.search)
	if err != nil || !ok {
		return nil, 0, false, err
	}
	pid := info.ID
	if len(cands) > getCount(tx, pid, countOpen)+getCount(tx, pid, countClosed) {
		return nil, 0, false, nil
	}
	type hit struct {
		at uint64 // the time key's nanoseconds
		i  *Issue
	}
	var hits []hit
	for _, id := range cands {
		if (only != nil && !only[id]) || not[id] {
			continue
		}
		i, err := issues.Get(tx, id)
		if err != nil {
			return nil, 0, true, err
		}
		if i.ProjectID != pid || !f.matches(i) || !visible(info, i, uid) {
			continue
		}
		at := i.CreatedAt
		if f.updated {
			at = i.UpdatedAt
		}
		hits = append(hits, hit{uint64(at.UnixNano()), i})
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.i.ID, b.i.ID)
	})
	if !f.asc {
		slices.Reverse(hits)
	}
	page := []*Issue{}
	for _, h := range store.Window(hits, offset, limit) {
		page = append(page, h.i)
	}
	return page, len(hits), true, nil
}

// plainASCII: letters, digits, spaces and punctuation JSON never escapes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// containsFold reports whether b contains term (lower-case ASCII) in any
// case.
func containsFold(b, term []byte) bool {
	if len(term) == 0 {
		return true
	}
	first := term[0]
	upper := first
	if first >= 'a' && first <= 'z' {
		upper = first - 32
	}
	for i := 0; i+len(term) <= len(b); i++ {
		if c := b[i]; c != first && c != upper {
			continue
		}
		if bytes.EqualFold(b[i:i+len(term)], term) {
			return true
		}
	}
	return false
}
