package notifications_test

import (
	"strconv"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

func TestSmokeNewIssue(t *testing.T) {
	e := start(t)
	alice := e.CreateUser(t, "alice")
	bob := e.CreateUser(t, "bob")
	p := e.project(t, alice.Client, "demo", "private")
	e.member(t, p, bob, gitlab.DeveloperPermissions)
	st, _, body := e.call(t, bob.Token, "GET", "/api/v4/projects/"+itoa(p.ID)+"/notification_settings", "")
	t.Log(st, body)
	st, _, body = e.call(t, bob.Token, "PUT", "/api/v4/projects/"+itoa(p.ID)+"/notification_settings", `{"level":"watch"}`)
	t.Log(st, body)
	if _, _, err := bob.Client.NotificationSettings.UpdateSettingsForProject(p.ID, &gitlab.NotificationSettingsOptions{Level: gitlab.Ptr(gitlab.WatchNotificationLevel)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Broken")}); err != nil {
		t.Fatal(err)
	}
	got := e.take(t, "demo | Broken (#1)")
	if len(got) != 1 {
		t.Fatalf("got %d mails: %+v", len(got), e.smtp.mails())
	}
	t.Logf("%s", got[0].Raw)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
