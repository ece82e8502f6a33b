package notifications_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/notifications/notification"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestServiceWithoutHTTP drives notification.Service as a settings page
// would, with no request behind it: the same levels, rules and errors as
// the API, and what it saves is what the API shows.
func TestServiceWithoutHTTP(t *testing.T) {
	t.Parallel()
	var svc notification.Service
	var users auth.UserLookup
	e := start(t, fennectest.WithExtract(&svc, &users))
	alice, bob := e.CreateUser(t, "alice"), e.CreateUser(t, "bob")
	asAlice, asBob := fennectest.AsUser(t, users, alice.ID), fennectest.AsUser(t, users, bob.ID)
	p := stocktest.NewProject(t, alice.Client, "watched", "private")
	project := strconv.FormatInt(p.ID, 10)
	level := func(l notification.Level) *notification.Level { return &l }
	str := func(s string) *string { return &s }

	// The global setting: Global is not one of its levels; an address that
	// is not the user's is refused; neither changes anything.
	if _, err := svc.UpdateGlobalSetting(asAlice, notification.Change{Level: level(notification.Global)}); !errors.Is(err, notification.ErrInvalidLevel) {
		t.Fatalf("global as the global level: %v", err)
	}
	var le *notification.LevelError
	if _, err := svc.UpdateGlobalSetting(asAlice, notification.Change{Level: level("loud")}); !errors.As(err, &le) || le.Level != "loud" {
		t.Fatalf("an unknown level: %v", err)
	}
	if _, err := svc.UpdateGlobalSetting(asAlice, notification.Change{NotificationEmail: str("bob@example.com")}); !errors.Is(err, notification.ErrEmailNotOwned) {
		t.Fatalf("another user's address: %v", err)
	}
	if got, err := svc.GlobalSetting(asAlice); err != nil || got.Level != notification.Participating || got.NotificationEmail != "alice@example.com" {
		t.Fatalf("the global setting after refusals: %+v %v", got, err)
	}
	got, err := svc.UpdateGlobalSetting(asAlice, notification.Change{Level: level(notification.Watch)})
	if err != nil || got.Level != notification.Watch {
		t.Fatalf("watch: %+v %v", got, err)
	}
	api := e.Call(t, alice.Token, http.MethodGet, "/api/v4/notification_settings", nil).Expect(t, 200, "").Object(t)
	if api["level"] != "watch" || api["notification_email"] != "alice@example.com" {
		t.Fatalf("the API shows %v", api)
	}

	// A project's setting: for those who see the project; custom keeps
	// the events switched on.
	if _, err := svc.SourceSetting(asBob, notification.Project, project); !errors.Is(err, projects.ErrNotFound) {
		t.Fatalf("a stranger's setting of a private project: %v", err)
	}
	custom, err := svc.UpdateSourceSetting(asAlice, notification.Project, project,
		notification.Change{Level: level(notification.Custom), Events: map[string]bool{"failed_pipeline": true}})
	if err != nil || custom.Level != notification.Custom || !custom.Events["failed_pipeline"] || custom.Events["new_note"] {
		t.Fatalf("custom: %+v %v", custom, err)
	}
	api = e.Call(t, alice.Token, http.MethodGet, "/api/v4/projects/"+project+"/notification_settings", nil).Expect(t, 200, "").Object(t)
	if api["level"] != "custom" || api["events"].(map[string]any)["failed_pipeline"] != true {
		t.Fatalf("the API shows %v", api)
	}
}
