package internal

// The notification settings page of the profile area (issue 30):
// /profile/notifications shows and changes the caller's global setting and
// their settings of groups and projects, through notification.Service as
// the browser's user, as GET/PUT /notification_settings and the groups'
// and projects' do.

import (
	"errors"
	"net/http"
	"slices"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/notifications/notification"
	"github.com/fennec-forge/fennec/modules/projects"
)

type profilePages struct {
	site *web.Site
	s    *Service
	t    *web.Templates
}

// NewPages registers the notification settings page.
func NewPages(s *Service) fennec.Pages {
	return fennec.Pages{Name: "notifications", Register: func(site *web.Site) {
		pg := &profilePages{site: site, s: s, t: site.Templates(templateFiles, "templates/profile/*.html")}
		site.AddSection(web.Section{Area: web.AreaProfile, Key: "notifications", Label: "Notifications", Path: "/profile/notifications", Order: 60})
		site.Profile("GET /profile/notifications", pg.show)
		site.Profile("POST /profile/notifications", pg.saveGlobal)
		site.Profile("POST /profile/notifications/source", pg.saveSource)
	}}
}

// levelChoice is an option of a level's select.
type levelChoice struct {
	Value, Label string
	Selected     bool
}

// levelLabels say what each level sends, in the order the select offers.
var levelLabels = []struct {
	Level notification.Level
	Label string
}{
	{notification.Global, "Global: as your global setting"},
	{notification.Watch, "Watch: all activity"},
	{notification.Participating, "Participate: what you take part in"},
	{notification.Mention, "On mention: only when @mentioned"},
	{notification.Custom, "Custom: participate, and the events chosen"},
	{notification.Disabled, "Disabled: no notifications"},
}

func levelChoices(current notification.Level, global bool) []levelChoice {
	var out []levelChoice
	for _, l := range levelLabels {
		if global && l.Level == notification.Global {
			continue
		}
		out = append(out, levelChoice{Value: string(l.Level), Label: l.Label, Selected: l.Level == current})
	}
	return out
}

// eventChoice is a custom event's checkbox.
type eventChoice struct {
	Name, Label string
	Checked     bool
}

var eventLabels = map[string]string{
	"new_note": "New note", "new_issue": "New issue", "reopen_issue": "Reopen issue", "close_issue": "Close issue",
	"reassign_issue": "Reassign issue", "new_merge_request": "New merge request", "reopen_merge_request": "Reopen merge request",
	"close_merge_request": "Close merge request", "reassign_merge_request": "Reassign merge request",
	"merge_merge_request": "Merge merge request", "failed_pipeline": "Failed pipeline", "success_pipeline": "Successful pipeline",
}

func eventChoices(on map[string]bool) []eventChoice {
	out := make([]eventChoice, 0, len(notification.Events))
	for _, e := range notification.Events {
		out = append(out, eventChoice{Name: e, Label: eventLabels[e], Checked: on[e]})
	}
	return out
}

type sourceRow struct {
	Source, FullPath, Name string
	Href                   string
	Levels                 []levelChoice
	Events                 []eventChoice
	Custom                 bool
}

type notificationsData struct {
	Levels          []levelChoice
	Events          []eventChoice
	Custom          bool
	Emails          []levelChoice // the addresses mail may go to
	Sources         []sourceRow
	NewLevels       []levelChoice
	NewKind, NewRef string
	Notice, Problem string
}

var notificationNotices = map[string]string{"saved": "Notification settings saved."}

// refusals of the page's calls: a group or project the caller may not
// see is a problem of the form (the page's own subject is the caller).
var profileRefusals = web.Refusals{Page: "notification settings page", SignIn: []error{auth.ErrUnauthorized}}

func (pg *profilePages) show(w http.ResponseWriter, r *http.Request) {
	pg.render(w, r, 0, notificationsData{Notice: notificationNotices[r.URL.Query().Get("notice")]})
}

func (pg *profilePages) render(w http.ResponseWriter, r *http.Request, status int, d notificationsData) {
	ctx := r.Context()
	global, err := pg.s.GlobalSetting(ctx)
	if err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	sources, err := pg.s.SourceSettings(ctx)
	if err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	emails, err := pg.s.emails.ConfirmedEmails(ctx, auth.FromContext(ctx).UserID())
	if err != nil {
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	if !slices.Contains(emails, global.NotificationEmail) {
		emails = append([]string{global.NotificationEmail}, emails...)
	}
	for _, e := range emails {
		d.Emails = append(d.Emails, levelChoice{Value: e, Label: e, Selected: e == global.NotificationEmail})
	}
	d.Levels, d.Events, d.Custom = levelChoices(global.Level, true), eventChoices(global.Events), global.Level == notification.Custom
	for _, src := range sources {
		href := "/" + web.EscapePath(src.FullPath)
		if src.Source == notification.Group {
			href = "/groups/" + web.EscapePath(src.FullPath)
		}
		d.Sources = append(d.Sources, sourceRow{Source: string(src.Source), FullPath: src.FullPath, Name: src.Name, Href: href,
			Levels: levelChoices(src.Level, false), Events: eventChoices(src.Events), Custom: src.Level == notification.Custom})
	}
	if d.NewKind == "" {
		d.NewKind = string(notification.Project)
	}
	d.NewLevels = levelChoices(notification.Watch, false)
	pg.t.Render(w, r, "notifications", web.Page{Title: "Notifications", Area: web.AreaProfile, Section: "notifications", Status: status, Data: d})
}

// change is a form's level and, when it carries them, its custom events
// (every event: a box left unchecked switches it off).
func change(r *http.Request) notification.Change {
	level := notification.Level(r.PostFormValue("level"))
	c := notification.Change{Level: &level}
	if r.PostFormValue("events") == "1" {
		c.Events = map[string]bool{}
		for _, e := range notification.Events {
			c.Events[e] = slices.Contains(r.PostForm["event"], e)
		}
	}
	return c
}

func (pg *profilePages) saveGlobal(w http.ResponseWriter, r *http.Request) {
	c := change(r)
	if email, ok := r.PostForm["notification_email"]; ok && len(email) == 1 {
		c.NotificationEmail = &email[0]
	}
	_, err := pg.s.UpdateGlobalSetting(r.Context(), c)
	pg.answer(w, r, err, notificationsData{})
}

func (pg *profilePages) saveSource(w http.ResponseWriter, r *http.Request) {
	kind := notification.Source(r.PostFormValue("source"))
	ref := r.PostFormValue("path")
	if kind != notification.Group && kind != notification.Project {
		pg.answer(w, r, errNotASource, notificationsData{NewRef: ref})
		return
	}
	_, err := pg.s.UpdateSourceSetting(r.Context(), kind, ref, change(r))
	pg.answer(w, r, err, notificationsData{NewKind: string(kind), NewRef: ref})
}

var errNotASource = errors.New("notifications: not a group or a project")

// answer goes back to the page after a form, or shows it with what was
// wrong (nothing changed).
func (pg *profilePages) answer(w http.ResponseWriter, r *http.Request, err error, d notificationsData) {
	switch {
	case err == nil:
		pg.site.Redirect(w, r, "/profile/notifications?notice=saved")
		return
	case errors.Is(err, notification.ErrInvalidLevel):
		d.Problem = "The settings were not saved: that is not a notification level."
	case errors.Is(err, notification.ErrEmailNotOwned):
		d.Problem = "The settings were not saved: the notification e-mail must be one of your addresses."
	case errors.Is(err, projects.ErrNotFound), errors.Is(err, projects.ErrGroupNotFound), errors.Is(err, errNotASource):
		d.Problem = "The settings were not saved: there is no such group or project, or you may not see it."
	default:
		pg.site.Fail(w, r, err, profileRefusals)
		return
	}
	pg.render(w, r, http.StatusUnprocessableEntity, d)
}
