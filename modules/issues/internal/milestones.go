package internal

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// MilestonePath is a milestone's :id and :milestone_id (its global id, as
// in GitLab 9.x's v4).
type MilestonePath struct {
	ProjectPath
	MilestoneID int64 `path:"milestone_id"`
}

type milestonesOutput struct {
	api.PageHeaders
	Body []MilestoneView
}

type milestoneOutput struct {
	Body *MilestoneView
}

type milestoneBody struct {
	Title       *string `json:"title,omitempty"`
	Description *string `json:"description,omitempty"`
	DueDate     *string `json:"due_date,omitempty"`
	StartDate   *string `json:"start_date,omitempty"`
	StateEvent  *string `json:"state_event,omitempty"`
}

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
	return api.BadRequest("Failed to " + verb + " milestone {:" + field + "=>[\"" + text + "\"]}")
}

func checkMilestoneTitle(verb, t string) error {
	switch {
	case invalidText(t) || hasControl(t):
		return milestoneFailed(verb, "title", "is invalid")
	case t == "":
		return milestoneFailed(verb, "title", "can't be blank")
	case utf8.RuneCountInString(t) > 255:
		return milestoneFailed(verb, "title", "is too long (maximum is 255 characters)")
	}
	return nil
}

func (s *Service) listMilestones(ctx context.Context, in *struct {
	ProjectPath
	api.PageParams
	State  string  `query:"state" doc:"active or closed"`
	IIDs   []int64 `query:"iids"`
	Search string  `query:"search"`
}) (*milestonesOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadProject)
	if err != nil {
		return nil, err
	}
	switch in.State {
	case "", "active", "closed":
	default:
		return nil, api.NotValidValue("state")
	}
	search := strings.ToLower(in.Search)
	out := &milestonesOutput{Body: []MilestoneView{}}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := milestones.IDsBy(tx, "project", i64(info.ID))
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
			out.Body = append(out.Body, *milestoneView(m))
		}
		return nil
	})
	return out, err
}

func containsIID(list []int64, iid uint64) bool {
	for _, v := range list {
		if v == int64(iid) {
			return true
		}
	}
	return false
}

func milestoneIn(tx *store.Tx, project int64, id int64) (*Milestone, error) {
	if id <= 0 {
		return nil, ErrMilestoneNotFound
	}
	m, err := milestones.Get(tx, uint64(id))
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.ProjectID != uint64(project)) {
		return nil, ErrMilestoneNotFound
	}
	return m, err
}

func (s *Service) getMilestone(ctx context.Context, in *MilestonePath) (*milestoneOutput, error) {
	info, err := s.access.Require(ctx, in.ID, projects.ReadProject)
	if err != nil {
		return nil, err
	}
	out := &milestoneOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		m, err := milestoneIn(tx, info.ID, in.MilestoneID)
		if err != nil {
			return err
		}
		out.Body = milestoneView(m)
		return nil
	})
	return out, err
}

func parseDates(b *milestoneBody, m *Milestone) error {
	var err error
	if b.DueDate != nil {
		if m.DueDate, err = parseDueDate(*b.DueDate); err != nil {
			return err
		}
	}
	if b.StartDate != nil {
		if m.StartDate, err = parseDueDate(*b.StartDate); err != nil {
			return api.Invalid("start_date")
		}
	}
	return nil
}

func (s *Service) createMilestone(ctx context.Context, in *struct {
	ProjectPath
	Body milestoneBody
}) (*milestoneOutput, error) {
	b := &in.Body
	if b.Title == nil {
		return nil, api.Missing("title")
	}
	info, err := s.adminMilestones(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	m := &Milestone{ProjectID: uint64(info.ID), Title: strings.TrimSpace(*b.Title), State: "active", CreatedAt: now, UpdatedAt: now}
	if err := checkMilestoneTitle("create", m.Title); err != nil {
		return nil, err
	}
	if b.Description != nil {
		m.Description = *b.Description
	}
	if err := parseDates(b, m); err != nil {
		return nil, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if _, err := milestones.GetBy(tx, "title", u64(m.ProjectID)+"/"+m.Title); err == nil {
			return milestoneFailed("create", "title", "has already been taken")
		}
		iid, err := nextSeq(tx, m.ProjectID, 'm')
		if err != nil {
			return err
		}
		m.IID = iid
		return milestones.Insert(tx, m)
	})
	if err != nil {
		return nil, err
	}
	return &milestoneOutput{Body: milestoneView(m)}, nil
}

func (s *Service) updateMilestone(ctx context.Context, in *struct {
	MilestonePath
	Body milestoneBody
}) (*milestoneOutput, error) {
	b := &in.Body
	if b.Title == nil && b.Description == nil && b.DueDate == nil && b.StartDate == nil && b.StateEvent == nil {
		return nil, api.AtLeastOne("title", "description", "due_date", "start_date", "state_event")
	}
	if b.StateEvent != nil && *b.StateEvent != "close" && *b.StateEvent != "activate" {
		return nil, api.NotValidValue("state_event")
	}
	info, err := s.adminMilestones(ctx, in.ID)
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
	out := &milestoneOutput{}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		m, err := milestoneIn(tx, info.ID, in.MilestoneID)
		if err != nil {
			return err
		}
		if b.Title != nil && title != m.Title {
			if _, err := milestones.GetBy(tx, "title", u64(m.ProjectID)+"/"+title); err == nil {
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
		out.Body = milestoneView(m)
		return nil
	})
	return out, err
}

func (s *Service) milestoneIssues(ctx context.Context, in *struct {
	MilestonePath
	api.PageParams
}) (*issuesOutput, error) {
	info, err := s.readProject(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	uid := auth.FromContext(ctx).UserID()
	out := &issuesOutput{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		m, err := milestoneIn(tx, info.ID, in.MilestoneID)
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
			if visible(info, i, uid) {
				list = append(list, i)
			}
		}
		sortIssues(list, &filter{})
		out.PageHeaders = api.Paginate(ctx, in.PageParams, len(list))
		out.Body, err = s.renderer(ctx).views(tx, api.Window(list, in.PageParams), func(*Issue) projects.ProjectInfo { return info })
		return err
	})
	return out, err
}

func (s *Service) registerMilestones(a *api.API) {
	tags := []string{"milestones"}
	api.Register(a, api.Op{ID: "list-project-milestones", Method: http.MethodGet, Path: "/projects/{id}/milestones", Tags: tags,
		Summary: "A project's milestones"}, s.listMilestones)
	api.Register(a, api.Op{ID: "get-project-milestone", Method: http.MethodGet, Path: "/projects/{id}/milestones/{milestone_id}", Tags: tags,
		Summary: "A milestone"}, s.getMilestone)
	api.Register(a, api.Op{ID: "create-project-milestone", Method: http.MethodPost, Path: "/projects/{id}/milestones", Tags: tags,
		Summary: "Create a milestone", Access: api.SignedIn}, s.createMilestone)
	api.Register(a, api.Op{ID: "update-project-milestone", Method: http.MethodPut, Path: "/projects/{id}/milestones/{milestone_id}", Tags: tags,
		Summary: "Edit, close or activate a milestone", Access: api.SignedIn}, s.updateMilestone)
	api.Register(a, api.Op{ID: "list-project-milestone-issues", Method: http.MethodGet, Path: "/projects/{id}/milestones/{milestone_id}/issues", Tags: tags,
		Summary: "The issues of a milestone"}, s.milestoneIssues)
}
