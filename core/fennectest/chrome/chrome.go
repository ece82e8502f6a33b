package chrome

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium process.
type Browser struct {
	ctx context.Context
}

// Start starts Chromium for the test and stops it when the test ends; it
// skips the test when chromium is not installed.
func Start(t testing.TB) *Browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian package chromium, which .ci/run installs): the pages are not tested in a browser")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1100, 800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// Start the browser now, so its start-up is not charged to a step; a
	// start that hangs fails here rather than at go test's own timeout.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err = <-started:
	case <-time.After(2 * time.Minute):
		err = errors.New("no answer within 2 minutes")
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &Browser{ctx: ctx}
}

// Tab opens a tab in a fresh browser context (no cookies shared with other
// tabs), closed when the test ends.
func (b *Browser) Tab(t testing.TB) context.Context {
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	// Generous: a tab's whole walk (a dozen pages, screenshots, axe runs)
	// on a loaded 2-core -race run; a quiet run takes seconds.
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel() })
	return ctx
}

// Artifacts is the directory screenshots go to: $FENNEC_TEST_ARTIFACTS/name
// when that is set (CI keeps it), else a temporary directory of the test.
func Artifacts(t testing.TB, name string) string {
	dir := t.TempDir()
	if root := os.Getenv("FENNEC_TEST_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Screenshot writes a full-page PNG of the tab to dir/name.
func Screenshot(t testing.TB, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// axeVersion is the axe-core release .ci/run installs (npm, global).
const axeVersion = "4.14.1"

var axeSource = sync.OnceValues(func() (string, error) {
	var candidates []string
	if p := os.Getenv("FENNEC_AXE_JS"); p != "" {
		candidates = append(candidates, p)
	}
	if out, err := exec.Command("npm", "root", "-g").Output(); err == nil {
		candidates = append(candidates, filepath.Join(strings.TrimSpace(string(out)), "axe-core", "axe.min.js"))
	}
	for _, c := range candidates {
		if b, err := os.ReadFile(c); err == nil {
			return string(b), nil
		}
	}
	return "", fmt.Errorf("axe-core %s is not installed (npm install -g axe-core@%s, which .ci/run does; or set FENNEC_AXE_JS)", axeVersion, axeVersion)
})

// Violation is one rule axe-core found broken on a page.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

// CheckAccessibility runs axe-core on the tab's page (WCAG 2.x A and AA
// rules) and fails the test on each violation of impact serious or
// critical; lesser ones are logged. Without axe-core installed it logs
// that the check was skipped.
func CheckAccessibility(t testing.TB, ctx context.Context, page string) {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Logf("%s: accessibility not checked: %v", page, err)
		return
	}
	// DevTools' evaluation is not bound by the page's CSP, which forbids
	// every script the server did not send.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](src+";true")); err != nil {
		t.Fatalf("%s: inject axe-core: %v", page, err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}).then(r => JSON.stringify(r.violations))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: run axe-core: %v", page, err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		t.Fatalf("%s: axe-core's answer: %v", page, err)
	}
	for _, v := range vs {
		where := ""
		for i, n := range v.Nodes {
			if i == 3 {
				where += fmt.Sprintf(" (+%d more)", len(v.Nodes)-3)
				break
			}
			where += fmt.Sprintf("\n    %v %.200s", n.Target, n.HTML)
		}
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("%s: accessibility (%s) %s: %s%s", page, v.Impact, v.ID, v.Help, where)
		} else {
			t.Logf("%s: accessibility (%s) %s: %s%s", page, v.Impact, v.ID, v.Help, where)
		}
	}
}
