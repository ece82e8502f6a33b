package internal

import (
	"context"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects/project"
)

// The instance's settings that change at run time and that this module
// consults: the visibility a new project and a new group get when their
// create names none. They are one record in the store (none until an
// administrator saves them: the defaults below), read and written through
// GitLab's GET and PUT /application/settings with GitLab's field names
// and on the admin area's settings page.

// AppSettings is the settings record.
type AppSettings struct {
	ID                       int64     `json:"id"`
	DefaultProjectVisibility string    `json:"default_project_visibility"`
	DefaultGroupVisibility   string    `json:"default_group_visibility"`
	CreatedAt                time.Time `json:"created_at"`
	UpdatedAt                time.Time `json:"updated_at"`
}

func (a *AppSettings) RecordID() int64      { return a.ID }
func (a *AppSettings) SetRecordID(id int64) { a.ID = id }

var appSettings = store.NewTable[int64, AppSettings]("projects.application_settings")

// defaultAppSettings are the settings before any is saved: GitLab's
// defaults (private).
func defaultAppSettings() AppSettings {
	return AppSettings{ID: 1, DefaultProjectVisibility: project.Private, DefaultGroupVisibility: project.Private}
}

// AppSettingsFields are an update's settings; nil is "not given".
type AppSettingsFields struct {
	DefaultProjectVisibility *string
	DefaultGroupVisibility   *string
}

// settingsIn reads the settings record (the defaults when none is saved).
func settingsIn(tx *store.Tx) (*AppSettings, error) {
	list, _, err := appSettings.Page(tx, false, 0, 1)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		d := defaultAppSettings()
		return &d, nil
	}
	return list[0], nil
}

// currentSettings reads the settings for a create.
func (s *Service) currentSettings(ctx context.Context) (AppSettings, error) {
	var out *AppSettings
	err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = settingsIn(tx)
		return err
	})
	if err != nil {
		return AppSettings{}, err
	}
	return *out, nil
}

// ApplicationSettings are the instance's settings (administrators).
func (s *Service) ApplicationSettings(ctx context.Context) (AppSettings, error) {
	if err := requireInstanceAdmin(ctx); err != nil {
		return AppSettings{}, err
	}
	return s.currentSettings(ctx)
}

// UpdateApplicationSettings changes the settings given (administrators);
// a visibility that is not one is a FieldErrors.
func (s *Service) UpdateApplicationSettings(ctx context.Context, in AppSettingsFields) (AppSettings, error) {
	if err := requireInstanceAdmin(ctx); err != nil {
		return AppSettings{}, err
	}
	v := project.FieldErrors{}
	for field, val := range map[string]*string{"default_project_visibility": in.DefaultProjectVisibility,
		"default_group_visibility": in.DefaultGroupVisibility} {
		if val != nil && !validVisibility(*val) {
			v[field] = append(v[field], "is not included in the list")
		}
	}
	if len(v) > 0 {
		return AppSettings{}, v
	}
	var out AppSettings
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := settingsIn(tx)
		if err != nil {
			return err
		}
		next := *cur
		if in.DefaultProjectVisibility != nil {
			next.DefaultProjectVisibility = *in.DefaultProjectVisibility
		}
		if in.DefaultGroupVisibility != nil {
			next.DefaultGroupVisibility = *in.DefaultGroupVisibility
		}
		now := s.now().UTC()
		next.UpdatedAt = now
		if cur.CreatedAt.IsZero() { // the first save
			next.CreatedAt = now
			err = appSettings.Insert(tx, &next)
		} else {
			err = appSettings.Update(tx, &next)
		}
		out = next
		return err
	})
	return out, err
}

// requireInstanceAdmin refuses anyone but an administrator.
func requireInstanceAdmin(ctx context.Context) error {
	p := auth.FromContext(ctx)
	if p.IsAnonymous() {
		return auth.ErrUnauthorized
	}
	if !p.IsAdmin() {
		return project.ErrForbidden
	}
	return nil
}
