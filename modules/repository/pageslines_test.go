package repository_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestBlobLineRangesInChromium: a blob opened at #L3-5 highlights lines
// 3 to 5 (and no other), a click on line 7 then a shift-click on line 9
// selects 7 to 9 and puts #L7-9 in the address, and the script is the
// site's own file (the CSP allows no other).
func TestBlobLineRangesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "lines", "public")
	var src strings.Builder
	for i := 1; i <= 12; i++ {
		src.WriteString("line\n")
	}
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "lines", map[string]string{"f.txt": src.String()})
	tab := b.Tab(t)
	marked := func() string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Evaluate[string](`[...document.querySelectorAll('table.code tr.hl')].map(r => r.id).join(',')`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/lines/-/blob/master/f.txt#L3-5"), chromedp.WaitVisible(chromedp.CSS("#L12"))); err != nil {
		t.Fatal(err)
	}
	poll(t, func() bool { return marked() == "L3,L4,L5" }, "lines 3-5 highlighted")
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`#L7 td.num a`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.querySelector('#L9 td.num a').dispatchEvent(
		new MouseEvent('click', {bubbles: true, cancelable: true, shiftKey: true}))`)); err != nil {
		t.Fatal(err)
	}
	poll(t, func() bool { return marked() == "L7,L8,L9" }, "lines 7-9 highlighted")
	hash, err := chromedp.Run(tab, chromedp.Evaluate[string](`location.hash`))
	if err != nil || hash != "#L7-9" {
		t.Errorf("address %q, %v", hash, err)
	}
	src2, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('script').src`))
	if err != nil || !strings.HasPrefix(src2, s.URL+"/-/static/lines-") {
		t.Errorf("script %q, %v", src2, err)
	}
}

// poll waits up to 10 s for ok.
func poll(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Errorf("not within 10 s: %s", what)
}
