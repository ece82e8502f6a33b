package mergerequests_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
)

// chipContrast is, for each label chip of the page, the contrast ratio
// (WCAG) of its text colour on the colour it is filled with.
const chipContrast = `Array.from(document.querySelectorAll('.label.chip')).map(a => {
  const lum = c => { const v = c / 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const rgb = s => s.match(/\d+/g).slice(0, 3).map(Number);
  const hex = h => { h = h.slice(1); if (h.length === 3) h = h.split('').map(x => x + x).join('');
    return [0, 2, 4].map(i => parseInt(h.slice(i, i + 2), 16)); };
  const L = ([r, g, b]) => 0.2126 * lum(r) + 0.7152 * lum(g) + 0.0722 * lum(b);
  const fg = L(rgb(getComputedStyle(a).color)), bg = L(hex(a.querySelector('rect').getAttribute('fill')));
  return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
})`

// TestMergeRequestListsInChromium: the filtered list and the dashboard in
// a real browser: axe-core finds no serious or critical violation, the
// keyboard reaches every control, every label chip's text reads on its
// colour (a contrast of 4.5 at least, light and dark colours alike), and
// each page is screenshot.
func TestMergeRequestListsInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	f := newFiltersFixture(t)
	c := f.s.Client
	for name, color := range map[string]string{"yellow": "#ffff00", "grey": "#888", "teal": "#008080"} {
		if _, _, err := c.Labels.CreateLabel(f.project.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr(name), Color: gitlab.Ptr(color)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.MergeRequests.UpdateMergeRequest(f.project.ID, 3, &gitlab.UpdateMergeRequestOptions{
		Labels: &gitlab.LabelOptions{"yellow", "grey", "teal"}}); err != nil {
		t.Fatal(err)
	}
	f.openWithPipeline(t)
	shots := chrome.Artifacts(t, "merge-request-lists")
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	chrome.SignIn(t, tab, f.s.URL, "dev", f.dev.Password)
	for _, pg := range []struct{ name, path, file string }{
		{"merge request list", "/root/filtered/-/merge_requests?state=all", "list.png"},
		{"filtered merge request list", "/root/filtered/-/merge_requests?state=all&label_name=bug&author_username=dev", "list-filtered.png"},
		{"merge requests dashboard", "/dashboard/merge_requests?scope=all&state=all", "dashboard.png"},
	} {
		must(pg.name, chromedp.Do(tab, chromedp.Navigate(f.s.URL+pg.path), chromedp.WaitVisible(chromedp.CSS("ul.merge-requests"))))
		chrome.Screenshot(t, tab, shots, pg.file)
		chrome.CheckAccessibility(t, tab, pg.name)
		chrome.CheckKeyboard(t, tab, pg.name)
		ratios, err := chromedp.Run(tab, chromedp.Evaluate[[]float64](chipContrast))
		must(pg.name+" chips", err)
		if len(ratios) == 0 {
			t.Errorf("%s: no label chips", pg.name)
		}
		for n, r := range ratios {
			if r < 4.5 {
				t.Errorf("%s: chip %d has a contrast of %.2f", pg.name, n, r)
			}
		}
	}
}
