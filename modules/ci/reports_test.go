package ci_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// reportsCI writes a junit report with a passing and a failing case and
// a dotenv report whose FROM_DOTENV overrides the YAML variable of the
// same name; bad's dotenv has a comment line, which GitLab refuses;
// failing fails, so its report is kept and its archive (on_success) not.
const reportsCI = `stages: [test, use]
variables:
  FROM_DOTENV: yaml-value
test:
  stage: test
  script:
    - printf '%s' '<?xml version="1.0"?><testsuites><testsuite name="unit"><testcase classname="calc" name="adds" time="0.5"/><testcase classname="calc" name="divides" time="0.25" file="calc_test.go"><failure message="division by zero">want 2, got 0</failure></testcase></testsuite></testsuites>' > report.xml
    - printf 'FROM_DOTENV=from-report\nBUILD_VERSION = 1.2.3\n' > build.env
  artifacts:
    reports:
      junit: report.xml
      dotenv: build.env
bad:
  stage: test
  allow_failure: true
  script:
    - printf '# a comment\nA=1\n' > bad.env
  artifacts:
    reports:
      dotenv: bad.env
failing:
  stage: test
  allow_failure: true
  script:
    - printf '%s' '<testsuite><testcase classname="slow" name="times out"><error message="timeout"/></testcase></testsuite>' > failing.xml
    - exit 1
  artifacts:
    paths: [failing.xml]
    reports:
      junit: failing.xml
use:
  stage: use
  script:
    - echo "version=$BUILD_VERSION from=$FROM_DOTENV"
`

const failingSuite = `{"name":"failing","total_time":0,"total_count":1,"success_count":0,"failed_count":0,"skipped_count":0,"error_count":1,"suite_error":null,` +
	`"test_cases":[{"status":"error","name":"times out","classname":"slow","file":null,"execution_time":0,"system_output":"timeout","stack_trace":null}]}`

const wantTestReport = `{"total_time":0.75,"total_count":3,"success_count":1,"failed_count":1,"skipped_count":0,"error_count":1,` +
	`"test_suites":[{"name":"test","total_time":0.75,"total_count":2,"success_count":1,"failed_count":1,"skipped_count":0,"error_count":0,"suite_error":null,` +
	`"test_cases":[{"status":"success","name":"adds","classname":"calc","file":null,"execution_time":0.5,"system_output":null,"stack_trace":null},` +
	`{"status":"failed","name":"divides","classname":"calc","file":"calc_test.go","execution_time":0.25,"system_output":"want 2, got 0","stack_trace":null}]},` +
	failingSuite + `]}`

// Reports on the shell executor: the pipeline's test report and its
// summary answer exactly, a later job sees the dotenv variables above the
// YAML ones, and a dotenv GitLab refuses fails its job with GitLab's
// message.
func TestReportsShell(t *testing.T) {
	t.Parallel()
	s := start(t)
	checkReports(t, s, "reports-shell")
}

func checkReports(t *testing.T, s *fennectest.Server, name string) {
	c := s.Client
	p := stocktest.NewProject(t, c, name, "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": reportsCI})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	if pl.Status != "success" {
		t.Fatalf("pipeline %s; test: %s", pl.Status, trace(t, c, p.ID, jobs["test"].ID))
	}
	if out := trace(t, c, p.ID, jobs["use"].ID); !strings.Contains(out, "version=1.2.3 from=from-report") {
		t.Fatalf("use's trace:\n%s", out)
	}
	bad := jobs["bad"]
	if bad.Status != "failed" {
		t.Fatalf("bad: %s", bad.Status)
	}
	if out := trace(t, c, p.ID, bad.ID); !strings.Contains(out, "Invalid Format") {
		t.Fatalf("bad's trace:\n%s", out)
	}

	resp := s.Do(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/pipelines/%d/test_report", p.ID, pl.ID), nil,
		"PRIVATE-TOKEN", s.RootToken)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(bytes.TrimSpace(body)) != wantTestReport {
		t.Fatalf("test_report: %d\n%s\nwant\n%s", resp.StatusCode, body, wantTestReport)
	}
	sum, _, err := c.Pipelines.GetPipelineTestReportSummary(p.ID, pl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total.Count != 3 || sum.Total.Success != 1 || sum.Total.Failed != 1 || sum.Total.Error != 1 || sum.Total.Time != 0.75 ||
		len(sum.TestSuites) != 2 || sum.TestSuites[1].Name != "failing" || sum.TestSuites[0].Name != "test" || sum.TestSuites[0].TotalCount != 2 ||
		len(sum.TestSuites[0].BuildIDs) != 1 || sum.TestSuites[0].BuildIDs[0] != jobs["test"].ID {
		t.Fatalf("summary: %+v %+v", sum.Total, sum.TestSuites)
	}
	if _, r, err := c.Pipelines.GetPipelineTestReport(p.ID, pl.ID+1000); err == nil || r.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown pipeline: %v", err)
	}
	if f := jobs["failing"]; f.Status != "failed" || f.ArtifactsFile.Filename != "" || jobs["test"].ArtifactsFile.Filename != "" {
		t.Fatalf("failing: %s, archives %q %q", f.Status, f.ArtifactsFile.Filename, jobs["test"].ArtifactsFile.Filename)
	}
	// Erasing the job erases its reports: failing's suite is left.
	if _, _, err := c.Jobs.EraseJob(p.ID, jobs["test"].ID); err != nil {
		t.Fatal(err)
	}
	const afterErase = `{"total_time":0,"total_count":1,"success_count":0,"failed_count":0,"skipped_count":0,"error_count":1,"test_suites":[` +
		failingSuite + `]}`
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && got != afterErase; time.Sleep(50 * time.Millisecond) {
		resp := s.Do(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/pipelines/%d/test_report", p.ID, pl.ID), nil,
			"PRIVATE-TOKEN", s.RootToken)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = string(bytes.TrimSpace(body))
	}
	if got != afterErase {
		t.Fatalf("after erase: %s", got)
	}
}
