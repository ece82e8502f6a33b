package internal

// JUnit reports and a pipeline's test report (GitLab 13's
// /pipelines/:id/test_report and test_report_summary). A report is read
// with encoding/xml in strict mode with no entities beyond XML's five:
// a DOCTYPE's entities are never expanded (an undefined entity is an
// error), so neither billion laughs nor external entities reach anything;
// the input is bounded when stored and the cases counted as they are read.

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
	"github.com/fennec-forge/fennec/modules/projects"
)

// maxTestCases bounds the cases one pipeline's test report holds.
const maxTestCases = 100_000

var errTooManyTestCases = errors.New("JUnit data parsing failed: too many test cases")

// Test case statuses, GitLab's.
const (
	testSuccess = "success"
	testFailed  = "failed"
	testSkipped = "skipped"
	testError   = "error"
)

// TestCase is one test case of a report, as GitLab renders it.
type TestCase struct {
	Status        string  `json:"status"`
	Name          string  `json:"name"`
	Classname     string  `json:"classname"`
	File          *string `json:"file"`
	ExecutionTime float64 `json:"execution_time"`
	SystemOutput  *string `json:"system_output"`
	StackTrace    *string `json:"stack_trace"`
}

// testCounts are a suite's or a report's totals.
type testCounts struct {
	TotalTime    float64 `json:"total_time"`
	TotalCount   int     `json:"total_count"`
	SuccessCount int     `json:"success_count"`
	FailedCount  int     `json:"failed_count"`
	SkippedCount int     `json:"skipped_count"`
	ErrorCount   int     `json:"error_count"`
}

func (c *testCounts) add(tc TestCase) {
	c.TotalTime += tc.ExecutionTime
	c.TotalCount++
	switch tc.Status {
	case testFailed:
		c.FailedCount++
	case testSkipped:
		c.SkippedCount++
	case testError:
		c.ErrorCount++
	default:
		c.SuccessCount++
	}
}

// TestSuite is the test cases of the jobs of one name (GitLab groups a
// pipeline's report by job name).
type TestSuite struct {
	Name string `json:"name"`
	testCounts
	SuiteError *string    `json:"suite_error"`
	TestCases  []TestCase `json:"test_cases"`
	buildIDs   []int64
}

// TestReport is a pipeline's test report.
type TestReport struct {
	testCounts
	TestSuites []TestSuite `json:"test_suites"`
}

// parseJUnit reads the test cases of one JUnit XML file, at most max of
// them.
func parseJUnit(data []byte, max int) ([]TestCase, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var out []TestCase
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, errors.New("JUnit XML parsing failed: " + err.Error())
		}
		start, ok := tok.(xml.StartElement)
		if !ok || start.Name.Local != "testcase" {
			continue
		}
		if len(out) == max {
			return nil, errTooManyTestCases
		}
		var raw junitCase
		if err := d.DecodeElement(&raw, &start); err != nil {
			return nil, errors.New("JUnit XML parsing failed: " + err.Error())
		}
		out = append(out, raw.testCase())
	}
}

// junitCase is a <testcase> as written.
type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure"`
	Error     *junitMessage `xml:"error"`
	Skipped   *junitMessage `xml:"skipped"`
	SystemOut string        `xml:"system-out"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func (m *junitMessage) output() *string {
	s := m.Text
	if s == "" {
		s = m.Message
	}
	return &s
}

func (c junitCase) testCase() TestCase {
	tc := TestCase{Status: testSuccess, Name: c.Name, Classname: c.Classname}
	if c.File != "" {
		f := c.File
		tc.File = &f
	}
	if t, err := strconv.ParseFloat(c.Time, 64); err == nil && !math.IsNaN(t) && !math.IsInf(t, 0) && t > 0 {
		tc.ExecutionTime = t
	}
	switch {
	case c.Failure != nil:
		tc.Status, tc.SystemOutput = testFailed, c.Failure.output()
	case c.Error != nil:
		tc.Status, tc.SystemOutput = testError, c.Error.output()
	case c.Skipped != nil:
		tc.Status, tc.SystemOutput = testSkipped, c.Skipped.output()
	}
	return tc
}

// TestReport is a pipeline's test report: the junit reports of its
// latest jobs, one suite per job name.
func (s *Service) TestReport(ctx context.Context, project string, id cicd.PipelineID) (TestReport, error) {
	info, err := s.access.Require(ctx, project, projects.ReadJobs)
	if err != nil {
		return TestReport{}, err
	}
	var list []*Job
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if _, err := pipelineIn(tx, info.ID, int64(id)); err != nil {
			return err
		}
		list, err = latestJobs(tx, int64(id))
		return err
	})
	if err != nil {
		return TestReport{}, err
	}
	report := TestReport{TestSuites: []TestSuite{}}
	suites := map[string]int{}
	left := maxTestCases
	for _, j := range list {
		members, err := s.readReport(ctx, reportKey(j.ID, reportJUnit), s.cfg.MaxArtifactsBytes)
		if err != nil || members == nil {
			continue
		}
		i, ok := suites[j.Name]
		if !ok {
			i = len(report.TestSuites)
			suites[j.Name] = i
			report.TestSuites = append(report.TestSuites, TestSuite{Name: j.Name, TestCases: []TestCase{}})
		}
		suite := &report.TestSuites[i]
		suite.buildIDs = append(suite.buildIDs, j.ID)
		for _, m := range members {
			cases, err := parseJUnit(m, left)
			if err != nil {
				msg := err.Error()
				suite.SuiteError = &msg
				continue
			}
			left -= len(cases)
			for _, tc := range cases {
				suite.add(tc)
				report.add(tc)
				suite.TestCases = append(suite.TestCases, tc)
			}
		}
	}
	return report, nil
}
