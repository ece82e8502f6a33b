package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestSiteInChromium: the layout and the error page in a real browser,
// signed out and in: axe-core finds no serious or critical accessibility
// problem, the first Tab reaches the skip link, and signing in through
// the form brings the visitor back to the page that sent them.
func TestSiteInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	p := &probe{}
	s := stocktest.Start(t, fennectest.WithModules(p.module()))
	shots := chrome.Artifacts(t, "web")
	tab := b.Tab(t)

	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("404 page", chromedp.Do(tab, chromedp.Navigate(s.URL+"/no/such/page"), chromedp.WaitVisible(chromedp.CSS("h1"))))
	chrome.Screenshot(t, tab, shots, "not-found.png")
	chrome.CheckAccessibility(t, tab, "404 page")
	must("tab", chromedp.Do(tab, chromedp.KeyEvent("\t")))
	focused, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.activeElement.textContent`))
	must("focused text", err)
	if focused != "Skip to content" {
		t.Errorf("the first Tab focuses %q, want the skip link", focused)
	}

	// A hidden project page sends the visitor to sign in, and back.
	must("hidden page", chromedp.Do(tab, chromedp.Navigate(s.URL+"/secret/project/-/probe/main"), chromedp.WaitVisible(chromedp.ID("login"))))
	chrome.CheckAccessibility(t, tab, "sign-in page")
	must("sign in", chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("login"), "root"),
		chromedp.SendKeys(chromedp.ID("password"), s.RootPassword), chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("data"))))
	loc, err := chromedp.Run(tab, chromedp.Location())
	must("location", err)
	if !strings.HasSuffix(loc, "/secret/project/-/probe/main") {
		t.Errorf("after signing in the browser is at %s", loc)
	}
	must("probe page", chromedp.Do(tab, chromedp.Navigate(s.URL+"/grp/proj/-/probe/main/a%20b"), chromedp.WaitVisible(chromedp.ID("data"))))
	chrome.Screenshot(t, tab, shots, "project-page-signed-in.png")
	chrome.CheckAccessibility(t, tab, "a project page, signed in")
	who, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(".me")))
	must("user menu", err)
	if !strings.HasSuffix(strings.TrimSpace(who), "root") {
		t.Errorf("user menu: %q", who)
	}
}
