package ci_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// POST /ci/lint answers what pipeline creation would find in a file: the
// parser's first error, or the job limit (ci.max_pipeline_jobs) for the
// jobs of a branch push; no credentials needed, 200 either way.
func TestLint(t *testing.T) {
	t.Parallel()
	s := startRunners(t, fennectest.WithModuleConfig(ci.SectionName, func(c *ci.Config) { c.MaxPipelineJobs = 3 }))
	lint := func(body string, headers ...string) (int, string) {
		t.Helper()
		resp, raw := s.JSON(t, http.MethodPost, "/api/v4/ci/lint", strings.NewReader(body), nil,
			append([]string{"Content-Type", "application/json"}, headers...)...)
		return resp.StatusCode, strings.TrimSpace(string(raw))
	}
	content := func(yml string) string {
		b, _ := json.Marshal(map[string]string{"content": yml})
		return string(b)
	}
	four := "a: {script: x}\nb: {script: x}\nc: {script: x, only: [tags]}\nd: {script: x, only: [tags]}\n"
	for _, tc := range []struct{ yml, want string }{
		{"test:\n  script: [\"true\"]\n", `{"status":"valid","errors":[]}`},
		{"rspec: {script: x, foo: 1}\n", `{"status":"invalid","errors":["jobs:rspec config contains unknown keys: foo"]}`},
		{"stages: [a]\n", `{"status":"invalid","errors":["jobs config should contain at least one visible job"]}`},
		{"", `{"status":"invalid","errors":["Please provide content of .gitlab-ci.yml"]}`},
		{"  \n", `{"status":"invalid","errors":["Please provide content of .gitlab-ci.yml"]}`},
		// The job limit: four jobs, two of them for tags only, make a
		// branch pipeline of two.
		{four, `{"status":"valid","errors":[]}`},
		{four + "e: {script: x}\nf: {script: x}\n", `{"status":"invalid","errors":["jobs config holds 4 jobs for this pipeline, more than the limit of 3"]}`},
	} {
		if code, got := lint(content(tc.yml)); code != 200 || got != tc.want {
			t.Errorf("lint %q: %d %s, want %s", tc.yml, code, got, tc.want)
		}
	}
	// A form body, as curl --form sends it, and a user's token: the same.
	resp, raw := s.JSON(t, http.MethodPost, "/api/v4/ci/lint?private_token="+s.RootToken, strings.NewReader("content=test%3A%0A++script%3A+x%0A"), nil,
		"Content-Type", "application/x-www-form-urlencoded")
	if resp.StatusCode != 200 || strings.TrimSpace(string(raw)) != `{"status":"valid","errors":[]}` {
		t.Fatalf("form: %d %s", resp.StatusCode, raw)
	}
	if code, got := lint(`{}`); code != 400 || got != `{"error":"content is missing"}` {
		t.Fatalf("no content: %d %s", code, got)
	}

	// GET /projects/:id/ci/lint checks the project's file at a ref for
	// that ref's pipeline: the tag gets the tag-only jobs too.
	c := s.Client
	p := stocktest.NewProject(t, c, "linted", "private")
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": four})
	if _, _, err := c.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	root := []string{"PRIVATE-TOKEN", s.RootToken}
	for _, tc := range []struct{ query, want string }{
		{"", `{"valid":true,"errors":[],"warnings":[]}`},
		{"?ref=master", `{"valid":true,"errors":[],"warnings":[]}`},
		{"?ref=v1", `{"valid":false,"errors":["jobs config holds 4 jobs for this pipeline, more than the limit of 3"],"warnings":[]}`},
	} {
		resp, raw := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/ci/lint%s", p.ID, tc.query), nil, nil, root...)
		if resp.StatusCode != 200 || strings.TrimSpace(string(raw)) != tc.want {
			t.Errorf("project lint%s: %d %s, want %s", tc.query, resp.StatusCode, raw, tc.want)
		}
	}
	resp, raw = s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/ci/lint?ref=nothing", p.ID), nil, nil, root...)
	if resp.StatusCode != 404 || strings.TrimSpace(string(raw)) != `{"message":"404 Commit Not Found"}` {
		t.Fatalf("project lint of no ref: %d %s", resp.StatusCode, raw)
	}
	// The project is private: an outsider sees no project.
	other := s.CreateUser(t, "")
	resp, raw = s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/ci/lint", p.ID), nil, nil, "PRIVATE-TOKEN", other.Token)
	if resp.StatusCode != 404 || strings.TrimSpace(string(raw)) != `{"message":"404 Project Not Found"}` {
		t.Fatalf("project lint by an outsider: %d %s", resp.StatusCode, raw)
	}
}
