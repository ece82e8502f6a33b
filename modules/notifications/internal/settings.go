package internal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/notifications/notification"
	"github.com/fennec-forge/fennec/modules/projects"
)

// getRow reads a user's row for a source; a missing one is the default.
func getRow(tx *store.Tx, source string, sourceID, user int64) (*Setting, error) {
	row, err := settings.GetBy(tx, "key", settingKey(source, sourceID, user))
	if errors.Is(err, store.ErrNotFound) {
		level := LevelGlobal
		if source == SourceGlobal {
			level = LevelParticipating
		}
		return &Setting{UserID: user, Source: source, SourceID: sourceID, Level: level}, nil
	}
	return row, err
}

func putRow(tx *store.Tx, row *Setting) error {
	if row.ID == 0 {
		return settings.Insert(tx, row)
	}
	return settings.Update(tx, row)
}

var _ notification.Service = (*Service)(nil)

// setting is a row as the contract gives it; the global one with the
// address the user's mail goes to.
func (s *Service) setting(ctx context.Context, row *Setting) (notification.Setting, error) {
	v := notification.Setting{Level: notification.Level(row.Level), Events: maps.Clone(row.Events)}
	if row.Source != SourceGlobal {
		return v, nil
	}
	u, err := s.users.UserByID(ctx, row.UserID)
	if err != nil {
		return v, err
	}
	v.NotificationEmail, err = s.notificationEmail(ctx, row, u.Email)
	return v, err
}

func (s *Service) GlobalSetting(ctx context.Context) (notification.Setting, error) {
	user := auth.FromContext(ctx).UserID()
	var row *Setting
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		row, err = getRow(tx, SourceGlobal, 0, user)
		return err
	})
	if err != nil {
		return notification.Setting{}, err
	}
	return s.setting(ctx, row)
}

// checkLevel refuses a level GitLab's enum refuses (GitLab 9.x answered
// it with its ArgumentError's message).
func checkLevel(level *notification.Level, global bool) error {
	if level == nil {
		return nil
	}
	if !slices.Contains(notification.Levels, *level) || (global && *level == notification.Global) {
		return fmt.Errorf("notifications: %w", &notification.LevelError{Level: *level})
	}
	return nil
}

// apply sets the level and the events given in c on row.
func apply(row *Setting, c notification.Change) {
	if c.Level != nil {
		row.Level = string(*c.Level)
	}
	for name, v := range c.Events {
		if row.Events == nil {
			row.Events = map[string]bool{}
		}
		row.Events[name] = v
	}
}

func (s *Service) UpdateGlobalSetting(ctx context.Context, c notification.Change) (notification.Setting, error) {
	user := auth.FromContext(ctx).UserID()
	b := c
	if err := checkLevel(b.Level, true); err != nil {
		return notification.Setting{}, err
	}
	email := ""
	if b.NotificationEmail != nil {
		email = strings.TrimSpace(*b.NotificationEmail)
		if email != "" {
			owned, err := s.emails.ConfirmedEmails(ctx, user)
			if err != nil {
				return notification.Setting{}, err
			}
			// The primary address is the user's own whether or not it is
			// confirmed (a user created with confirm=false): GitLab checks
			// ownership against all of a user's addresses, and mail goes
			// to the primary one anyway when notification_email is empty.
			u, err := s.users.UserByID(ctx, user)
			if err != nil {
				return notification.Setting{}, err
			}
			if !slices.ContainsFunc(owned, func(e string) bool { return strings.EqualFold(e, u.Email) }) {
				owned = append(owned, u.Email)
			}
			i := slices.IndexFunc(owned, func(e string) bool { return strings.EqualFold(e, email) })
			if i < 0 {
				return notification.Setting{}, fmt.Errorf("notifications: %q: %w", email, notification.ErrEmailNotOwned)
			}
			email = owned[i]
		}
	}
	var row *Setting
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if row, err = getRow(tx, SourceGlobal, 0, user); err != nil {
			return err
		}
		apply(row, b)
		if b.NotificationEmail != nil {
			row.NotificationEmail = email
		}
		return putRow(tx, row)
	})
	if err != nil {
		return notification.Setting{}, err
	}
	return s.setting(ctx, row)
}

// notificationEmail is where a user's mail goes: the notification_email
// of their global row while it is still one of their addresses (removing
// a secondary address that was it falls back, as GitLab resets it), else
// the primary address.
func (s *Service) notificationEmail(ctx context.Context, global *Setting, primary string) (string, error) {
	if global == nil || global.NotificationEmail == "" || strings.EqualFold(global.NotificationEmail, primary) {
		return primary, nil
	}
	owned, err := s.emails.ConfirmedEmails(ctx, global.UserID)
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(owned, func(e string) bool { return strings.EqualFold(e, global.NotificationEmail) }) {
		return global.NotificationEmail, nil
	}
	return primary, nil
}

// resolveSource finds the group or project the caller names and may see
// (projects.ErrGroupNotFound, projects.ErrNotFound when none).
func (s *Service) resolveSource(ctx context.Context, src notification.Source, ref string) (string, int64, error) {
	if src == notification.Group {
		g, err := s.teams.ResolveGroup(ctx, ref)
		return SourceGroup, g.ID, err
	}
	p, err := s.access.Resolve(ctx, ref)
	return SourceProject, p.ID, err
}

func (s *Service) SourceSetting(ctx context.Context, src notification.Source, ref string) (notification.Setting, error) {
	source, id, err := s.resolveSource(ctx, src, ref)
	if err != nil {
		return notification.Setting{}, err
	}
	var row *Setting
	err = s.db.View(ctx, func(tx *store.Tx) error {
		row, err = getRow(tx, source, id, auth.FromContext(ctx).UserID())
		return err
	})
	if err != nil {
		return notification.Setting{}, err
	}
	return s.setting(ctx, row)
}

func (s *Service) UpdateSourceSetting(ctx context.Context, src notification.Source, ref string, b notification.Change) (notification.Setting, error) {
	source, id, err := s.resolveSource(ctx, src, ref)
	if err != nil {
		return notification.Setting{}, err
	}
	if err := checkLevel(b.Level, false); err != nil {
		return notification.Setting{}, err
	}
	var row *Setting
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if row, err = getRow(tx, source, id, auth.FromContext(ctx).UserID()); err != nil {
			return err
		}
		apply(row, b)
		return putRow(tx, row)
	})
	if err != nil {
		return notification.Setting{}, err
	}
	return s.setting(ctx, row)
}

// effective is a user's setting that counts on a project: the project's
// row, unless its level is global, then the group's, unless global, then
// the user's global one (participating when they have none). Its events
// count for a custom level. Any row may be nil.
func effective(global, group, project *Setting) *Setting {
	for _, r := range []*Setting{project, group} {
		if r != nil && r.Level != LevelGlobal && r.Level != "" {
			return r
		}
	}
	if global != nil && global.Level != "" && global.Level != LevelGlobal {
		return global
	}
	return &Setting{Level: LevelParticipating}
}

// SourceSettings implements notification.Service: the caller's rows of
// groups and projects, by the "user" index, each resolved as the caller
// (one they may no longer see is left out, not shown by its id).
func (s *Service) SourceSettings(ctx context.Context) ([]notification.SourceSetting, error) {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return nil, auth.ErrUnauthorized
	}
	var rows []*Setting
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		rows, err = settings.AllBy(tx, "user", store.IDString(p.UserID()))
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []notification.SourceSetting
	for _, row := range rows {
		v := notification.SourceSetting{Source: notification.Source(row.Source),
			Setting: notification.Setting{Level: notification.Level(row.Level), Events: maps.Clone(row.Events)}}
		switch row.Source {
		case SourceGroup:
			g, err := s.teams.ResolveGroup(ctx, store.IDString(row.SourceID))
			if errors.Is(err, projects.ErrGroupNotFound) {
				continue
			} else if err != nil {
				return nil, err
			}
			v.FullPath, v.Name = g.FullPath, g.Name
		case SourceProject:
			info, err := s.access.ResolveID(ctx, row.SourceID)
			if errors.Is(err, projects.ErrNotFound) {
				continue
			} else if err != nil {
				return nil, err
			}
			v.FullPath, v.Name = info.PathWithNamespace, info.NameWithNamespace
		default:
			continue
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b notification.SourceSetting) int {
		if a.Source != b.Source {
			return strings.Compare(string(a.Source), string(b.Source)) // "group" < "project"
		}
		return strings.Compare(a.FullPath, b.FullPath)
	})
	return out, nil
}
