package internal

// The pipeline test report API (GitLab 13's test_report and
// test_report_summary), over Service.TestReport (junit.go).

import (
	"context"
	"net/http"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

type testReportOutput struct {
	Body *TestReport
}

// TestReportSummary is test_report_summary's answer: the totals and each
// suite without its cases.
type TestReportSummary struct {
	Total      TestTotals         `json:"total"`
	TestSuites []TestSuiteSummary `json:"test_suites"`
}

// TestTotals are a report's totals as the summary names them.
type TestTotals struct {
	Time       float64 `json:"time"`
	Count      int     `json:"count"`
	Success    int     `json:"success"`
	Failed     int     `json:"failed"`
	Skipped    int     `json:"skipped"`
	Error      int     `json:"error"`
	SuiteError *string `json:"suite_error"`
}

// TestSuiteSummary is a suite of the summary: its totals and the jobs it
// comes from.
type TestSuiteSummary struct {
	Name string `json:"name"`
	testCounts
	BuildIDs   []int64 `json:"build_ids"`
	SuiteError *string `json:"suite_error"`
}

type testReportSummaryOutput struct {
	Body *TestReportSummary
}

func (s *Service) getTestReport(ctx context.Context, in *pipelinePath) (*testReportOutput, error) {
	r, err := s.TestReport(ctx, in.ID, cicd.PipelineID(in.PipelineID))
	if err != nil {
		return nil, err
	}
	return &testReportOutput{Body: &r}, nil
}

func (s *Service) getTestReportSummary(ctx context.Context, in *pipelinePath) (*testReportSummaryOutput, error) {
	r, err := s.TestReport(ctx, in.ID, cicd.PipelineID(in.PipelineID))
	if err != nil {
		return nil, err
	}
	out := &TestReportSummary{TestSuites: []TestSuiteSummary{}, Total: TestTotals{Time: r.TotalTime, Count: r.TotalCount,
		Success: r.SuccessCount, Failed: r.FailedCount, Skipped: r.SkippedCount, Error: r.ErrorCount}}
	for _, su := range r.TestSuites {
		out.TestSuites = append(out.TestSuites, TestSuiteSummary{Name: su.Name, testCounts: su.testCounts,
			BuildIDs: su.buildIDs, SuiteError: su.SuiteError})
	}
	return &testReportSummaryOutput{Body: out}, nil
}

func (s *Service) registerTestReports(a *api.API) {
	tags := []string{"pipelines"}
	api.Register(a, api.Op{ID: "get-pipeline-test-report", Method: http.MethodGet,
		Path: "/projects/{id}/pipelines/{pipeline_id}/test_report", Tags: tags,
		Summary: "A pipeline's JUnit test report", Access: api.Public}, s.getTestReport)
	api.Register(a, api.Op{ID: "get-pipeline-test-report-summary", Method: http.MethodGet,
		Path: "/projects/{id}/pipelines/{pipeline_id}/test_report_summary", Tags: tags,
		Summary: "A pipeline's JUnit test report, totals only", Access: api.Public}, s.getTestReportSummary)
}
