package notifications_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
)

const allFalse = `{"new_note":false,"new_issue":false,"reopen_issue":false,"close_issue":false,"reassign_issue":false,` +
	`"new_merge_request":false,"reopen_merge_request":false,"close_merge_request":false,"reassign_merge_request":false,` +
	`"merge_merge_request":false,"failed_pipeline":false,"success_pipeline":false}`

func TestGlobalSettings(t *testing.T) {
	t.Parallel()
	e := start(t)
	u := e.CreateUser(t, "gina")
	check := func(method, body string, wantStatus int, want string) {
		t.Helper()
		st, h, got := e.call(t, u.Token, method, "/api/v4/notification_settings", body)
		if st != wantStatus || got != want {
			t.Fatalf("%s %s: %d %s, want %d %s", method, body, st, got, wantStatus, want)
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Fatalf("content type %q", h.Get("Content-Type"))
		}
	}
	check("GET", "", 200, `{"level":"participating","notification_email":"gina@example.com"}`)
	check("PUT", `{"level":"watch"}`, 200, `{"level":"watch","notification_email":"gina@example.com"}`)
	check("GET", "", 200, `{"level":"watch","notification_email":"gina@example.com"}`)

	// Bad input: GitLab 9.x's answers, and nothing stored.
	for _, bad := range []struct{ body, want string }{
		{`{"level":"loud"}`, `{"message":"'loud' is not a valid level"}`},
		{`{"level":""}`, `{"message":"'' is not a valid level"}`},
		{`{"level":"global"}`, `{"message":"'global' is not a valid level"}`},
		{`{"level":"` + strings.Repeat("x", 3000) + `"}`, `{"message":"'` + strings.Repeat("x", 3000) + `' is not a valid level"}`},
		{`{"level":"mention","notification_email":"someone@example.com"}`, `{"message":{"notification_email":["is not an email you own"]}}`},
		{`{"notification_email":"<script>@x"}`, `{"message":{"notification_email":["is not an email you own"]}}`},
		{`{"notification_email":"` + strings.Repeat("a", 10000) + `@example.com"}`, `{"message":{"notification_email":["is not an email you own"]}}`},
		{`{"new_note":"maybe"}`, `{"error":"new_note is invalid"}`},
	} {
		check("PUT", bad.body, 400, bad.want)
	}
	check("GET", "", 200, `{"level":"watch","notification_email":"gina@example.com"}`)

	// A secondary address may be the notification e-mail; blank means
	// the primary one again; case does not matter.
	if _, _, err := u.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("gina.work@example.com")}); err != nil {
		t.Fatal(err)
	}
	check("PUT", `{"notification_email":"GINA.work@example.com"}`, 200, `{"level":"watch","notification_email":"gina.work@example.com"}`)
	check("PUT", `{"notification_email":""}`, 200, `{"level":"watch","notification_email":"gina@example.com"}`)

	// Custom: the events come back, those not set are false; form
	// parameters work as JSON does.
	st, _, got := e.call(t, u.Token, "PUT", "/api/v4/notification_settings?level=custom&new_note=true&failed_pipeline=1", "")
	want := `{"level":"custom","notification_email":"gina@example.com","events":` +
		strings.Replace(strings.Replace(allFalse, `"new_note":false`, `"new_note":true`, 1), `"failed_pipeline":false`, `"failed_pipeline":true`, 1) + `}`
	if st != 200 || got != want {
		t.Fatalf("custom: %d %s\nwant %s", st, got, want)
	}

	// The real client reads it.
	s, _, err := u.Client.NotificationSettings.GetGlobalSettings()
	if err != nil || s.Level != gitlab.CustomNotificationLevel || s.NotificationEmail != "gina@example.com" || !s.Events.NewNote || s.Events.NewIssue {
		t.Fatalf("client: %+v %v", s, err)
	}

	// Signed in only.
	if st, _, got := e.call(t, "", "GET", "/api/v4/notification_settings", ""); st != 401 || got != `{"message":"401 Unauthorized"}` {
		t.Fatalf("anonymous: %d %s", st, got)
	}
	if st, _, got := e.call(t, "", "PUT", "/api/v4/notification_settings", `{"level":"watch"}`); st != 401 || got != `{"message":"401 Unauthorized"}` {
		t.Fatalf("anonymous put: %d %s", st, got)
	}
}

// A user created with confirm=false may still name their own primary
// address as notification_email (refused as "not an email you own"
// before: only confirmed addresses counted).
func TestUnconfirmedPrimaryIsOwned(t *testing.T) {
	t.Parallel()
	e := start(t)
	st, _, body := e.call(t, e.RootToken, "POST", "/api/v4/users", `{"email":"una@example.com","username":"una","name":"Una",`+
		`"password":"a-long-password-1","confirm":false}`)
	if st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	var created struct {
		ID          int64   `json:"id"`
		ConfirmedAt *string `json:"confirmed_at"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil || created.ConfirmedAt != nil {
		t.Fatalf("created %s: %v", body, err)
	}
	st, _, body = e.call(t, e.RootToken, "POST", "/api/v4/users/"+store.IDString(created.ID)+"/impersonation_tokens", `{"name":"t","scopes":["api"]}`)
	if st != 201 {
		t.Fatalf("token: %d %s", st, body)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(body), &tok); err != nil {
		t.Fatal(err)
	}
	st, _, body = e.call(t, tok.Token, "PUT", "/api/v4/notification_settings", `{"notification_email":"UNA@example.com"}`)
	if st != 200 || body != `{"level":"participating","notification_email":"una@example.com"}` {
		t.Fatalf("PUT own primary: %d %s", st, body)
	}
	st, _, body = e.call(t, tok.Token, "PUT", "/api/v4/notification_settings", `{"notification_email":"other@example.com"}`)
	if st != 400 || body != `{"message":{"notification_email":["is not an email you own"]}}` {
		t.Fatalf("PUT another's address: %d %s", st, body)
	}
}

func TestProjectAndGroupSettings(t *testing.T) {
	t.Parallel()
	e := start(t)
	owner := e.CreateUser(t, "olga")
	dev := e.CreateUser(t, "dave")
	stranger := e.CreateUser(t, "sam")
	priv := e.project(t, owner.Client, "secret", "private")
	pub := e.project(t, owner.Client, "open", "public")
	e.member(t, priv, dev, gitlab.DeveloperPermissions)
	g, _, err := e.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Team"), Path: gitlab.Ptr("team"),
		Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	lvl := gitlab.DeveloperPermissions
	if _, _, err := e.Client.GroupMembers.AddGroupMember(g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(dev.ID), AccessLevel: &lvl}); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"project by id":   "/api/v4/projects/" + store.IDString(priv.ID) + "/notification_settings",
		"project by path": "/api/v4/projects/" + url.PathEscape("olga/secret") + "/notification_settings",
		"group by id":     "/api/v4/groups/" + store.IDString(g.ID) + "/notification_settings",
		"group by path":   "/api/v4/groups/team/notification_settings",
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			check := func(token, method, body string, wantStatus int, want string) {
				t.Helper()
				st, _, got := e.call(t, token, method, path, body)
				if st != wantStatus || got != want {
					t.Fatalf("%s %s: %d %s, want %d %s", method, body, st, got, wantStatus, want)
				}
			}
			check(dev.Token, "PUT", `{"level":"global"}`, 200, `{"level":"global"}`)
			check(dev.Token, "GET", "", 200, `{"level":"global"}`)
			check(dev.Token, "PUT", `{"level":"watch","new_issue":true}`, 200, `{"level":"watch"}`)
			// The events set while not custom are kept and show once custom.
			check(dev.Token, "PUT", `{"level":"custom","close_issue":true}`, 200,
				`{"level":"custom","events":`+strings.NewReplacer(`"new_issue":false`, `"new_issue":true`, `"close_issue":false`, `"close_issue":true`).Replace(allFalse)+`}`)
			check(dev.Token, "PUT", `{"level":"custom","new_issue":false}`, 200,
				`{"level":"custom","events":`+strings.NewReplacer(`"close_issue":false`, `"close_issue":true`).Replace(allFalse)+`}`)
			check(dev.Token, "PUT", `{"level":"nope"}`, 400, `{"message":"'nope' is not a valid level"}`)
			check(dev.Token, "PUT", `{"close_issue":"sometimes"}`, 400, `{"error":"close_issue is invalid"}`)
			check(dev.Token, "GET", "", 200,
				`{"level":"custom","events":`+strings.NewReplacer(`"close_issue":false`, `"close_issue":true`).Replace(allFalse)+`}`)
			check(dev.Token, "PUT", `{"level":"disabled"}`, 200, `{"level":"disabled"}`)
			// Not visible to a stranger: 404 as for a missing one.
			thing := "Project"
			if strings.HasPrefix(name, "group") {
				thing = "Group"
			}
			check(stranger.Token, "GET", "", 404, `{"message":"404 `+thing+` Not Found"}`)
			check(stranger.Token, "PUT", `{"level":"watch"}`, 404, `{"message":"404 `+thing+` Not Found"}`)
			check("", "GET", "", 401, `{"message":"401 Unauthorized"}`)
		})
	}
	// Missing ones.
	for _, path := range []string{"/api/v4/projects/999999/notification_settings", "/api/v4/projects/olga%2Fnope/notification_settings"} {
		if st, _, got := e.call(t, dev.Token, "GET", path, ""); st != 404 || got != `{"message":"404 Project Not Found"}` {
			t.Fatalf("%s: %d %s", path, st, got)
		}
	}
	if st, _, got := e.call(t, dev.Token, "GET", "/api/v4/groups/999999/notification_settings", ""); st != 404 || got != `{"message":"404 Group Not Found"}` {
		t.Fatalf("missing group: %d %s", st, got)
	}
	// A public project: anyone signed in may choose a level for it; the
	// real client does it.
	s, _, err := stranger.Client.NotificationSettings.UpdateSettingsForProject(pub.ID, &gitlab.NotificationSettingsOptions{
		Level: gitlab.Ptr(gitlab.CustomNotificationLevel), NewNote: gitlab.Ptr(true)})
	if err != nil || s.Level != gitlab.CustomNotificationLevel || s.Events == nil || !s.Events.NewNote || s.Events.NewIssue {
		t.Fatalf("public project: %+v %v", s, err)
	}
	s, _, err = stranger.Client.NotificationSettings.GetSettingsForProject(pub.ID)
	if err != nil || s.Level != gitlab.CustomNotificationLevel {
		t.Fatalf("public project get: %+v %v", s, err)
	}
	// Settings are per user: the owner's are untouched.
	if s, _, err := owner.Client.NotificationSettings.GetSettingsForProject(pub.ID); err != nil || s.Level != gitlab.GlobalNotificationLevel || s.Events != nil {
		t.Fatalf("owner: %+v %v", s, err)
	}
}

// TestSettingsGoWithTheirOwner: deleting a user or a project deletes the
// settings rows that name them.
func TestSettingsGoWithTheirOwner(t *testing.T) {
	t.Parallel()
	e := start(t)
	owner := e.CreateUser(t, "keeper")
	leaver := e.CreateUser(t, "leaver")
	p := e.project(t, owner.Client, "Doomed", "public")
	other := e.project(t, owner.Client, "Kept", "public")
	for _, u := range []*fennectest.User{owner, leaver} {
		for _, proj := range []*gitlab.Project{p, other} {
			if _, _, err := u.Client.NotificationSettings.UpdateSettingsForProject(proj.ID, &gitlab.NotificationSettingsOptions{Level: gitlab.Ptr(gitlab.WatchNotificationLevel)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := leaver.Client.NotificationSettings.UpdateGlobalSettings(&gitlab.NotificationSettingsOptions{Level: gitlab.Ptr(gitlab.MentionNotificationLevel)}); err != nil {
		t.Fatal(err)
	}
	e.settle(t)
	if n := e.rows(t, "notifications.settings"); n != 5 {
		t.Fatalf("%d settings rows, want 5", n)
	}
	if _, err := e.Client.Users.DeleteUser(leaver.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Client.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.settle(t)
	if n := e.rows(t, "notifications.settings"); n != 1 {
		t.Fatalf("%d settings rows left, want 1 (the owner's on the kept project)", n)
	}
	if s, _, err := owner.Client.NotificationSettings.GetSettingsForProject(other.ID); err != nil || s.Level != gitlab.WatchNotificationLevel {
		t.Fatalf("kept setting: %+v %v", s, err)
	}
}

// TestNotificationEmail: mail goes to the notification e-mail; removing
// that secondary address falls back to the primary one.
func TestNotificationEmail(t *testing.T) {
	t.Parallel()
	e := start(t)
	author := e.CreateUser(t, "poster")
	reader := e.CreateUser(t, "reader")
	p := e.project(t, author.Client, "Post", "public")
	email, _, err := reader.Client.Users.AddEmail(&gitlab.AddEmailOptions{Email: gitlab.Ptr("reader.alt@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := reader.Client.NotificationSettings.UpdateGlobalSettings(&gitlab.NotificationSettingsOptions{
		Level: gitlab.Ptr(gitlab.WatchNotificationLevel), NotificationEmail: gitlab.Ptr("reader.alt@example.com")}); err != nil {
		t.Fatal(err)
	}
	// A watcher by the global level alone is not on the team: watch the
	// project too.
	if _, _, err := reader.Client.NotificationSettings.UpdateSettingsForProject(p.ID, &gitlab.NotificationSettingsOptions{Level: gitlab.Ptr(gitlab.WatchNotificationLevel)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Letter")}); err != nil {
		t.Fatal(err)
	}
	if got := recipients(e.take(t, "Post | Letter (#1)")); len(got) != 1 || got[0] != "reader.alt@example.com" {
		t.Fatalf("sent to %v", got)
	}
	if _, err := reader.Client.Users.DeleteEmail(email.ID); err != nil {
		t.Fatal(err)
	}
	if s, _, err := reader.Client.NotificationSettings.GetGlobalSettings(); err != nil || s.NotificationEmail != reader.Email {
		t.Fatalf("after removing the address: %+v %v", s, err)
	}
	if _, _, err := author.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Card")}); err != nil {
		t.Fatal(err)
	}
	if got := recipients(e.take(t, "Post | Card (#2)")); len(got) != 1 || got[0] != reader.Email {
		t.Fatalf("sent to %v", got)
	}
}
