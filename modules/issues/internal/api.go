package internal

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/event"
	"github.com/fennec-forge/fennec/modules/projects"
)

// ProjectPath is a project's :id. Exported because operations embed it
// (huma reads the parameters of exported embedded structs only).
type ProjectPath struct {
	ID string `path:"id" doc:"Project id or URL-encoded full path"`
}

// IssuePath is an issue's :id and :issue_iid.
type IssuePath struct {
	ProjectPath
	IID int64 `path:"issue_iid"`
}

// ListParams are the filters of the issue lists.
type ListParams struct {
	api.PageParams
	State     string  `query:"state" doc:"opened, closed or all (default)"`
	Labels    string  `query:"labels" doc:"comma-separated label names; issues must have all"`
	Milestone string  `query:"milestone" doc:"milestone title, 'No Milestone' or 'Any Milestone'"`
	IIDs      []int64 `query:"iids" doc:"iids[]=1&iids[]=2"`
	Search    string  `query:"search" doc:"in titles and descriptions"`
	OrderBy   string  `query:"order_by" doc:"created_at (default) or updated_at"`
	Sort      string  `query:"sort" doc:"desc (default) or asc"`
}

func (p *ListParams) filter() (*filter, error) {
	f := &filter{state: p.State, labels: splitLabels(p.Labels), mile: strings.TrimSpace(p.Milestone), iids: p.IIDs,
		search: strings.ToLower(strings.TrimSpace(p.Search))}
	switch p.State {
	case "", "all", StateOpened, StateClosed:
	default:
		return nil, api.NotValidValue("state")
	}
	switch p.OrderBy {
	case "", "created_at":
	case "updated_at":
		f.updated = true
	default:
		return nil, api.NotValidValue("order_by")
	}
	switch p.Sort {
	case "", "desc":
	case "asc":
		f.asc = true
	default:
		return nil, api.NotValidValue("sort")
	}
	return f, nil
}

type issuesOutput struct {
	api.PageHeaders
	Body []IssueView
}

type issueOutput struct {
	Body *IssueView
}

// issueBody is the parameters of POST and PUT.
type issueBody struct {
	Title        *string  `json:"title,omitempty"`
	Description  *string  `json:"description,omitempty"`
	AssigneeID   *int64   `json:"assignee_id,omitempty"`
	AssigneeIDs  *[]int64 `json:"assignee_ids,omitempty"`
	MilestoneID  *int64   `json:"milestone_id,omitempty"`
	Labels       *string  `json:"labels,omitempty"`
	Confidential *bool    `json:"confidential,omitempty"`
	DueDate      *string  `json:"due_date,omitempty"`
	CreatedAt    *string  `json:"created_at,omitempty"`
	StateEvent   *string  `json:"state_event,omitempty"`
}

func (b *issueBody) empty() bool {
	return b.Title == nil && b.Description == nil && b.AssigneeID == nil && b.AssigneeIDs == nil && b.MilestoneID == nil &&
		b.Labels == nil && b.Confidential == nil && b.DueDate == nil && b.CreatedAt == nil && b.StateEvent == nil
}

// invalidText says whether s is not valid UTF-8 or carries U+FFFD: the API
// turns the invalid bytes of a form or JSON body into U+FFFD before a
// handler sees them, so that is how invalid input arrives here.
func invalidText(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError)
}

// hasControl says whether s holds a control character (C0, DEL, C1): a
// title is one line of text, and a NUL or an escape sequence in it would
// reach every page, feed, mail and terminal that shows it.
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// parseDueDate accepts YYYY-MM-DD (any ISO 8601 date or time: clients send
// both); "" clears.
func parseDueDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	t, err := api.ParseTime(s)
	if err != nil {
		return "", api.Invalid("due_date")
	}
	return t.Format("2006-01-02"), nil
}

// assignees returns the assignees the body asks for (nil: not asked),
// keeping, as GitLab CE does, the first one only, and only users who may
// read the project's issues (others are dropped, as GitLab filters them).
func (s *Service) assignees(ctx context.Context, info projects.ProjectInfo, b *issueBody) ([]int64, bool, error) {
	var ids []int64
	switch {
	case b.AssigneeIDs != nil:
		ids = *b.AssigneeIDs
	case b.AssigneeID != nil:
		ids = []int64{*b.AssigneeID}
	default:
		return nil, false, nil
	}
	out := []int64{}
	for _, id := range ids {
		if id <= 0 || len(out) == 1 {
			continue
		}
		u, err := s.lookup.LookupUser(ctx, i64(id))
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
func milestoneOf(tx *store.Tx, info projects.ProjectInfo, id int64) (uint64, bool) {
	if id <= 0 {
		return 0, true
	}
	m, err := milestones.Get(tx, uint64(id))
	// A project's issues take its own milestones and those of the group
	// owning it and of the groups above that (GitLab 9.x's, with nested
	// groups).
	if err != nil || (m.ProjectID != uint64(info.ID) && (m.GroupID == 0 || !slices.Contains(info.GroupIDs, int64(m.GroupID)))) {
		return 0, false
	}
	return m.ID, true
}

func (s *Service) listIssues(ctx context.Context, in *struct {
	ProjectPath
	ListParams
}) (*issuesOutput, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	f, err := in.filter()
	if err != nil {
		return nil, err
	}
	uid := auth.FromContext(ctx).UserID()
	out := &issuesOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		list, total, err := listProject(tx, info, uid, f, in.Offset(), in.Limit())
		if err != nil {
			return err
		}
		out.PageHeaders = api.Paginate(ctx, in.PageParams, total)
		out.Body, err = s.renderer(ctx).views(tx, list, func(*Issue) projects.ProjectInfo { return info })
		return err
	})
	return out, err
}

// listMine is GET /issues: the caller's issues across projects. scope is
// GitLab 9.x's: created-by-me (default), assigned-to-me, all (every issue
// the caller may see).
func (s *Service) listMine(ctx context.Context, in *struct {
	ListParams
	Scope string `query:"scope" doc:"created-by-me (default), assigned-to-me or all"`
}) (*issuesOutput, error) {
	f, err := in.filter()
	if err != nil {
		return nil, err
	}
	switch in.Scope {
	case "", "created-by-me", "created_by_me", "assigned-to-me", "assigned_to_me", "all":
	default:
		return nil, api.NotValidValue("scope")
	}
	uid := auth.FromContext(ctx).UserID()
	out := &issuesOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var ids []uint64
		var err error
		switch in.Scope {
		case "assigned-to-me", "assigned_to_me":
			ids, err = issues.IDsBy(tx, "assignee", i64(uid))
		case "all":
			// Below, from the ordering keys.
		default:
			ids, err = issues.IDsBy(tx, "author", i64(uid))
		}
		if err != nil {
			return err
		}
		infos := map[uint64]*projects.ProjectInfo{}
		project := func(id uint64) (*projects.ProjectInfo, error) {
			info, ok := infos[id]
			if !ok {
				if pi, err := s.access.RequireID(tx.Context(), int64(id), projects.ReadIssues); err == nil {
					info = &pi
				} else if !errors.Is(err, projects.ErrNotFound) && !errors.Is(err, projects.ErrForbidden) {
					return nil, err
				}
				infos[id] = info
			}
			return info, nil
		}
		if in.Scope == "all" {
			// The ordering keys name each issue's project: issues of
			// projects the caller may not read are skipped undecoded.
			ids = ids[:0]
			var walkErr error
			c := tx.Bucket(byCreated).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				info, err := project(store.KeyID(k[:8]))
				if err != nil {
					walkErr = err
					break
				}
				if info != nil && len(v) > 0 && f.stateOK(v[0]) {
					ids = append(ids, store.KeyID(k[16:]))
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
		out.PageHeaders = api.Paginate(ctx, in.PageParams, len(list))
		out.Body, err = s.renderer(ctx).views(tx, api.Window(list, in.PageParams), func(i *Issue) projects.ProjectInfo { return *infos[i.ProjectID] })
		return err
	})
	return out, err
}

// matchesSets applies the label, milestone and iid filters to one issue.
func (s *Service) matchesSets(tx *store.Tx, f *filter, i *Issue) bool {
	if len(f.iids) > 0 && !slices.Contains(f.iids, int64(i.IID)) {
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

func (s *Service) getIssue(ctx context.Context, in *IssuePath) (*issueOutput, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	uid := auth.FromContext(ctx).UserID()
	out := &issueOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		i, err := issueByIID(tx, info, in.IID, uid)
		if err != nil {
			return err
		}
		out.Body, err = s.single(ctx, tx, info, i, uid)
		return err
	})
	return out, err
}

func (s *Service) createIssue(ctx context.Context, in *struct {
	ProjectPath
	Body issueBody
}) (*issueOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.CreateIssue)
	if err != nil {
		return nil, err
	}
	b := &in.Body
	if b.Title == nil {
		return nil, api.Missing("title")
	}
	uid := auth.FromContext(ctx).UserID()
	now := s.now()
	i := &Issue{ProjectID: uint64(info.ID), Title: strings.TrimSpace(*b.Title), State: StateOpened, AuthorID: uid,
		CreatedAt: now, UpdatedAt: now}
	if err := target.CheckTitle(i.Title); err != nil {
		return nil, err
	}
	if b.Description != nil {
		if err := target.CheckDescription(*b.Description); err != nil {
			return nil, err
		}
		i.Description = *b.Description
	}
	if b.Confidential != nil {
		i.Confidential = *b.Confidential
	}
	if b.DueDate != nil {
		if i.DueDate, err = parseDueDate(*b.DueDate); err != nil {
			return nil, err
		}
	}
	if b.CreatedAt != nil {
		t, err := api.ParseTime(*b.CreatedAt)
		if err != nil {
			return nil, api.Invalid("created_at")
		}
		// Only administrators and the project's owners may backdate.
		if info.Level >= projects.Owner {
			i.CreatedAt = t.UTC().Truncate(time.Millisecond)
		}
	}
	admin := mayAdmin(info)
	var labelNames []string
	if admin {
		if ids, asked, err := s.assignees(ctx, info, b); err != nil {
			return nil, err
		} else if asked {
			i.AssigneeIDs = ids
		}
		if b.Labels != nil {
			labelNames = splitLabels(*b.Labels)
			for _, n := range labelNames {
				if err := checkLabelName(n); err != nil {
					return nil, err
				}
			}
		}
	}
	out := &issueOutput{}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if admin && b.MilestoneID != nil {
			i.MilestoneID, _ = milestoneOf(tx, info, *b.MilestoneID)
		}
		ids, err := s.ensureLabels(tx, i.ProjectID, info.GroupIDs, labelNames)
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
		if err := s.afterCreate(tx, info, i, uid); err != nil {
			return err
		}
		out.Body, err = s.single(ctx, tx, info, i, uid)
		return err
	})
	return out, err
}

// afterCreate tells notes and todos about a new issue: mentions in its
// description, an assigned todo for its assignees.
func (s *Service) afterCreate(tx *store.Tx, info projects.ProjectInfo, i *Issue, uid int64) error {
	// Labels given at creation are added, as GitLab records them.
	if err := s.recordLabelChange(tx, info.ID, "Issue", int64(i.ID), uid, nil, i.LabelIDs); err != nil {
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
	if s.collab == nil || len(users) == 0 {
		return nil
	}
	list := make([]target.NewTodo, 0, len(users))
	for _, u := range users {
		list = append(list, target.NewTodo{UserID: u, AuthorID: uid, Target: targetOf(i), Action: target.Assigned, Body: i.Title})
	}
	return s.collab.AddTodos(tx.Context(), list...)
}

func (s *Service) updateIssue(ctx context.Context, in *struct {
	IssuePath
	Body issueBody
}) (*issueOutput, error) {
	b := &in.Body
	if b.empty() {
		return nil, api.AtLeastOne("assignee_id", "assignee_ids", "confidential", "created_at", "description", "due_date",
			"labels", "milestone_id", "state_event", "title")
	}
	if b.StateEvent != nil && *b.StateEvent != "close" && *b.StateEvent != "reopen" {
		return nil, api.NotValidValue("state_event")
	}
	info, err := s.writeProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var title, description, due string
	if b.Title != nil {
		title = strings.TrimSpace(*b.Title)
		if err := target.CheckTitle(title); err != nil {
			return nil, err
		}
	}
	if b.Description != nil {
		if err := target.CheckDescription(*b.Description); err != nil {
			return nil, err
		}
		description = *b.Description
	}
	if b.DueDate != nil {
		if due, err = parseDueDate(*b.DueDate); err != nil {
			return nil, err
		}
	}
	var createdAt time.Time
	if b.CreatedAt != nil {
		t, err := api.ParseTime(*b.CreatedAt)
		if err != nil {
			return nil, api.Invalid("created_at")
		}
		createdAt = t.UTC().Truncate(time.Millisecond)
	}
	admin := mayAdmin(info)
	var newAssignees []int64
	var assigneesAsked bool
	var labelList []string
	if admin {
		if newAssignees, assigneesAsked, err = s.assignees(ctx, info, b); err != nil {
			return nil, err
		}
		if b.Labels != nil {
			labelList = splitLabels(*b.Labels)
			for _, n := range labelList {
				if err := checkLabelName(n); err != nil {
					return nil, err
				}
			}
		}
	}
	uid := auth.FromContext(ctx).UserID()
	out := &issueOutput{}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		i, err := issueByIID(tx, info, in.IID, uid)
		if err != nil {
			return err
		}
		if !mayUpdate(info, i, uid) {
			return projects.ErrForbidden
		}
		before := *i
		ch := change{}
		if b.Title != nil && title != i.Title {
			ch.title = i.Title
			i.Title = title
		}
		if b.Description != nil && description != i.Description {
			ch.description = true
			i.Description = description
		}
		if b.Confidential != nil && *b.Confidential != i.Confidential {
			ch.other = true
			i.Confidential = *b.Confidential
		}
		if b.DueDate != nil && due != i.DueDate {
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
			if b.MilestoneID != nil {
				if m, ok := milestoneOf(tx, info, *b.MilestoneID); ok && m != i.MilestoneID {
					ch.milestone = true
					i.MilestoneID = m
				}
			}
			if b.Labels != nil {
				ids, err := s.ensureLabels(tx, i.ProjectID, info.GroupIDs, labelList)
				if err != nil {
					return err
				}
				if !sameSet(ids, i.LabelIDs) {
					ch.labels = true
					i.LabelIDs = ids
				}
			}
		}
		state := ""
		if b.StateEvent != nil {
			switch {
			case *b.StateEvent == "close" && i.Open():
				state, i.State = StateClosed, StateClosed
			case *b.StateEvent == "reopen" && !i.Open():
				state, i.State = StateReopened, StateReopened
			}
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
		out.Body, err = s.single(ctx, tx, info, i, uid)
		return err
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

func sameSet(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
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
		if err := system("changed title from **" + ch.title + "** to **" + i.Title + "**"); err != nil {
			return err
		}
	}
	if ch.description {
		if err := system("changed the description"); err != nil {
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
		if err := system(target.LabelNote(toI64(before.LabelIDs), toI64(i.LabelIDs))); err != nil {
			return err
		}
		if err := s.recordLabelChange(tx, info.ID, "Issue", int64(i.ID), uid, before.LabelIDs, i.LabelIDs); err != nil {
			return err
		}
	}
	if ch.milestone {
		body := "removed milestone"
		if i.MilestoneID != 0 {
			body = "changed milestone to %" + u64(i.MilestoneID)
			if m, err := milestones.Get(tx, i.MilestoneID); err == nil {
				// GitLab names a milestone in quotes: %"v1.0".
				body = `changed milestone to %"` + strings.ReplaceAll(m.Title, `"`, "") + `"`
			}
		}
		if err := system(body); err != nil {
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

type deleteOutput struct{}

func (s *Service) deleteIssue(ctx context.Context, in *IssuePath) (*deleteOutput, error) {
	info, err := s.writeProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	uid := auth.FromContext(ctx).UserID()
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		i, err := issueByIID(tx, info, in.IID, uid)
		if err != nil {
			return err
		}
		if info.Level < projects.Owner {
			return projects.ErrForbidden
		}
		return s.removeIssue(tx, i)
	})
	return &deleteOutput{}, err
}

// removeIssue deletes an issue with its notes, subscriptions and todos.
func (s *Service) removeIssue(tx *store.Tx, i *Issue) error {
	if err := deleteIssue(tx, i); err != nil {
		return err
	}
	if _, err := labelEvents.DeleteBy(tx, "resource", resourceKey("Issue", int64(i.ID))); err != nil {
		return err
	}
	if s.collab != nil {
		return s.collab.Remove(tx.Context(), targetOf(i))
	}
	return nil
}

// NewRoutes registers the module's operations and maps its errors.
func NewRoutes(s *Service) fennec.Routes {
	return fennec.Routes{Name: "issues", Register: func(a *api.API) {
		a.MapError(ErrIssueNotFound, func(error) *api.Error { return api.RecordNotFound() })
		a.MapError(ErrMilestoneNotFound, func(error) *api.Error { return api.RecordNotFound() })
		a.MapError(ErrLabelNotFound, func(error) *api.Error { return api.NotFound("Label") })
		a.MapError(ErrLabelExists, func(error) *api.Error { return api.Conflict("Label already exists") })
		s.registerIssues(a)
		s.registerLabels(a)
		s.registerMilestones(a)
		s.registerGroupMilestones(a)
		s.registerGroupLabels(a)
	}}
}

func (s *Service) registerIssues(a *api.API) {
	tags := []string{"issues"}
	api.Register(a, api.Op{ID: "list-project-issues", Method: http.MethodGet, Path: "/projects/{id}/issues", Tags: tags,
		Summary: "A project's issues"}, s.listIssues)
	api.Register(a, api.Op{ID: "list-issues", Method: http.MethodGet, Path: "/issues", Tags: tags,
		Summary: "The caller's issues (scope)", Access: api.SignedIn}, s.listMine)
	api.Register(a, api.Op{ID: "get-project-issue", Method: http.MethodGet, Path: "/projects/{id}/issues/{issue_iid}", Tags: tags,
		Summary: "An issue"}, s.getIssue)
	api.Register(a, api.Op{ID: "create-project-issue", Method: http.MethodPost, Path: "/projects/{id}/issues", Tags: tags,
		Summary: "Open an issue", Access: api.SignedIn}, s.createIssue)
	api.Register(a, api.Op{ID: "update-project-issue", Method: http.MethodPut, Path: "/projects/{id}/issues/{issue_iid}", Tags: tags,
		Summary: "Edit, close or reopen an issue", Access: api.SignedIn}, s.updateIssue)
	api.Register(a, api.Op{ID: "delete-project-issue", Method: http.MethodDelete, Path: "/projects/{id}/issues/{issue_iid}", Tags: tags,
		Summary: "Delete an issue (owners and administrators)", Access: api.SignedIn}, s.deleteIssue)
}
