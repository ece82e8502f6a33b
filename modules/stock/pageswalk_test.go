package stock_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestSitePagesInChromium walks the pages around the code in a real
// browser, signed in: the dashboard and its tabs, explore, a group and
// its members, a profile, the activity feeds, a project's issues and an
// issue. Each page kind is screenshot, checked by axe-core (no serious
// or critical violation) and walked with the keyboard alone (every link,
// button and field reached with Tab, each showing its focus).
func TestSitePagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := stocktest.Start(t)
	shots := chrome.Artifacts(t, "site-pages")
	grp, _, err := s.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Team"), Path: gitlab.Ptr("team"),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility), Description: gitlab.Ptr("The team's projects")})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("app"), NamespaceID: gitlab.Ptr(grp.ID),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility), Description: gitlab.Ptr("The app")})
	if err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "Start", map[string]string{"README.md": "# App\n"})
	if _, _, err := s.Client.Projects.StarProject(p.ID); err != nil {
		t.Fatal(err)
	}
	is := stocktest.NewIssue(t, s.Client, p.ID, "Crashes on start")
	if _, _, err := s.Client.Notes.CreateIssueNote(p.ID, is.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("Seen it, @root")}); err != nil {
		t.Fatal(err)
	}
	s.Drain(t)

	tab := b.Tab(t)
	if err := chromedp.Do(tab, chromedp.Navigate(s.URL+"/users/sign_in"), chromedp.WaitVisible(chromedp.CSS(`input[name="login"]`))); err != nil {
		t.Fatal(err)
	}
	chrome.CheckKeyboard(t, tab, "sign-in")
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), "root"),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), s.RootPassword),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)), chromedp.WaitVisible(chromedp.CSS(`header a.me`))); err != nil {
		t.Fatal(err)
	}
	// follow, when set, is a link followed with Tab and Enter alone.
	for _, pg := range []struct{ name, path, want, follow string }{
		{"dashboard", "/", "app", `main a[href="/dashboard/activity"]`},
		{"starred", "/dashboard/projects/starred", "app", ""},
		{"groups", "/dashboard/groups", "Team", ""},
		{"explore", "/explore/projects", "app", ""},
		{"group", "/groups/team", "The team's projects", ""},
		{"group-members", "/groups/team/-/group_members", "Administrator", ""},
		{"profile", "/root", "Administrator", `main a[href="/users/root/activity"]`},
		{"your-activity", "/dashboard/activity", "commented on issue", ""},
		{"user-activity", "/users/root/activity", "opened issue", ""},
		{"project-activity", "/team/app/activity", "pushed", `main a[href="/team/app/-/issues/1"]`},
		{"issues", "/team/app/-/issues", "Crashes on start", ""},
		{"issue", "/team/app/-/issues/1", "Seen it", ""},
	} {
		if err := chromedp.Do(tab, chromedp.Navigate(s.URL+pg.path), chromedp.WaitVisible(chromedp.CSS("main h1"))); err != nil {
			t.Fatalf("%s: %v", pg.name, err)
		}
		text, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("main")))
		if err != nil || !strings.Contains(text, pg.want) {
			t.Errorf("%s: %q lacks %q (%v)", pg.name, text, pg.want, err)
		}
		chrome.Screenshot(t, tab, shots, pg.name+".png")
		chrome.CheckAccessibility(t, tab, pg.name)
		chrome.CheckKeyboard(t, tab, pg.name)
		if pg.follow != "" {
			chrome.FollowWithEnter(t, tab, pg.name, pg.follow)
		}
	}
}
