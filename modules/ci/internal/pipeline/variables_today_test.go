package pipeline

import (
	"strings"
	"testing"
	"time"
)

// todayMap is TodayVariables as a map, failing on a name given twice or a
// variable that is not public.
func todayMap(t *testing.T, f TodayFacts) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range TodayVariables(f) {
		if _, dup := out[v.Key]; dup {
			t.Errorf("%s given twice", v.Key)
		}
		if !v.Public {
			t.Errorf("%s is not public", v.Key)
		}
		out[v.Key] = v.Value
	}
	return out
}

func TestTodayVariables(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 29, 2, 30, 5, 0, time.FixedZone("CET", 3600))
	committed := time.Date(2026, 11, 28, 23, 59, 0, 0, time.UTC)
	sha := "0123456789abcdef0123456789abcdef01234567"
	base := TodayFacts{
		ServerURL: "https://forge.example.org:8443/", Source: SourcePush, Ref: "main", Protected: true,
		SHA: sha, BeforeSHA: "fedcba9876543210fedcba9876543210fedcba98",
		CommitMessage: "Fix the scheduler\n\nIt waited on a timer.\nNow it does not.", CommitAuthor: "Ada <ada@example.org>",
		CommitTimestamp: committed, PipelineID: 42, PipelineIID: 7, PipelineCreatedAt: created,
		ProjectPath: "acme/platform/api", ProjectTitle: "API Server", ProjectVisibility: "internal", DefaultBranch: "main",
		OpenMergeRequests: []string{"acme/platform/api!1", "acme/platform/api!2", "acme/platform/api!3", "acme/platform/api!4", "acme/platform/api!5"},
	}
	branch := todayMap(t, base)
	want := map[string]string{
		"CI_PIPELINE_SOURCE":        "push",
		"CI_COMMIT_BRANCH":          "main",
		"CI_COMMIT_REF_PROTECTED":   "true",
		"CI_DEFAULT_BRANCH":         "main",
		"CI_SERVER_URL":             "https://forge.example.org:8443",
		"CI_SERVER_HOST":            "forge.example.org",
		"CI_SERVER_PORT":            "8443",
		"CI_SERVER_PROTOCOL":        "https",
		"CI_SERVER_FQDN":            "forge.example.org:8443",
		"CI_API_V4_URL":             "https://forge.example.org:8443/api/v4",
		"CI_PIPELINE_URL":           "https://forge.example.org:8443/acme/platform/api/-/pipelines/42",
		"CI_PROJECT_NAMESPACE":      "acme/platform",
		"CI_PROJECT_ROOT_NAMESPACE": "acme",
		"CI_PROJECT_TITLE":          "API Server",
		"CI_PROJECT_VISIBILITY":     "internal",
		"CI_PIPELINE_IID":           "7",
		"CI_PIPELINE_CREATED_AT":    "2026-11-29T01:30:05Z",
		"CI_COMMIT_SHORT_SHA":       "01234567",
		"CI_COMMIT_BEFORE_SHA":      "fedcba9876543210fedcba9876543210fedcba98",
		"CI_COMMIT_MESSAGE":         "Fix the scheduler\n\nIt waited on a timer.\nNow it does not.",
		"CI_COMMIT_TITLE":           "Fix the scheduler",
		"CI_COMMIT_DESCRIPTION":     "It waited on a timer.\nNow it does not.",
		"CI_COMMIT_AUTHOR":          "Ada <ada@example.org>",
		"CI_COMMIT_TIMESTAMP":       "2026-11-28T23:59:00Z",
		"CI_OPEN_MERGE_REQUESTS":    "acme/platform/api!1,acme/platform/api!2,acme/platform/api!3,acme/platform/api!4",
	}
	if len(branch) != len(want) {
		t.Errorf("branch pipeline: %d variables, want %d: %v", len(branch), len(want), branch)
	}
	for k, v := range want {
		if branch[k] != v {
			t.Errorf("branch pipeline: %s = %q, want %q", k, branch[k], v)
		}
	}

	tests := []struct {
		name    string
		facts   func(f *TodayFacts)
		want    map[string]string
		without []string
	}{
		{"tag", func(f *TodayFacts) { f.Ref, f.IsTag, f.Protected, f.BeforeSHA = "v1.0.0", true, false, "" },
			map[string]string{"CI_COMMIT_TAG": "v1.0.0", "CI_COMMIT_REF_PROTECTED": "false", "CI_COMMIT_BEFORE_SHA": ZeroSHA},
			[]string{"CI_COMMIT_BRANCH", "CI_OPEN_MERGE_REQUESTS", "CI_MERGE_REQUEST_IID"}},
		{"merge request", func(f *TodayFacts) {
			f.Source, f.Ref, f.Protected = SourceMergeRequestEvent, "topic", false
			f.MergeRequest = &MergeRequestFacts{ID: 901, IID: 12, ProjectID: 3, ProjectPath: "acme/platform/api",
				Title: "Draft: <b>speed</b> up", Labels: []string{"backend", "needs review"}, Assignees: []string{"ada", "bob"},
				Milestone: "v2", Draft: true, SourceBranch: "topic", SourceProjectID: 9, SourceProjectPath: "ada/api",
				TargetBranch: "main", TargetProtected: true, DiffBaseSHA: "abc"}
		}, map[string]string{
			"CI_PIPELINE_SOURCE":                       "merge_request_event",
			"CI_MERGE_REQUEST_ID":                      "901",
			"CI_MERGE_REQUEST_IID":                     "12",
			"CI_MERGE_REQUEST_PROJECT_ID":              "3",
			"CI_MERGE_REQUEST_PROJECT_PATH":            "acme/platform/api",
			"CI_MERGE_REQUEST_PROJECT_URL":             "https://forge.example.org:8443/acme/platform/api",
			"CI_MERGE_REQUEST_REF_PATH":                "refs/merge-requests/12/head",
			"CI_MERGE_REQUEST_TITLE":                   "Draft: <b>speed</b> up",
			"CI_MERGE_REQUEST_DRAFT":                   "true",
			"CI_MERGE_REQUEST_EVENT_TYPE":              "detached",
			"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME":      "topic",
			"CI_MERGE_REQUEST_SOURCE_PROJECT_ID":       "9",
			"CI_MERGE_REQUEST_SOURCE_PROJECT_PATH":     "ada/api",
			"CI_MERGE_REQUEST_SOURCE_PROJECT_URL":      "https://forge.example.org:8443/ada/api",
			"CI_MERGE_REQUEST_TARGET_BRANCH_NAME":      "main",
			"CI_MERGE_REQUEST_TARGET_BRANCH_PROTECTED": "true",
			"CI_MERGE_REQUEST_DIFF_BASE_SHA":           "abc",
			"CI_MERGE_REQUEST_LABELS":                  "backend,needs review",
			"CI_MERGE_REQUEST_ASSIGNEES":               "ada,bob",
			"CI_MERGE_REQUEST_MILESTONE":               "v2",
			"CI_COMMIT_REF_PROTECTED":                  "false",
		}, []string{"CI_COMMIT_BRANCH", "CI_COMMIT_TAG", "CI_OPEN_MERGE_REQUESTS"}},
		{"plain http, a relative root, a top-level project", func(f *TodayFacts) {
			f.ServerURL, f.ProjectPath = "http://localhost/fennec", "api"
		}, map[string]string{
			"CI_SERVER_URL": "http://localhost/fennec", "CI_SERVER_PORT": "80", "CI_SERVER_HOST": "localhost",
			"CI_SERVER_FQDN": "localhost", "CI_API_V4_URL": "http://localhost/fennec/api/v4",
			"CI_PROJECT_NAMESPACE": "", "CI_PROJECT_ROOT_NAMESPACE": "api",
			"CI_PIPELINE_URL": "http://localhost/fennec/api/-/pipelines/42",
		}, nil},
		{"long title: the description is the whole message", func(f *TodayFacts) {
			f.CommitMessage = strings.Repeat("t", 100) + "\nbody"
		}, map[string]string{"CI_COMMIT_TITLE": strings.Repeat("t", 100), "CI_COMMIT_DESCRIPTION": strings.Repeat("t", 100) + "\nbody"}, nil},
		{"one-line message", func(f *TodayFacts) { f.CommitMessage = "Bump" },
			map[string]string{"CI_COMMIT_TITLE": "Bump", "CI_COMMIT_DESCRIPTION": ""}, nil},
		{"no server URL, nothing known", func(f *TodayFacts) { *f = TodayFacts{ServerURL: "not a url"} },
			map[string]string{}, []string{"CI_SERVER_URL", "CI_SERVER_HOST", "CI_PIPELINE_SOURCE", "CI_COMMIT_REF_PROTECTED",
				"CI_COMMIT_SHORT_SHA", "CI_PIPELINE_CREATED_AT", "CI_PROJECT_ROOT_NAMESPACE"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := base
			tc.facts(&f)
			got := todayMap(t, f)
			for k, v := range tc.want {
				if gv, ok := got[k]; !ok || gv != v {
					t.Errorf("%s = %q (set %v), want %q", k, gv, ok, v)
				}
			}
			for _, k := range tc.without {
				if v, ok := got[k]; ok {
					t.Errorf("%s = %q, want it left out", k, v)
				}
			}
		})
	}
}

func TestAddMissing(t *testing.T) {
	t.Parallel()
	predefined := Predefined(JobFacts{ProjectPath: "acme/api", RefName: "v1", IsTag: true, PipelineSource: SourcePush})
	today := TodayVariables(TodayFacts{ProjectPath: "acme/api", Ref: "v1", IsTag: true, Source: SourcePush, DefaultBranch: "main"})
	merged := AddMissing(predefined, today)
	count := map[string]int{}
	for _, v := range merged {
		count[v.Key]++
	}
	for _, k := range []string{"CI_COMMIT_TAG", "CI_PIPELINE_SOURCE", "CI_PROJECT_NAMESPACE", "CI_DEFAULT_BRANCH", "CI_PROJECT_ROOT_NAMESPACE"} {
		if count[k] != 1 {
			t.Errorf("%s appears %d times", k, count[k])
		}
	}
	if len(merged) != len(predefined)+3 { // default branch, protected, root namespace
		t.Errorf("%d variables from %d and %d", len(merged), len(predefined), len(today))
	}
}
