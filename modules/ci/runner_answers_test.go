package ci_test

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The runners' answers that no other test pins down to the byte, bodies
// and the headers a runner reads: since issue 36 the runners API is
// cicd.Service's runner commands, and the runner protocol's decisions live
// apart from its HTTP adapter, which maps their errors (the answers were
// built in the handlers before, and must not have moved).
func TestRunnerAnswers(t *testing.T) {
	t.Parallel()
	s := startRunners(t, runnerConfig(func(c *ci.Config) {
		c.RunnerPollTimeout = time.Second
		c.MaxArtifactsBytes = 4096
	}))
	c := s.Client
	alice := s.CreateUser(t, "alice")
	ap := stocktest.NewProject(t, alice.Client, "alpha", "private")
	ap2 := stocktest.NewProject(t, alice.Client, "beta", "private")
	full, _, _ := alice.Client.Projects.GetProject(ap.ID, nil)
	mine := registerRunner(t, s, full.RunnersToken, map[string]any{"description": "alice's"})
	if _, _, err := alice.Client.Runners.EnableProjectRunner(ap2.ID, &gitlab.EnableProjectRunnerOptions{RunnerID: mine.ID}); err != nil {
		t.Fatal(err)
	}
	call := func(token, method, path string, body any, headers ...string) (int, http.Header, string) {
		t.Helper()
		if token != "" {
			headers = append(headers, "PRIVATE-TOKEN", token)
		}
		code, h, raw := rawJSON(t, method, s.URL+"/api/v4/"+path, body, headers...)
		return code, h, strings.TrimSpace(string(raw))
	}
	runner := fmt.Sprintf("runners/%d", mine.ID)
	for _, tc := range []struct {
		name, token, method, path string
		body                      any
		code                      int
		want                      string
	}{
		{"an update of nothing", alice.Token, http.MethodPut, runner, map[string]any{}, 400,
			`{"error":"description, active, tag_list, run_untagged, locked are missing, at least one parameter must be provided"}`},
		{"a long description", alice.Token, http.MethodPut, runner, map[string]any{"description": strings.Repeat("d", 1025)}, 400,
			`{"message":{"description":["is too long (maximum is 1024 characters)"]}}`},
		{"a hostile tag", alice.Token, http.MethodPut, runner, map[string]any{"tag_list": []string{"a\x00b"}}, 400,
			`{"message":{"tags_list":["tag \"a\\x00b\" is invalid"]}}`},
		{"no tags, no untagged jobs", alice.Token, http.MethodPut, runner, map[string]any{"run_untagged": false, "tag_list": []string{}}, 400,
			`{"message":{"tags_list":["can not be empty when runner is not allowed to pick untagged jobs"]}}`},
		{"removed by a Master of two of its projects", alice.Token, http.MethodDelete, runner, nil, 403,
			`{"message":"403 Forbidden - Runner associated with more than one project"}`},
		{"a bad job status", alice.Token, http.MethodGet, runner + "/jobs?status=bogus", nil, 400,
			`{"error":"status does not have a valid value"}`},
		{"a scope of /runners/all on /runners", alice.Token, http.MethodGet, "runners?scope=shared", nil, 400,
			`{"error":"scope does not have a valid value"}`},
		{"every runner, for a user", alice.Token, http.MethodGet, "runners/all", nil, 403, `{"message":"403 Forbidden"}`},
		{"a new token, for a user", alice.Token, http.MethodPost, "runners/reset_registration_token", nil, 403, `{"message":"403 Forbidden"}`},
		{"a runner enabled twice", alice.Token, http.MethodPost, fmt.Sprintf("projects/%d/runners", ap2.ID), map[string]any{"runner_id": mine.ID}, 409,
			`{"message":"Runner was already enabled for this project"}`},
	} {
		if code, _, raw := call(tc.token, tc.method, tc.path, tc.body); code != tc.code || raw != tc.want {
			t.Errorf("%s: %d %s, want %d %s", tc.name, code, raw, tc.code, tc.want)
		}
	}
	// A tag_list element may itself list tags.
	if code, _, raw := call(alice.Token, http.MethodPut, runner, map[string]any{"tag_list": []string{"x,y", " z"}}); code != 200 ||
		!strings.Contains(raw, `"tag_list":["x","y","z"]`) {
		t.Errorf("tags in one element: %d %s", code, raw)
	}

	// The runner protocol, on a job handed out to a runner.
	shared := registerRunner(t, s, sharedToken(t, s), nil)
	p := stocktest.NewProject(t, c, "proto", "private")
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "build:\n  script: [echo build]\n"})
	var job *fakeJob
	for deadline := time.Now().Add(20 * time.Second); job == nil && time.Now().Before(deadline); {
		_, _, job = requestJob(t, s, shared.Token, "")
	}
	if job == nil {
		t.Fatal("no job handed out")
	}
	jobPath := fmt.Sprintf("jobs/%d", job.ID)
	trace := func(token, contentRange, data string) (int, http.Header, string) {
		req, _ := http.NewRequest(http.MethodPatch, s.URL+"/api/v4/"+jobPath+"/trace", strings.NewReader(data))
		req.Header.Set("JOB-TOKEN", token)
		if contentRange != "" {
			req.Header.Set("Content-Range", contentRange)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, strings.TrimSpace(string(raw))
	}
	upload := func(job *fakeJob, query string, withFile bool) (int, http.Header, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		if withFile {
			fw, _ := mw.CreateFormFile("file", "out.zip")
			_, _ = fw.Write([]byte("PK-zip"))
		}
		mw.Close()
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v4/jobs/%d/artifacts?%s", s.URL, job.ID, query), &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("JOB-TOKEN", job.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, strings.TrimSpace(string(raw))
	}
	type headers map[string]string
	check := func(name string, code int, h http.Header, raw string, wantCode int, want string, wantHeaders headers) {
		t.Helper()
		if code != wantCode || raw != want {
			t.Errorf("%s: %d %s, want %d %s", name, code, raw, wantCode, want)
		}
		for k, v := range wantHeaders {
			if got := h.Values(k); v == "" && len(got) != 0 || v != "" && (len(got) != 1 || got[0] != v) {
				t.Errorf("%s: header %s %q, want %q", name, k, got, v)
			}
		}
	}
	code, h, raw := trace("wrong", "0-1", "x\n")
	check("a trace with a wrong token", code, h, raw, 403, `{"message":"403 Forbidden"}`, nil)
	code, h, raw = call("", http.MethodPut, "jobs/notanumber", map[string]any{"token": job.Token, "state": "running"})
	check("a job path that is no id", code, h, raw, 404, `{"message":"404 Not Found"}`, nil)
	code, h, raw = call("", http.MethodPut, "jobs/999999", map[string]any{"token": job.Token, "state": "running"})
	check("no such job", code, h, raw, 404, `{"message":"404 Not Found"}`, nil)
	code, h, raw = trace(job.Token, "", "x\n")
	check("no Content-Range", code, h, raw, 400, `{"message":"400 Missing header Content-Range"}`, headers{"Job-Status": ""})
	code, h, raw = trace(job.Token, "x-y", "x\n")
	check("a bad Content-Range", code, h, raw, 400, `{"message":"400 Invalid header Content-Range"}`, nil)
	code, h, raw = trace(job.Token, "0-5", "hello\n")
	check("an append", code, h, raw, 202, "", headers{"Range": "0-6", "Job-Status": "running", "X-GitLab-Trace-Update-Interval": "1"})
	code, h, raw = trace(job.Token, "9-10", "x\n")
	check("a gap", code, h, raw, 416, `{"message":"416 Range Not Satisfiable"}`,
		headers{"Range": "0-6", "Job-Status": "running", "X-GitLab-Trace-Update-Interval": "1"})
	code, h, raw = call("", http.MethodPut, jobPath, map[string]any{"token": job.Token})
	check("a report without state", code, h, raw, 400, `{"error":"state is missing"}`, headers{"X-GitLab-Trace-Update-Interval": ""})
	code, h, raw = call("", http.MethodPut, jobPath, map[string]any{"token": job.Token, "state": "exploded"})
	check("a report of a bad state", code, h, raw, 400, `{"error":"state does not have a valid value"}`, headers{"X-GitLab-Trace-Update-Interval": ""})
	code, h, raw = call("", http.MethodPut, jobPath, map[string]any{"token": job.Token, "state": "success", "checksum": "crc32:deadbeef"})
	check("a wrong checksum", code, h, raw, 412, `{"message":"412 Precondition Failed - trace validation failed"}`,
		headers{"Job-Status": "running", "X-GitLab-Trace-Update-Interval": "1"})
	code, h, raw = upload(job, "expire_in=bogus", true)
	check("an archive with a bad expire_in", code, h, raw, 400, `{"error":"expire_in is invalid"}`, nil)
	code, h, raw = upload(job, "expire_in=1+day", false)
	check("no archive", code, h, raw, 400, `{"message":"400 (Bad request) \"file\" not given"}`, nil)
	code, h, raw = upload(job, "artifact_type=metadata", true)
	check("metadata", code, h, raw, 201, "", nil)
	code, h, raw = call("", http.MethodPut, jobPath, map[string]any{"token": job.Token, "state": "success"})
	check("the end", code, h, raw, 200, "", headers{"Job-Status": "success", "X-GitLab-Trace-Update-Interval": "1"})
	waitJobStatus(t, s, p.ID, job.ID, 5*time.Second, "success")
	code, h, raw = call("", http.MethodPut, jobPath, map[string]any{"token": job.Token, "state": "running"})
	check("a report on an ended job", code, h, raw, 403, `{"message":"403 Forbidden"}`, nil)
	code, h, raw = trace(job.Token, "6-7", "x\n")
	check("a trace of an ended job", code, h, raw, 403, `{"message":"403 Forbidden"}`, nil)

	// A job canceled here: its runner is told so, and stops.
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{"README": "again\n"})
	var next *fakeJob
	for deadline := time.Now().Add(20 * time.Second); next == nil && time.Now().Before(deadline); {
		_, _, next = requestJob(t, s, shared.Token, "")
	}
	if next == nil {
		t.Fatal("no second job handed out")
	}
	if _, _, err := c.Jobs.CancelJob(p.ID, next.ID); err != nil {
		t.Fatal(err)
	}
	code, h, raw = upload(next, "", true)
	check("an archive of a canceled job", code, h, raw, 403, `{"message":"403 Forbidden - Job is not running"}`, headers{"Job-Status": "canceled"})
	nextPath := fmt.Sprintf("jobs/%d", next.ID)
	code, h, raw = call("", http.MethodPut, nextPath, map[string]any{"token": next.Token, "state": "running"})
	check("a keep-alive of a canceled job", code, h, raw, 200, "", headers{"Job-Status": "canceling", "X-GitLab-Trace-Update-Interval": "1"})
	code, h, raw = call("", http.MethodPut, nextPath, map[string]any{"token": next.Token, "state": "failed"})
	check("the end of a canceled job", code, h, raw, 200, "", headers{"Job-Status": "canceled", "X-GitLab-Trace-Update-Interval": "1"})

	// A token set in the configuration is changed there.
	fixed := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnersRegistrationToken = "fixed-registration-token-0123456789" }))
	code, _, rawBytes := rawJSON(t, http.MethodPost, fixed.URL+"/api/v4/runners/reset_registration_token", nil, "PRIVATE-TOKEN", fixed.RootToken)
	if want := `{"message":"403 Forbidden - the registration token is set in the configuration (ci.runners_registration_token): change it there"}`; code != 403 || strings.TrimSpace(string(rawBytes)) != want {
		t.Errorf("reset of a configured token: %d %s, want 403 %s", code, rawBytes, want)
	}
}
