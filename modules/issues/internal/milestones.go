package internal

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// The project milestones' commands and queries (issue.Service); the group
// milestones' are groupmilestones.go, the endpoints httpmilestones.go.

// adminMilestones resolves :id for changing milestones: Master+ (GitLab
// 9.x's admin_milestone, GITLAB-FACTS section 4), not archived.
func (s *Service) adminMilestones(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	info, err := s.access.Require(ctx, ref, projects.ReadProject)
	if err != nil {
		return info, err
	}
	if info.Level < projects.Master || info.Archived {
		return info, projects.ErrForbidden
	}
	return info, nil
}

func milestoneFailed(verb string, field, text string) error {
	return &issue.MilestoneError{Verb: verb, Field: field, Text: text}
}

func checkMilestoneTitle(verb, t string) error {
	switch {
	case target.InvalidText(t) || hasControl(t):
		return milestoneFailed(verb, "title", "is invalid")
	case t == "":
		return milestoneFailed(verb, "title", "can't be blank")
	case utf8.RuneCountInString(t) > 255:
		return milestoneFailed(verb, "title", "is too long (maximum is 255 characters)")
	}
	return nil
}

// milestoneRecord is the contract's record of a stored milestone.
func milestoneRecord(m *Milestone) issue.Milestone {
	return issue.Milestone{ID: issue.MilestoneID(m.ID), IID: m.IID, ProjectID: m.ProjectID, GroupID: m.GroupID,
		Title: m.Title, Description: m.Description, State: m.State, DueDate: m.DueDate, StartDate: m.StartDate,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

// milestonesBy lists the milestones of an owner (index "project" or
// "group") that the query keeps.
func (s *Service) milestonesBy(ctx context.Context, index string, owner int64, q issue.MilestoneQuery) ([]issue.Milestone, int, error) {
	search := strings.ToLower(q.Search)
	out := []issue.Milestone{}
	total := 0
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := milestones.IDsBy(tx, index, store.IDString(owner))
		if err != nil {
			return err
		}
		var list []*Milestone
		for _, id := range ids {
			m, err := milestones.Get(tx, id)
			if err != nil {
				return err
			}
			if (q.State != "" && m.State != q.State) || (len(q.IIDs) > 0 && !containsIID(q.IIDs, m.IID)) ||
				(search != "" && !strings.Contains(strings.ToLower(m.Title), search) && !strings.Contains(strings.ToLower(m.Description), search)) {
				continue
			}
			list = append(list, m)
		}
		total = len(list)
		for _, m := range target.Window(list, target.Page{Offset: q.Offset, Limit: q.Limit}) {
			out = append(out, milestoneRecord(m))
		}
		return nil
	})
	return out, total, err
}

// Milestones implements issue.Service.
func (s *Service) Milestones(ctx context.Context, project string, q issue.MilestoneQuery) ([]issue.Milestone, int, error) {
	info, err := s.access.Require(ctx, project, projects.ReadProject)
	if err != nil {
		return nil, 0, err
	}
	switch q.State {
	case "", "active", "closed":
	default:
		return nil, 0, invalidValue("state")
	}
	return s.milestonesBy(ctx, "project", info.ID, q)
}

func containsIID(list []int64, iid int64) bool {
	for _, v := range list {
		if v == iid {
			return true
		}
	}
	return false
}

func milestoneIn(tx *store.Tx, project int64, id int64) (*Milestone, error) {
	if id <= 0 {
		return nil, ErrMilestoneNotFound
	}
	m, err := milestones.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.ProjectID != project) {
		return nil, ErrMilestoneNotFound
	}
	return m, err
}

// GetMilestone implements issue.Service.
func (s *Service) GetMilestone(ctx context.Context, project string, id issue.MilestoneID) (issue.Milestone, error) {
	info, err := s.access.Require(ctx, project, projects.ReadProject)
	if err != nil {
		return issue.Milestone{}, err
	}
	var out issue.Milestone
	err = s.db.View(ctx, func(tx *store.Tx) error {
		m, err := milestoneIn(tx, info.ID, int64(id))
		if err == nil {
			out = milestoneRecord(m)
		}
		return err
	})
	return out, err
}

func parseDates(in issue.MilestoneFields, m *Milestone) error {
	var err error
	if in.DueDate != nil {
		if m.DueDate, err = parseDueDate(*in.DueDate); err != nil {
			return err
		}
	}
	if in.StartDate != nil {
		if m.StartDate, err = parseDueDate(*in.StartDate); err != nil {
			return invalidParam("start_date")
		}
	}
	return nil
}

// newMilestone checks what a create gives (its title given) and makes the
// milestone, not yet stored.
func (s *Service) newMilestone(in issue.MilestoneFields, m *Milestone) error {
	now := s.now()
	m.Title, m.State, m.CreatedAt, m.UpdatedAt = strings.TrimSpace(*in.Title), "active", now, now
	if err := checkMilestoneTitle("create", m.Title); err != nil {
		return err
	}
	if in.Description != nil {
		m.Description = *in.Description
	}
	return parseDates(in, m)
}

// insertMilestone stores a new milestone, its title free in its owner,
// its iid the next of seq.
func insertMilestone(tx *store.Tx, m *Milestone, owner int64, seq byte) error {
	if _, err := milestones.GetBy(tx, "title", milestoneOwnerKey(m)+"/"+m.Title); err == nil {
		return milestoneFailed("create", "title", "has already been taken")
	}
	iid, err := nextSeq(tx, owner, seq)
	if err != nil {
		return err
	}
	m.IID = iid
	return milestones.Insert(tx, m)
}

// CreateMilestone implements issue.Service.
func (s *Service) CreateMilestone(ctx context.Context, project string, in issue.MilestoneFields) (issue.Milestone, error) {
	if in.Title == nil {
		return issue.Milestone{}, missing("title")
	}
	info, err := s.adminMilestones(ctx, project)
	if err != nil {
		return issue.Milestone{}, err
	}
	m := &Milestone{ProjectID: info.ID}
	if err := s.newMilestone(in, m); err != nil {
		return issue.Milestone{}, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error { return insertMilestone(tx, m, m.ProjectID, 'm') })
	if err != nil {
		return issue.Milestone{}, err
	}
	return milestoneRecord(m), nil
}

// checkMilestoneUpdate is what an update checks before it resolves the
// owner: something given, a state event it knows.
func checkMilestoneUpdate(in issue.MilestoneFields, ev issue.MilestoneEvent) error {
	if in.Title == nil && in.Description == nil && in.DueDate == nil && in.StartDate == nil && ev == "" {
		return nothingGiven("title", "description", "due_date", "start_date", "state_event")
	}
	if ev != "" && ev != issue.CloseMilestone && ev != issue.ActivateMilestone {
		return invalidValue("state_event")
	}
	return nil
}

// changeMilestone changes a milestone read by find in the same write.
func (s *Service) changeMilestone(ctx context.Context, in issue.MilestoneFields, ev issue.MilestoneEvent,
	find func(tx *store.Tx) (*Milestone, error)) (issue.Milestone, error) {
	var title string
	if in.Title != nil {
		title = strings.TrimSpace(*in.Title)
		if err := checkMilestoneTitle("update", title); err != nil {
			return issue.Milestone{}, err
		}
	}
	var out issue.Milestone
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		m, err := find(tx)
		if err != nil {
			return err
		}
		if in.Title != nil && title != m.Title {
			if _, err := milestones.GetBy(tx, "title", milestoneOwnerKey(m)+"/"+title); err == nil {
				return milestoneFailed("update", "title", "has already been taken")
			}
			m.Title = title
		}
		if in.Description != nil {
			m.Description = *in.Description
		}
		if err := parseDates(in, m); err != nil {
			return err
		}
		switch ev {
		case issue.CloseMilestone:
			m.State = "closed"
		case issue.ActivateMilestone:
			m.State = "active"
		}
		m.UpdatedAt = s.now()
		if err := milestones.Update(tx, m); err != nil {
			return err
		}
		out = milestoneRecord(m)
		return nil
	})
	return out, err
}

// UpdateMilestone implements issue.Service.
func (s *Service) UpdateMilestone(ctx context.Context, project string, id issue.MilestoneID, in issue.MilestoneFields, ev issue.MilestoneEvent) (issue.Milestone, error) {
	if err := checkMilestoneUpdate(in, ev); err != nil {
		return issue.Milestone{}, err
	}
	info, err := s.adminMilestones(ctx, project)
	if err != nil {
		return issue.Milestone{}, err
	}
	return s.changeMilestone(ctx, in, ev, func(tx *store.Tx) (*Milestone, error) { return milestoneIn(tx, info.ID, int64(id)) })
}

// issuesOfMilestone are the issues of milestone m that the caller may see:
// info gives an issue's project as the caller sees it (ok false: hidden).
func (s *Service) issuesOfMilestone(tx *store.Tx, m *Milestone, uid int64, offset, limit int,
	info func(i *Issue) (projects.ProjectInfo, bool, error)) ([]issue.Issue, int, error) {
	ids, err := issues.IDsBy(tx, "milestone", store.IDString(m.ID))
	if err != nil {
		return nil, 0, err
	}
	var list []*Issue
	infos := map[int64]projects.ProjectInfo{}
	for _, id := range ids {
		i, err := issues.Get(tx, id)
		if err != nil {
			return nil, 0, err
		}
		p, ok, err := info(i)
		if err != nil {
			return nil, 0, err
		}
		if ok && visible(p, i, uid) {
			infos[i.ProjectID] = p
			list = append(list, i)
		}
	}
	sortIssues(list, &filter{})
	return s.records(target.Window(list, target.Page{Offset: offset, Limit: limit}),
		func(i *Issue) projects.ProjectInfo { return infos[i.ProjectID] }), len(list), nil
}

// MilestoneIssues implements issue.Service.
func (s *Service) MilestoneIssues(ctx context.Context, project string, id issue.MilestoneID, offset, limit int) ([]issue.Issue, int, error) {
	info, err := s.readProject(ctx, project)
	if err != nil {
		return nil, 0, err
	}
	var out []issue.Issue
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		m, err := milestoneIn(tx, info.ID, int64(id))
		if err != nil {
			return err
		}
		out, total, err = s.issuesOfMilestone(tx, m, auth.FromContext(ctx).UserID(), offset, limit, func(*Issue) (projects.ProjectInfo, bool, error) { return info, true, nil })
		return err
	})
	return out, total, err
}
