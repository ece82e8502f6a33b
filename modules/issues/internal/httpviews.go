package internal

import (
	"context"
	"errors"
	"sort"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/issues/issue"
)

// The views of the HTTP adapter: GitLab 9.x's JSON of the records the
// service returns, with the users, labels, milestone and counts looked up
// in one read per answer.

// IssueView is GitLab 9.x's issue (API::Entities::Issue); Subscribed is
// shown on single-issue responses only.
type IssueView struct {
	ID             int64                `json:"id"`
	IID            int64                `json:"iid"`
	ProjectID      int64                `json:"project_id"`
	Title          string               `json:"title"`
	Description    *string              `json:"description"`
	State          string               `json:"state"`
	CreatedAt      api.Time             `json:"created_at"`
	UpdatedAt      api.Time             `json:"updated_at"`
	Labels         []string             `json:"labels"`
	Milestone      *MilestoneView       `json:"milestone"`
	Assignees      []identity.BasicUser `json:"assignees"`
	Assignee       *identity.BasicUser  `json:"assignee"`
	Author         identity.BasicUser   `json:"author"`
	UserNotesCount int                  `json:"user_notes_count"`
	Upvotes        int                  `json:"upvotes"`
	Downvotes      int                  `json:"downvotes"`
	DueDate        *string              `json:"due_date"`
	Confidential   bool                 `json:"confidential"`
	WebURL         string               `json:"web_url"`
	Subscribed     *bool                `json:"subscribed,omitempty"`
}

// MilestoneView is GitLab 9.x's milestone.
type MilestoneView struct {
	ID          int64    `json:"id"`
	IID         int64    `json:"iid"`
	ProjectID   int64    `json:"project_id,omitempty"` // a group milestone has
	GroupID     int64    `json:"group_id,omitempty"`   // group_id instead (GitLab's entity)
	Title       string   `json:"title"`
	Description *string  `json:"description"`
	State       string   `json:"state"`
	CreatedAt   api.Time `json:"created_at"`
	UpdatedAt   api.Time `json:"updated_at"`
	DueDate     *string  `json:"due_date"`
	StartDate   *string  `json:"start_date"`
}

// LabelView is GitLab 9.x's label with its counts, as a project sees it:
// IsProjectLabel (later GitLab's ProjectLabel entity) is false for the
// labels it inherits from its groups.
type LabelView struct {
	ID                     int64   `json:"id"`
	Name                   string  `json:"name"`
	Color                  string  `json:"color"`
	Description            *string `json:"description"`
	OpenIssuesCount        int     `json:"open_issues_count"`
	ClosedIssuesCount      int     `json:"closed_issues_count"`
	OpenMergeRequestsCount int     `json:"open_merge_requests_count"`
	Subscribed             bool    `json:"subscribed"`
	Priority               *int    `json:"priority"`
	IsProjectLabel         bool    `json:"is_project_label"`
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func milestoneView(m issue.Milestone) *MilestoneView {
	return &MilestoneView{ID: int64(m.ID), IID: m.IID, ProjectID: m.ProjectID, GroupID: m.GroupID, Title: m.Title, Description: strPtr(m.Description),
		State: m.State, CreatedAt: api.NewTime(m.CreatedAt), UpdatedAt: api.NewTime(m.UpdatedAt),
		DueDate: strPtr(m.DueDate), StartDate: strPtr(m.StartDate)}
}

// renderer renders a page of issues with one lookup per user, label and
// milestone however often they appear.
type renderer struct {
	s          *Service
	ctx        context.Context
	users      *target.UserViews
	labels     map[int64]string
	milestones map[int64]*MilestoneView
}

func (s *Service) renderer(ctx context.Context) *renderer {
	return &renderer{s: s, ctx: ctx, users: target.NewUserViews(s.users, api.BaseURL(ctx, s.url)), labels: map[int64]string{},
		milestones: map[int64]*MilestoneView{}}
}

// user is user id's view, read in the renderer's read.
func (r *renderer) user(id int64) identity.BasicUser { return r.users.User(r.ctx, id) }

// views renders records read in tx.
func (r *renderer) views(tx *store.Tx, list []issue.Issue) ([]IssueView, error) {
	r.ctx = tx.Context() // lookups join the read transaction
	out := make([]IssueView, 0, len(list))
	ids := make([]int64, len(list))
	for n, i := range list {
		ids[n] = int64(i.ID)
	}
	tallies, err := target.Tallies(tx.Context(), r.s.collab, issue.NoteableType, ids)
	if err != nil {
		return nil, err
	}
	for _, i := range list {
		v := IssueView{ID: int64(i.ID), IID: int64(i.IID), ProjectID: i.ProjectID, Title: i.Title, Description: strPtr(i.Description),
			State: string(i.State), CreatedAt: api.NewTime(i.CreatedAt), UpdatedAt: api.NewTime(i.UpdatedAt), Labels: []string{},
			Assignees: []identity.BasicUser{}, Author: r.user(i.AuthorID), UserNotesCount: tallies[int64(i.ID)].Notes,
			Upvotes: tallies[int64(i.ID)].Up, Downvotes: tallies[int64(i.ID)].Down,
			DueDate: strPtr(i.DueDate), Confidential: i.Confidential, WebURL: i.WebURL}
		for _, lid := range i.LabelIDs {
			id := int64(lid)
			name, ok := r.labels[id]
			if !ok {
				l, err := labels.Get(tx, id)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return nil, err
				}
				if l != nil {
					name = l.Name
				}
				r.labels[id] = name
			}
			if name != "" {
				v.Labels = append(v.Labels, name)
			}
		}
		sort.Strings(v.Labels)
		if mid := int64(i.MilestoneID); mid != 0 {
			m, ok := r.milestones[mid]
			if !ok {
				row, err := milestones.Get(tx, mid)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return nil, err
				}
				if row != nil {
					m = milestoneView(milestoneRecord(row))
				}
				r.milestones[mid] = m
			}
			v.Milestone = m
		}
		for _, a := range i.AssigneeIDs {
			v.Assignees = append(v.Assignees, r.user(a))
		}
		if len(v.Assignees) > 0 {
			first := v.Assignees[0]
			v.Assignee = &first
		}
		out = append(out, v)
	}
	return out, nil
}

// single renders one record with subscribed (for the caller).
func (s *Service) single(ctx context.Context, tx *store.Tx, r issue.Issue) (*IssueView, error) {
	views, err := s.renderer(ctx).views(tx, []issue.Issue{r})
	if err != nil {
		return nil, err
	}
	v := views[0]
	sub := false
	if uid := auth.FromContext(ctx).UserID(); s.collab != nil && uid != 0 {
		if sub, err = s.collab.Subscribed(tx.Context(), noteableOf(r), uid); err != nil {
			return nil, err
		}
	}
	v.Subscribed = &sub
	return &v, nil
}
