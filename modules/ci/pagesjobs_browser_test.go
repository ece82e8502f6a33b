package ci_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// liveJobCI prints coloured lines in a section, then a line for each gate
// file the test creates, ends the section, and keeps an artifact. The
// echoed commands show $((...)) unexpanded, so the lines the test looks
// for are only the job's output.
func liveJobCI(gates string, n int) string {
	return fmt.Sprintf(`live:
  script:
    - |
      printf '\033[33mbefore the gate\033[0m\n'
      printf 'section_start:%%s:live\r\033[0K\033[36mWaiting for the gates\033[0m\n' "$(date +%%s)"
      i=0; while [ $i -lt 120 ]; do echo "filler line $i"; i=$((i+1)); done
      n=1; while [ $n -le %d ]; do while [ ! -e %s/$n ]; do sleep 0.01; done; echo "tick-$((n*7))"; n=$((n+1)); done
      printf 'section_end:%%s:live\r\033[0K\n' "$(date +%%s)"
      echo "after $((40+2)) gates"
      mkdir -p out && printf 'from the job' > out/result.txt
  artifacts:
    paths: [out/]
    expire_in: 1 week
broken:
  script: ["echo broke", "exit 1"]
`, n, gates)
}

// TestJobPageInChromium: a running job's page in a real browser shows the
// lines the job prints as they come, without a reload, inside the section
// still open, and keeps the end in view; when the job is over the header
// shows it passed. The artifact's file is fetched from the browser; a
// failed job is retried with its page's button. axe-core checks the job
// page and the artifacts browser; each is screenshot.
//
// With FENNEC_JOBLOG_SAMPLES=N it also measures N times how long a line
// takes from reaching the trace (seen by polling the API's trace every
// 5 ms) to showing in the open page (seen by polling the DOM every 5 ms),
// each gate opened at a random moment, and logs the median and 90th
// percentile. The page's request waits for the trace to grow (wait=1),
// so the figure is the wake-up and rendering, not a polling interval.
func TestJobPageInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := start(t)
	c := s.Client
	shots := chrome.Artifacts(t, "job-pages")
	samples := 1
	if n, err := strconv.Atoi(os.Getenv("FENNEC_JOBLOG_SAMPLES")); err == nil && n > 0 {
		samples = n
	}
	gates := t.TempDir()
	p := stocktest.NewProject(t, c, "live-log", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": liveJobCI(gates, samples)})
	var liveID, brokenID, pipelineID int64
	fennectest.Poll(t, 60*time.Second, func() (bool, string) {
		list, _, err := c.Pipelines.ListProjectPipelines(p.ID, nil)
		if err != nil || len(list) == 0 || list[0].SHA != commit.ID {
			return false, "no pipeline"
		}
		jobs := jobsByName(t, c, p.ID, list[0].ID)
		if jobs["live"] == nil || jobs["broken"] == nil {
			return false, "no jobs"
		}
		liveID, brokenID, pipelineID = jobs["live"].ID, jobs["broken"].ID, list[0].ID
		return true, ""
	})
	waitTrace(t, c, p.ID, liveID, "filler line 119")
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	chrome.SignIn(t, tab, s.URL, "root", s.RootPassword)
	jobURL := fmt.Sprintf("%s/root/live-log/-/jobs/%d", s.URL, liveID)
	must("job page", chromedp.Do(tab, chromedp.Navigate(jobURL), chromedp.WaitVisible(chromedp.CSS(`#job-log details.ts[data-open]`))))
	// A mark on the window: a reload would drop it.
	_, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.notReloaded = true; window.scrollTo(0, document.documentElement.scrollHeight); true`))
	must("mark", err)
	chrome.Screenshot(t, tab, shots, "job-running.png")
	chrome.CheckAccessibility(t, tab, "running job page")

	domHas := func(text string) bool {
		ok, _ := chromedp.Run(tab, chromedp.Evaluate[bool](fmt.Sprintf(`document.getElementById("job-log").textContent.includes(%q)`, text)))
		return ok
	}
	var latencies []time.Duration
	for n := 1; n <= samples; n++ {
		line := fmt.Sprintf("tick-%d", n*7)
		if samples > 1 {
			// Out of step with the page's polling, which the last sample's
			// end is in step with.
			time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
		}
		if err := os.WriteFile(filepath.Join(gates, strconv.Itoa(n)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		arrived := make(chan time.Time, 1)
		go func() {
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				r, _, err := c.Jobs.GetTraceFile(p.ID, liveID)
				if err != nil {
					continue
				}
				if strings.Contains(readAllString(r), line+"\n") {
					arrived <- time.Now()
					return
				}
			}
			arrived <- time.Time{}
		}()
		var shown time.Time
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if domHas(line) {
				shown = time.Now()
				break
			}
		}
		at := <-arrived
		if shown.IsZero() || at.IsZero() {
			t.Fatalf("%s: arrived %v, shown %v", line, at, shown)
		}
		latencies = append(latencies, shown.Sub(at))
	}
	if samples > 1 {
		slices.Sort(latencies)
		t.Logf("trace line to open page, %d samples: median %v, p90 %v, min %v, max %v", len(latencies),
			latencies[len(latencies)/2], latencies[len(latencies)*9/10], latencies[0], latencies[len(latencies)-1])
	}
	// The job ends: the section closes with its duration, the header
	// shows the job passed, the page was never reloaded and follows the end.
	must("finished", chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS(`#job-header[data-status="success"]`))))
	fennectest.Poll(t, 10*time.Second, func() (bool, string) { return domHas("after 42 gates"), "no last line" })
	type pageState struct {
		NotReloaded, InSection, AtBottom, Closed bool
		Duration                                 string
	}
	state, err := chromedp.Run(tab, chromedp.Evaluate[pageState](`(() => {
		const sec = document.querySelector('#job-log details.ts[data-section="live"]');
		const doc = document.documentElement;
		return {NotReloaded: window.notReloaded === true,
			InSection: !!sec && sec.textContent.includes("tick-7") && !sec.textContent.includes("after 42 gates"),
			Closed: !!sec && !sec.hasAttribute("data-open"),
			Duration: sec ? sec.querySelector(":scope > summary .sd").textContent : "",
			AtBottom: window.innerHeight + window.scrollY >= doc.scrollHeight - 48};
	})()`))
	must("state", err)
	if !state.NotReloaded || !state.InSection || !state.Closed || state.Duration == "" || !state.AtBottom {
		t.Fatalf("after the job: %+v", state)
	}
	colour, err := chromedp.Run(tab, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#job-log .term-fg33")).color`))
	must("colour", err)
	if colour == "" || colour == "rgb(232, 232, 232)" {
		t.Errorf("the yellow line's colour: %q", colour)
	}
	chrome.Screenshot(t, tab, shots, "job-finished.png")
	chrome.CheckAccessibility(t, tab, "finished job page")
	chrome.CheckKeyboard(t, tab, "finished job page")

	// The artifacts: the browser, and the file fetched as the browser does.
	must("artifacts", chromedp.Do(tab, chromedp.Navigate(jobURL+"/artifacts/browse/out"), chromedp.WaitVisible(chromedp.CSS(`table.artifacts`))))
	chrome.Screenshot(t, tab, shots, "artifacts.png")
	chrome.CheckAccessibility(t, tab, "artifacts browser")
	got, err := chromedp.Run(tab, chromedp.Evaluate[string](`fetch(document.querySelector('table.artifacts a').href).then(r => r.headers.get("content-disposition") + "|" + r.headers.get("x-content-type-options") + "|")`, chromedp.EvalAwaitPromise))
	must("download", err)
	body, err := chromedp.Run(tab, chromedp.Evaluate[string](`fetch(document.querySelector('table.artifacts a').href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	must("download body", err)
	if got != "inline; filename=result.txt|nosniff|" || body != "from the job" {
		t.Fatalf("the artifact from the browser: %q %q", got, body)
	}

	// The pipeline's page leads to the job's.
	must("from the pipeline", chromedp.Do(tab, chromedp.Navigate(fmt.Sprintf("%s/root/live-log/-/pipelines/%d", s.URL, pipelineID)),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[href$="/-/jobs/%d"]`, liveID))), chromedp.WaitVisible(chromedp.CSS(`#job-log`))))

	// Retry the failed job from its page.
	before, _, err := c.Jobs.ListProjectJobs(p.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	brokenURL := fmt.Sprintf("%s/root/live-log/-/jobs/%d", s.URL, brokenID)
	must("retry", chromedp.Do(tab, chromedp.Navigate(brokenURL), chromedp.WaitVisible(chromedp.CSS(`#job-actions button.primary`)),
		chromedp.Click(chromedp.CSS(`#job-actions button.primary`))))
	var at string
	fennectest.Poll(t, 10*time.Second, func() (bool, string) {
		at, _ = chromedp.Run(tab, chromedp.Location())
		return at != brokenURL, "still at " + at
	})
	must("new job page", chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS(`#job-header`))))
	if at == brokenURL || !strings.HasPrefix(at, s.URL+"/root/live-log/-/jobs/") {
		t.Fatalf("after retry the browser is at %s", at)
	}
	after, _, err := c.Jobs.ListProjectJobs(p.ID, nil)
	if err != nil || len(after) != len(before)+1 {
		t.Fatalf("jobs after the retry: %d, were %d (%v)", len(after), len(before), err)
	}
}

func readAllString(r io.Reader) string {
	b, _ := io.ReadAll(r)
	return string(b)
}
