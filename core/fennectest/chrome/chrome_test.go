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
