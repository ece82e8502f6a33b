package ci_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestCISettingsPagesInChromium: in a real browser a Master adds a
// variable on the CI/CD settings page and reveals the registration
// token; an administrator opens the runners of the admin area. axe-core
// checks each page kind and each is screenshot.
func TestCISettingsPagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := startRunners(t)
	shots := chrome.Artifacts(t, "ci-settings-pages")
	p := stocktest.NewProject(t, s.Client, "built", "private")
	full, _, _ := s.Client.Projects.GetProject(p.ID, nil)
	registerRunner(t, s, full.RunnersToken, map[string]any{"description": "project runner", "tag_list": []string{"docker"}})
	registerRunner(t, s, sharedToken(t, s), map[string]any{"description": "shared runner"})
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	check := func(name string) {
		t.Helper()
		chrome.Screenshot(t, tab, shots, strings.ReplaceAll(name, " ", "-")+".png")
		chrome.CheckAccessibility(t, tab, name)
	}
	const value = "browser-variable-value"
	chrome.SignIn(t, tab, s.URL, "root", s.RootPassword)
	must("settings", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/built/-/settings/ci_cd"), chromedp.WaitVisible(chromedp.CSS("#variable-key"))))
	check("ci settings")
	must("add variable", chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#variable-key"), "DEPLOY_KEY"),
		chromedp.SendKeys(chromedp.CSS("#variable-value"), value), chromedp.Click(chromedp.CSS(`input[name="protected"]`)),
		chromedp.Click(chromedp.CSS(`form.variable-form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#variable_DEPLOY_KEY"))))
	v, _, err := s.Client.ProjectVariables.GetVariable(p.ID, "DEPLOY_KEY", nil)
	if err != nil || v.Value != value || !v.Protected {
		t.Fatalf("the variable the browser added: %+v %v", v, err)
	}
	html, err := chromedp.Run(tab, chromedp.OuterHTML(chromedp.CSS("html")))
	must("page html", err)
	if strings.Contains(html, value) || strings.Contains(html, full.RunnersToken) {
		t.Error("the settings page shows a secret")
	}
	must("reveal", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`.registration-token button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#registration-token"))))
	token, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#registration-token")))
	must("token", err)
	if token != full.RunnersToken {
		t.Errorf("the revealed token is %q", token)
	}
	must("edit variable", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/built/-/settings/ci_cd/variables/DEPLOY_KEY/edit"),
		chromedp.WaitVisible(chromedp.CSS("#variable-value"))))
	check("variable edit")
	must("remove variable", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/built/-/settings/ci_cd/variables/DEPLOY_KEY/delete"),
		chromedp.WaitVisible(chromedp.CSS("main form"))))
	check("variable remove")
	if _, _, err := s.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Crew"), Path: gitlab.Ptr("crew")}); err != nil {
		t.Fatal(err)
	}
	must("group settings", chromedp.Do(tab, chromedp.Navigate(s.URL+"/groups/crew/-/settings/ci_cd"), chromedp.WaitVisible(chromedp.CSS("#variable-key"))))
	check("group ci settings")
	must("admin runners", chromedp.Do(tab, chromedp.Navigate(s.URL+"/admin/runners"), chromedp.WaitVisible(chromedp.CSS("ul.runners"))))
	check("admin runners")
	if list, _, _ := s.Client.Runners.ListAllRunners(&gitlab.ListRunnersOptions{}); len(list) != 2 {
		t.Errorf("runners: %d", len(list))
	}
}
