package internal

import (
	"context"
	"errors"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
)

// Group milestones follow GitLab v4 (9.x): the project milestone's shape
// with group_id in place of project_id, iids numbered per group. Group
// readers (projects.Teams.ResolveGroup: a group one may not see is 404
// Group Not Found) list and read them; changes take Master or Owner of the
// group (GitLab 9.x's GroupPolicy grants admin_milestones to masters, as
// the project's admin_milestone), or an administrator. They live in the
// milestones table (GroupID set, ProjectID 0) so ids are unique across
// project and group milestones.

// milestoneOwnerKey scopes a milestone's title and iid: its project, or
// "g" and its group.
func milestoneOwnerKey(m *Milestone) string {
	if m.GroupID != 0 {
		return "g" + store.IDString(m.GroupID)
	}
	return store.IDString(m.ProjectID)
}

// groupSeq is the sequence kind of group milestone iids (countKey of the
// group id; project sequences use 'i' and 'm').
const groupSeq = 'g'

// adminGroupMilestones resolves :id for changing its milestones.
func (s *Service) adminGroupMilestones(ctx context.Context, ref string) (projects.GroupInfo, error) {
	g, err := s.teams.ResolveGroup(ctx, ref)
	if err != nil {
		return g, err
	}
	if g.Level < projects.Master {
		return g, projects.ErrForbidden
	}
	return g, nil
}

func groupMilestoneIn(tx *store.Tx, group int64, id int64) (*Milestone, error) {
	if id <= 0 {
		return nil, ErrMilestoneNotFound
	}
	m, err := milestones.Get(tx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.GroupID != group) {
		return nil, ErrMilestoneNotFound
	}
	return m, err
}

// GroupMilestones implements issue.Service.
func (s *Service) GroupMilestones(ctx context.Context, group string, q issue.MilestoneQuery) ([]issue.Milestone, int, error) {
	g, err := s.teams.ResolveGroup(ctx, group)
	if err != nil {
		return nil, 0, err
	}
	return s.milestonesBy(ctx, "group", g.ID, q)
}

// GetGroupMilestone implements issue.Service.
func (s *Service) GetGroupMilestone(ctx context.Context, group string, id issue.MilestoneID) (issue.Milestone, error) {
	g, err := s.teams.ResolveGroup(ctx, group)
	if err != nil {
		return issue.Milestone{}, err
	}
	var out issue.Milestone
	err = s.db.View(ctx, func(tx *store.Tx) error {
		m, err := groupMilestoneIn(tx, g.ID, int64(id))
		if err == nil {
			out = milestoneRecord(m)
		}
		return err
	})
	return out, err
}

// CreateGroupMilestone implements issue.Service.
func (s *Service) CreateGroupMilestone(ctx context.Context, group string, in issue.MilestoneFields) (issue.Milestone, error) {
	if in.Title == nil {
		return issue.Milestone{}, missing("title")
	}
	g, err := s.adminGroupMilestones(ctx, group)
	if err != nil {
		return issue.Milestone{}, err
	}
	m := &Milestone{GroupID: g.ID}
	if err := s.newMilestone(in, m); err != nil {
		return issue.Milestone{}, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error { return insertMilestone(tx, m, m.GroupID, groupSeq) })
	if err != nil {
		return issue.Milestone{}, err
	}
	return milestoneRecord(m), nil
}

// UpdateGroupMilestone implements issue.Service.
func (s *Service) UpdateGroupMilestone(ctx context.Context, group string, id issue.MilestoneID, in issue.MilestoneFields, ev issue.MilestoneEvent) (issue.Milestone, error) {
	if err := checkMilestoneUpdate(in, ev); err != nil {
		return issue.Milestone{}, err
	}
	g, err := s.adminGroupMilestones(ctx, group)
	if err != nil {
		return issue.Milestone{}, err
	}
	return s.changeMilestone(ctx, in, ev, func(tx *store.Tx) (*Milestone, error) { return groupMilestoneIn(tx, g.ID, int64(id)) })
}

// GroupMilestoneIssues implements issue.Service: the issues carrying the
// milestone in projects the caller may read issues of (confidential ones
// as on the project).
func (s *Service) GroupMilestoneIssues(ctx context.Context, group string, id issue.MilestoneID, offset, limit int) ([]issue.Issue, int, error) {
	g, err := s.teams.ResolveGroup(ctx, group)
	if err != nil {
		return nil, 0, err
	}
	infos := map[int64]projects.ProjectInfo{}
	var out []issue.Issue
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		m, err := groupMilestoneIn(tx, g.ID, int64(id))
		if err != nil {
			return err
		}
		out, total, err = s.issuesOfMilestone(tx, m, auth.FromContext(ctx).UserID(), offset, limit, func(i *Issue) (projects.ProjectInfo, bool, error) {
			info, ok := infos[i.ProjectID]
			if !ok {
				var err error
				info, err = s.access.RequireID(tx.Context(), i.ProjectID, projects.ReadIssues)
				if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
					info = projects.ProjectInfo{}
				} else if err != nil {
					return info, false, err
				}
				infos[i.ProjectID] = info
			}
			return info, info.ID != 0, nil
		})
		return err
	})
	return out, total, err
}
