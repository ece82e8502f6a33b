package chrome

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// focusable lists the page's elements a keyboard user must be able to
// reach, in document order, by a path that names each, as JavaScript
// (shared by CheckKeyboard's steps).
const focusable = `(() => {
  const sel = 'a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';
  const name = e => { const p = []; for (; e && e.nodeType === 1 && e !== document.body; e = e.parentElement) { let i = 1; for (let s = e.previousElementSibling; s; s = s.previousElementSibling) i++; p.unshift(e.tagName + ':' + i) } return p.join('/') };
  const shown = e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e); return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && !e.closest('details:not([open]) > :not(summary)') };
  window.__fennecName = name;
  return [...document.querySelectorAll(sel)].filter(shown).map(name);
})()`

// focused names the focused element and says whether it shows that it is
// focused (an outline, or a box shadow, drawn by :focus-visible).
const focused = `(() => {
  const e = document.activeElement;
  if (!e || e === document.body) return {Name: '', Visible: false};
  const s = getComputedStyle(e);
  const visible = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || (s.boxShadow && s.boxShadow !== 'none');
  return {Name: window.__fennecName(e), Visible: visible};
})()`

// CheckKeyboard walks the tab's page with the Tab key alone, as a
// keyboard user does, and fails the test when an element a user must
// reach (a link, button, field, summary) is never focused, or is focused
// with nothing showing it (no outline, no box shadow). It presses Tab at
// most once per element, plus the skip link, plus a margin.
func CheckKeyboard(t testing.TB, ctx context.Context, page string) {
	t.Helper()
	want, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](focusable))
	if err != nil {
		t.Fatalf("%s: list the focusable elements: %v", page, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.activeElement && document.activeElement.blur && document.activeElement.blur(), window.scrollTo(0, 0), true`)); err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	reached := map[string]bool{}
	var unseen []string
	for i := 0; i < len(want)+3; i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatalf("%s: press Tab: %v", page, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
			Name    string
			Visible bool
		}](focused))
		if err != nil {
			t.Fatalf("%s: the focused element: %v", page, err)
		}
		if got.Name == "" || reached[got.Name] {
			continue
		}
		reached[got.Name] = true
		if !got.Visible {
			unseen = append(unseen, got.Name)
		}
	}
	var missed []string
	for _, w := range want {
		if !reached[w] {
			missed = append(missed, w)
		}
	}
	if len(missed) > 0 {
		t.Errorf("%s: keyboard: %d of %d elements never reached with Tab: %s", page, len(missed), len(want), strings.Join(missed, ", "))
	}
	if len(unseen) > 0 {
		t.Errorf("%s: keyboard: focus not visible on %s", page, strings.Join(unseen, ", "))
	}
}
