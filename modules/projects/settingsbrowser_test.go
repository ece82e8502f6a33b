package projects_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestSettingsPagesInChromium: a project's Owner in a real browser walks
// the settings: General (changes the description, archives and
// unarchives), Members (adds a member), Repository (protects a branch),
// the group's settings, and deletes the project with its path typed (a
// wrong path first). axe-core checks each kind of page (no serious or
// critical violation) and each is screenshot; the API sees every change.
func TestSettingsPagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := stocktest.Start(t)
	shots := chrome.Artifacts(t, "settings-pages")
	alice, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "bob")
	pgID(t, s, alice.Token, "/api/v4/groups", map[string]any{"name": "Crew", "path": "crew"})
	id := pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "walk", "description": "before"})
	api := fmt.Sprintf("/api/v4/projects/%d", id)
	stocktest.CommitFiles(t, s.Client, id, "master", "base", map[string]string{"README.md": "# walk\n"})
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	until := func(what string, ok func() bool) {
		t.Helper()
		fennectest.Poll(t, 10*time.Second, func() (bool, string) { return ok(), what })
	}
	chrome.SignIn(t, tab, s.URL, "alice", alice.Password)

	// General: the description, then archive and unarchive.
	must("general", chromedp.Do(tab, chromedp.Navigate(s.URL+"/alice/walk/-/edit"), chromedp.WaitVisible(chromedp.CSS("#project-description"))))
	chrome.Screenshot(t, tab, shots, "general.png")
	chrome.CheckAccessibility(t, tab, "project general settings")
	must("description", chromedp.Do(tab, chromedp.SetValue(chromedp.CSS("#project-description"), "after the walk"),
		chromedp.Click(chromedp.CSS(`#edit-project button[type="submit"]`))))
	until("the description saved", func() bool { return apiField(t, s, alice.Token, api, "description") == "after the walk" })
	must("archive", chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS("#archive-confirm summary")),
		chromedp.Click(chromedp.CSS("#archive-confirm summary")), chromedp.WaitVisible(chromedp.CSS(`#archive-project button`)),
		chromedp.Click(chromedp.CSS(`#archive-project button`)), chromedp.WaitVisible(chromedp.CSS("#unarchive-project button"))))
	chrome.Screenshot(t, tab, shots, "archived.png")
	chrome.CheckAccessibility(t, tab, "archived project's settings")
	if got := apiField(t, s, alice.Token, api, "archived"); got != "true" {
		t.Errorf("archived: %s", got)
	}
	must("unarchive", chromedp.Do(tab, chromedp.Click(chromedp.CSS("#unarchive-project button")), chromedp.WaitVisible(chromedp.CSS("#archive-confirm summary"))))
	if got := apiField(t, s, alice.Token, api, "archived"); got != "false" {
		t.Errorf("unarchived: %s", got)
	}

	// Members: add bob as a Developer.
	must("members", chromedp.Do(tab, chromedp.Navigate(s.URL+"/alice/walk/-/project_members"), chromedp.WaitVisible(chromedp.CSS("#member-username")),
		chromedp.SendKeys(chromedp.CSS("#member-username"), "bob"), chromedp.Click(chromedp.CSS(`#add-member button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.members a[href="/bob"]`))))
	chrome.Screenshot(t, tab, shots, "members.png")
	chrome.CheckAccessibility(t, tab, "project members settings")
	if got := apiField(t, s, alice.Token, fmt.Sprintf("%s/members/%d", api, bob.ID), "access_level"); got != "30" {
		t.Errorf("bob's level: %s", got)
	}

	// Repository: protect master.
	must("repository", chromedp.Do(tab, chromedp.Navigate(s.URL+"/alice/walk/-/settings/repository"), chromedp.WaitVisible(chromedp.CSS("#protect-name")),
		chromedp.SendKeys(chromedp.CSS("#protect-name"), "master"), chromedp.Click(chromedp.CSS(`#protect-branch button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.protected"))))
	chrome.Screenshot(t, tab, shots, "repository.png")
	chrome.CheckAccessibility(t, tab, "repository settings")
	s.Call(t, alice.Token, http.MethodGet, api+"/protected_branches/master", nil).Expect(t, http.StatusOK, "")

	// The group's settings and members.
	must("group settings", chromedp.Do(tab, chromedp.Navigate(s.URL+"/groups/crew/-/edit"), chromedp.WaitVisible(chromedp.CSS("#group-description"))))
	chrome.Screenshot(t, tab, shots, "group.png")
	chrome.CheckAccessibility(t, tab, "group general settings")
	must("group members", chromedp.Do(tab, chromedp.Navigate(s.URL+"/groups/crew/-/group_members"), chromedp.WaitVisible(chromedp.CSS("#member-username"))))
	chrome.Screenshot(t, tab, shots, "group-members.png")
	chrome.CheckAccessibility(t, tab, "group members")

	// Delete: a wrong path is refused, the right one deletes.
	must("delete refused", chromedp.Do(tab, chromedp.Navigate(s.URL+"/alice/walk/-/edit"), chromedp.WaitVisible(chromedp.CSS("#delete-confirm")),
		chromedp.SendKeys(chromedp.CSS("#delete-confirm"), "alice/wal"), chromedp.Click(chromedp.CSS(`#delete-project button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("p.alert"))))
	chrome.Screenshot(t, tab, shots, "delete-refused.png")
	chrome.CheckAccessibility(t, tab, "general settings with a problem")
	s.Call(t, alice.Token, http.MethodGet, api, nil).Expect(t, http.StatusOK, "")
	must("delete", chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#delete-confirm"), "alice/walk"),
		chromedp.Click(chromedp.CSS(`#delete-project button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`a[href="/dashboard/projects"][aria-current="page"]`))))
	until("the project deleted", func() bool { return s.Call(t, alice.Token, http.MethodGet, api, nil).Status == http.StatusNotFound })
}
