package chrome_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
)

// recorder is a test that records the errors reported to it.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestCheckAccessibilityFindsViolations: the check fails a page with an
// unlabelled button and an input without a label, and passes a clean one,
// so a page test that reports nothing has really been checked.
func TestCheckAccessibilityFindsViolations(t *testing.T) {
	b := chrome.Start(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/bad" {
			fmt.Fprint(w, `<!DOCTYPE html><html lang="en"><title>bad</title><main><button></button><input type="text"></main></html>`)
			return
		}
		fmt.Fprint(w, `<!DOCTYPE html><html lang="en"><title>good</title><main><h1>Good</h1><label for="q">Query</label><input id="q" type="text"><button>Go</button></main></html>`)
	}))
	defer srv.Close()
	tab := b.Tab(t)
	for _, c := range []struct {
		path string
		bad  bool
	}{{"/bad", true}, {"/good", false}} {
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+c.path), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{TB: t}
		chrome.CheckAccessibility(rec, tab, c.path)
		got := strings.Join(rec.errors, "\n")
		if c.bad != (strings.Contains(got, "button-name") && strings.Contains(got, "label")) || (!c.bad && got != "") {
			t.Errorf("%s: reported %q", c.path, got)
		}
	}
}

// TestCheckKeyboardFindsProblems: CheckKeyboard fails a page with a link
// taken out of the tab order, one whose button hides its focus, and ones
// whose tab order is not the document's (a positive tabindex), and passes
// a page a keyboard user can walk.
func TestCheckKeyboardFindsProblems(t *testing.T) {
	b := chrome.Start(t)
	pages := map[string]string{
		"/skipped":   `<main><a href="/a">One</a> <a href="/b" tabindex="-1">Two</a></main>`,
		"/hidden":    `<style>button:focus{outline:none}</style><main><a href="/a">One</a> <button>Go</button></main>`,
		"/reordered": `<main><a href="/a">One</a> <a href="/b" tabindex="1">Two</a> <a href="/c">Three</a></main>`,
		"/lastfirst": `<main><a href="/a">One</a> <a href="/b">Two</a> <a href="/c" tabindex="2">Three</a></main>`,
		"/good":      `<main><a href="/a">One</a> <label for="q">Q</label><input id="q"> <button>Go</button></main>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!DOCTYPE html><html lang="en"><title>k</title>`+pages[r.URL.Path]+`</html>`)
	}))
	defer srv.Close()
	tab := b.Tab(t)
	for path, want := range map[string]string{"/skipped": "never reached", "/hidden": "focus not visible",
		"/reordered": "Tab order leaves document order at step 2: MAIN:1/A:3 comes before MAIN:1/A:2",
		"/lastfirst": "a positive tabindex takes MAIN:1/A:3 out of document order", "/good": ""} {
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+path), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{TB: t}
		chrome.CheckKeyboard(rec, tab, path)
		got := strings.Join(rec.errors, "\n")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: reported %q, want %q", path, got, want)
		}
	}
}

// TestFollowWithEnterFindsProblems: FollowWithEnter fails a link that
// Enter does not follow (a script swallows the key) and one that Tab
// never reaches, and passes a plain link, leaving the browser on its page.
func TestFollowWithEnterFindsProblems(t *testing.T) {
	b := chrome.Start(t)
	pages := map[string]string{
		"/swallowed": `<main><a href="/a">One</a> <a id="go" href="/there" onkeydown="event.preventDefault()">Go</a></main>`,
		"/untabbed":  `<main><a href="/a">One</a> <a id="go" href="/there" tabindex="-1">Go</a></main>`,
		"/good":      `<main><a href="/a">One</a> <a id="go" href="/there">Go</a></main>`,
		"/there":     `<main><h1>There</h1></main>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!DOCTYPE html><html lang="en"><title>k</title>`+pages[r.URL.Path]+`</html>`)
	}))
	defer srv.Close()
	tab := b.Tab(t)
	for path, want := range map[string]string{"/swallowed": "left the browser at " + srv.URL + "/swallowed", "/untabbed": "never reached", "/good": ""} {
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+path), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
			t.Fatal(err)
		}
		rec := &recorder{TB: t}
		chrome.FollowWithEnter(rec, tab, path, "#go")
		got := strings.Join(rec.errors, "\n")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: reported %q, want %q", path, got, want)
		}
		if want == "" {
			if h, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("h1"))); err != nil || h != "There" {
				t.Errorf("%s: after Enter the page's heading is %q (%v)", path, h, err)
			}
		}
	}
}
