package internal

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects/event"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// Members of groups and projects, as GitLab v4 (9.x) has them:
//
//   - Anyone who can see the group or project can list its members; Owners
//     (and administrators) manage group members, Masters and above (and
//     administrators) manage project members. A member may always leave.
//   - Levels: 10, 20, 30, 40, and 50 (Owner) for groups only.
//   - Lists hold explicit members only: the owner of a personal project,
//     implicitly its Owner, is not listed, nor are members of the project's
//     group.
//   - An expired membership counts as gone: it is not listed, gives no
//     access, and adding the user again replaces it.
//   - A group always keeps an Owner: removing or demoting its last one is
//     403, for administrators too.
//   - Joins and leaves publish MemberEvent in the same transaction.

const sourceProject = "project"

// MemberView is a member: the user's public fields, the level and the
// expiry date.
type MemberView struct {
	identity.BasicUser
	AccessLevel int       `json:"access_level"`
	ExpiresAt   *api.Date `json:"expires_at"`
}

type memberListInput struct {
	ID string `path:"id" doc:"Group or project id, or URL-encoded path"`
	api.PageParams
	Query string `query:"query" doc:"Only members whose username or name contains this"`
}

type memberListOutput struct {
	api.PageHeaders
	Body []MemberView
}

// MemberPath is a member of a group or project.
type MemberPath struct {
	ID     string `path:"id" doc:"Group or project id, or URL-encoded path"`
	UserID int64  `path:"user_id"`
}

type memberOutput struct{ Body *MemberView }

// MemberInput is the body of add (user_id and access_level required) and
// edit (access_level required).
type MemberInput struct {
	UserID      *int64  `json:"user_id,omitempty"`
	AccessLevel *int    `json:"access_level,omitempty" doc:"10 Guest, 20 Reporter, 30 Developer, 40 Master, 50 Owner (groups only)"`
	ExpiresAt   *string `json:"expires_at,omitempty" doc:"YYYY-MM-DD, in the future; the membership ends at the start of that day (UTC). Empty on edit: no expiry"`
}

type memberAddInput struct {
	ID   string `path:"id" doc:"Group or project id, or URL-encoded path"`
	Body MemberInput
}

type memberEditInput struct {
	MemberPath
	Body MemberInput
}

// memberSource is a group or project as seen by the caller.
type memberSource struct {
	kind   string
	id     uint64
	manage bool // the caller may add, edit and remove members
}

func (s *Service) memberSource(ctx context.Context, kind, ref string) (*memberSource, error) {
	pr := auth.FromContext(ctx)
	if kind == KindGroup {
		r, err := s.resolveGroup(ctx, ref)
		if err != nil {
			return nil, err
		}
		return &memberSource{kind: KindGroup, id: r.g.ID, manage: r.isOwner(pr)}, nil
	}
	r, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &memberSource{kind: sourceProject, id: r.p.ID, manage: allowed(pr, r.p, r.l, project.AdminProject)}, nil
}

// exists checks inside tx that the source was not deleted meanwhile.
func (m *memberSource) exists(tx *store.Tx) error {
	ok := false
	if m.kind == KindGroup {
		ok = namespaces.Exists(tx, m.id)
	} else {
		ok = projects.Exists(tx, m.id)
	}
	if !ok {
		return m.notFound()
	}
	return nil
}

func (m *memberSource) notFound() error {
	if m.kind == KindGroup {
		return project.ErrGroupNotFound
	}
	return project.ErrNotFound
}

func (m *memberSource) event(action event.MemberAction, user, author int64) event.MemberEvent {
	ev := event.MemberEvent{Action: action, UserID: user, AuthorID: author}
	if m.kind == KindGroup {
		ev.GroupID = int64(m.id)
	} else {
		ev.ProjectID = int64(m.id)
	}
	return ev
}

func expired(m *Member, now time.Time) bool { return m.ExpiresAt != nil && now.After(*m.ExpiresAt) }

func (s *Service) registerMembers(a *api.API) {
	for _, src := range []struct{ kind, base, tag string }{
		{KindGroup, "/groups/{id}", "groups"},
		{sourceProject, "/projects/{id}", "projects"},
	} {
		kind, tags := src.kind, []string{src.tag}
		manager := "Owner"
		if kind == sourceProject {
			manager = "Master"
		}
		api.Register(a, api.Op{ID: "list-" + kind + "-members", Method: http.MethodGet, Path: src.base + "/members", Tags: tags,
			Summary: "Members of a " + kind, Access: api.Public},
			func(ctx context.Context, in *memberListInput) (*memberListOutput, error) {
				return s.listMembers(ctx, kind, in)
			})
		api.Register(a, api.Op{ID: "get-" + kind + "-member", Method: http.MethodGet, Path: src.base + "/members/{user_id}", Tags: tags,
			Summary: "A member of a " + kind, Access: api.Public},
			func(ctx context.Context, in *MemberPath) (*memberOutput, error) {
				return s.getMember(ctx, kind, in)
			})
		api.Register(a, api.Op{ID: "add-" + kind + "-member", Method: http.MethodPost, Path: src.base + "/members", Tags: tags,
			Summary: "Add a member to a " + kind + " (" + manager + " or administrator)", Access: api.SignedIn},
			func(ctx context.Context, in *memberAddInput) (*memberOutput, error) {
				return s.addMember(ctx, kind, in)
			})
		api.Register(a, api.Op{ID: "edit-" + kind + "-member", Method: http.MethodPut, Path: src.base + "/members/{user_id}", Tags: tags,
			Summary: "Change a member's level or expiry (" + manager + " or administrator)", Access: api.SignedIn},
			func(ctx context.Context, in *memberEditInput) (*memberOutput, error) {
				return s.editMember(ctx, kind, in)
			})
		api.Register(a, api.Op{ID: "remove-" + kind + "-member", Method: http.MethodDelete, Path: src.base + "/members/{user_id}", Tags: tags,
			Summary: "Remove a member (" + manager + " or administrator), or leave", Access: api.SignedIn},
			func(ctx context.Context, in *MemberPath) (*struct{}, error) {
				return nil, s.removeMember(ctx, kind, in)
			})
	}
}

func (s *Service) memberView(ctx context.Context, m *Member, u identity.UserInfo) MemberView {
	v := MemberView{BasicUser: identity.NewBasicUser(api.ExternalURLFrom(ctx), u), AccessLevel: m.AccessLevel}
	if m.ExpiresAt != nil {
		v.ExpiresAt = api.DatePtr(*m.ExpiresAt)
	}
	return v
}

func (s *Service) listMembers(ctx context.Context, kind string, in *memberListInput) (*memberListOutput, error) {
	src, err := s.memberSource(ctx, kind, in.ID)
	if err != nil {
		return nil, err
	}
	var rows []*Member
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := members.IDsBy(tx, "source", sourceKey(src.kind, src.id))
		if err != nil {
			return err
		}
		now := s.now()
		for _, id := range ids {
			m, err := members.Get(tx, id)
			if err != nil {
				return err
			}
			if !expired(m, now) {
				rows = append(rows, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(in.Query))
	if q == "" {
		// No filter: only the page's users are looked up.
		out := &memberListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(rows)), Body: []MemberView{}}
		for _, m := range api.Window(rows, in.PageParams) {
			u, err := s.users.UserByID(ctx, int64(m.UserID))
			if errors.Is(err, identity.ErrUserNotFound) {
				continue // the user is being deleted; cleanup removes the row
			}
			if err != nil {
				return nil, err
			}
			out.Body = append(out.Body, s.memberView(ctx, m, u))
		}
		return out, nil
	}
	var views []MemberView
	for _, m := range rows {
		u, err := s.users.UserByID(ctx, int64(m.UserID))
		if errors.Is(err, identity.ErrUserNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if strings.Contains(strings.ToLower(u.Username), q) || strings.Contains(strings.ToLower(u.Name), q) {
			views = append(views, s.memberView(ctx, m, u))
		}
	}
	return &memberListOutput{PageHeaders: api.Paginate(ctx, in.PageParams, len(views)), Body: append([]MemberView{}, api.Window(views, in.PageParams)...)}, nil
}

func (s *Service) getMember(ctx context.Context, kind string, in *MemberPath) (*memberOutput, error) {
	src, err := s.memberSource(ctx, kind, in.ID)
	if err != nil {
		return nil, err
	}
	var m *Member
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		m, err = members.GetBy(tx, "membership", sourceKey(src.kind, src.id)+"/"+u64(uint64(in.UserID)))
		if errors.Is(err, store.ErrNotFound) || (err == nil && expired(m, s.now())) {
			return project.ErrMemberNotFound
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	u, err := s.users.UserByID(ctx, in.UserID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, project.ErrMemberNotFound
	}
	if err != nil {
		return nil, err
	}
	v := s.memberView(ctx, m, u)
	return &memberOutput{Body: &v}, nil
}

// maxLevel is the highest level a member may have: Owner in groups,
// Master in projects.
func maxLevel(kind string) int {
	if kind == sourceProject {
		return project.Master
	}
	return project.Owner
}

// checkLevel refuses a level outside 10..max (Grape's wording).
func checkLevel(level, highest int) error {
	switch level {
	case project.Guest, project.Reporter, project.Developer, project.Master, project.Owner:
		if level <= highest {
			return nil
		}
	}
	return api.NotValidValue("access_level")
}

// expiry parses expires_at: nil when absent, clear when empty, otherwise
// the date at 00:00 UTC (the membership ends at the start of that day).
func expiry(raw *string) (at *time.Time, clear bool, err error) {
	if raw == nil {
		return nil, false, nil
	}
	if strings.TrimSpace(*raw) == "" {
		return nil, true, nil
	}
	t, err := api.ParseTime(*raw)
	if err != nil {
		return nil, false, api.Invalid("expires_at")
	}
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return &d, false, nil
}

// checkFuture refuses an expiry date that is today or earlier: such a
// membership would give no access at all.
func checkFuture(at *time.Time, now time.Time) error {
	if at != nil && !at.After(now.UTC()) {
		return project.FieldErrors{"expires_at": {"must be a date in the future"}}
	}
	return nil
}

func (s *Service) addMember(ctx context.Context, kind string, in *memberAddInput) (*memberOutput, error) {
	pr := auth.FromContext(ctx)
	b := in.Body
	var missing []string
	if b.UserID == nil {
		missing = append(missing, "user_id")
	}
	if b.AccessLevel == nil {
		missing = append(missing, "access_level")
	}
	if len(missing) > 0 {
		return nil, api.Missing(missing...)
	}
	if err := checkLevel(*b.AccessLevel, maxLevel(kind)); err != nil {
		return nil, err
	}
	at, _, err := expiry(b.ExpiresAt)
	if err != nil {
		return nil, err
	}
	src, err := s.memberSource(ctx, kind, in.ID)
	if err != nil {
		return nil, err
	}
	if !src.manage {
		return nil, project.ErrForbidden
	}
	u, err := s.users.UserByID(ctx, *b.UserID)
	if err != nil {
		return nil, err // ErrUserNotFound: 404 User Not Found
	}
	now := s.now()
	if err := checkFuture(at, now); err != nil {
		return nil, err
	}
	var m *Member
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if err := src.exists(tx); err != nil {
			return err
		}
		old, err := members.GetBy(tx, "membership", sourceKey(src.kind, src.id)+"/"+u64(uint64(u.ID)))
		switch {
		case err == nil && !expired(old, now):
			return api.Conflict("Member already exists")
		case err == nil:
			// An expired membership is replaced.
			old.AccessLevel, old.ExpiresAt, old.CreatedAt = *b.AccessLevel, at, now.UTC()
			m = old
			err = members.Update(tx, m)
		case errors.Is(err, store.ErrNotFound):
			m = &Member{SourceKind: src.kind, SourceID: src.id, UserID: uint64(u.ID), AccessLevel: *b.AccessLevel, ExpiresAt: at, CreatedAt: now.UTC()}
			err = members.Insert(tx, m)
		}
		if err != nil {
			return err
		}
		return s.bus.Publish(tx, src.event(event.MemberJoined, u.ID, pr.UserID()))
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return nil, api.Conflict("Member already exists")
	}
	if err != nil {
		return nil, err
	}
	v := s.memberView(ctx, m, u)
	return &memberOutput{Body: &v}, nil
}

// lastOwner reports whether the group has no unexpired Owner but the
// member except.
func lastOwner(tx *store.Tx, group, except uint64, now time.Time) (bool, error) {
	ids, err := members.IDsBy(tx, "source", sourceKey(KindGroup, group))
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		if id == except {
			continue
		}
		m, err := members.Get(tx, id)
		if err != nil {
			return false, err
		}
		if m.AccessLevel >= project.Owner && !expired(m, now) {
			return false, nil
		}
	}
	return true, nil
}

func (s *Service) editMember(ctx context.Context, kind string, in *memberEditInput) (*memberOutput, error) {
	b := in.Body
	if b.AccessLevel == nil {
		return nil, api.Missing("access_level")
	}
	if err := checkLevel(*b.AccessLevel, maxLevel(kind)); err != nil {
		return nil, err
	}
	at, clear, err := expiry(b.ExpiresAt)
	if err != nil {
		return nil, err
	}
	src, err := s.memberSource(ctx, kind, in.ID)
	if err != nil {
		return nil, err
	}
	if !src.manage {
		return nil, project.ErrForbidden
	}
	now := s.now()
	if err := checkFuture(at, now); err != nil {
		return nil, err
	}
	var m *Member
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		m, err = members.GetBy(tx, "membership", sourceKey(src.kind, src.id)+"/"+u64(uint64(in.UserID)))
		if errors.Is(err, store.ErrNotFound) || (err == nil && expired(m, now)) {
			return project.ErrMemberNotFound
		}
		if err != nil {
			return err
		}
		if src.kind == KindGroup && m.AccessLevel >= project.Owner && *b.AccessLevel < project.Owner {
			last, err := lastOwner(tx, src.id, m.ID, now)
			if err != nil {
				return err
			}
			if last {
				return project.ErrLastOwner
			}
		}
		m.AccessLevel = *b.AccessLevel
		switch {
		case clear:
			m.ExpiresAt = nil
		case at != nil:
			m.ExpiresAt = at
		}
		return members.Update(tx, m)
	})
	if err != nil {
		return nil, err
	}
	u, err := s.users.UserByID(ctx, in.UserID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return nil, project.ErrMemberNotFound
	}
	if err != nil {
		return nil, err
	}
	v := s.memberView(ctx, m, u)
	return &memberOutput{Body: &v}, nil
}

func (s *Service) removeMember(ctx context.Context, kind string, in *MemberPath) error {
	pr := auth.FromContext(ctx)
	src, err := s.memberSource(ctx, kind, in.ID)
	if err != nil {
		return err
	}
	if !src.manage && in.UserID != pr.UserID() {
		return project.ErrForbidden
	}
	now := s.now()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		m, err := members.GetBy(tx, "membership", sourceKey(src.kind, src.id)+"/"+u64(uint64(in.UserID)))
		if errors.Is(err, store.ErrNotFound) || (err == nil && expired(m, now)) {
			return project.ErrMemberNotFound
		}
		if err != nil {
			return err
		}
		if src.kind == KindGroup && m.AccessLevel >= project.Owner {
			last, err := lastOwner(tx, src.id, m.ID, now)
			if err != nil {
				return err
			}
			if last {
				return project.ErrLastOwner
			}
		}
		if err := members.Delete(tx, m.ID); err != nil {
			return err
		}
		return s.bus.Publish(tx, src.event(event.MemberLeft, in.UserID, pr.UserID()))
	})
}
