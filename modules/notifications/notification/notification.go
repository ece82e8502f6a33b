package notification

import (
	"context"
	"errors"
)

// Level is a notification level (GitLab's NotificationSetting levels).
type Level string

const (
	Disabled      Level = "disabled"
	Participating Level = "participating"
	Watch         Level = "watch"
	// Global defers to the next setting up (a project's to its group's,
	// a group's to the user's global one); not a level of the global one.
	Global  Level = "global"
	Mention Level = "mention"
	// Custom is participating plus the Events switched on.
	Custom Level = "custom"
)

// Levels lists the valid levels.
var Levels = []Level{Disabled, Participating, Watch, Global, Mention, Custom}

// Events are the e-mail events a custom level chooses from, in the order
// GitLab lists them.
var Events = []string{"new_note", "new_issue", "reopen_issue", "close_issue", "reassign_issue",
	"new_merge_request", "reopen_merge_request", "close_merge_request", "reassign_merge_request",
	"merge_merge_request", "failed_pipeline", "success_pipeline"}

// Source is what a setting other than the global one belongs to.
type Source string

const (
	Group   Source = "group"
	Project Source = "project"
)

// Setting is a user's notification setting as the Service returns it. A
// user who never set one has the defaults: Participating globally, Global
// elsewhere.
type Setting struct {
	Level Level
	// Events are the custom level's switches (names of Events); they are
	// kept whatever the level, and count only when it is Custom.
	Events map[string]bool
	// NotificationEmail (the global setting only) is where the user's mail
	// goes: the notification e-mail they chose while it is still theirs,
	// else their primary address.
	NotificationEmail string
}

// Change is what an update gives; nil is "not given".
type Change struct {
	Level *Level
	// NotificationEmail (the global setting only): one of the user's
	// addresses; "" is the primary one.
	NotificationEmail *string
	// Events switches custom events on or off (names of Events); those
	// not in it stay as they are.
	Events map[string]bool
}

// Service is the notification settings of the caller, the principal in
// ctx (signed in).
type Service interface {
	GlobalSetting(ctx context.Context) (Setting, error)
	// UpdateGlobalSetting: Global is not a level of the global setting
	// (ErrInvalidLevel).
	UpdateGlobalSetting(ctx context.Context, c Change) (Setting, error)
	// SourceSetting is the caller's setting for a group or a project, as
	// the API's :id names it (its id or its full path); one the caller may
	// not see is the projects module's error (projects.ErrGroupNotFound,
	// projects.ErrNotFound).
	SourceSetting(ctx context.Context, src Source, ref string) (Setting, error)
	UpdateSourceSetting(ctx context.Context, src Source, ref string, c Change) (Setting, error)
	// SourceSettings are the settings the caller chose for groups and
	// projects (those never set are Global), of those they may still
	// see: groups first, each kind by full path.
	SourceSettings(ctx context.Context) ([]SourceSetting, error)
}

// SourceSetting is a setting of a group or a project, with where it is.
type SourceSetting struct {
	Source   Source
	FullPath string
	Name     string
	Setting
}

var (
	// ErrInvalidLevel: a level that is not one of Levels, or Global for
	// the global setting (a *LevelError says which).
	ErrInvalidLevel = errors.New("notifications: not a valid level")
	// ErrEmailNotOwned: a notification e-mail that is not one of the
	// user's addresses.
	ErrEmailNotOwned = errors.New("notifications: not an e-mail address of the user")
)

// LevelError is ErrInvalidLevel with the level given.
type LevelError struct {
	Level Level
}

func (e *LevelError) Error() string { return ErrInvalidLevel.Error() + ": " + string(e.Level) }
func (e *LevelError) Unwrap() error { return ErrInvalidLevel }
