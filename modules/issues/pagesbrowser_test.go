package issues_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestIssuePagesInChromium: a signed-in user in a real browser opens an
// issue through the form, comments on it with the Preview button first,
// and closes it; axe-core checks the list, the issue and the form (no
// serious or critical violation) and each is screenshot.
func TestIssuePagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := start(t)
	shots := chrome.Artifacts(t, "issue-pages")
	p := stocktest.NewProject(t, s.Client, "bugs", "public")
	if _, _, err := s.Client.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr("bug"), Color: gitlab.Ptr("#d9534f")}); err != nil {
		t.Fatal(err)
	}
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	chrome.SignIn(t, tab, s.URL, "root", s.RootPassword)
	must("new issue", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/bugs/-/issues/new"), chromedp.WaitVisible(chromedp.CSS("#issue-title"))))
	chrome.Screenshot(t, tab, shots, "new.png")
	chrome.CheckAccessibility(t, tab, "new issue form")
	must("create", chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#issue-title"), "The fox is slow"),
		chromedp.SendKeys(chromedp.CSS("#issue-description"), "It *should* be quick."),
		chromedp.SendKeys(chromedp.CSS("#issue-labels"), "bug"),
		chromedp.Click(chromedp.CSS(`form.issue-form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#note-body"))))
	must("preview", chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#note-body"), "Looking into it, see #1"),
		chromedp.Click(chromedp.CSS(`button[name="preview"]`)), chromedp.WaitVisible(chromedp.CSS(`section[aria-label="Preview"]`))))
	chrome.Screenshot(t, tab, shots, "preview.png")
	must("comment", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form.comment button:not([name])`)), chromedp.WaitVisible(chromedp.CSS("li.note"))))
	note, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("li.note .markdown")))
	must("note text", err)
	if !strings.Contains(note, "Looking into it, see #1") {
		t.Errorf("the comment reads %q", note)
	}
	chrome.Screenshot(t, tab, shots, "issue.png")
	chrome.CheckAccessibility(t, tab, "issue")
	must("close", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`.issue-side form button`)), chromedp.WaitVisible(chromedp.CSS(".state-closed"))))
	must("list", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/bugs/-/issues?state=all"), chromedp.WaitVisible(chromedp.CSS("ul.issues"))))
	chrome.Screenshot(t, tab, shots, "list.png")
	chrome.CheckAccessibility(t, tab, "issue list")
	for _, pg := range []struct{ name, path, wait string }{
		{"edit form", "/root/bugs/-/issues/1/edit", "#issue-assignee"},
		{"labels", "/root/bugs/-/labels", "ul.labels"},
		{"label form", "/root/bugs/-/labels/new", "#label-name"},
		{"milestones", "/root/bugs/-/milestones", "main h1"},
		{"milestone form", "/root/bugs/-/milestones/new", "#milestone-title"},
	} {
		must(pg.name, chromedp.Do(tab, chromedp.Navigate(s.URL+pg.path), chromedp.WaitVisible(chromedp.CSS(pg.wait))))
		chrome.Screenshot(t, tab, shots, strings.ReplaceAll(pg.name, " ", "-")+".png")
		chrome.CheckAccessibility(t, tab, pg.name)
	}
	if api, _, _ := s.Client.Issues.GetIssue(p.ID, 1); api.State != "closed" || api.UserNotesCount != 1 || strings.Join(api.Labels, ",") != "bug" {
		t.Errorf("the API's issue after the walk: %s, %d notes, labels %v", api.State, api.UserNotesCount, api.Labels)
	}
}
