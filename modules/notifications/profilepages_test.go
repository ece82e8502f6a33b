package notifications_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestProfileNotificationsPage: the settings page shows and changes the
// global level, the notification e-mail and the custom events, and a
// level for a project and a group, as the API then reads them; a project
// the user may not see, an address not theirs, a bad level and a forged
// form change nothing.
func TestProfileNotificationsPage(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	mine := stocktest.NewProject(t, alice.Client, "mine", "private")
	secret := stocktest.NewProject(t, s.Client, "secret", "private")
	group, _, err := alice.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Team"), Path: gitlab.Ptr("team")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("alice.work@example.com")}); err != nil {
		t.Fatal(err)
	}

	anon := s.NewBrowser(t)
	if p := anon.Get(t, "/profile/notifications"); p.StatusCode != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/users/sign_in?return_to=") {
		t.Fatalf("anonymous: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	b := s.SignedIn(t, "alice", alice.Password)
	page := b.Get(t, "/profile/notifications")
	page.Want(t, "page", 200, `<h1>Notifications</h1>`, `<a href="/profile/notifications" aria-current="page">Notifications</a>`,
		`<option value="participating" selected>`, `<option value="alice@example.com" selected>`, `Every group and project follows your global level.`,
		`<select id="global-level" name="level"><option value="watch">`)
	page.WantNot(t, "global levels", `<select id="global-level" name="level"><option value="global"`)
	csrf := page.CSRF()

	b.Post(t, "/profile/notifications", url.Values{"authenticity_token": {csrf}, "events": {"1"}, "level": {"custom"},
		"notification_email": {"alice.work@example.com"}, "event": {"new_issue", "failed_pipeline"}}).
		WantRedirect(t, "save global", http.StatusSeeOther, "/profile/notifications?notice=saved")
	g, _, err := alice.Client.NotificationSettings.GetGlobalSettings()
	if err != nil || g.Level != gitlab.CustomNotificationLevel || g.NotificationEmail != "alice.work@example.com" {
		t.Fatalf("global after the form: %v %+v", err, g)
	}
	var custom map[string]bool
	if _, body := s.JSON(t, http.MethodGet, "/api/v4/notification_settings", nil, &struct {
		Events *map[string]bool `json:"events"`
	}{&custom}, "PRIVATE-TOKEN", alice.Token); !custom["new_issue"] || !custom["failed_pipeline"] || custom["new_note"] {
		t.Fatalf("custom events: %s", body)
	}
	b.Get(t, "/profile/notifications?notice=saved").Want(t, "saved", 200, `Notification settings saved.`, `<option value="custom" selected>`,
		`value="new_issue" checked`, `<option value="alice.work@example.com" selected>`)

	// Refusals: the page again, 422, nothing changed.
	b.Post(t, "/profile/notifications", url.Values{"authenticity_token": {csrf}, "level": {"global"}}).
		Want(t, "global as global", 422, `that is not a notification level`)
	b.Post(t, "/profile/notifications", url.Values{"authenticity_token": {csrf}, "level": {"watch"}, "notification_email": {"root@example.com"}}).
		Want(t, "foreign address", 422, `must be one of your addresses`)
	b.Post(t, "/profile/notifications", url.Values{"authenticity_token": {"forged"}, "level": {"disabled"}}).Want(t, "forged", 403)
	b.Post(t, "/profile/notifications/source", url.Values{"authenticity_token": {csrf}, "source": {"project"}, "path": {secret.PathWithNamespace}, "level": {"watch"}}).
		Want(t, "hidden project", 422, `there is no such group or project, or you may not see it.`, `value="root/secret"`)
	b.Post(t, "/profile/notifications/source", url.Values{"authenticity_token": {csrf}, "source": {"../etc"}, "path": {"x"}, "level": {"watch"}}).
		Want(t, "bad kind", 422, `there is no such group or project`)
	if g, _, _ := alice.Client.NotificationSettings.GetGlobalSettings(); g.Level != gitlab.CustomNotificationLevel {
		t.Fatalf("a refused form changed the global level: %+v", g)
	}
	if s, _, _ := s.Client.NotificationSettings.GetSettingsForProject(secret.ID); s.Level != gitlab.GlobalNotificationLevel {
		t.Fatalf("root's setting moved: %+v", s)
	}

	// A project's and a group's level.
	b.Post(t, "/profile/notifications/source", url.Values{"authenticity_token": {csrf}, "source": {"project"}, "path": {mine.PathWithNamespace}, "level": {"watch"}}).
		WantRedirect(t, "project level", http.StatusSeeOther, "/profile/notifications?notice=saved")
	b.Post(t, "/profile/notifications/source", url.Values{"authenticity_token": {csrf}, "source": {"group"}, "path": {"team"}, "level": {"disabled"}}).
		WantRedirect(t, "group level", http.StatusSeeOther, "/profile/notifications?notice=saved")
	if ps, _, err := alice.Client.NotificationSettings.GetSettingsForProject(mine.ID); err != nil || ps.Level != gitlab.WatchNotificationLevel {
		t.Fatalf("project setting: %v %+v", err, ps)
	}
	if gs, _, err := alice.Client.NotificationSettings.GetSettingsForGroup(group.ID); err != nil || gs.Level != gitlab.DisabledNotificationLevel {
		t.Fatalf("group setting: %v %+v", err, gs)
	}
	list := b.Get(t, "/profile/notifications")
	list.Want(t, "sources", 200, `<a href="/groups/team"><bdi>Team</bdi></a>`, `<a href="/alice/mine">`, `name="path" value="alice/mine"`)
	if strings.Index(list.Body, `href="/groups/team"`) > strings.Index(list.Body, `href="/alice/mine"`) {
		t.Error("groups are listed after projects")
	}
	// The project's row changes it to custom with one event.
	b.Post(t, "/profile/notifications/source", url.Values{"authenticity_token": {csrf}, "source": {"project"}, "path": {"alice/mine"},
		"events": {"1"}, "level": {"custom"}, "event": {"merge_merge_request"}}).WantRedirect(t, "row", http.StatusSeeOther, "/profile/notifications?notice=saved")
	if ps, _, _ := alice.Client.NotificationSettings.GetSettingsForProject(mine.ID); ps.Level != gitlab.CustomNotificationLevel ||
		ps.Events == nil || !ps.Events.MergeMergeRequest || ps.Events.NewIssue {
		t.Fatalf("project's custom setting: %+v %+v", ps, ps.Events)
	}
}
