package repository_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestCodePagesInChromium walks a project's code pages in a real browser,
// as a visitor would: the overview with its README and relative image,
// the tree, a blob followed to a line anchor, another branch through the
// ref switcher, the commits, a commit's diff, a comparison, the branches,
// and a private project after signing in. Each page kind is screenshot
// and checked by axe-core (no serious or critical violation) and walked
// with the keyboard alone (chrome.CheckKeyboard); a tree's file and a
// blob's blame are followed with Tab and Enter (chrome.FollowWithEnter).
func TestCodePagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := stocktest.Start(t)
	shots := chrome.Artifacts(t, "code-pages")
	p := stocktest.NewProject(t, s.Client, "walk", "public")
	first := stocktest.CommitFiles(t, s.Client, p.ID, "master", "Add the README", map[string]string{
		"README.md":    "# Walk\n\nA project to walk. ![logo](img/logo.svg)\n\n```go\nfunc main() {}\n```\n",
		"img/logo.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`,
		"src/main.go":  "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n",
	})
	if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature/x"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	second := stocktest.CommitFiles(t, s.Client, p.ID, "feature/x", "Greet the world", map[string]string{
		"src/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello, world\")\n}\n",
	})
	private := stocktest.NewProject(t, s.Client, "hidden", "private")
	stocktest.CommitFiles(t, s.Client, private.ID, "master", "Secret", map[string]string{"README.md": "# Secret plans\n"})

	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	visit := func(what, path, waitFor, shot string) {
		t.Helper()
		must(what, chromedp.Do(tab, chromedp.Navigate(s.URL+path), chromedp.WaitVisible(chromedp.CSS(waitFor))))
		chrome.Screenshot(t, tab, shots, shot)
		chrome.CheckAccessibility(t, tab, what)
		chrome.CheckKeyboard(t, tab, what)
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
		must("text of "+sel, err)
		return v
	}

	visit("overview", "/root/walk", "main h1", "overview.png")
	// The README's relative image is loaded from the repository.
	loaded, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => { const i = document.querySelector('img[alt="logo"]'); return !!i && i.complete && i.naturalWidth > 0 })()`))
	must("README image", err)
	if !loaded {
		t.Error("the README's relative image did not load")
	}
	visit("tree", "/root/walk/-/tree/master/src", "main table", "tree.png")
	if !strings.Contains(text("main"), "main.go") {
		t.Errorf("tree: %q", text("main"))
	}
	// A file is opened with Tab and Enter alone.
	chrome.FollowWithEnter(t, tab, "tree", `main a[href="/root/walk/-/blob/master/src/main.go"]`)
	visit("blob", "/root/walk/-/blob/master/src/main.go#L6", "#L6", "blob.png")
	target, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector(':target') ? document.querySelector(':target').id : ''`))
	must("line anchor", err)
	if target != "L6" || !strings.Contains(text("#L6"), `fmt.Println("hello")`) {
		t.Errorf("line anchor: target %q, line %q", target, text("#L6"))
	}
	// Another branch through the ref switcher, without JavaScript's help:
	// the form's own submit.
	must("switch branch", chromedp.Do(tab, chromedp.SetValue(chromedp.CSS(`select[name="ref"]`), "feature/x"),
		chromedp.Submit(chromedp.CSS(`select[name="ref"]`))))
	// The form's navigation ends at the branch's tree (the current page
	// has a heading too, so wait for the address, not for a heading).
	poll(t, func() bool {
		loc, err := chromedp.Run(tab, chromedp.Location())
		return err == nil && (strings.Contains(loc, "feature/x") || strings.Contains(loc, "feature%2Fx"))
	}, "the browser at feature/x after switching branch")
	must("switched", chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS("main h1"))))
	// A blob's blame is opened with Tab and Enter alone.
	must("blob again", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/blob/master/src/main.go"), chromedp.WaitVisible(chromedp.CSS("#L6"))))
	chrome.FollowWithEnter(t, tab, "blob", `main a[href="/root/walk/-/blame/master/src/main.go"]`)
	visit("commits", "/root/walk/-/commits/feature/x", "main h1", "commits.png")
	visit("commit", "/root/walk/-/commit/"+second.ID, "main h1", "commit.png")
	if body := text("main"); !strings.Contains(body, "Greet the world") || !strings.Contains(body, `hello, world`) {
		t.Errorf("commit page: %q", body)
	}
	visit("compare", "/root/walk/-/compare/master...feature/x", "main h1", "compare.png")
	visit("branches", "/root/walk/-/branches", "main h1", "branches.png")
	_ = first

	// A private project: sign in, and the browser comes back to it.
	must("private project", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/hidden"), chromedp.WaitVisible(chromedp.ID("login"))))
	must("sign in", chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("login"), "root"),
		chromedp.SendKeys(chromedp.ID("password"), s.RootPassword), chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.CSS(".markdown h1"))))
	if h := text(".markdown h1"); !strings.Contains(h, "Secret plans") {
		t.Errorf("private project after signing in: %q", h)
	}
	chrome.Screenshot(t, tab, shots, "private-overview.png")
	chrome.CheckAccessibility(t, tab, "private project, signed in")
}
