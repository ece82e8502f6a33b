package internal

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
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

// GroupMilestoneView is a group milestone.
type GroupMilestoneView struct {
	ID          uint64   `json:"id"`
	IID         uint64   `json:"iid"`
	GroupID     uint64   `json:"group_id"`
	Title       string   `json:"title"`
	Description *string  `json:"description"`
	State       string   `json:"state"`
	CreatedAt   api.Time `json:"created_at"`
	UpdatedAt   api.Time `json:"updated_at"`
	DueDate     *string  `json:"due_date"`
	StartDate   *string  `json:"start_date"`
}

func groupMilestoneView(m *Milestone) *GroupMilestoneView {
	return &GroupMilestoneView{ID: m.ID, IID: m.IID, GroupID: m.GroupID, Title: m.Title, Description: strPtr(m.Description),
		State: m.State, CreatedAt: api.NewTime(m.CreatedAt), UpdatedAt: api.NewTime(m.UpdatedAt),
		DueDate: strPtr(m.DueDate), StartDate: strPtr(m.StartDate)}
}

// milestoneOwnerKey scopes a milestone's title and iid: its project, or
// "g" and its group.
func milestoneOwnerKey(m *Milestone) string {
	if m.GroupID != 0 {
		return "g" + u64(m.GroupID)
	}
	return u64(m.ProjectID)
}

// groupSeq is the sequence kind of group milestone iids (countKey of the
// group id; project sequences use 'i' and 'm').
const groupSeq = 'g'

// GroupRef is a group's :id.
type GroupRef struct {
	ID string `path:"id" doc:"Group id or URL-encoded path"`
}

// GroupMilestonePath is a group milestone's :id and :milestone_id.
type GroupMilestonePath struct {
	GroupRef
	MilestoneID int64 `path:"milestone_id"`
}

type groupMilestonesOutput struct {
	api.PageHeaders
	Body []GroupMilestoneView
}

type groupMilestoneOutput struct{ Body *GroupMilestoneView }

type groupMilestoneCreate struct {
	Title       *string `json:"title,omitempty" required:"true"`
	Description *string `json:"description,omitempty"`
	DueDate     *string `json:"due_date,omitempty"`
	StartDate   *string `json:"start_date,omitempty"`
}

func (s *Service) registerGroupMilestones(a *api.API) {
	tags := []string{"milestones"}
	api.Register(a, api.Op{ID: "list-group-milestones", Method: http.MethodGet, Path: "/groups/{id}/milestones", Tags: tags,
		Summary: "A group's milestones"}, s.listGroupMilestones)
	api.Register(a, api.Op{ID: "get-group-milestone", Method: http.MethodGet, Path: "/groups/{id}/milestones/{milestone_id}", Tags: tags,
		Summary: "A group milestone"}, s.getGroupMilestone)
	api.Register(a, api.Op{ID: "create-group-milestone", Method: http.MethodPost, Path: "/groups/{id}/milestones", Tags: tags,
		Summary: "Create a group milestone (group Master or Owner)", Access: api.SignedIn}, s.createGroupMilestone)
	api.Register(a, api.Op{ID: "update-group-milestone", Method: http.MethodPut, Path: "/groups/{id}/milestones/{milestone_id}", Tags: tags,
		Summary: "Edit, close or activate a group milestone (group Master or Owner)", Access: api.SignedIn}, s.updateGroupMilestone)
	api.Register(a, api.Op{ID: "list-group-milestone-issues", Method: http.MethodGet, Path: "/groups/{id}/milestones/{milestone_id}/issues", Tags: tags,
		Summary: "The issues of a group milestone the caller may see"}, s.groupMilestoneIssues)
}

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
	m, err := milestones.Get(tx, uint64(id))
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.GroupID != uint64(group)) {
		return nil, ErrMilestoneNotFound
	}
	return m, err
}

func (s *Service) listGroupMilestones(ctx context.Context, in *struct {
	GroupRef
	api.PageParams
	State  string  `query:"state" enum:"active,closed," doc:"active or closed"`
	IIDs   []int64 `query:"iids"`
	Search string  `query:"search" doc:"Title or description contains this"`
}) (*groupMilestonesOutput, error) {
	g, err := s.teams.ResolveGroup(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	search := strings.ToLower(in.Search)
	out := &groupMilestonesOutput{Body: []GroupMilestoneView{}}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := milestones.IDsBy(tx, "group", i64(g.ID))
		if err != nil {
			return err
		}
		var list []*Milestone
		for _, id := range ids {
			m, err := milestones.Get(tx, id)
			if err != nil {
				return err
			}
			if (in.State != "" && m.State != in.State) || (len(in.IIDs) > 0 && !containsIID(in.IIDs, m.IID)) ||
				(search != "" && !strings.Contains(strings.ToLower(m.Title), search) && !strings.Contains(strings.ToLower(m.Description), search)) {
				continue
			}
			list = append(list, m)
		}
		out.PageHeaders = api.Paginate(ctx, in.PageParams, len(list))
		for _, m := range api.Window(list, in.PageParams) {
			out.Body = append(out.Body, *groupMilestoneView(m))
		}
		return nil
	})
	return out, err
}

func (s *Service) getGroupMilestone(ctx context.Context, in *GroupMilestonePath) (*groupMilestoneOutput, error) {
	g, err := s.teams.ResolveGroup(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	out := &groupMilestoneOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		m, err := groupMilestoneIn(tx, g.ID, in.MilestoneID)
		if err != nil {
			return err
		}
		out.Body = groupMilestoneView(m)
		return nil
	})
	return out, err
}

func (s *Service) createGroupMilestone(ctx context.Context, in *struct {
	GroupRef
	Body groupMilestoneCreate
}) (*groupMilestoneOutput, error) {
	b := milestoneBody{Title: in.Body.Title, Description: in.Body.Description, DueDate: in.Body.DueDate, StartDate: in.Body.StartDate}
	if b.Title == nil {
		return nil, api.Missing("title")
	}
	g, err := s.adminGroupMilestones(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	m := &Milestone{GroupID: uint64(g.ID), Title: strings.TrimSpace(*b.Title), State: "active", CreatedAt: now, UpdatedAt: now}
	if err := checkMilestoneTitle("create", m.Title); err != nil {
		return nil, err
	}
	if b.Description != nil {
		m.Description = *b.Description
	}
	if err := parseDates(&b, m); err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := milestones.GetBy(tx, "title", milestoneOwnerKey(m)+"/"+m.Title); err == nil {
			return milestoneFailed("create", "title", "has already been taken")
		}
		iid, err := nextSeq(tx, m.GroupID, groupSeq)
		if err != nil {
			return err
		}
		m.IID = iid
		return milestones.Insert(tx, m)
	})
	if err != nil {
		return nil, err
	}
	return &groupMilestoneOutput{Body: groupMilestoneView(m)}, nil
}

func (s *Service) updateGroupMilestone(ctx context.Context, in *struct {
	GroupMilestonePath
	Body milestoneBody
}) (*groupMilestoneOutput, error) {
	b := &in.Body
	if b.Title == nil && b.Description == nil && b.DueDate == nil && b.StartDate == nil && b.StateEvent == nil {
		return nil, api.AtLeastOne("title", "description", "due_date", "start_date", "state_event")
	}
	if b.StateEvent != nil && *b.StateEvent != "close" && *b.StateEvent != "activate" {
		return nil, api.NotValidValue("state_event")
	}
	g, err := s.adminGroupMilestones(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var title string
	if b.Title != nil {
		title = strings.TrimSpace(*b.Title)
		if err := checkMilestoneTitle("update", title); err != nil {
			return nil, err
		}
	}
	out := &groupMilestoneOutput{}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		m, err := groupMilestoneIn(tx, g.ID, in.MilestoneID)
		if err != nil {
			return err
		}
		if b.Title != nil && title != m.Title {
			if _, err := milestones.GetBy(tx, "title", milestoneOwnerKey(m)+"/"+title); err == nil {
				return milestoneFailed("update", "title", "has already been taken")
			}
			m.Title = title
		}
		if b.Description != nil {
			m.Description = *b.Description
		}
		if err := parseDates(b, m); err != nil {
			return err
		}
		if b.StateEvent != nil {
			m.State = map[string]string{"close": "closed", "activate": "active"}[*b.StateEvent]
		}
		m.UpdatedAt = s.now()
		if err := milestones.Update(tx, m); err != nil {
			return err
		}
		out.Body = groupMilestoneView(m)
		return nil
	})
	return out, err
}

// groupMilestoneIssues lists the issues carrying the milestone in projects
// the caller may read issues of (confidential ones as on the project).
func (s *Service) groupMilestoneIssues(ctx context.Context, in *struct {
	GroupMilestonePath
	api.PageParams
}) (*issuesOutput, error) {
	g, err := s.teams.ResolveGroup(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	uid := auth.FromContext(ctx).UserID()
	infos := map[uint64]projects.ProjectInfo{}
	out := &issuesOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		m, err := groupMilestoneIn(tx, g.ID, in.MilestoneID)
		if err != nil {
			return err
		}
		ids, err := issues.IDsBy(tx, "milestone", u64(m.ID))
		if err != nil {
			return err
		}
		var list []*Issue
		for _, id := range ids {
			i, err := issues.Get(tx, id)
			if err != nil {
				return err
			}
			info, ok := infos[i.ProjectID]
			if !ok {
				info, err = s.access.RequireID(tx.Context(), int64(i.ProjectID), projects.ReadIssues)
				if errors.Is(err, projects.ErrNotFound) || errors.Is(err, projects.ErrForbidden) {
					infos[i.ProjectID] = projects.ProjectInfo{}
					continue
				}
				if err != nil {
					return err
				}
				infos[i.ProjectID] = info
			}
			if info.ID != 0 && visible(info, i, uid) {
				list = append(list, i)
			}
		}
		sortIssues(list, &filter{})
		out.PageHeaders = api.Paginate(ctx, in.PageParams, len(list))
		out.Body, err = s.renderer(ctx).views(tx, api.Window(list, in.PageParams), func(i *Issue) projects.ProjectInfo { return infos[i.ProjectID] })
		return err
	})
	return out, err
}
