package ci_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fennec-forge/fennec/core/fennectest/chrome"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestPipelinePagesInChromium: with the shell executor, a pushed
// .gitlab-ci.yml's pipeline fails a job; in a real browser its page
// shows the stages and jobs, the Retry button runs the failed job again
// (it passes this time), and the list, the pipeline, the run form and
// the environments pages pass axe-core (no serious or critical
// violation), each screenshot.
func TestPipelinePagesInChromium(t *testing.T) {
	t.Parallel()
	b := chrome.Start(t)
	s := startWith(t)
	shots := chrome.Artifacts(t, "pipeline-pages")
	mark := filepath.Join(t.TempDir(), "second-try")
	p := stocktest.NewProject(t, s.Client, "walk", "public")
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "Add CI", map[string]string{".gitlab-ci.yml": `stages: [build, test, deploy]
compile:
  stage: build
  script: ['echo "compiled ${GREETING:-quietly}"']
flaky:
  stage: test
  script:
    - if [ -f '` + mark + `' ]; then echo second try; else touch '` + mark + `'; exit 1; fi
lint:
  stage: test
  script: [echo linted]
ship:
  stage: deploy
  when: always
  script: [echo shipped]
  environment:
    name: production
    url: https://example.com/
`})
	pl := waitRefPipeline(t, s.Client, p.ID, "master", "failed")
	plPath := "/root/walk/-/pipelines/" + strconv.FormatInt(pl.ID, 10)
	tab := b.Tab(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	chrome.SignIn(t, tab, s.URL, "root", s.RootPassword)
	must("list", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/pipelines"), chromedp.WaitVisible(chromedp.CSS("table.pipelines"))))
	chrome.Screenshot(t, tab, shots, "list.png")
	chrome.CheckAccessibility(t, tab, "pipelines list")

	must("pipeline", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`table.pipelines a[href$="`+plPath+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(".pipeline-graph"))))
	graph, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(".pipeline-graph")))
	must("the graph's text", err)
	for _, want := range []string{"build", "compile", "test", "flaky", "lint", "deploy", "ship"} {
		if !strings.Contains(strings.ToLower(graph), want) {
			t.Fatalf("the pipeline's stages lack %q:\n%s", want, graph)
		}
	}
	chrome.Screenshot(t, tab, shots, "pipeline-failed.png")
	chrome.CheckAccessibility(t, tab, "pipeline page")

	// Retry: the failed job runs again and passes.
	must("retry", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`form[action$="/retry"] button`)), chromedp.WaitVisible(chromedp.CSS(".notice"))))
	waitRefPipeline(t, s.Client, p.ID, "master", "success")
	must("after retry", chromedp.Do(tab, chromedp.Navigate(s.URL+plPath), chromedp.WaitVisible(chromedp.CSS(".pipeline-graph"))))
	status, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(".pipeline-head .ci-status")))
	must("the status's text", err)
	if strings.TrimSpace(status) != "passed" {
		t.Fatalf("after the retry the page says %q", status)
	}
	chrome.Screenshot(t, tab, shots, "pipeline-passed.png")
	must("jobs tab", chromedp.Do(tab, chromedp.Navigate(s.URL+plPath+"/jobs"), chromedp.WaitVisible(chromedp.CSS("table.jobs"))))
	chrome.CheckAccessibility(t, tab, "pipeline jobs tab")

	must("run form", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/pipelines/new"), chromedp.WaitVisible(chromedp.CSS("#run-ref"))))
	chrome.Screenshot(t, tab, shots, "run-form.png")
	chrome.CheckAccessibility(t, tab, "run pipeline form")
	// Run one from the form with a variable: its jobs get it.
	must("run", chromedp.Do(tab, chromedp.SendKeys(chromedp.ID("var-key-0"), "GREETING"), chromedp.SendKeys(chromedp.ID("var-value-0"), "hey"),
		chromedp.Click(chromedp.CSS(`form.run-pipeline button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(".pipeline-graph"))))
	run, _, err := s.Client.Pipelines.ListProjectPipelines(p.ID, nil)
	if err != nil || len(run) == 0 || run[0].ID == pl.ID || run[0].Source != "web" {
		t.Fatalf("the form's pipeline: %v %+v", err, run)
	}
	runJobs, _, err := s.Client.Jobs.ListPipelineJobs(p.ID, run[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range runJobs {
		if j.Name == "compile" {
			waitTrace(t, s.Client, p.ID, j.ID, "compiled hey")
		}
	}

	must("environments", chromedp.Do(tab, chromedp.Navigate(s.URL+"/root/walk/-/environments"), chromedp.WaitVisible(chromedp.CSS("table.environments"))))
	chrome.Screenshot(t, tab, shots, "environments.png")
	chrome.CheckAccessibility(t, tab, "environments list")
	must("environment", chromedp.Do(tab, chromedp.Click(chromedp.CSS(`table.environments td:first-child a`)),
		chromedp.WaitVisible(chromedp.CSS("table.deployments"))))
	chrome.Screenshot(t, tab, shots, "environment.png")
	chrome.CheckAccessibility(t, tab, "environment page")
}
