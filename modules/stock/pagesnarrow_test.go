package stock_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestPagesFitAPhoneAndFollowTheTheme: every page kind is readable on a
// 360 px wide phone (the page itself never scrolls sideways; a long code
// line or a wide table scrolls inside its own box), and the pages follow
// the system's colour scheme: a dark one gives dark pages. Checked in a
// real Chromium with the phone's viewport, in both schemes, with
// screenshots of each.
func TestPagesFitAPhoneAndFollowTheTheme(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := stocktest.Start(t)
	shots := chrome.Artifacts(t, "phone-pages")
	grp, _, err := s.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Phones"), Path: gitlab.Ptr("phones"),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("narrow"),
		NamespaceID: gitlab.Ptr(grp.ID), Visibility: gitlab.Ptr(gitlab.PublicVisibility),
		Description: gitlab.Ptr("A project read on a phone")})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("averyveryverylongwordwithoutanybreak", 8)
	wide := "| " + strings.Repeat("column | ", 12) + "\n|" + strings.Repeat("---|", 12) + "\n| " + strings.Repeat("value | ", 12) + "\n"
	c := stocktest.CommitFiles(t, s.Client, p.ID, "master", "Add the "+long, map[string]string{
		"README.md":                     "# Narrow\n\n" + long + "\n\n" + wide + "\n```\n" + long + " " + long + "\n```\n",
		"src/" + long[:60] + "/main.go": "package main\n\nvar x = \"" + long + "\"\n",
	})
	tab := b.Tab(t)
	if err := chromedp.Do(tab, chromedp.EmulateViewport(360, 740)); err != nil {
		t.Fatal(err)
	}
	pages := []struct{ name, path string }{
		{"explore", "/explore/projects"},
		{"group", "/groups/phones"},
		{"profile", "/root"},
		{"overview", "/phones/narrow"},
		{"tree", "/phones/narrow/-/tree/master/src/" + long[:60]},
		{"blob", "/phones/narrow/-/blob/master/src/" + long[:60] + "/main.go"},
		{"commits", "/phones/narrow/-/commits/master"},
		{"commit", "/phones/narrow/-/commit/" + c.ID},
		{"branches", "/phones/narrow/-/branches"},
		{"sign-in", "/users/sign_in"},
		{"404", "/phones/narrow/-/blob/master/none"},
	}
	backgrounds := map[string]string{}
	for _, scheme := range []string{"light", "dark"} {
		if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
			t.Fatal(err)
		}
		for _, pg := range pages {
			if err := chromedp.Do(tab, chromedp.Navigate(s.URL+pg.path), chromedp.WaitVisible(chromedp.CSS("main h1"))); err != nil {
				t.Fatalf("%s (%s): %v", pg.name, scheme, err)
			}
			got, err := chromedp.Run(tab, chromedp.Evaluate[struct {
				Width, Inner int
				Background   string
			}](`({Width: document.documentElement.scrollWidth, Inner: window.innerWidth,
				Background: getComputedStyle(document.body).backgroundColor})`))
			if err != nil {
				t.Fatalf("%s (%s): %v", pg.name, scheme, err)
			}
			width, inner, bg := got.Width, got.Inner, got.Background
			chrome.Screenshot(t, tab, shots, fmt.Sprintf("%s-%s.png", pg.name, scheme))
			if inner != 360 || width > inner {
				wide, _ := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('body *')].filter(e => {
					if (e.getBoundingClientRect().right <= window.innerWidth + 1) return false
					for (let a = e.parentElement; a; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return false
					return true
				}).slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().width))`))
				t.Errorf("%s (%s): the page is %d px wide in a %d px window; too wide: %v", pg.name, scheme, width, inner, wide)
			}
			if prev, ok := backgrounds[pg.name]; ok && prev == bg {
				t.Errorf("%s: the same background %s in the light and the dark scheme", pg.name, bg)
			}
			backgrounds[pg.name] = bg
		}
	}
}
