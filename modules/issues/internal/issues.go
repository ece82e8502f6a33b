package internal

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/isotime"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/event"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// The commands and queries of issues (issue.Service); the HTTP adapter
// is httpissues.go.

var _ issue.Service = (*Service)(nil)

// invalidValue is the contract's ErrInvalidValue for param.
func invalidValue(param string) error {
	return &issue.ParamError{Err: issue.ErrInvalidValue, Param: param}
}

// The parameter errors of the collab contract, as every target's.
var (
	invalidParam = target.BadParam
	missing      = target.MissingParams
	nothingGiven = target.NothingGiven
)

// parseDueDate accepts YYYY-MM-DD (any ISO 8601 date or time: clients send
// both); "" clears.
func parseDueDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	t, err := isotime.Parse(s)
	if err != nil {
		return "", invalidParam("due_date")
	}
	return t.Format("2006-01-02"), nil
}

// filter resolves a list query's filters (an unknown state, order or sort
// is ErrInvalidValue).
func filterOf(q issue.ListQuery) (*filter, error) {
	f := &filter{state: q.State, labels: q.Labels, mile: strings.TrimSpace(q.Milestone), iids: q.IIDs,
		search: strings.ToLower(strings.TrimSpace(q.Search))}
	switch q.State {
	case "", "all", StateOpened, StateClosed:
	default:
		return nil, invalidValue("state")
	}
	switch q.OrderBy {
	case "", "created_at":
	case "updated_at":
		f.updated = true
	default:
		return nil, invalidValue("order_by")
	}
	switch q.Sort {
	case "", "desc":
	case "asc":
		f.asc = true
	default:
		return nil, invalidValue("sort")
	}
	return f, nil
}

// assignees returns the assignees asked for (nil: not asked), keeping, as
// GitLab CE does, the first one only, and only users who may read the
// project's issues (others are dropped, as GitLab filters them).
func (s *Service) assignees(ctx context.Context, info projects.ProjectInfo, in *issue.Fields) ([]int64, bool, error) {
	if in.AssigneeIDs == nil {
		return nil, false, nil
	}
	out := []int64{}
	for _, id := range *in.AssigneeIDs {
		if id <= 0 || len(out) == 1 {
			continue
		}
		u, err := s.lookup.LookupUser(ctx, store.IDString(id))
		if err != nil {
			continue
		}
		p, err := auth.ForUser(u)
		if err != nil {
			continue
		}
		if _, err := s.access.RequireID(auth.WithPrincipal(ctx, p), info.ID, projects.ReadIssues); err != nil {
			continue
		}
		out = append(out, id)
	}
	return out, true, nil
}

// milestoneOf checks that a milestone belongs to the project (0 clears; a
// foreign or unknown one is ignored, as GitLab's filter does).
func milestoneOf(tx *store.Tx, info projects.ProjectInfo, id int64) (int64, bool) {
	if id <= 0 {
		return 0, true
	}
	m, err := milestones.Get(tx, id)
	// A project's issues take its own milestones and those of the group
	// owning it and of the groups above that (GitLab 9.x's, with nested
	// groups).
	if err != nil || (m.ProjectID != info.ID && (m.GroupID == 0 || !slices.Contains(info.GroupIDs, m.GroupID))) {
		return 0, false
	}
	return m.ID, true
}

// List implements issue.Service.
func (s *Service) List(ctx context.Context, project string, q issue.ListQuery) ([]issue.Issue, int, error) {
	info, err := s.readProject(ctx, project)
	if err != nil {
		return nil, 0, err
	}
	f, err := filterOf(q)
	if err != nil {
		return nil, 0, err
	}
	uid := auth.FromContext(ctx).UserID()
	var out []issue.Issue
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		list, n, err := listProject(tx, info, uid, f, q.Offset, q.Limit)
		total = n
		out = s.records(list, func(*Issue) projects.ProjectInfo { return info })
		return err
	})
	return out, total, err
}

// ListMine implements issue.Service: GET /issues, the caller's issues
// across projects. The scope is GitLab 9.x's: created-by-me (default),
// assigned-to-me, all (every issue the caller may see). It walks the
// scope's byUser keys in the list's order: the state filter and the
// project's visibility are read from the keys, and an issue is decoded
// only when it is on the page, when a filter needs the row (labels,
// milestone, iids, search: a search first narrowed by the search index),
// or when it is confidential in a project where only its author and
// assignees see it and the key does not tell that the caller is one.
// The rows, order and total are ListMineScan's.
func (s *Service) ListMine(ctx context.Context, q issue.ListQuery) ([]issue.Issue, int, error) {
	f, err := filterOf(q)
	if err != nil {
		return nil, 0, err
	}
	var kind byte
	switch q.Scope {
	case "", "created-by-me", "created_by_me":
		kind = byAuthorCreated
	case "assigned-to-me", "assigned_to_me":
		kind = byAssigneeCreated
	case "all":
		kind = byAllCreated
	default:
		return nil, 0, invalidValue("scope")
	}
	if f.updated {
		kind++ // the updated_at order of the same scope
	}
	uid := auth.FromContext(ctx).UserID()
	user := uid
	if kind >= byAllCreated {
		user = 0
	}
	// The caller is the author or an assignee of every issue of their own
	// scopes, so sees it even when confidential (canSeeConfidential).
	own := kind < byAllCreated && uid != 0
	offset, limit := max(q.Offset, 0), max(q.Limit, 0)
	var out []issue.Issue
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var cands map[int64]bool
		if f.search != "" {
			ids, ok, err := issues.Search(tx, "search", f.search)
			if err != nil {
				return err
			}
			if ok {
				cands = make(map[int64]bool, len(ids))
				for _, id := range ids {
					cands[id] = true
				}
			}
		}
		readable := s.readableProjects(tx.Context())
		project, infos := readable.get, readable.infos
		w := window{offset: offset, limit: limit}
		var walkErr error
		walkUserKeys(tx, userPrefix(kind, user), !f.asc, func(id int64, flags byte, pid int64) bool {
			if !f.stateOK(flags) || (cands != nil && !cands[id]) {
				return true
			}
			info, err := project(pid)
			if err != nil {
				walkErr = err
				return false
			}
			if info == nil {
				return true
			}
			var i *Issue
			if !f.simple() || (flags&flagConfidential != 0 && info.Level < projects.Reporter && !own) {
				if i, walkErr = issues.Get(tx, id); walkErr != nil {
					return false
				}
				if !visible(*info, i, uid) || !f.matches(i) || !s.matchesSets(tx, f, i) {
					return true
				}
			}
			walkErr = w.add(tx, id, i)
			return walkErr == nil
		})
		if walkErr != nil {
			return walkErr
		}
		total = w.total
		out = s.records(w.page, func(i *Issue) projects.ProjectInfo { return *infos[i.ProjectID] })
		return nil
	})
	return out, total, err
}

// walkUserKeys visits the byUser keys under prefix in order (newest first
// when desc) until fn returns false.
func walkUserKeys(tx *store.Tx, prefix []byte, desc bool, fn func(id int64, flags byte, project int64) bool) {
	store.WalkPrefix(tx, byUser, prefix, desc, func(k, v []byte) bool {
		return len(k) != userKeyLen || len(v) != 9 ||
			fn(int64(store.KeyID(k[userKeyLen-8:])), v[0], int64(store.KeyID(v[1:])))
	})
}

// ListMineScan is ListMine as it was before the byUser keys: every issue
// of the scope decoded, then filtered, sorted and paged. It is the
// reference the tests compare ListMine with; nothing else calls it.
func (s *Service) ListMineScan(ctx context.Context, q issue.ListQuery) ([]issue.Issue, int, error) {
	f, err := filterOf(q)
	if err != nil {
		return nil, 0, err
	}
	switch q.Scope {
	case "", "created-by-me", "created_by_me", "assigned-to-me", "assigned_to_me", "all":
	default:
		return nil, 0, invalidValue("scope")
	}
	uid := auth.FromContext(ctx).UserID()
	var out []issue.Issue
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var ids []int64
		var err error
		switch q.Scope {
		case "assigned-to-me", "assigned_to_me":
			ids, err = issues.IDsBy(tx, "assignee", store.IDString(uid))
		case "all":
			// Below, from the ordering keys.
		default:
			ids, err = issues.IDsBy(tx, "author", store.IDString(uid))
		}
		if err != nil {
			return err
		}
		readable := s.readableProjects(tx.Context())
		project, infos := readable.get, readable.infos
		if q.Scope == "all" {
			// The ordering keys name each issue's project: issues of
			// projects the caller may not read are skipped undecoded.
			ids = ids[:0]
			var walkErr error
			c := byCreated.Cursor(tx)
			for k, v := c.First(); k != nil; k, v = c.Next() {
				info, err := project(int64(store.KeyID(k[:8])))
				if err != nil {
					walkErr = err
					break
				}
				if info != nil && len(v) > 0 && f.stateOK(v[0]) {
					ids = append(ids, int64(store.KeyID(k[16:])))
				}
			}
			if walkErr != nil {
				return walkErr
			}
		}
		var list []*Issue
		for _, id := range ids {
			i, err := issues.Get(tx, id)
			if err != nil {
				return err
			}
			info, err := project(i.ProjectID)
			if err != nil {
				return err
			}
			if info == nil || !visible(*info, i, uid) || !f.matches(i) || !s.matchesSets(tx, f, i) {
				continue
			}
			list = append(list, i)
		}
		sortIssues(list, f)
		total = len(list)
		out = s.records(target.Window(list, target.Page{Offset: q.Offset, Limit: q.Limit}),
			func(i *Issue) projects.ProjectInfo { return *infos[i.ProjectID] })
		return nil
	})
	return out, total, err
}

// matchesSets applies the label, milestone and iid filters to one issue.
func (s *Service) matchesSets(tx *store.Tx, f *filter, i *Issue) bool {
	if len(f.iids) > 0 && !slices.Contains(f.iids, i.IID) {
		return false
	}
	if len(f.labels) > 0 {
		names, err := labelNames(tx, i.LabelIDs)
		if err != nil {
			return false
		}
		for _, want := range f.labels {
			switch {
			case isNone(want):
				if len(names) > 0 {
					return false
				}
			case isAny(want):
				if len(names) == 0 {
					return false
				}
			case !slices.Contains(names, want):
				return false
			}
		}
	}
	switch {
	case f.mile == "":
	case isNone(f.mile):
		return i.MilestoneID == 0
	case isAny(f.mile):
		return i.MilestoneID != 0
	default:
		m, err := milestones.Get(tx, i.MilestoneID)
		return err == nil && m.Title == f.mile
	}
	return true
}

func sortIssues(list []*Issue, f *filter) {
	at := func(i *Issue) time.Time {
		if f.updated {
			return i.UpdatedAt
		}
		return i.CreatedAt
	}
	sort.SliceStable(list, func(a, b int) bool {
		ta, tb := at(list[a]), at(list[b])
		if !ta.Equal(tb) {
			if f.asc {
				return ta.Before(tb)
			}
			return ta.After(tb)
		}
		if f.asc {
			return list[a].ID < list[b].ID
		}
		return list[a].ID > list[b].ID
	})
}

// Get implements issue.Service.
func (s *Service) Get(ctx context.Context, ref issue.Ref) (issue.Issue, error) {
	info, err := s.readProject(ctx, ref.Project)
	if err != nil {
		return issue.Issue{}, err
	}
	var out issue.Issue
	err = s.db.View(ctx, func(tx *store.Tx) error {
		i, err := issueByIID(tx, info, int64(ref.IID), auth.FromContext(ctx).UserID())
		if err == nil {
			out = s.record(info, i)
		}
		return err
	})
	return out, err
}

// checkLabelNames validates the label names a create or an update gives.
func checkLabelNames(names []string) error {
	for _, n := range names {
		if err := checkLabelName(n); err != nil {
			return err
		}
	}
	return nil
}

// Create implements issue.Service.
func (s *Service) Create(ctx context.Context, project string, in issue.Fields) (issue.Issue, error) {
	info, err := s.access.Require(ctx, project, projects.CreateIssue)
	if err != nil {
		return issue.Issue{}, err
	}
	if in.Title == nil {
		return issue.Issue{}, missing("title")
	}
	uid := auth.FromContext(ctx).UserID()
	now := s.now()
	title, description, err := target.CheckText(in.Title, in.Description)
	if err != nil {
		return issue.Issue{}, err
	}
	i := &Issue{ProjectID: info.ID, Title: title, Description: description, State: StateOpened, AuthorID: uid,
		CreatedAt: now, UpdatedAt: now}
	if in.Confidential != nil {
		i.Confidential = *in.Confidential
	}
	if in.DueDate != nil {
		if i.DueDate, err = parseDueDate(*in.DueDate); err != nil {
			return issue.Issue{}, err
		}
	}
	if in.CreatedAt != nil {
		t, err := isotime.Parse(*in.CreatedAt)
		if err != nil {
			return issue.Issue{}, invalidParam("created_at")
		}
		// Only administrators and the project's owners may backdate.
		if info.Level >= projects.Owner {
			i.CreatedAt = t.UTC().Truncate(time.Millisecond)
		}
	}
	admin := mayAdmin(info)
	var labelList []string
	if admin {
		if ids, asked, err := s.assignees(ctx, info, &in); err != nil {
			return issue.Issue{}, err
		} else if asked {
			i.AssigneeIDs = ids
		}
		if in.Labels != nil {
			labelList = *in.Labels
			if err := checkLabelNames(labelList); err != nil {
				return issue.Issue{}, err
			}
		}
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if admin && in.MilestoneID != nil {
			i.MilestoneID, _ = milestoneOf(tx, info, *in.MilestoneID)
		}
		ids, err := s.ensureLabels(tx, i.ProjectID, info.GroupIDs, labelList)
		if err != nil {
			return err
		}
		i.LabelIDs = ids
		if err := insertIssue(tx, i); err != nil {
			return err
		}
		if err := s.publish(tx, info, i, uid, event.Open); err != nil {
			return err
		}
		return s.afterCreate(tx, info, i, uid)
	})
	if err != nil {
		return issue.Issue{}, err
	}
	return s.record(info, i), nil
}

// afterCreate tells notes and todos about a new issue: mentions in its
// description, an assigned todo for its assignees.
func (s *Service) afterCreate(tx *store.Tx, info projects.ProjectInfo, i *Issue, uid int64) error {
	// Labels given at creation are added, as GitLab records them.
	if err := s.recordLabelChange(tx, info.ID, issue.NoteableType, i.ID, uid, nil, i.LabelIDs); err != nil {
		return err
	}
	if s.collab != nil && i.Description != "" {
		if err := s.collab.Mentioned(tx.Context(), s.noteable(info, i), uid, i.Description); err != nil {
			return err
		}
	}
	return s.assignedTodos(tx, i, uid, i.AssigneeIDs)
}

func (s *Service) assignedTodos(tx *store.Tx, i *Issue, uid int64, users []int64) error {
	if s.collab == nil {
		return nil
	}
	return target.AssignedTodos(tx.Context(), s.collab, targetOf(i), i.Title, uid, users)
}

// noChange is an update that gives nothing.
func noChange(in *issue.Fields, ev issue.StateEvent) bool {
	return in.Title == nil && in.Description == nil && in.AssigneeIDs == nil && in.MilestoneID == nil &&
		in.Labels == nil && in.Confidential == nil && in.DueDate == nil && in.CreatedAt == nil && ev == ""
}

// Update implements issue.Service.
func (s *Service) Update(ctx context.Context, ref issue.Ref, in issue.Fields, ev issue.StateEvent) (issue.Issue, error) {
	if noChange(&in, ev) {
		return issue.Issue{}, nothingGiven(issue.FieldNames...)
	}
	if ev != "" && ev != issue.Close && ev != issue.Reopen {
		return issue.Issue{}, invalidValue("state_event")
	}
	info, err := s.writeProject(ctx, ref.Project)
	if err != nil {
		return issue.Issue{}, err
	}
	title, description, err := target.CheckText(in.Title, in.Description)
	if err != nil {
		return issue.Issue{}, err
	}
	var due string
	if in.DueDate != nil {
		if due, err = parseDueDate(*in.DueDate); err != nil {
			return issue.Issue{}, err
		}
	}
	var createdAt time.Time
	if in.CreatedAt != nil {
		t, err := isotime.Parse(*in.CreatedAt)
		if err != nil {
			return issue.Issue{}, invalidParam("created_at")
		}
		createdAt = t.UTC().Truncate(time.Millisecond)
	}
	admin := mayAdmin(info)
	var newAssignees []int64
	var assigneesAsked bool
	var labelList []string
	if admin {
		if newAssignees, assigneesAsked, err = s.assignees(ctx, info, &in); err != nil {
			return issue.Issue{}, err
		}
		if in.Labels != nil {
			labelList = *in.Labels
			if err := checkLabelNames(labelList); err != nil {
				return issue.Issue{}, err
			}
		}
	}
	uid := auth.FromContext(ctx).UserID()
	var out issue.Issue
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		i, err := issueByIID(tx, info, int64(ref.IID), uid)
		if err != nil {
			return err
		}
		if !mayUpdate(info, i, uid) {
			return projects.ErrForbidden
		}
		before := *i
		ch := change{}
		if in.Title != nil && title != i.Title {
			ch.title = i.Title
			i.Title = title
		}
		if in.Description != nil && description != i.Description {
			ch.description = true
			i.Description = description
		}
		if in.Confidential != nil && *in.Confidential != i.Confidential {
			ch.other = true
			i.Confidential = *in.Confidential
		}
		if in.DueDate != nil && due != i.DueDate {
			ch.other = true
			i.DueDate = due
		}
		if !createdAt.IsZero() && info.Level >= projects.Owner && !createdAt.Equal(i.CreatedAt) {
			ch.other = true
			i.CreatedAt = createdAt
		}
		if admin {
			if assigneesAsked && !slices.Equal(newAssignees, i.AssigneeIDs) {
				ch.assignees = true
				i.AssigneeIDs = newAssignees
			}
			if in.MilestoneID != nil {
				if m, ok := milestoneOf(tx, info, *in.MilestoneID); ok && m != i.MilestoneID {
					ch.milestone = true
					i.MilestoneID = m
				}
			}
			if in.Labels != nil {
				ids, err := s.ensureLabels(tx, i.ProjectID, info.GroupIDs, labelList)
				if err != nil {
					return err
				}
				if !target.SameLabels(ids, i.LabelIDs) {
					ch.labels = true
					i.LabelIDs = ids
				}
			}
		}
		state := ""
		switch {
		case ev == issue.Close && i.Open():
			state, i.State = StateClosed, StateClosed
		case ev == issue.Reopen && !i.Open():
			state, i.State = StateReopened, StateReopened
		}
		if ch.any() || state != "" {
			i.UpdatedAt = s.now()
			if !i.UpdatedAt.After(before.UpdatedAt) {
				i.UpdatedAt = before.UpdatedAt.Add(time.Millisecond)
			}
			if err := updateIssue(tx, before, i); err != nil {
				return err
			}
			if err := s.changed(tx, info, &before, i, uid, ch); err != nil {
				return err
			}
			if state != "" {
				if err := s.stateChanged(tx, info, i, uid, ""); err != nil {
					return err
				}
			}
		}
		out = s.record(info, i)
		return nil
	})
	return out, err
}

// change records what an update changed, for its system notes and event.
type change struct {
	title       string // the old title when it changed
	description bool
	assignees   bool
	labels      bool
	milestone   bool
	other       bool
}

func (c change) any() bool {
	return c.title != "" || c.description || c.assignees || c.labels || c.milestone || c.other
}

// changed writes the system notes, todos and event of a field change.
func (s *Service) changed(tx *store.Tx, info projects.ProjectInfo, before, i *Issue, uid int64, ch change) error {
	if !ch.any() {
		return nil
	}
	n := s.noteable(info, i)
	system := func(body string) error {
		if s.collab == nil {
			return nil
		}
		return s.collab.System(tx.Context(), n, uid, body)
	}
	if ch.title != "" {
		if err := system(target.TitleNote(ch.title, i.Title)); err != nil {
			return err
		}
	}
	if ch.description {
		if err := system(target.DescriptionNote); err != nil {
			return err
		}
		if s.collab != nil && i.Description != "" {
			if err := s.collab.Mentioned(tx.Context(), n, uid, i.Description); err != nil {
				return err
			}
		}
	}
	if ch.assignees {
		body := "removed assignee"
		if len(i.AssigneeIDs) > 0 {
			var names []string
			for _, a := range i.AssigneeIDs {
				if u, err := s.users.UserByID(tx.Context(), a); err == nil {
					names = append(names, "@"+u.Username)
				}
			}
			body = "assigned to " + strings.Join(names, " and ")
		}
		if err := system(body); err != nil {
			return err
		}
		var added []int64
		for _, a := range i.AssigneeIDs {
			if !slices.Contains(before.AssigneeIDs, a) {
				added = append(added, a)
			}
		}
		if err := s.assignedTodos(tx, i, uid, added); err != nil {
			return err
		}
	}
	if ch.labels {
		if err := system(target.LabelNote(before.LabelIDs, i.LabelIDs)); err != nil {
			return err
		}
		if err := s.recordLabelChange(tx, info.ID, issue.NoteableType, i.ID, uid, before.LabelIDs, i.LabelIDs); err != nil {
			return err
		}
	}
	if ch.milestone {
		title := ""
		if i.MilestoneID != 0 {
			title = "%" + store.IDString(i.MilestoneID)
			if m, err := milestones.Get(tx, i.MilestoneID); err == nil {
				title = target.MilestoneRef(m.Title)
			}
		}
		if err := system(target.MilestoneNote(title)); err != nil {
			return err
		}
	}
	return s.publish(tx, info, i, uid, event.Update)
}

// stateChanged writes what a close or reopen causes (already stored): the
// system note ("closed", "reopened", or via is the source: "closed via
// commit <sha>"), the closer's todos done, the feed entry and the event.
func (s *Service) stateChanged(tx *store.Tx, info projects.ProjectInfo, i *Issue, uid int64, via string) error {
	body := "reopened"
	action := event.Reopen
	if !i.Open() {
		body, action = "closed", event.Close
		if s.collab != nil && uid > 0 {
			if err := s.collab.TodosDone(tx.Context(), targetOf(i), uid); err != nil {
				return err
			}
		}
	}
	if via != "" {
		body += " via " + via
	}
	if s.collab != nil {
		if err := s.collab.System(tx.Context(), s.noteable(info, i), uid, body); err != nil {
			return err
		}
	}
	return s.publish(tx, info, i, uid, action)
}

// Delete implements issue.Service.
func (s *Service) Delete(ctx context.Context, ref issue.Ref) error {
	info, err := s.writeProject(ctx, ref.Project)
	if err != nil {
		return err
	}
	uid := auth.FromContext(ctx).UserID()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		i, err := issueByIID(tx, info, int64(ref.IID), uid)
		if err != nil {
			return err
		}
		if info.Level < projects.Owner {
			return projects.ErrForbidden
		}
		return s.removeIssue(tx, i)
	})
}

// removeIssue deletes an issue with its notes, subscriptions and todos.
func (s *Service) removeIssue(tx *store.Tx, i *Issue) error {
	if err := deleteIssue(tx, i); err != nil {
		return err
	}
	if _, err := labelEvents.DeleteBy(tx, "resource", resourceKey(issue.NoteableType, i.ID)); err != nil {
		return err
	}
	if s.collab != nil {
		return s.collab.Remove(tx.Context(), targetOf(i))
	}
	return nil
}

// readableProjects answers, once per project, whether the caller may read
// its issues: its info, or nil for a project the caller may not read or
// that is gone. The lists across projects ask it for every issue's project.
type readableProjects struct {
	ctx    context.Context
	access projects.Access
	infos  map[int64]*projects.ProjectInfo
}

func (s *Service) readableProjects(ctx context.Context) *readableProjects {
	return &readableProjects{ctx: ctx, access: s.access, infos: map[int64]*projects.ProjectInfo{}}
}

func (r *readableProjects) get(id int64) (*projects.ProjectInfo, error) {
	info, ok := r.infos[id]
	if !ok {
		if pi, err := r.access.RequireID(r.ctx, id, projects.ReadIssues); err == nil {
			info = &pi
		} else if !errors.Is(err, projects.ErrNotFound) && !errors.Is(err, projects.ErrForbidden) {
			return nil, err
		}
		r.infos[id] = info
	}
	return info, nil
}

// window counts the issues a list walk keeps and holds those of the page
// [offset, offset+limit), decoding an issue only when the page needs it
// and the walk did not decode it already.
type window struct {
	offset, limit, total int
	page                 []*Issue
}

// add counts issue id, kept by the walk (i when it was decoded, else nil).
func (w *window) add(tx *store.Tx, id int64, i *Issue) error {
	w.total++
	if w.total <= w.offset || len(w.page) >= w.limit {
		return nil
	}
	if i == nil {
		var err error
		if i, err = issues.Get(tx, id); err != nil {
			return err
		}
	}
	w.page = append(w.page, i)
	return nil
}
