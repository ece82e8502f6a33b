package internal

import (
	"context"
	"sort"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/repository"
)

// The views of the HTTP adapter: GitLab's JSON of the records the service
// returns, with the users, labels, milestone, counts and head pipeline
// looked up in one read per answer.

// PipelineView is the head pipeline of the source branch, as GitLab's
// later merge request views show it.
type PipelineView struct {
	ID     int64  `json:"id"`
	SHA    string `json:"sha"`
	Ref    string `json:"ref"`
	Status string `json:"status"`
}

// MRView is GitLab 9.x's merge request (API::Entities::MergeRequest);
// Subscribed and later GitLab's diff_refs are shown on single responses,
// Changes on .../changes.
type MRView struct {
	ID                        int64                 `json:"id"`
	IID                       int64                 `json:"iid"`
	ProjectID                 int64                 `json:"project_id"`
	Title                     string                `json:"title"`
	Description               string                `json:"description"`
	State                     string                `json:"state"`
	CreatedAt                 api.Time              `json:"created_at"`
	UpdatedAt                 api.Time              `json:"updated_at"`
	TargetBranch              string                `json:"target_branch"`
	SourceBranch              string                `json:"source_branch"`
	Upvotes                   int                   `json:"upvotes"`
	Downvotes                 int                   `json:"downvotes"`
	Author                    identity.BasicUser    `json:"author"`
	Assignee                  *identity.BasicUser   `json:"assignee"`
	SourceProjectID           int64                 `json:"source_project_id"`
	TargetProjectID           int64                 `json:"target_project_id"`
	Labels                    []string              `json:"labels"`
	WorkInProgress            bool                  `json:"work_in_progress"`
	Milestone                 any                   `json:"milestone"` // the keeper's view (target.Milestone.View)
	MergeWhenPipelineSucceeds bool                  `json:"merge_when_pipeline_succeeds"`
	MergeStatus               string                `json:"merge_status"`
	SHA                       string                `json:"sha"`
	MergeCommitSHA            *string               `json:"merge_commit_sha"`
	UserNotesCount            int                   `json:"user_notes_count"`
	ShouldRemoveSourceBranch  bool                  `json:"should_remove_source_branch"`
	ForceRemoveSourceBranch   bool                  `json:"force_remove_source_branch"`
	WebURL                    string                `json:"web_url"`
	MergedBy                  *identity.BasicUser   `json:"merged_by"`
	MergedAt                  *api.Time             `json:"merged_at"`
	Pipeline                  *PipelineView         `json:"pipeline"`
	Subscribed                *bool                 `json:"subscribed,omitempty"`
	DiffRefs                  *DiffRefsView         `json:"diff_refs,omitempty"`
	Changes                   []repository.DiffView `json:"changes,omitempty"`
}

// renderer renders a page with one lookup per user, label and milestone.
type renderer struct {
	s          *Service
	ctx        context.Context
	users      *target.UserViews
	labels     map[int64]string
	milestones map[int64]any
}

func (s *Service) renderer(ctx context.Context) *renderer {
	return &renderer{s: s, ctx: ctx, users: target.NewUserViews(s.Users, api.BaseURL(ctx, s.URL)), labels: map[int64]string{},
		milestones: map[int64]any{}}
}

// user is user id's view, read in the renderer's read.
func (r *renderer) user(id int64) identity.BasicUser { return r.users.User(r.ctx, id) }

func (r *renderer) views(tx *store.Tx, list []mergerequest.MergeRequest) ([]MRView, error) {
	r.ctx = tx.Context()
	ids := make([]int64, len(list))
	for n, m := range list {
		ids[n] = int64(m.ID)
	}
	tallies, err := target.Tallies(tx.Context(), r.s.Collab, mergerequest.NoteableType, ids)
	if err != nil {
		return nil, err
	}
	out := make([]MRView, 0, len(list))
	for _, m := range list {
		v := MRView{ID: int64(m.ID), IID: int64(m.IID), ProjectID: m.ProjectID, Title: m.Title, Description: m.Description,
			State: string(m.State), CreatedAt: api.NewTime(m.CreatedAt), UpdatedAt: api.NewTime(m.UpdatedAt), TargetBranch: m.TargetBranch,
			SourceBranch: m.SourceBranch, Author: r.user(m.AuthorID), SourceProjectID: m.SourceProjectID,
			TargetProjectID: m.ProjectID, Labels: []string{}, WorkInProgress: m.WorkInProgress,
			MergeWhenPipelineSucceeds: m.MergeWhenPipelineSucceeds, MergeStatus: string(m.MergeStatus), SHA: m.SHA,
			UserNotesCount: tallies[int64(m.ID)].Notes, Upvotes: tallies[int64(m.ID)].Up, Downvotes: tallies[int64(m.ID)].Down,
			ShouldRemoveSourceBranch: m.ShouldRemoveSourceBranch, ForceRemoveSourceBranch: m.ForceRemoveSourceBranch, WebURL: m.WebURL}
		if m.MergeCommitSHA != "" {
			sha := m.MergeCommitSHA
			v.MergeCommitSHA = &sha
		}
		if m.AssigneeID != 0 {
			a := r.user(m.AssigneeID)
			v.Assignee = &a
		}
		if m.MergedByID != 0 {
			u := r.user(m.MergedByID)
			v.MergedBy = &u
		}
		if m.MergedAt != nil {
			t := api.NewTime(*m.MergedAt)
			v.MergedAt = &t
		}
		if r.s.Labels != nil {
			var missing []int64
			for _, id := range m.LabelIDs {
				if _, ok := r.labels[id]; !ok {
					missing = append(missing, id)
				}
			}
			for _, id := range missing {
				names, err := r.s.Labels.Names(tx.Context(), []int64{id})
				if err != nil {
					return nil, err
				}
				r.labels[id] = ""
				if len(names) == 1 {
					r.labels[id] = names[0]
				}
			}
			for _, id := range m.LabelIDs {
				if n := r.labels[id]; n != "" {
					v.Labels = append(v.Labels, n)
				}
			}
			sort.Strings(v.Labels)
		}
		if m.MilestoneID != 0 && r.s.Milestones != nil {
			ms, ok := r.milestones[m.MilestoneID]
			if !ok {
				if rec, err := r.s.Milestones.Assignable(tx.Context(), m.ProjectID, m.MilestoneID); err == nil {
					ms = rec.View
				}
				r.milestones[m.MilestoneID] = ms
			}
			v.Milestone = ms
		}
		if r.s.CI != nil && m.SHA != "" {
			p, ok, err := r.s.CI.Latest(tx.Context(), m.SourceProjectID, m.SHA)
			if err != nil {
				return nil, err
			}
			if ok {
				v.Pipeline = &PipelineView{ID: int64(p.ID), SHA: p.SHA, Ref: p.Ref, Status: p.Status}
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// single renders one merge request with subscribed (for uid).
func (s *Service) single(ctx context.Context, tx *store.Tx, m mergerequest.MergeRequest, uid int64) (*MRView, error) {
	views, err := s.renderer(ctx).views(tx, []mergerequest.MergeRequest{m})
	if err != nil {
		return nil, err
	}
	v := views[0]
	sub := false
	if s.Collab != nil && uid != 0 {
		if sub, err = s.Collab.Subscribed(tx.Context(), noteableOf(m), uid); err != nil {
			return nil, err
		}
	}
	v.Subscribed = &sub
	return &v, nil
}

// renderOne answers one merge request as the caller sees it, in a read of
// its own.
func (s *Service) renderOne(ctx context.Context, m mergerequest.MergeRequest) (*mrOutput, error) {
	uid := auth.FromContext(ctx).UserID()
	out := &mrOutput{}
	// Read before the view's transaction: it walks the repository.
	refs := s.diffRefs(ctx, m)
	err := s.DB.View(ctx, func(tx *store.Tx) error {
		var err error
		out.Body, err = s.single(ctx, tx, m, uid)
		return err
	})
	if out.Body != nil {
		out.Body.DiffRefs = refs
	}
	return out, err
}
