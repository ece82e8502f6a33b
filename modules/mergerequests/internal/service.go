package internal

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"time"

	fennec "github.com/fennec-forge/fennec/core"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/mergerequests/event"
	"github.com/fennec-forge/fennec/modules/mergerequests/mergerequest"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

// Deps are what the service is built from (fx fills them). The collab
// module (notes, todos) and the issues services are optional: a bundle without them serves merge
// requests without system notes, todos, labels or issue closing, and one
// without CI merges at once when asked to wait for a pipeline.
type Deps struct {
	fennec.In
	DB         *store.DB
	Bus        *events.Bus
	Access     projects.Access
	Users      identity.Users
	Lookup     auth.UserLookup
	URL        fennec.ExternalURL
	Log        *zap.Logger
	Merges     repository.Merges
	Graph      repository.CommitGraph
	Protection repository.BranchProtection
	Collab     target.Service    `optional:"true"`
	Labels     target.Labels     `optional:"true"`
	Milestones target.Milestones `optional:"true"`
	Closer     target.Closer     `optional:"true"`
	CI         cicd.Pipelines    `optional:"true"`
	Teams      projects.Teams    `optional:"true"`
	// Node marks a merge in flight with this process (MR.LockedNode).
	Node *fennec.Node `optional:"true"`
}

// services are the dependencies the service uses (Deps without fennec.In;
// the logger is the service's own, named).
type services struct {
	DB         *store.DB
	Bus        *events.Bus
	Access     projects.Access
	Users      identity.Users
	Lookup     auth.UserLookup
	URL        fennec.ExternalURL
	Merges     repository.Merges
	Graph      repository.CommitGraph
	Protection repository.BranchProtection
	Collab     target.Service
	Labels     target.Labels
	Milestones target.Milestones
	Closer     target.Closer
	CI         cicd.Pipelines
	// Teams gives the edit page's assignee choices.
	Teams projects.Teams
}

// Service is the merge requests module's service.
type Service struct {
	services
	log  *zap.Logger
	now  func() time.Time
	node *fennec.Node
}

// NewService builds the service.
func NewService(d Deps) *Service {
	deps := services{DB: d.DB, Bus: d.Bus, Access: d.Access, Users: d.Users, Lookup: d.Lookup, URL: d.URL,
		Merges: d.Merges, Graph: d.Graph, Protection: d.Protection, Collab: d.Collab, Labels: d.Labels,
		Milestones: d.Milestones, Closer: d.Closer, CI: d.CI, Teams: d.Teams}
	return &Service{services: deps, log: d.Log.Named("mergerequests"), node: d.Node,
		now: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}
}

// Store is the store, for benchmarks that seed directly.
func (s *Service) Store() *store.DB { return s.DB }

// wip is GitLab 9.x's work-in-progress title prefix.
var wip = regexp.MustCompile(`(?i)^\s*(\[wip\]\s*|wip:\s*|\[wip\]|wip\s+)`)

func workInProgress(title string) bool { return wip.MatchString(title) }

func (s *Service) webURL(info projects.ProjectInfo, iid int64) string {
	return s.URL() + "/" + info.PathWithNamespace + "/merge_requests/" + store.IDString(iid)
}

// record is the contract's record of a stored merge request of project
// info.
func (s *Service) record(info projects.ProjectInfo, m *MR) mergerequest.MergeRequest {
	r := mergerequest.MergeRequest{ID: mergerequest.ID(m.ID), IID: mergerequest.IID(m.IID), ProjectID: m.ProjectID,
		SourceProjectID: m.SourceProjectID, SourceBranch: m.SourceBranch, TargetBranch: m.TargetBranch,
		Title: m.Title, Description: m.Description, State: mergerequest.State(m.State), AuthorID: m.AuthorID,
		AssigneeID: m.AssigneeID, LabelIDs: slices.Clone(m.LabelIDs), MilestoneID: m.MilestoneID, SHA: m.SHA,
		MergeStatus: mergerequest.MergeStatus(m.MergeStatus), MergeWhenPipelineSucceeds: m.MergeWhenPipeline,
		ForceRemoveSourceBranch: m.ForceRemoveSource, ShouldRemoveSourceBranch: m.ShouldRemoveSource,
		WorkInProgress: workInProgress(m.Title), MergeCommitSHA: m.MergeCommitSHA, MergedByID: m.MergedByID,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, WebURL: s.webURL(info, m.IID)}
	if m.MergedAt != nil {
		at := *m.MergedAt
		r.MergedAt = &at
	}
	return r
}

// records are the records of a page of project info's merge requests.
func (s *Service) records(info projects.ProjectInfo, list []*MR) []mergerequest.MergeRequest {
	out := make([]mergerequest.MergeRequest, len(list))
	for i, m := range list {
		out[i] = s.record(info, m)
	}
	return out
}

func (s *Service) noteable(info projects.ProjectInfo, m *MR) target.Noteable {
	return noteableOf(s.record(info, m))
}

// noteableOf is the merge request as the collab module knows it.
func noteableOf(r mergerequest.MergeRequest) target.Noteable {
	n := target.Noteable{Type: mergerequest.NoteableType, ID: int64(r.ID), IID: int64(r.IID), ProjectID: r.ProjectID,
		Title: r.Title, AuthorID: r.AuthorID, WebURL: r.WebURL}
	if r.AssigneeID != 0 {
		n.AssigneeIDs = []int64{r.AssigneeID}
	}
	return n
}

func targetOf(m *MR) target.Target {
	return target.Target{Type: mergerequest.NoteableType, ID: m.ID, ProjectID: m.ProjectID}
}

// readProject resolves :id for reading merge requests.
func (s *Service) readProject(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	return s.Access.Require(ctx, ref, projects.ReadMergeRequests)
}

// writeProject resolves :id for changing merge requests: reading them and
// pushing code (Developer) are needed; archived projects refuse.
func (s *Service) writeProject(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	info, err := s.readProject(ctx, ref)
	if err != nil {
		return info, err
	}
	if _, err := s.Access.RequireID(ctx, info.ID, projects.PushCode); err != nil {
		return info, err
	}
	return info, nil
}

// mrByIID loads a live merge request of a project.
func mrByIID(tx *store.Tx, project int64, iid int64) (*MR, error) {
	if iid <= 0 {
		return nil, mergerequest.ErrNotFound
	}
	m, err := mrs.GetBy(tx, "iid", store.IDString(project)+"/"+store.IDString(iid))
	if errors.Is(err, store.ErrNotFound) || (err == nil && m.Deleted) {
		return nil, mergerequest.ErrNotFound
	}
	return m, err
}

// touch sets UpdatedAt to now, strictly after its old value (the ordering
// keys need distinct times for a change to show).
func (s *Service) touch(m *MR, before time.Time) {
	m.UpdatedAt = s.now()
	if !m.UpdatedAt.After(before) {
		m.UpdatedAt = before.Add(time.Millisecond)
	}
}

// system writes a system note on m (when the collab module is there).
func (s *Service) system(tx *store.Tx, info projects.ProjectInfo, m *MR, uid int64, body string) error {
	if s.Collab == nil {
		return nil
	}
	return s.Collab.System(tx.Context(), s.noteable(info, m), uid, body)
}

// publish sends the feed entry (open, close, reopen, merge) and the merge
// request event of a change.
func (s *Service) publish(tx *store.Tx, info projects.ProjectInfo, m *MR, userID int64, action event.Action) error {
	if fe, ok := target.FeedEntry("mergerequests", targetOf(m), int64(m.IID), m.Title, userID, string(action), m.UpdatedAt); ok {
		if err := s.Bus.Publish(tx, fe); err != nil {
			return err
		}
	}
	names := []string{}
	if s.Labels != nil && len(m.LabelIDs) > 0 {
		var err error
		if names, err = s.Labels.Names(tx.Context(), m.LabelIDs); err != nil {
			return err
		}
	}
	ev := event.MergeRequestEvent{Action: action, ProjectID: info.ID, UserID: userID, MergeRequest: event.MergeRequest{
		ID: m.ID, IID: m.IID, TargetBranch: m.TargetBranch, SourceBranch: m.SourceBranch,
		SourceProjectID: m.SourceProjectID, TargetProjectID: m.ProjectID, AuthorID: m.AuthorID,
		AssigneeID: m.AssigneeID, Title: m.Title, Description: m.Description, State: m.State, MergeStatus: m.MergeStatus,
		MilestoneID: m.MilestoneID, MergeCommitSHA: m.MergeCommitSHA, SHA: m.SHA, WorkInProgress: workInProgress(m.Title),
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, URL: s.webURL(info, m.IID), Labels: names}}
	if cs, err := s.Merges.Commits(tx.Context(), m.SourceProjectID, "", m.SHA, 1); err == nil && len(cs) == 1 {
		c := cs[0]
		ev.MergeRequest.LastCommit = &event.LastCommit{ID: c.ID, Message: c.Message, Timestamp: c.Author.When,
			AuthorName: c.Author.Name, AuthorEmail: c.Author.Email}
	}
	return s.Bus.Publish(tx, ev)
}
