package internal

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/fennec-forge/fennec/core/isotime"

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

// memberRow is a membership with its user.
type memberRow struct {
	m *Member
	u identity.UserInfo
}

// memberSource is a group or project as seen by the caller.
type memberSource struct {
	kind   string
	id     int64
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
		ev.GroupID = m.id
	} else {
		ev.ProjectID = m.id
	}
	return ev
}

func expired(m *Member, now time.Time) bool { return m.ExpiresAt != nil && now.After(*m.ExpiresAt) }

// listMembers is a page of the explicit, unexpired members of a group or
// project whose username or name holds query, and how many there are.
// Without a query only the page's users are looked up.
func (s *Service) listMembers(ctx context.Context, kind, ref, query string, offset, limit int) ([]memberRow, int, error) {
	src, err := s.memberSource(ctx, kind, ref)
	if err != nil {
		return nil, 0, err
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
		return nil, 0, err
	}
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		// No filter: only the page's users are looked up.
		var out []memberRow
		for _, m := range store.Window(rows, offset, limit) {
			u, err := s.users.UserByID(ctx, m.UserID)
			if errors.Is(err, identity.ErrUserNotFound) {
				continue // the user is being deleted; cleanup removes the row
			}
			if err != nil {
				return nil, 0, err
			}
			out = append(out, memberRow{m, u})
		}
		return out, len(rows), nil
	}
	var out []memberRow
	for _, m := range rows {
		u, err := s.users.UserByID(ctx, m.UserID)
		if errors.Is(err, identity.ErrUserNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		if strings.Contains(strings.ToLower(u.Username), q) || strings.Contains(strings.ToLower(u.Name), q) {
			out = append(out, memberRow{m, u})
		}
	}
	return store.Window(out, offset, limit), len(out), nil
}

// getMember is an explicit, unexpired member of a group or project.
func (s *Service) getMember(ctx context.Context, kind, ref string, userID int64) (memberRow, error) {
	src, err := s.memberSource(ctx, kind, ref)
	if err != nil {
		return memberRow{}, err
	}
	var m *Member
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		m, err = members.GetBy(tx, "membership", sourceKey(src.kind, src.id)+"/"+store.IDString(userID))
		if errors.Is(err, store.ErrNotFound) || (err == nil && expired(m, s.now())) {
			return project.ErrMemberNotFound
		}
		return err
	})
	if err != nil {
		return memberRow{}, err
	}
	u, err := s.users.UserByID(ctx, userID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return memberRow{}, project.ErrMemberNotFound
	}
	if err != nil {
		return memberRow{}, err
	}
	return memberRow{m, u}, nil
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
	if validLevel(level, highest) {
		return nil
	}
	return project.Params(project.ErrInvalidValue, "access_level")
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
	d, err := isotime.Day(*raw)
	if err != nil {
		return nil, false, project.Params(project.ErrInvalidParam, "expires_at")
	}
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

// addMember gives b.UserID b.AccessLevel on a group or project (Owners
// manage a group's members, Masters a project's).
func (s *Service) addMember(ctx context.Context, kind, ref string, b project.MemberFields) (memberRow, error) {
	pr := auth.FromContext(ctx)
	var missing []string
	if b.UserID == nil {
		missing = append(missing, "user_id")
	}
	if b.AccessLevel == nil {
		missing = append(missing, "access_level")
	}
	if len(missing) > 0 {
		return memberRow{}, project.Params(project.ErrMissing, missing...)
	}
	if err := checkLevel(*b.AccessLevel, maxLevel(kind)); err != nil {
		return memberRow{}, err
	}
	at, _, err := expiry(b.ExpiresAt)
	if err != nil {
		return memberRow{}, err
	}
	src, err := s.memberSource(ctx, kind, ref)
	if err != nil {
		return memberRow{}, err
	}
	if !src.manage {
		return memberRow{}, project.ErrForbidden
	}
	u, err := s.users.UserByID(ctx, *b.UserID)
	if err != nil {
		return memberRow{}, err // ErrUserNotFound: 404 User Not Found
	}
	now := s.now()
	if err := checkFuture(at, now); err != nil {
		return memberRow{}, err
	}
	var m *Member
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if err := src.exists(tx); err != nil {
			return err
		}
		old, err := members.GetBy(tx, "membership", sourceKey(src.kind, src.id)+"/"+store.IDString(u.ID))
		switch {
		case err == nil && !expired(old, now):
			return project.ErrMemberExists
		case err == nil:
			// An expired membership is replaced.
			old.AccessLevel, old.ExpiresAt, old.CreatedAt = *b.AccessLevel, at, now.UTC()
			m = old
			err = members.Update(tx, m)
		case errors.Is(err, store.ErrNotFound):
			m = &Member{SourceKind: src.kind, SourceID: src.id, UserID: u.ID, AccessLevel: *b.AccessLevel, ExpiresAt: at, CreatedAt: now.UTC()}
			err = members.Insert(tx, m)
		}
		if err != nil {
			return err
		}
		return s.bus.Publish(tx, src.event(event.MemberJoined, u.ID, pr.UserID()))
	})
	var conflict *store.ConflictError
	if errors.As(err, &conflict) {
		return memberRow{}, project.ErrMemberExists
	}
	if err != nil {
		return memberRow{}, err
	}
	return memberRow{m, u}, nil
}

// lastOwner reports whether the group has no unexpired Owner but the
// member except.
func lastOwner(tx *store.Tx, group, except int64, now time.Time) (bool, error) {
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

// editMember changes a member's level (b.AccessLevel, needed) and expiry.
func (s *Service) editMember(ctx context.Context, kind, ref string, userID int64, b project.MemberFields) (memberRow, error) {
	if b.AccessLevel == nil {
		return memberRow{}, project.Params(project.ErrMissing, "access_level")
	}
	if err := checkLevel(*b.AccessLevel, maxLevel(kind)); err != nil {
		return memberRow{}, err
	}
	at, clear, err := expiry(b.ExpiresAt)
	if err != nil {
		return memberRow{}, err
	}
	src, err := s.memberSource(ctx, kind, ref)
	if err != nil {
		return memberRow{}, err
	}
	if !src.manage {
		return memberRow{}, project.ErrForbidden
	}
	now := s.now()
	if err := checkFuture(at, now); err != nil {
		return memberRow{}, err
	}
	var m *Member
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		m, err = members.GetBy(tx, "membership", sourceKey(src.kind, src.id)+"/"+store.IDString(userID))
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
		return memberRow{}, err
	}
	u, err := s.users.UserByID(ctx, userID)
	if errors.Is(err, identity.ErrUserNotFound) {
		return memberRow{}, project.ErrMemberNotFound
	}
	if err != nil {
		return memberRow{}, err
	}
	return memberRow{m, u}, nil
}

// removeMember removes a member, or lets the caller leave.
func (s *Service) removeMember(ctx context.Context, kind, ref string, userID int64) error {
	pr := auth.FromContext(ctx)
	src, err := s.memberSource(ctx, kind, ref)
	if err != nil {
		return err
	}
	if !src.manage && userID != pr.UserID() {
		return project.ErrForbidden
	}
	now := s.now()
	return s.db.Update(ctx, func(tx *store.Tx) error {
		m, err := members.GetBy(tx, "membership", sourceKey(src.kind, src.id)+"/"+store.IDString(userID))
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
		return s.bus.Publish(tx, src.event(event.MemberLeft, userID, pr.UserID()))
	})
}

// memberKind checks a contract's member kind.
func memberKind(kind project.MemberKind) (string, error) {
	switch kind {
	case project.ProjectMembers, project.GroupMembers:
		return string(kind), nil
	}
	return "", project.Params(project.ErrInvalidValue, "kind")
}

func memberRecord(r memberRow, err error) (project.Member, error) {
	if err != nil {
		return project.Member{}, err
	}
	m := r.m
	return project.Member{Kind: project.MemberKind(m.SourceKind), SourceID: m.SourceID, UserID: m.UserID,
		AccessLevel: m.AccessLevel, ExpiresAt: m.ExpiresAt, CreatedAt: m.CreatedAt}, nil
}

// AddMember adds a member to a project or a group (project.Service).
func (s *Service) AddMember(ctx context.Context, kind project.MemberKind, ref string, in project.MemberFields) (project.Member, error) {
	k, err := memberKind(kind)
	if err != nil {
		return project.Member{}, err
	}
	return memberRecord(s.addMember(ctx, k, ref, in))
}

// UpdateMember changes a member's level and expiry (project.Service).
func (s *Service) UpdateMember(ctx context.Context, kind project.MemberKind, ref string, userID int64, in project.MemberFields) (project.Member, error) {
	k, err := memberKind(kind)
	if err != nil {
		return project.Member{}, err
	}
	return memberRecord(s.editMember(ctx, k, ref, userID, in))
}

// RemoveMember removes a member (project.Service).
func (s *Service) RemoveMember(ctx context.Context, kind project.MemberKind, ref string, userID int64) error {
	k, err := memberKind(kind)
	if err != nil {
		return err
	}
	return s.removeMember(ctx, k, ref, userID)
}
