package mergerequests_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestMergeRequestPagesInChromium: a signed-in Master in a real browser
// walks the list, a merge request's Overview and Changes, comments on a
// line through the link under it, and merges; axe-core checks each page
// (no serious or critical violation) and each is screenshot.
func TestMergeRequestPagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := start(t)
	shots := chrome.Artifacts(t, "merge-request-pages")
	p := stocktest.NewProject(t, s.Client, "walk", "public")
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "base", map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, s.Client, p.ID, "feature", "Say hello", map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"})
	stocktest.OpenMergeRequest(t, s.Client, p.ID, "feature", "master", "Say hello")
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	chrome.SignIn(t, tab, s.URL, "root", s.RootPassword)
	must("list", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/merge_requests"), chromedp.WaitVisible(chromedp.CSS("ul.merge-requests"))))
	chrome.Screenshot(t, tab, shots, "list.png")
	chrome.CheckAccessibility(t, tab, "merge request list")
	must("overview", chromedp.Do(tab, chromedp.Click(chromedp.CSS("ul.merge-requests li > a")), chromedp.WaitVisible(chromedp.CSS("#merge-box"))))
	chrome.Screenshot(t, tab, shots, "overview.png")
	chrome.CheckAccessibility(t, tab, "merge request overview")
	must("changes", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/merge_requests/1/diffs"), chromedp.WaitVisible(chromedp.CSS("table.code"))))
	chrome.Screenshot(t, tab, shots, "changes.png")
	chrome.CheckAccessibility(t, tab, "merge request changes")
	must("line form", chromedp.Do(tab, chromedp.Click(chromedp.CSS("tr.add td.line-action a")), chromedp.WaitVisible(chromedp.CSS("#line-note"))))
	must("line comment", chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#line-note"), "Use log instead?"),
		chromedp.Click(chromedp.CSS(`#line-form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("tr.line-comments li.note"))))
	chrome.Screenshot(t, tab, shots, "line-comment.png")
	chrome.CheckAccessibility(t, tab, "merge request changes with a line comment")
	must("side by side", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/merge_requests/1/diffs?view=parallel"),
		chromedp.WaitVisible(chromedp.CSS("table.parallel"))))
	chrome.Screenshot(t, tab, shots, "changes-parallel.png")
	chrome.CheckAccessibility(t, tab, "merge request changes side by side")
	must("commits", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/merge_requests/1/commits"), chromedp.WaitVisible(chromedp.CSS("ul.commits"))))
	chrome.CheckAccessibility(t, tab, "merge request commits")
	must("new form", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/merge_requests/new?source_branch=feature&target_branch=master"),
		chromedp.WaitVisible(chromedp.CSS("#mr-title"))))
	chrome.CheckAccessibility(t, tab, "new merge request")
	must("edit form", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/merge_requests/1/edit"), chromedp.WaitVisible(chromedp.CSS("#mr-title"))))
	chrome.CheckAccessibility(t, tab, "merge request edit form")
	must("merge", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/merge_requests/1"), chromedp.WaitVisible(chromedp.CSS("form.merge-form")),
		chromedp.Click(chromedp.CSS(`form.merge-form button.primary`)), chromedp.WaitVisible(chromedp.CSS(".state-merged"))))
	chrome.Screenshot(t, tab, shots, "merged.png")
	chrome.CheckAccessibility(t, tab, "merged merge request")
	got, _, err := s.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil)
	if err != nil || got.State != "merged" {
		t.Fatalf("the API's merge request after the walk: %v %+v", err, got)
	}
	threads, _, err := s.Client.Discussions.ListMergeRequestDiscussions(p.ID, 1, nil)
	found := false
	for _, d := range threads {
		if n := d.Notes[0]; n.Type == gitlab.DiffNote && n.Body == "Use log instead?" && n.Position != nil && n.Position.NewPath == "main.go" {
			found = true
		}
	}
	if err != nil || !found {
		t.Fatalf("the line comment is not in the API's discussions: %v %+v", err, threads)
	}
}
