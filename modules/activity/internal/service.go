package internal

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/activity/entry"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/projects/feed"
)

// Service records (subscribers.go) and serves the activity feeds.
type Service struct {
	db     *store.DB
	log    *zap.Logger
	access projects.Access
	users  identity.Users
	// targets says who may see an entry's target (the collab module's
	// registry of target kinds); nil in a bundle without it, where no
	// entry with a target is shown.
	targets target.Service
	teams   projects.Teams
	repos   projects.RepositoryState
	now     func() time.Time
}

var _ entry.Service = (*Service)(nil)

// Deps are what the service is built from; Targets is nil without the
// collab module.
type Deps struct {
	fennec.In
	DB      *store.DB
	Log     *zap.Logger
	Access  projects.Access
	Users   identity.Users
	Targets target.Service `optional:"true"`
	Teams   projects.Teams
	Repos   projects.RepositoryState
}

// NewService builds the service.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, log: d.Log, access: d.Access, users: d.Users, targets: d.Targets, teams: d.Teams, repos: d.Repos, now: time.Now}
}

// OwnEntries is the signed-in caller's feed, as their UserEntries shows it
// to them.
func (s *Service) OwnEntries(ctx context.Context, f entry.Filter, offset, limit int) ([]entry.Entry, int, error) {
	return s.UserEntries(ctx, strconv.FormatInt(auth.FromContext(ctx).UserID(), 10), f, offset, limit)
}

// MemberEntries is the dashboard's feed (GitLab's activity of "your
// projects"): every entry, anyone's, of the projects the signed-in caller
// is a member of (ProjectTeam: the namespace's owner, members of the
// project, of its group and of groups it is shared with) and may read.
// It asks each project's team once per call: one read per project, fine
// at a forge's size; an index of entries by member would be the next step
// if it is not.
func (s *Service) MemberEntries(ctx context.Context, offset, limit int) ([]entry.Entry, int, error) {
	caller := auth.FromContext(ctx)
	uid := caller.UserID()
	all, err := s.repos.ProjectIDs(ctx)
	if err != nil {
		return nil, 0, err
	}
	var mine []int64
	for _, pid := range all {
		_, team, err := s.teams.ProjectTeam(ctx, pid)
		if err != nil {
			return nil, 0, err
		}
		if _, member := slices.BinarySearch(team, uid); !member {
			continue
		}
		if ok, err := s.canSee(ctx, caller, uid, pid); err != nil {
			return nil, 0, err
		} else if ok {
			mine = append(mine, pid)
		}
	}
	var page []*Entry
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var ids []int64
		for _, pid := range mine {
			more, err := entries.IDsBy(tx, "project", strconv.FormatInt(pid, 10))
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
		// Entry ids grow with time: the largest is the newest.
		slices.Sort(ids)
		slices.Reverse(ids)
		total = len(ids)
		page, err = load(tx, store.Window(ids, offset, limit))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return s.shown(ctx, page, total)
}

func (s *Service) ProjectEntries(ctx context.Context, project string, f entry.Filter, offset, limit int) ([]entry.Entry, int, error) {
	info, err := s.access.Resolve(ctx, project)
	if err != nil {
		return nil, 0, err
	}
	var page []*Entry
	total := 0
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := entries.IDsBy(tx, "project", strconv.FormatInt(info.ID, 10))
		if err != nil {
			return err
		}
		slices.Reverse(ids)
		if ids, err = (*filter)(&f).apply(tx, ids); err != nil {
			return err
		}
		total = len(ids)
		page, err = load(tx, store.Window(ids, offset, limit))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return s.shown(ctx, page, total)
}

// userID reads a user's id or username as the API's :id gives it: a
// positive number without a sign is an id.
func userID(s string) (int64, string) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && !strings.HasPrefix(s, "+") {
		return n, ""
	}
	return 0, s
}

func (s *Service) UserEntries(ctx context.Context, user string, f entry.Filter, offset, limit int) ([]entry.Entry, int, error) {
	var u identity.UserInfo
	var err error
	if id, name := userID(user); id > 0 {
		u, err = s.users.UserByID(ctx, id)
	} else {
		u, err = s.users.UserByUsername(ctx, name)
	}
	if err != nil {
		return nil, 0, err // identity.ErrUserNotFound
	}
	var items []item
	err = s.db.View(ctx, func(tx *store.Tx) error {
		items = authorItems(tx, u.ID)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	// Keep what the caller may see, newest first. Visibility is asked once
	// per project (the Access service, under the caller's own context).
	caller := auth.FromContext(ctx)
	seen := map[int64]bool{}
	ids := make([]int64, 0, len(items))
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		visible, known := seen[it.project]
		if !known {
			if visible, err = s.canSee(ctx, caller, u.ID, it.project); err != nil {
				return nil, 0, err
			}
			seen[it.project] = visible
		}
		if visible {
			ids = append(ids, it.entry)
		}
	}
	var page []*Entry
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if ids, err = (*filter)(&f).apply(tx, ids); err != nil {
			return err
		}
		page, err = load(tx, store.Window(ids, offset, limit))
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return s.shown(ctx, page, len(ids))
}

// canSee: entries of a project go to those who may read the project;
// entries outside any project (tombstones) to their author and
// administrators only.
func (s *Service) canSee(ctx context.Context, caller *auth.Principal, author int64, project int64) (bool, error) {
	if project == 0 {
		return caller.IsAdmin() || caller.UserID() == author, nil
	}
	ok, err := s.access.Can(ctx, strconv.FormatInt(project, 10), projects.ReadProject)
	if errors.Is(err, projects.ErrNotFound) {
		return false, nil // hidden from the caller, or deleted since
	}
	return ok, err
}

// load reads entries by id; one removed since the ids were read (a project
// deleted meanwhile) is skipped.
func load(tx *store.Tx, ids []int64) ([]*Entry, error) {
	out := make([]*Entry, 0, len(ids))
	for _, id := range ids {
		e, err := entries.Get(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// shown keeps the entries whose target the caller may see, as the target's
// kind says (target.Service.Visible: the collab module's registry of
// target kinds), and returns them as records with total; the caller may
// read every entry's project already. Entries outside any project
// (tombstones) are their author's and were checked by canSee. The check
// runs on the page only, as GitLab's does, so a page may come out shorter
// than its limit.
func (s *Service) shown(ctx context.Context, page []*Entry, total int) ([]entry.Entry, int, error) {
	out := make([]entry.Entry, 0, len(page))
	for _, e := range page {
		if e.ProjectID != 0 && e.TargetType != "" {
			if s.targets == nil {
				continue // no module in this bundle can vouch for any target
			}
			ok, err := s.targets.Visible(ctx, e.TargetType, e.ProjectID, e.TargetID)
			if err != nil {
				return nil, 0, err
			}
			if !ok {
				continue // hidden, or of a kind nobody registered
			}
		}
		out = append(out, record(e))
	}
	return out, total, nil
}

// record is a stored entry as the contract gives it.
func record(e *Entry) entry.Entry {
	r := entry.Entry{ID: entry.ID(e.ID), ProjectID: e.ProjectID, AuthorID: e.AuthorID,
		Action: feed.Action(e.ActionName), TargetID: e.TargetID, TargetType: e.TargetType,
		TargetTitle: e.TargetTitle, TargetIID: e.TargetIID, Title: e.Title, Data: e.Data, Note: e.Note, CreatedAt: e.CreatedAt}
	if len(r.Data) == 0 {
		r.Data = nil
	}
	if len(r.Note) == 0 {
		r.Note = nil
	}
	return r
}
