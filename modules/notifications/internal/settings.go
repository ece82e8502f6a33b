package internal

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
)

// EventsView is the events object of a custom level, keys in GitLab's
// order.
type EventsView struct {
	NewNote              bool `json:"new_note"`
	NewIssue             bool `json:"new_issue"`
	ReopenIssue          bool `json:"reopen_issue"`
	CloseIssue           bool `json:"close_issue"`
	ReassignIssue        bool `json:"reassign_issue"`
	NewMergeRequest      bool `json:"new_merge_request"`
	ReopenMergeRequest   bool `json:"reopen_merge_request"`
	CloseMergeRequest    bool `json:"close_merge_request"`
	ReassignMergeRequest bool `json:"reassign_merge_request"`
	MergeMergeRequest    bool `json:"merge_merge_request"`
	FailedPipeline       bool `json:"failed_pipeline"`
	SuccessPipeline      bool `json:"success_pipeline"`
}

func eventsView(m map[string]bool) *EventsView {
	return &EventsView{NewNote: m["new_note"], NewIssue: m["new_issue"], ReopenIssue: m["reopen_issue"],
		CloseIssue: m["close_issue"], ReassignIssue: m["reassign_issue"], NewMergeRequest: m["new_merge_request"],
		ReopenMergeRequest: m["reopen_merge_request"], CloseMergeRequest: m["close_merge_request"],
		ReassignMergeRequest: m["reassign_merge_request"], MergeMergeRequest: m["merge_merge_request"],
		FailedPipeline: m["failed_pipeline"], SuccessPipeline: m["success_pipeline"]}
}

// SettingView is a group's or project's notification setting; events only
// when the level is custom.
type SettingView struct {
	Level  string      `json:"level"`
	Events *EventsView `json:"events,omitempty"`
}

// GlobalSettingView is the user's global setting.
type GlobalSettingView struct {
	Level             string      `json:"level"`
	NotificationEmail string      `json:"notification_email"`
	Events            *EventsView `json:"events,omitempty"`
}

// settingsBody is the parameters of the PUTs (notification_email on the
// global one only).
type settingsBody struct {
	Level                *string `json:"level,omitempty" doc:"disabled, participating, watch, global (not on the global setting), mention or custom"`
	NotificationEmail    *string `json:"notification_email,omitempty" doc:"One of the caller's confirmed addresses; empty: the primary one"`
	NewNote              *bool   `json:"new_note,omitempty"`
	NewIssue             *bool   `json:"new_issue,omitempty"`
	ReopenIssue          *bool   `json:"reopen_issue,omitempty"`
	CloseIssue           *bool   `json:"close_issue,omitempty"`
	ReassignIssue        *bool   `json:"reassign_issue,omitempty"`
	NewMergeRequest      *bool   `json:"new_merge_request,omitempty"`
	ReopenMergeRequest   *bool   `json:"reopen_merge_request,omitempty"`
	CloseMergeRequest    *bool   `json:"close_merge_request,omitempty"`
	ReassignMergeRequest *bool   `json:"reassign_merge_request,omitempty"`
	MergeMergeRequest    *bool   `json:"merge_merge_request,omitempty"`
	FailedPipeline       *bool   `json:"failed_pipeline,omitempty"`
	SuccessPipeline      *bool   `json:"success_pipeline,omitempty"`
}

func (b *settingsBody) events() map[string]*bool {
	return map[string]*bool{"new_note": b.NewNote, "new_issue": b.NewIssue, "reopen_issue": b.ReopenIssue,
		"close_issue": b.CloseIssue, "reassign_issue": b.ReassignIssue, "new_merge_request": b.NewMergeRequest,
		"reopen_merge_request": b.ReopenMergeRequest, "close_merge_request": b.CloseMergeRequest,
		"reassign_merge_request": b.ReassignMergeRequest, "merge_merge_request": b.MergeMergeRequest,
		"failed_pipeline": b.FailedPipeline, "success_pipeline": b.SuccessPipeline}
}

type SourcePath struct {
	ID string `path:"id" doc:"Group or project id, or URL-encoded path"`
}

type globalOutput struct{ Body GlobalSettingView }

type sourceOutput struct{ Body SettingView }

type putGlobalInput struct{ Body settingsBody }

type putSourceInput struct {
	SourcePath
	Body settingsBody
}

func (s *Service) registerSettings(a *api.API) {
	tags := []string{"notification_settings"}
	api.Register(a, api.Op{ID: "get-global-notification-settings", Method: http.MethodGet, Path: "/notification_settings", Tags: tags,
		Access: api.SignedIn, Summary: "The caller's global notification level and notification e-mail"}, s.getGlobal)
	api.Register(a, api.Op{ID: "update-global-notification-settings", Method: http.MethodPut, Path: "/notification_settings", Tags: tags,
		Access: api.SignedIn, Summary: "Changes the caller's global notification level, e-mail or custom events"}, s.putGlobal)
	for _, src := range []string{SourceGroup, SourceProject} {
		path := "/" + src + "s/{id}/notification_settings"
		api.Register(a, api.Op{ID: "get-" + src + "-notification-settings", Method: http.MethodGet, Path: path, Tags: tags,
			Access: api.SignedIn, Summary: "The caller's notification level for a " + src}, func(ctx context.Context, in *SourcePath) (*sourceOutput, error) {
			return s.getSource(ctx, src, in.ID)
		})
		api.Register(a, api.Op{ID: "update-" + src + "-notification-settings", Method: http.MethodPut, Path: path, Tags: tags,
			Access: api.SignedIn, Summary: "Changes the caller's notification level (and custom events) for a " + src}, func(ctx context.Context, in *putSourceInput) (*sourceOutput, error) {
			return s.putSource(ctx, src, in.ID, &in.Body)
		})
	}
}

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

func (s *Service) globalView(ctx context.Context, row *Setting) (GlobalSettingView, error) {
	v := GlobalSettingView{Level: row.Level}
	u, err := s.users.UserByID(ctx, row.UserID)
	if err != nil {
		return v, err
	}
	if v.NotificationEmail, err = s.notificationEmail(ctx, row, u.Email); err != nil {
		return v, err
	}
	if row.Level == LevelCustom {
		v.Events = eventsView(row.Events)
	}
	return v, nil
}

func sourceView(row *Setting) SettingView {
	v := SettingView{Level: row.Level}
	if row.Level == LevelCustom {
		v.Events = eventsView(row.Events)
	}
	return v
}

func (s *Service) getGlobal(ctx context.Context, _ *struct{}) (*globalOutput, error) {
	user := auth.FromContext(ctx).UserID()
	var row *Setting
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		row, err = getRow(tx, SourceGlobal, 0, user)
		return err
	})
	if err != nil {
		return nil, err
	}
	v, err := s.globalView(ctx, row)
	return &globalOutput{Body: v}, err
}

// checkLevel answers a level GitLab's enum refuses as GitLab 9.x did (its
// ArgumentError rescued into a 400 with the message).
func checkLevel(level *string, global bool) error {
	if level == nil {
		return nil
	}
	if !slices.Contains(Levels, *level) || (global && *level == LevelGlobal) {
		return api.BadRequest("'" + *level + "' is not a valid level")
	}
	return nil
}

// apply sets the level and the events given in b on row.
func apply(row *Setting, b *settingsBody) {
	if b.Level != nil {
		row.Level = *b.Level
	}
	for name, v := range b.events() {
		if v == nil {
			continue
		}
		if row.Events == nil {
			row.Events = map[string]bool{}
		}
		row.Events[name] = *v
	}
}

func (s *Service) putGlobal(ctx context.Context, in *putGlobalInput) (*globalOutput, error) {
	user := auth.FromContext(ctx).UserID()
	b := &in.Body
	if err := checkLevel(b.Level, true); err != nil {
		return nil, err
	}
	email := ""
	if b.NotificationEmail != nil {
		email = strings.TrimSpace(*b.NotificationEmail)
		if email != "" {
			owned, err := s.emails.ConfirmedEmails(ctx, user)
			if err != nil {
				return nil, err
			}
			// The primary address is the user's own whether or not it is
			// confirmed (a user created with confirm=false): GitLab checks
			// ownership against all of a user's addresses, and mail goes
			// to the primary one anyway when notification_email is empty.
			u, err := s.users.UserByID(ctx, user)
			if err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(owned, func(e string) bool { return strings.EqualFold(e, u.Email) }) {
				owned = append(owned, u.Email)
			}
			i := slices.IndexFunc(owned, func(e string) bool { return strings.EqualFold(e, email) })
			if i < 0 {
				return nil, api.Validation(map[string][]string{"notification_email": {"is not an email you own"}})
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
		return nil, err
	}
	v, err := s.globalView(ctx, row)
	return &globalOutput{Body: v}, err
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

// resolveSource finds the group or project the caller names and may see.
func (s *Service) resolveSource(ctx context.Context, source, ref string) (int64, error) {
	if source == SourceGroup {
		g, err := s.teams.ResolveGroup(ctx, ref)
		if errors.Is(err, projects.ErrGroupNotFound) {
			return 0, api.NotFound("Group")
		}
		return g.ID, err
	}
	p, err := s.access.Resolve(ctx, ref)
	if errors.Is(err, projects.ErrNotFound) {
		return 0, api.NotFound("Project")
	}
	return p.ID, err
}

func (s *Service) getSource(ctx context.Context, source, ref string) (*sourceOutput, error) {
	id, err := s.resolveSource(ctx, source, ref)
	if err != nil {
		return nil, err
	}
	var row *Setting
	err = s.db.View(ctx, func(tx *store.Tx) error {
		row, err = getRow(tx, source, id, auth.FromContext(ctx).UserID())
		return err
	})
	if err != nil {
		return nil, err
	}
	return &sourceOutput{Body: sourceView(row)}, nil
}

func (s *Service) putSource(ctx context.Context, source, ref string, b *settingsBody) (*sourceOutput, error) {
	id, err := s.resolveSource(ctx, source, ref)
	if err != nil {
		return nil, err
	}
	if err := checkLevel(b.Level, false); err != nil {
		return nil, err
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
		return nil, err
	}
	return &sourceOutput{Body: sourceView(row)}, nil
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
