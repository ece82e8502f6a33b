package internal

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	fennec "github.com/fennec-forge/fennec/core"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/issues/event"
	"github.com/fennec-forge/fennec/modules/issues/issue"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
)

// Deps are what the service is built from (fx fills them). The collab
// module is optional: a bundle without it still serves issues, only without
// system notes, mentions, subscriptions and todos.
type Deps struct {
	fennec.In
	DB     *store.DB
	Bus    *events.Bus
	Access projects.Access
	Users  identity.Users
	Lookup auth.UserLookup
	URL    fennec.ExternalURL
	Log    *zap.Logger
	Repos  gitread.Reader
	Teams  projects.Teams
	Collab target.Service `optional:"true"`
}

// Service is the issues module's service.
type Service struct {
	db     *store.DB
	bus    *events.Bus
	access projects.Access
	teams  projects.Teams
	users  identity.Users
	lookup auth.UserLookup
	url    fennec.ExternalURL
	log    *zap.Logger
	repos  gitread.Reader
	collab target.Service
	now    func() time.Time
}

// NewService builds the service.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, bus: d.Bus, access: d.Access, teams: d.Teams, users: d.Users, lookup: d.Lookup, url: d.URL, repos: d.Repos,
		log: d.Log.Named("issues"), collab: d.Collab,
		now: func() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }}
}

// DB is the store, for benchmarks that seed directly.
func (s *Service) DB() *store.DB { return s.db }

// defaultColor is the color of a label created on the fly.
const defaultColor = "#428BCA"

// canSeeConfidential: Reporter+ members (administrators act as Owner),
// the author and the assignees.
func canSeeConfidential(info projects.ProjectInfo, i *Issue, uid int64) bool {
	if info.Level >= projects.Reporter {
		return true
	}
	return uid != 0 && (i.AuthorID == uid || slices.Contains(i.AssigneeIDs, uid))
}

// visible says whether the caller (uid, on a project resolved as them) may
// see the issue.
func visible(info projects.ProjectInfo, i *Issue, uid int64) bool {
	return !i.Confidential || canSeeConfidential(info, i, uid)
}

// mayUpdate is GitLab's update_issue: Reporter+, the author, an assignee.
func mayUpdate(info projects.ProjectInfo, i *Issue, uid int64) bool {
	if info.Level >= projects.Reporter {
		return true
	}
	return uid != 0 && (i.AuthorID == uid || slices.Contains(i.AssigneeIDs, uid))
}

// mayAdmin is GitLab's admin_issue (labels, milestones, assignees): Reporter+.
func mayAdmin(info projects.ProjectInfo) bool { return info.Level >= projects.Reporter }

// readProject resolves :id for reading issues: 404 for a hidden project,
// 403 when issues are off.
func (s *Service) readProject(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	return s.access.Require(ctx, ref, projects.ReadIssues)
}

// writeProject resolves :id for changing issues: reading is needed and an
// archived project refuses every change.
func (s *Service) writeProject(ctx context.Context, ref string) (projects.ProjectInfo, error) {
	info, err := s.readProject(ctx, ref)
	if err != nil {
		return info, err
	}
	if info.Archived {
		return info, projects.ErrForbidden
	}
	return info, nil
}

// issueByIID loads an issue of a project as uid sees it.
func issueByIID(tx *store.Tx, info projects.ProjectInfo, iid int64, uid int64) (*Issue, error) {
	if iid <= 0 {
		return nil, ErrIssueNotFound
	}
	i, err := issues.GetBy(tx, "iid", store.IDString(info.ID)+"/"+store.IDString(iid))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrIssueNotFound
	}
	if err != nil {
		return nil, err
	}
	if !visible(info, i, uid) {
		return nil, ErrIssueNotFound
	}
	return i, nil
}

// webURL is an issue's page.
func (s *Service) webURL(info projects.ProjectInfo, iid int64) string {
	return s.url() + "/" + info.PathWithNamespace + "/issues/" + store.IDString(iid)
}

func (s *Service) noteable(info projects.ProjectInfo, i *Issue) target.Noteable {
	return noteableOf(s.record(info, i))
}

// noteableOf is the issue as the collab module knows it.
func noteableOf(r issue.Issue) target.Noteable {
	return target.Noteable{Type: issue.NoteableType, ID: int64(r.ID), IID: int64(r.IID), ProjectID: r.ProjectID, Title: r.Title,
		AuthorID: r.AuthorID, AssigneeIDs: slices.Clone(r.AssigneeIDs), Confidential: r.Confidential, WebURL: r.WebURL}
}

func targetOf(i *Issue) target.Target {
	return target.Target{Type: issue.NoteableType, ID: i.ID, ProjectID: i.ProjectID}
}

// record is the contract's record of a stored issue of project info.
func (s *Service) record(info projects.ProjectInfo, i *Issue) issue.Issue {
	r := issue.Issue{ID: issue.ID(i.ID), IID: issue.IID(i.IID), ProjectID: i.ProjectID, Title: i.Title,
		Description: i.Description, State: issue.State(i.State), AuthorID: i.AuthorID, AssigneeIDs: slices.Clone(i.AssigneeIDs),
		LabelIDs: make([]issue.LabelID, len(i.LabelIDs)), MilestoneID: issue.MilestoneID(i.MilestoneID),
		Confidential: i.Confidential, DueDate: i.DueDate, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt,
		WebURL: s.webURL(info, i.IID)}
	for n, id := range i.LabelIDs {
		r.LabelIDs[n] = issue.LabelID(id)
	}
	return r
}

// records are the records of issues; info gives each one's project.
func (s *Service) records(list []*Issue, info func(*Issue) projects.ProjectInfo) []issue.Issue {
	out := make([]issue.Issue, len(list))
	for n, i := range list {
		out[n] = s.record(info(i), i)
	}
	return out
}

// ensureLabels finds or creates (GitLab creates labels named on an issue on
// the fly) the labels a project sees by name and returns their ids: its
// own, else its nearest group's (groups: ProjectInfo.GroupIDs); a name
// none has becomes a project label.
func (s *Service) ensureLabels(tx *store.Tx, project int64, groups []int64, names []string) ([]int64, error) {
	ids := make([]int64, 0, len(names))
	for _, n := range names {
		if err := checkLabelName(n); err != nil {
			return nil, err
		}
		l, err := seenLabel(tx, project, groups, n)
		if errors.Is(err, ErrLabelNotFound) {
			l = &Label{ProjectID: project, Name: n, Color: defaultColor, CreatedAt: s.now()}
			err = labels.Insert(tx, l)
		}
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, l.ID) {
			ids = append(ids, l.ID)
		}
	}
	return ids, nil
}

// publish sends the feed entry and the issue event of a change.
func (s *Service) publish(tx *store.Tx, info projects.ProjectInfo, i *Issue, userID int64, action event.Action) error {
	if fe, ok := target.FeedEntry("issues", targetOf(i), int64(i.IID), i.Title, userID, string(action), i.UpdatedAt); ok {
		if err := s.bus.Publish(tx, fe); err != nil {
			return err
		}
	}
	names, err := labelNames(tx, i.LabelIDs)
	if err != nil {
		return err
	}
	return s.bus.Publish(tx, event.IssueEvent{Action: action, ProjectID: info.ID, UserID: userID, Issue: event.Issue{
		ID: i.ID, IID: i.IID, ProjectID: i.ProjectID, Title: i.Title, Description: i.Description,
		State: i.State, AuthorID: i.AuthorID, AssigneeIDs: slices.Clone(i.AssigneeIDs), MilestoneID: i.MilestoneID,
		Confidential: i.Confidential, DueDate: i.DueDate, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt,
		URL: s.webURL(info, i.IID), Labels: names}})
}

// labelNames are the sorted names of label ids (as the issue view shows them).
func labelNames(tx *store.Tx, ids []int64) ([]string, error) {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		l, err := labels.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, l.Name)
	}
	sort.Strings(out)
	return out, nil
}
