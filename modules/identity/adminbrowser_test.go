package identity_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestAdminAreaInChromium: an administrator in a real browser opens the
// overview, finds a user with the search, blocks them, and the user's own
// browser (another context, signed in meanwhile) lands on the sign-in page
// at its next page; then unblocks them, impersonates them (the banner)
// and stops. axe-core checks each kind of admin page (no serious or
// critical violation) and each is screenshot.
func TestAdminAreaInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := stocktest.Start(t)
	shots := chrome.Artifacts(t, "admin-area")
	gina := s.CreateUser(t, "gina")
	stocktest.NewProject(t, s.Client, "tools", "internal")
	admin, user := b.Tab(t), b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	page := func(what, file string) {
		t.Helper()
		chrome.Screenshot(t, admin, shots, file)
		chrome.CheckAccessibility(t, admin, what)
	}
	chrome.SignIn(t, user, s.URL, "gina", gina.Password)
	chrome.SignIn(t, admin, s.URL, "root", s.RootPassword)

	must("overview", chromedp.Do(admin, chromedp.Click(chromedp.CSS(`nav.menu a[href="/admin"]`)), chromedp.WaitVisible(chromedp.CSS("dl.stats"))))
	page("admin overview", "overview.png")
	must("users", chromedp.Do(admin, chromedp.Click(chromedp.CSS(`nav.sidenav a[href="/admin/users"]`)), chromedp.WaitVisible(chromedp.CSS("#users"))))
	must("search", chromedp.Do(admin, chromedp.SendKeys(chromedp.CSS("#search"), "gin"), chromedp.Submit(chromedp.CSS("#search")),
		// The answer's field carries the search as its attribute.
		chromedp.WaitVisible(chromedp.CSS(`#search[value="gin"]`)), chromedp.WaitVisible(chromedp.CSS(`#users a[href="/admin/users/gina"]`))))
	total, err := chromedp.Run(admin, chromedp.Text(chromedp.CSS("#users-total")))
	must("search total", err)
	if total != "1 user" {
		t.Errorf("the search for gin found %q", total)
	}
	page("admin users", "users.png")
	must("user page", chromedp.Do(admin, chromedp.Click(chromedp.CSS(`#users a[href="/admin/users/gina"]`)), chromedp.WaitVisible(chromedp.CSS("#block-user"))))
	page("admin user", "user.png")
	must("block", chromedp.Do(admin, chromedp.Click(chromedp.CSS("#block-user")), chromedp.WaitVisible(chromedp.CSS("#unblock-user"))))
	page("admin user, blocked", "user-blocked.png")

	must("the blocked user's next page", chromedp.Do(user, chromedp.Navigate(s.URL+"/dashboard/projects"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="login"]`))))
	where, err := chromedp.Run(user, chromedp.Location())
	must("the blocked user's location", err)
	if !strings.Contains(where, "/users/sign_in") {
		t.Errorf("the blocked user's browser is at %s, want the sign-in page", where)
	}

	must("unblock", chromedp.Do(admin, chromedp.Click(chromedp.CSS("#unblock-user")), chromedp.WaitVisible(chromedp.CSS("#impersonate"))))
	must("impersonate", chromedp.Do(admin, chromedp.Click(chromedp.CSS("#impersonate")), chromedp.WaitVisible(chromedp.CSS(".impersonating"))))
	banner, err := chromedp.Run(admin, chromedp.Text(chromedp.CSS(".impersonating p")))
	must("banner", err)
	if !strings.Contains(banner, "You are impersonating gina") {
		t.Errorf("the banner says %q", banner)
	}
	page("a page while impersonating", "impersonating.png")
	must("stop", chromedp.Do(admin, chromedp.Click(chromedp.CSS("#stop-impersonating")), chromedp.WaitVisible(chromedp.CSS("#user-details"))))
	where, err = chromedp.Run(admin, chromedp.Location())
	must("location after the stop", err)
	if !strings.HasSuffix(where, "/admin/users/gina") {
		t.Errorf("after the stop the browser is at %s", where)
	}

	for _, p := range []struct{ path, wait, what, file string }{
		{"/admin/users/new", "#save-user", "admin new user", "new-user.png"},
		{"/admin/users/gina/edit", "#save-user", "admin edit user", "edit-user.png"},
		{"/admin/projects", "#admin-projects", "admin projects", "projects.png"},
		{"/admin/groups", "#new-group", "admin groups", "groups.png"},
		{"/admin/application_settings", "#save-settings", "admin settings", "settings.png"},
	} {
		must(p.what, chromedp.Do(admin, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait))))
		page(p.what, p.file)
	}
}
