package ci_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// The answers of the pipeline, job and trigger commands that no other
// test pins down, exactly as GitLab words them: since issue 36 the
// service returns cicd's errors and the HTTP adapter maps each (the bodies
// were built in the handlers before, and must not have moved).
func TestCommandAnswers(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "answers", "private")
	bare := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{"README": "no CI file here\n"})
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("no-ci"), Ref: gitlab.Ptr(bare.ID)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("tags-only"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, c, p.ID, "tags-only", "ci", map[string]string{".gitlab-ci.yml": "release:\n  only: [tags]\n  script: [\"true\"]\n"})
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "ok:\n  script: [\"echo ok\"]\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline %s", pl.Status)
	}
	list, _, err := c.Jobs.ListPipelineJobs(p.ID, pl.ID, nil)
	if err != nil || len(list) != 1 {
		t.Fatalf("jobs %v %v", list, err)
	}
	job := list[0]

	call := func(token, method, path, body string) (int, string) {
		t.Helper()
		var headers []string
		if token != "" {
			headers = []string{"PRIVATE-TOKEN", token}
		}
		var resp *http.Response
		var raw []byte
		if body != "" {
			contentType := "application/x-www-form-urlencoded"
			if strings.HasPrefix(body, "{") {
				contentType = "application/json"
			}
			resp, raw = s.JSON(t, method, path, strings.NewReader(body), nil, append(headers, "Content-Type", contentType)...)
		} else {
			resp, raw = s.JSON(t, method, path, nil, nil, headers...)
		}
		return resp.StatusCode, strings.TrimSpace(string(raw))
	}
	project := fmt.Sprintf("/api/v4/projects/%d", p.ID)
	master2 := s.CreateUser(t, "")
	if _, _, err := c.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(master2.ID),
		AccessLevel: gitlab.Ptr(gitlab.MaintainerPermissions)}); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, token, method, path, body string
		code                            int
		want                            string
	}{
		{"no such pipeline", s.RootToken, http.MethodGet, project + "/pipelines/999999", "", 404, `{"message":"404 Pipeline Not Found"}`},
		{"retry a missing pipeline", s.RootToken, http.MethodPost, project + "/pipelines/999999/retry", "", 404, `{"message":"404 Pipeline Not Found"}`},
		{"no CI file", s.RootToken, http.MethodPost, project + "/pipeline", "ref=no-ci", 400, `{"message":{"base":["Missing .gitlab-ci.yml file"]}}`},
		{"no job for the ref", s.RootToken, http.MethodPost, project + "/pipeline", "ref=tags-only", 400, `{"message":{"base":["No stages / jobs for this pipeline."]}}`},
		{"no such ref", s.RootToken, http.MethodPost, project + "/pipeline", "ref=nowhere", 400, `{"message":{"base":["Reference not found"]}}`},
		{"no ref", s.RootToken, http.MethodPost, project + "/pipeline", "ref=%20", 400, `{"error":"ref is missing"}`},
		{"retry", s.RootToken, http.MethodPost, fmt.Sprintf("%s/jobs/%d/retry", project, job.ID), "", 201, ""},
		{"retry a retried job", s.RootToken, http.MethodPost, fmt.Sprintf("%s/jobs/%d/retry", project, job.ID), "", 403, `{"message":"403 Forbidden - Job is not retryable"}`},
		{"keep no artifacts", s.RootToken, http.MethodPost, fmt.Sprintf("%s/jobs/%d/artifacts/keep", project, job.ID), "", 404, `{"message":"404 Not Found"}`},
		{"no such job's trace", s.RootToken, http.MethodGet, project + "/jobs/999999/trace", "", 404, `{"message":"404 Job Not Found"}`},
		{"blank description", s.RootToken, http.MethodPost, project + "/triggers", "description=%20", 400, `{"message":{"description":["can't be blank"]}}`},
		{"long description", s.RootToken, http.MethodPost, project + "/triggers", "description=" + strings.Repeat("d", 256), 400,
			`{"message":{"description":["is too long (maximum is 255 characters)"]}}`},
		{"a variable without key and value", s.RootToken, http.MethodPost, project + "/variables", "protected=true", 400, `{"error":"key is missing, value is missing"}`},
		{"a variable without key", s.RootToken, http.MethodPost, project + "/variables", "value=x", 400, `{"error":"key is missing"}`},
		{"no such variable", s.RootToken, http.MethodGet, project + "/variables/NOPE", "", 404, `{"message":"404 Variable Not Found"}`},
		{"an environment", s.RootToken, http.MethodPost, project + "/environments", "name=staging", 201, ""},
		{"an environment without name", s.RootToken, http.MethodPost, project + "/environments", "external_url=https://x", 400, `{"error":"name is missing"}`},
		{"an environment's name twice", s.RootToken, http.MethodPost, project + "/environments", "name=staging", 400, `{"message":{"name":["has already been taken"]}}`},
		{"an environment's bad name", s.RootToken, http.MethodPost, project + "/environments", "name=/bad", 400,
			`{"message":{"name":["can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"]}}`},
		{"an environment's long name", s.RootToken, http.MethodPost, project + "/environments", "name=" + strings.Repeat("n", 256), 400,
			`{"message":{"name":["is too long (maximum is 255 characters)"]}}`},
		{"an environment's ftp URL", s.RootToken, http.MethodPost, project + "/environments", "name=x&external_url=ftp://x", 400,
			`{"message":{"external_url":["is blocked: Only allowed protocols are http, https"]}}`},
		{"an environment's long URL", s.RootToken, http.MethodPost, project + "/environments", "name=x&external_url=https://" + strings.Repeat("u", 250), 400,
			`{"message":{"external_url":["is too long (maximum is 255 characters)"]}}`},
		{"an environment's empty update", s.RootToken, http.MethodPut, project + "/environments/999999", "{}", 400,
			`{"message":"400 (Bad request) \"name, external_url\" are missing, at least one parameter must be provided"}`},
		{"no such environment", s.RootToken, http.MethodPut, project + "/environments/999999", "name=y", 404, `{"message":"404 Environment Not Found"}`},
		{"stop no such environment", s.RootToken, http.MethodPost, project + "/environments/999999/stop", "", 404, `{"message":"404 Environment Not Found"}`},
		{"no such deployment", s.RootToken, http.MethodGet, project + "/deployments/999999", "", 404, `{"message":"404 Deployment Not Found"}`},
		{"a trigger of nobody here", s.RootToken, http.MethodGet, project + "/triggers/999999", "", 404, `{"message":"404 Not found"}`},
	}
	for _, tc := range cases {
		code, raw := call(tc.token, tc.method, tc.path, tc.body)
		if code != tc.code || (tc.want != "" && raw != tc.want) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, code, raw, tc.code, tc.want)
		}
	}

	// A trigger: only its owner edits it; with the project's jobs off it
	// runs nothing.
	code, raw := call(s.RootToken, http.MethodPost, project+"/triggers", "description=deploy")
	if code != 201 {
		t.Fatalf("create trigger: %d %s", code, raw)
	}
	var id int64
	var token string
	if _, err := fmt.Sscanf(raw[strings.Index(raw, `"id":`):], `"id":%d`, &id); err != nil {
		t.Fatalf("trigger %s: %v", raw, err)
	}
	token = raw[strings.Index(raw, `"token":"`)+9:]
	token = token[:strings.Index(token, `"`)]
	if code, raw := call(master2.Token, http.MethodPut, fmt.Sprintf("%s/triggers/%d", project, id), "description=mine"); code != 403 || raw != `{"message":"403 Forbidden"}` {
		t.Errorf("another Master edits the trigger: %d %s", code, raw)
	}
	if _, _, err := c.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{JobsEnabled: gitlab.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if code, raw := call("", http.MethodPost, project+"/trigger/pipeline", "ref=master&token="+token); code != 400 || raw != `{"message":{"base":["Pipeline is disabled"]}}` {
		t.Errorf("trigger with jobs off: %d %s", code, raw)
	}
	if code, raw := call("", http.MethodPost, project+"/trigger/pipeline", "ref=master&token=nonsense"); code != 404 || raw != `{"message":"404 Not Found"}` {
		t.Errorf("unknown token: %d %s", code, raw)
	}
}
