package snippets_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestSnippetPagesInChromium: a signed-in user in a real browser creates
// a project snippet through the form, previews and posts a comment on it,
// and opens the personal snippet pages and the to-do list; axe-core checks
// each page kind (no serious or critical violation) and each is
// screenshot.
func TestSnippetPagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := start(t)
	shots := chrome.Artifacts(t, "snippet-pages")
	p := stocktest.NewProject(t, s.Client, "bits", "public")
	stocktest.NewIssue(t, s.Client, p.ID, "Something to do")
	if _, _, err := s.Client.Issues.CreateTodo(p.ID, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Client.Snippets.CreateSnippet(&gitlab.CreateSnippetOptions{Title: gitlab.Ptr("Mine"), FileName: gitlab.Ptr("a.sh"),
		Content: gitlab.Ptr("echo hi\n"), Visibility: gitlab.Ptr(gitlab.PublicVisibility)}); err != nil {
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
	must("new snippet", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/bits/-/snippets/new"), chromedp.WaitVisible(chromedp.CSS("#snippet-title"))))
	chrome.Screenshot(t, tab, shots, "new.png")
	chrome.CheckAccessibility(t, tab, "new snippet form")
	must("create", chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#snippet-title"), "Greeting"),
		chromedp.SendKeys(chromedp.CSS("#snippet-file"), "hello.go"),
		chromedp.SendKeys(chromedp.CSS("#snippet-content"), "package main\n\nfunc main() { println(\"hi\") }\n"),
		chromedp.Click(chromedp.CSS(`form.snippet-form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#note-body"))))
	must("preview", chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#note-body"), "Nice *one*"),
		chromedp.Click(chromedp.CSS(`button[name="preview"]`)), chromedp.WaitVisible(chromedp.CSS(`section[aria-label="Preview"]`))))
	must("comment", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form.comment button:not([name])`)), chromedp.WaitVisible(chromedp.CSS("li.note"))))
	note, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("li.note .markdown")))
	must("note text", err)
	if !strings.Contains(note, "Nice one") {
		t.Errorf("the comment reads %q", note)
	}
	chrome.Screenshot(t, tab, shots, "snippet.png")
	chrome.CheckAccessibility(t, tab, "snippet")
	for _, pg := range []struct{ name, path, wait string }{
		{"project snippets", "/root/bits/-/snippets", "ul.snippets"},
		{"edit form", "/root/bits/-/snippets/2/edit", "#snippet-content"},
		{"delete confirmation", "/root/bits/-/snippets/2/delete", "main form"},
		{"personal snippets", "/snippets", "ul.snippets"},
		{"personal snippet", "/snippets/1", "table.code"},
		{"explore snippets", "/explore/snippets", "ul.snippets"},
		{"todos", "/dashboard/todos", "ul.todos"},
	} {
		must(pg.name, chromedp.Do(tab, chromedp.Navigate(s.URL+pg.path), chromedp.WaitVisible(chromedp.CSS(pg.wait))))
		chrome.Screenshot(t, tab, shots, strings.ReplaceAll(pg.name, " ", "-")+".png")
		chrome.CheckAccessibility(t, tab, pg.name)
	}
	if notes, _, err := s.Client.Notes.ListSnippetNotes(p.ID, 2, nil); err != nil || len(notes) != 1 || notes[0].Body != "Nice *one*" {
		t.Errorf("the API's notes after the walk: %v %+v", err, notes)
	}
}
