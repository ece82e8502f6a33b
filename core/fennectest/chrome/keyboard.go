package chrome

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

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

// fromTop moves the keyboard's starting point to the top of the page, as
// on a fresh load without autofocus: blurring alone leaves Chromium's
// starting point on the blurred element (a sign-in form's autofocused
// field), and Tab would go on from there.
const fromTop = `(() => {
  const a = document.activeElement;
  if (a && a.blur) a.blur();
  const b = document.body, had = b.getAttribute('tabindex');
  b.setAttribute('tabindex', '-1');
  b.focus({preventScroll: true});
  if (had === null) b.removeAttribute('tabindex'); else b.setAttribute('tabindex', had);
  window.scrollTo(0, 0);
  return true;
})()`

// CheckKeyboard walks the tab's page with the Tab key alone, as a
// keyboard user does, and fails the test when an element a user must
// reach (a link, button, field, summary) is never focused, is reached out
// of document order (a positive tabindex: focus jumps where the eye does
// not follow), or is focused with nothing showing it (no outline, no box
// shadow). It presses Tab at most once per element, plus the skip link,
// plus a margin.
func CheckKeyboard(t testing.TB, ctx context.Context, page string) {
	t.Helper()
	want, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](focusable))
	if err != nil {
		t.Fatalf("%s: list the focusable elements: %v", page, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fromTop)); err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	reached := map[string]bool{}
	var order, unseen []string
	// A date field takes a Tab per part (month, day, year) while it
	// stays the focused element, so the presses are bounded by three per
	// element, and end once every element was reached.
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	found := 0
	for i := 0; i < 3*len(want)+3 && found < len(wanted); i++ {
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
		if wanted[got.Name] {
			found++
		}
		order = append(order, got.Name)
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
	// The order: the reached elements that the page lists, in the order
	// Tab reached them, against document order. Elements the browser
	// makes focusable on its own (a scrolling block) are not listed and
	// do not count.
	listed := map[string]bool{}
	for _, w := range want {
		listed[w] = true
	}
	var tabbed, document []string
	for _, o := range order {
		if listed[o] {
			tabbed = append(tabbed, o)
		}
	}
	for _, w := range want {
		if reached[w] {
			document = append(document, w)
		}
	}
	// Tab from the top reaches a positive tabindex only after the rest
	// when it is last in the document, where the order above cannot see
	// it: name such elements outright.
	jumpers, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[tabindex]')].filter(e => e.tabIndex > 0).map(window.__fennecName)`))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	if len(jumpers) > 0 {
		t.Errorf("%s: keyboard: a positive tabindex takes %s out of document order", page, strings.Join(jumpers, ", "))
	}
	if !slices.Equal(tabbed, document) {
		for i := range tabbed {
			if tabbed[i] != document[i] {
				t.Errorf("%s: keyboard: Tab order leaves document order at step %d: %s comes before %s", page, i+1, tabbed[i], document[i])
				break
			}
		}
	}
}

// FollowWithEnter reaches the first element matching the CSS selector
// link with the Tab key alone, presses Enter, and fails the test unless
// the browser then navigates to the link's own address: a link that only
// a mouse can follow (a script on click, an element that is no link) is
// caught here. It gives up after 200 presses of Tab.
func FollowWithEnter(t testing.TB, ctx context.Context, page, link string) {
	t.Helper()
	sel, _ := json.Marshal(link)
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const e = document.querySelector(`+string(sel)+`); return e && e.href ? e.href : '' })()`))
	if err != nil || href == "" {
		t.Errorf("%s: keyboard: no link %s to follow (%v)", page, link, err)
		return
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fromTop)); err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	for i := 0; ; i++ {
		if i == 200 {
			t.Errorf("%s: keyboard: %s never reached with Tab", page, link)
			return
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatalf("%s: press Tab: %v", page, err)
		}
		on, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.activeElement === document.querySelector(`+string(sel)+`)`))
		if err != nil {
			t.Fatalf("%s: the focused element: %v", page, err)
		}
		if on {
			break
		}
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatalf("%s: press Enter: %v", page, err)
	}
	// Navigation is asynchronous: poll the address for a while.
	var at string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		at, err = chromedp.Run(ctx, chromedp.Location())
		if err == nil && at == href {
			if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
				t.Fatalf("%s: %v", page, err)
			}
			return
		}
	}
	t.Errorf("%s: keyboard: Enter on %s left the browser at %s, want %s", page, link, at, href)
}

// SignIn signs the tab in through the site's sign-in form at baseURL and
// waits until a signed-in page has loaded (its header's account link):
// waiting for any heading would match the sign-in page itself, and the
// next navigation would then abort the form's redirect.
func SignIn(t testing.TB, ctx context.Context, baseURL, login, password string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(baseURL+"/users/sign_in"), chromedp.WaitVisible(chromedp.CSS(`input[name="login"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="login"]`), login), chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), password),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)), chromedp.WaitVisible(chromedp.CSS(`header a.me`))); err != nil {
		t.Fatalf("sign in as %s: %v", login, err)
	}
}
