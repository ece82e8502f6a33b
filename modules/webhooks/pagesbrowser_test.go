package webhooks_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestHookPagesInChromium: in a real browser a Master adds a webhook
// through the form, tests it against a real receiver, and reads the
// delivery's request and response; an administrator opens the system
// hooks. axe-core checks each page kind (no serious or critical
// violation) and each is screenshot.
func TestHookPagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	e := start(t, true)
	rcv := newReceiver(t)
	shots := chrome.Artifacts(t, "hook-pages")
	p := stocktest.NewProject(t, e.Client, "web", "private")
	commitFile(t, e.Client, p.ID, "main", "README.md", "hello")
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
	chrome.SignIn(t, tab, e.URL, "root", e.RootPassword)
	must("hooks", chromedp.Do(tab, chromedp.Navigate(e.URL+"/root/web/-/hooks"), chromedp.WaitVisible(chromedp.CSS("#hook-url"))))
	check("hooks list")
	must("add", chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS("#hook-url"), rcv.URL+"/browser"),
		chromedp.SendKeys(chromedp.CSS("#hook-token"), "browser-secret"),
		chromedp.Click(chromedp.CSS(`input[name="note_events"]`)),
		chromedp.Click(chromedp.CSS(`form.hook-form button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("ul.hooks"))))
	hooks, _, err := e.Client.Projects.ListProjectHooks(p.ID, nil)
	if err != nil || len(hooks) != 1 || hooks[0].URL != rcv.URL+"/browser" || !hooks[0].NoteEvents || !hooks[0].PushEvents {
		t.Fatalf("the hook the browser added: %v %+v", err, hooks)
	}
	id := strconv.FormatInt(hooks[0].ID, 10)
	must("edit", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`a[href="/root/web/-/hooks/`+id+`/edit"].mono`)), chromedp.WaitVisible(chromedp.CSS("form.hook-test"))))
	check("hook edit")
	must("test", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form.hook-test button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS("#response-body"))))
	got := rcv.waitFor(t, "/browser", 1)
	if got[0].Header.Get("X-Gitlab-Token") != "browser-secret" || got[0].Header.Get("X-Gitlab-Event") != "Push Hook" {
		t.Errorf("the receiver got %v", got[0].Header)
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
		must("read "+sel, err)
		return v
	}
	request, response, headers := text("#request-body"), text("#response-body"), text("#request-headers")
	if !strings.Contains(request, `"object_kind": "push"`) || response != "received 1" ||
		!strings.Contains(headers, "X-Gitlab-Token: [REDACTED]") || strings.Contains(headers, "browser-secret") {
		t.Errorf("the entry reads request %.200q, response %q, headers %q", request, response, headers)
	}
	check("hook delivery")
	// The resend's answer is another entry's page: wait for its heading,
	// since the old page has a response too.
	first := text("main h1")
	must("resend", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form.hook-resend button`))))
	fennectest.Poll(t, 10*time.Second, func() (bool, string) {
		h, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("main h1")))
		return err == nil && h != first && strings.HasPrefix(h, "Delivery "), "the resent delivery's page: " + h
	})
	if response = text("#response-body"); response != "received 2" {
		t.Errorf("the resent entry's response: %q", response)
	}
	must("log", chromedp.Do(tab, chromedp.Navigate(e.URL+"/root/web/-/hooks/"+id+"/edit"), chromedp.WaitVisible(chromedp.CSS("table.hook-log"))))
	check("hook log")
	must("delete", chromedp.Do(tab, chromedp.Navigate(e.URL+"/root/web/-/hooks/"+id+"/delete"), chromedp.WaitVisible(chromedp.CSS("main form"))))
	check("hook delete")
	must("system hooks", chromedp.Do(tab, chromedp.Navigate(e.URL+"/admin/hooks"), chromedp.WaitVisible(chromedp.CSS("#hook-url"))))
	check("system hooks")
}
