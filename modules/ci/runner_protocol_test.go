package ci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// fakeJob is a job as POST /jobs/request hands it out.
type fakeJob struct {
	ID      int64  `json:"id"`
	Token   string `json:"token"`
	GitInfo struct {
		RepoURL string `json:"repo_url"`
		Ref     string `json:"ref"`
		SHA     string `json:"sha"`
		RefType string `json:"ref_type"`
	} `json:"git_info"`
	RunnerInfo struct {
		Timeout int64 `json:"timeout"`
	} `json:"runner_info"`
	Variables []struct {
		Key, Value     string
		Public, Masked bool
	} `json:"variables"`
	Steps []struct {
		Name         string   `json:"name"`
		Script       []string `json:"script"`
		When         string   `json:"when"`
		AllowFailure bool     `json:"allow_failure"`
	} `json:"steps"`
	Artifacts []struct {
		Name     string   `json:"name"`
		Paths    []string `json:"paths"`
		ExpireIn string   `json:"expire_in"`
	} `json:"artifacts"`
	Dependencies []struct {
		ID            int64  `json:"id"`
		Token         string `json:"token"`
		Name          string `json:"name"`
		ArtifactsFile struct {
			Filename string `json:"filename"`
			Size     int64  `json:"size"`
		} `json:"artifacts_file"`
	} `json:"dependencies"`
}

func (j *fakeJob) variable(key string) (string, bool, bool) {
	for _, v := range j.Variables {
		if v.Key == key {
			return v.Value, v.Public, true
		}
	}
	return "", false, false
}

// masked says whether the runner is to mask a variable in the trace.
func (j *fakeJob) masked(key string) (masked, ok bool) {
	for _, v := range j.Variables {
		if v.Key == key {
			return v.Masked, true
		}
	}
	return false, false
}

// requestJob is one POST /jobs/request as a runner sends it.
func requestJob(t testing.TB, s *fennectest.Server, token, lastUpdate string) (int, http.Header, *fakeJob) {
	t.Helper()
	code, h, j, err := askJob(s, token, lastUpdate)
	if err != nil {
		t.Fatal(err)
	}
	return code, h, j
}

// answered is how a request made off the test's goroutine ended: its
// status, or its error (such a goroutine must not call t.Fatal, and may
// outlive the test, so must not call t.Error either).
type answered struct {
	code int
	err  error
}

// askJob is requestJob that returns its error: for goroutines of a test,
// which must not call t.Fatal.
func askJob(s *fennectest.Server, token, lastUpdate string) (int, http.Header, *fakeJob, error) {
	body := map[string]any{"token": token, "info": map[string]any{"name": "fake-runner", "version": "17.5.5", "executor": "shell"}}
	if lastUpdate != "" {
		body["last_update"] = lastUpdate
	}
	code, h, raw, err := sendJSON(http.MethodPost, s.URL+"/api/v4/jobs/request", body)
	if err != nil || code != http.StatusCreated {
		return code, h, nil, err
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		return code, h, nil, fmt.Errorf("job content type %q", ct)
	}
	var j fakeJob
	if err := json.Unmarshal(raw, &j); err != nil {
		return code, h, nil, err
	}
	return code, h, &j, nil
}

func patchTrace(t testing.TB, s *fennectest.Server, job int64, token, contentRange, data string) (int, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/api/v4/jobs/%d/trace", s.URL, job), strings.NewReader(data))
	req.Header.Set("Content-Type", "text/plain")
	if token != "" {
		req.Header.Set("JOB-TOKEN", token)
	}
	if contentRange != "" {
		req.Header.Set("Content-Range", contentRange)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

func uploadArtifacts(t testing.TB, s *fennectest.Server, job int64, token string, content []byte, field string) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if field != "" {
		fw, _ := mw.CreateFormFile(field, "artifacts.zip")
		_, _ = fw.Write(content)
	}
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v4/jobs/%d/artifacts?artifact_format=zip&artifact_type=archive&expire_in=1+day", s.URL, job), io.MultiReader(&buf))
	req.ContentLength = -1 // chunked, as the runner's uploader sends it
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("JOB-TOKEN", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func TestRunnerRegistration(t *testing.T) {
	t.Parallel()
	s := startRunners(t)
	c := s.Client
	shared := sharedToken(t, s)
	url := s.URL + "/api/v4/runners"
	countRunners := func() int {
		list, _, err := c.Runners.ListAllRunners(nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	for _, tc := range []struct {
		name string
		body any
		code int
		want string
	}{
		{"no token", map[string]any{"description": "x"}, 400, `{"error":"token is missing"}`},
		{"bad token", map[string]any{"token": "nope"}, 403, `{"message":"403 Forbidden"}`},
		{"empty token", map[string]any{"token": ""}, 400, `{"error":"token is missing"}`},
		{"untagged refused without tags", map[string]any{"token": shared, "run_untagged": false}, 400,
			`{"message":{"tags_list":["can not be empty when runner is not allowed to pick untagged jobs"]}}`},
		{"huge description", map[string]any{"token": shared, "description": strings.Repeat("d", 5000)}, 400,
			`{"message":{"description":["is too long (maximum is 1024 characters)"]}}`},
		{"hostile tag", map[string]any{"token": shared, "tag_list": []string{"a\x00b"}}, 400,
			`{"message":{"tags_list":["tag \"a\\x00b\" is invalid"]}}`},
		{"too many tags", map[string]any{"token": shared, "tag_list": manyTags(101)}, 400,
			`{"message":{"tags_list":["at most 100 tags"]}}`},
		{"tags of the wrong type", map[string]any{"token": shared, "tag_list": 7}, 400, ""},
	} {
		code, _, raw := rawJSON(t, http.MethodPost, url, tc.body)
		if code != tc.code || (tc.want != "" && string(raw) != tc.want) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, code, raw, tc.code, tc.want)
		}
	}
	if code, _, raw := rawJSON(t, http.MethodPost, url, nil, "Content-Type", "application/json"); code != 400 {
		t.Errorf("empty body: %d %s", code, raw)
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{not json"))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
		t.Errorf("malformed body: %v %v", err, resp.StatusCode)
	}
	if n := countRunners(); n != 0 {
		t.Fatalf("refused registrations stored %d runners", n)
	}

	// A shared runner, tags as a comma-separated string.
	r := registerRunner(t, s, shared, map[string]any{"tag_list": "docker, linux,docker", "locked": true,
		"info": map[string]any{"name": "gitlab-runner", "version": "17.5.5", "platform": "linux", "architecture": "amd64"}})
	d, _, err := c.Runners.GetRunnerDetails(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !d.IsShared || !d.Locked || !d.RunUntagged || !d.Active || d.Name != "gitlab-runner" || d.Version != "17.5.5" ||
		strings.Join(d.TagList, ",") != "docker,linux" || d.Description != "test runner" {
		t.Fatalf("details %+v", d)
	}
	// Paused, as later runners (gitlab-runner 17) say it: it wins over
	// active when both come.
	for _, tc := range []struct {
		fields map[string]any
		active bool
	}{
		{map[string]any{"paused": true}, false},
		{map[string]any{"paused": "true", "active": true}, false},
		{map[string]any{"paused": false, "active": false}, true},
		{map[string]any{"active": false}, false},
		{nil, true},
	} {
		pr := registerRunner(t, s, shared, tc.fields)
		if d, _, err := c.Runners.GetRunnerDetails(pr.ID); err != nil || d.Active != tc.active {
			t.Errorf("registered with %v: %v, active %v, want %v", tc.fields, err, d != nil && d.Active, tc.active)
		}
	}
	// A project's runner, with its runners_token.
	p := stocktest.NewProject(t, c, "regs", "private")
	full, _, _ := c.Projects.GetProject(p.ID, nil)
	pr := registerRunner(t, s, full.RunnersToken, nil)
	d, _, err = c.Runners.GetRunnerDetails(pr.ID)
	if err != nil || d.IsShared || len(d.Projects) != 1 || d.Projects[0].ID != p.ID || d.Projects[0].PathWithNamespace != p.PathWithNamespace {
		t.Fatalf("project runner %v %+v", err, d)
	}

	verify := s.URL + "/api/v4/runners/verify"
	if code, _, raw := rawJSON(t, http.MethodPost, verify, map[string]any{"token": r.Token}); code != 200 || len(raw) != 0 {
		t.Errorf("verify: %d %q", code, raw)
	}
	if code, _, raw := rawJSON(t, http.MethodPost, verify, map[string]any{"token": "unknown"}); code != 403 || string(raw) != `{"message":"403 Forbidden"}` {
		t.Errorf("verify unknown: %d %s", code, raw)
	}
	if code, _, _ := rawJSON(t, http.MethodPost, verify, map[string]any{}); code != 400 {
		t.Errorf("verify without token: %d", code)
	}
	if code, _, raw := rawJSON(t, http.MethodDelete, url, map[string]any{"token": r.Token}); code != 204 || len(raw) != 0 {
		t.Errorf("unregister: %d %s", code, raw)
	}
	if code, _, _ := rawJSON(t, http.MethodPost, verify, map[string]any{"token": r.Token}); code != 403 {
		t.Errorf("verify after unregister: %d", code)
	}
	if code, _, _ := rawJSON(t, http.MethodDelete, url, map[string]any{"token": r.Token}); code != 403 {
		t.Errorf("unregister twice: %d", code)
	}

	// A new shared token: only administrators make one, the old one stops.
	bob := s.CreateUser(t, "bob")
	if code, _, _ := rawJSON(t, http.MethodPost, s.URL+"/api/v4/runners/reset_registration_token", nil, "PRIVATE-TOKEN", bob.Token); code != 403 {
		t.Errorf("bob resets the token: %d", code)
	}
	code, _, raw := rawJSON(t, http.MethodPost, s.URL+"/api/v4/runners/reset_registration_token", nil, "PRIVATE-TOKEN", s.RootToken)
	var fresh struct{ Token string }
	if code != 201 || json.Unmarshal(raw, &fresh) != nil || fresh.Token == "" || fresh.Token == shared || fresh.Token != sharedToken(t, s) {
		t.Fatalf("reset: %d %s", code, raw)
	}
	if code, _, _ := rawJSON(t, http.MethodPost, url, map[string]any{"token": shared}); code != 403 {
		t.Errorf("old shared token still registers: %d", code)
	}
	registerRunner(t, s, fresh.Token, nil)
}

// The job protocol as a runner speaks it, request by request: long
// polling, the job payload, trace appends, keep-alive, the final state
// with its checksum, artifacts, and job tokens that end with their job.
func TestRunnerJobProtocol(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	s := startRunners(t, runnerConfig(func(c *ci.Config) {
		c.RunnerPollTimeout = time.Second
		c.MaxArtifactsBytes = 4096
	}))
	c := s.Client
	p := stocktest.NewProject(t, c, "proto", "private")
	r := registerRunner(t, s, sharedToken(t, s), map[string]any{"description": "fake"})

	// Nothing to do: the request waits the poll timeout, then 204.
	began := time.Now()
	code, h, _ := requestJob(t, s, r.Token, "")
	if code != 204 || time.Since(began) < 900*time.Millisecond || h.Get("X-GitLab-Last-Update") == "" {
		t.Fatalf("idle request: %d after %v, last update %q", code, time.Since(began), h.Get("X-GitLab-Last-Update"))
	}
	if code, _, _ := requestJob(t, s, "not-a-runner", ""); code != 403 {
		t.Errorf("unknown runner: %d", code)
	}
	if code, _, raw := rawJSON(t, http.MethodPost, s.URL+"/api/v4/jobs/request", map[string]any{}); code != 400 || string(raw) != `{"error":"token is missing"}` {
		t.Errorf("no token: %d %s", code, raw)
	}

	// Malformed and oversized bodies.
	for _, path := range []string{"/jobs/request", "/runners", "/runners/verify"} {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/api/v4"+path, strings.NewReader(`{"token": [`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || string(raw) != `{"error":"body is invalid"}` {
			t.Errorf("%s malformed: %d %s", path, resp.StatusCode, raw)
		}
		big := `{"token":"` + strings.Repeat("a", 2<<20) + `"}`
		if code, _, _ := rawJSON(t, http.MethodPost, s.URL+"/api/v4"+path, json.RawMessage(big)); code != 413 {
			t.Errorf("%s oversized: %d", path, code)
		}
	}

	// Secret variables: masked in the trace from 8 characters on (a
	// runner masks every occurrence, however short).
	for k, v := range map[string]string{"TINY_SECRET": "1", "SHORT_SECRET": "1234567", "LONG_SECRET": "12345678"} {
		if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr(k), Value: gitlab.Ptr(v)}); err != nil {
			t.Fatal(err)
		}
	}

	// A waiting request is answered as soon as a job is pending.
	type answer struct {
		job *fakeJob
		err error
	}
	got := make(chan answer, 1)
	waitStarted := time.Now()
	lastUpdate := h.Get("X-GitLab-Last-Update")
	go func() {
		for {
			code, _, j, err := askJob(s, r.Token, lastUpdate)
			if err != nil || code != 204 || time.Since(waitStarted) > 30*time.Second {
				if err == nil && code != 201 {
					err = fmt.Errorf("the waiting request got %d", code)
				}
				got <- answer{j, err}
				return
			}
		}
	}()
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `
before_script: [echo before]
after_script: [echo after]
variables: {YAML_VAR: from-yaml}
stages: [build, test]
build:
  stage: build
  script: [echo build]
  artifacts: {name: myart, paths: [out/], expire_in: 1 week}
test:
  stage: test
  script: [echo test]
`})
	created := time.Now()
	a := <-got
	if a.err != nil || a.job == nil {
		t.Fatalf("no job handed out: %v", a.err)
	}
	job := a.job
	t.Logf("job handed out %v after the commit", time.Since(created).Round(time.Millisecond))
	if job.GitInfo.SHA != commit.ID || job.GitInfo.Ref != "master" || job.GitInfo.RefType != "branch" ||
		!strings.Contains(job.GitInfo.RepoURL, "gitlab-ci-token:"+job.Token+"@") || !strings.HasSuffix(job.GitInfo.RepoURL, "/"+p.PathWithNamespace+".git") {
		t.Errorf("git_info %+v", job.GitInfo)
	}
	if job.RunnerInfo.Timeout != 3600 {
		t.Errorf("timeout %d", job.RunnerInfo.Timeout)
	}
	for key, want := range map[string]string{"CI_JOB_ID": store.IDString(job.ID), "CI_JOB_NAME": "build", "CI_COMMIT_SHA": commit.ID,
		"CI_RUNNER_ID": store.IDString(r.ID), "CI_RUNNER_DESCRIPTION": "fake", "YAML_VAR": "from-yaml", "CI_PROJECT_PATH": p.PathWithNamespace,
		"CI_JOB_TOKEN": job.Token, "GITLAB_CI": "true"} {
		if v, _, ok := job.variable(key); !ok || v != want {
			t.Errorf("variable %s = %q, want %q", key, v, want)
		}
	}
	if _, public, _ := job.variable("CI_JOB_TOKEN"); public {
		t.Errorf("CI_JOB_TOKEN is public")
	}
	for key, want := range map[string]bool{"CI_JOB_TOKEN": true, "CI_BUILD_TOKEN": true, "CI_REPOSITORY_URL": true, "YAML_VAR": false,
		"TINY_SECRET": false, "SHORT_SECRET": false, "LONG_SECRET": true} {
		if masked, ok := job.masked(key); !ok || masked != want {
			t.Errorf("variable %s: present %v, masked %v, want masked %v", key, ok, masked, want)
		}
	}
	if v, public, _ := job.variable("TINY_SECRET"); v != "1" || public {
		t.Errorf("TINY_SECRET = %q, public %v", v, public)
	}
	if len(job.Steps) != 2 || strings.Join(job.Steps[0].Script, ";") != "echo before;echo build" || job.Steps[0].Name != "script" ||
		job.Steps[1].Name != "after_script" || job.Steps[1].When != "always" || strings.Join(job.Steps[1].Script, ";") != "echo after" {
		t.Errorf("steps %+v", job.Steps)
	}
	if len(job.Artifacts) != 1 || job.Artifacts[0].Name != "myart" || job.Artifacts[0].ExpireIn != "1 week" || job.Artifacts[0].Paths[0] != "out/" {
		t.Errorf("artifacts %+v", job.Artifacts)
	}
	waitJobStatus(t, s, p.ID, job.ID, 5*time.Second, "running")

	// Trace: appends at the end, 416 elsewhere, the headers a runner reads.
	if code, _ := patchTrace(t, s, job.ID, "", "0-4", "hello"); code != 403 {
		t.Errorf("no token: %d", code)
	}
	if code, _ := patchTrace(t, s, job.ID, "wrong", "0-4", "hello"); code != 403 {
		t.Errorf("wrong token: %d", code)
	}
	if code, _ := patchTrace(t, s, 999999, job.Token, "0-4", "hello"); code != 404 {
		t.Errorf("unknown job: %d", code)
	}
	if code, _ := patchTrace(t, s, job.ID, job.Token, "", "hello"); code != 400 {
		t.Errorf("no Content-Range: %d", code)
	}
	if code, _ := patchTrace(t, s, job.ID, job.Token, "x-y", "hello"); code != 400 {
		t.Errorf("bad Content-Range: %d", code)
	}
	code, h = patchTrace(t, s, job.ID, job.Token, "0-5", "hello\n")
	if code != 202 || h.Get("Range") != "0-6" || h.Get("Job-Status") != "running" || h.Get("X-GitLab-Trace-Update-Interval") != "1" {
		t.Fatalf("append: %d %v", code, h)
	}
	code, h = patchTrace(t, s, job.ID, job.Token, "20-25", "later\n")
	if code != 416 || h.Get("Range") != "0-6" {
		t.Errorf("gap: %d %q", code, h.Get("Range"))
	}
	if code, h = patchTrace(t, s, job.ID, job.Token, "6-11", "world\n"); code != 202 || h.Get("Range") != "0-12" {
		t.Errorf("second append: %d %v", code, h)
	}
	waitTrace(t, c, p.ID, job.ID, "hello\nworld\n")
	put := func(body map[string]any) (int, http.Header) {
		code, h, _ := rawJSON(t, http.MethodPut, fmt.Sprintf("%s/api/v4/jobs/%d", s.URL, job.ID), body)
		return code, h
	}
	if code, h := put(map[string]any{"token": job.Token, "state": "running"}); code != 200 || h.Get("Job-Status") != "running" {
		t.Errorf("keep-alive: %d %v", code, h)
	}
	if code, _ := put(map[string]any{"token": job.Token, "state": "exploded"}); code != 400 {
		t.Errorf("bad state: %d", code)
	}
	if code, _ := put(map[string]any{"token": "wrong", "state": "success"}); code != 403 {
		t.Errorf("wrong token: %d", code)
	}

	// Artifacts: too large, no file, then the archive.
	if code, raw := uploadArtifacts(t, s, job.ID, job.Token, bytes.Repeat([]byte("x"), 5000), "file"); code != 413 || string(raw) != `{"message":"413 Request Entity Too Large"}` {
		t.Errorf("too large: %d %s", code, raw)
	}
	if code, _ := uploadArtifacts(t, s, job.ID, job.Token, nil, ""); code != 400 {
		t.Errorf("no file: %d", code)
	}
	if code, _ := uploadArtifacts(t, s, job.ID, "wrong", []byte("zip"), "file"); code != 403 {
		t.Errorf("wrong token: %d", code)
	}
	archive := []byte("PK-not-really-a-zip")
	if code, raw := uploadArtifacts(t, s, job.ID, job.Token, archive, "file"); code != 201 || !strings.Contains(string(raw), `"artifacts_file":{"filename":"artifacts.zip","size":19}`) {
		t.Fatalf("upload: %d %s", code, raw)
	}

	// The final state: a wrong checksum is refused (412), the right one
	// ends the job.
	trace := "hello\nworld\n"
	sum := fmt.Sprintf("crc32:%08x", crc32.ChecksumIEEE([]byte(trace)))
	if code, _ := put(map[string]any{"token": job.Token, "state": "success", "checksum": "crc32:deadbeef", "output": map[string]any{"checksum": "crc32:deadbeef", "bytesize": len(trace)}}); code != 412 {
		t.Errorf("wrong checksum: %d", code)
	}
	if code, _ := put(map[string]any{"token": job.Token, "state": "success", "output": map[string]any{"checksum": sum, "bytesize": len(trace) + 1}}); code != 412 {
		t.Errorf("wrong size: %d", code)
	}
	if code, h := put(map[string]any{"token": job.Token, "state": "success", "exit_code": 0, "output": map[string]any{"checksum": sum, "bytesize": len(trace)}}); code != 200 || h.Get("Job-Status") != "success" {
		t.Fatalf("final update: %d %v", code, h)
	}
	done := waitJobStatus(t, s, p.ID, job.ID, 5*time.Second, "success")
	if rn, _ := done["runner"].(map[string]any); rn == nil || rn["id"] != float64(r.ID) || rn["description"] != "fake" || rn["is_shared"] != true {
		t.Errorf("runner field %v", done["runner"])
	}

	// The next stage's job depends on the archive, downloaded with its own
	// token while it runs; the first job's token is dead.
	_, _, next := requestJob(t, s, r.Token, "")
	if next == nil || len(next.Dependencies) != 1 || next.Dependencies[0].ID != job.ID || next.Dependencies[0].Name != "build" ||
		next.Dependencies[0].Token != next.Token || next.Dependencies[0].ArtifactsFile.Filename != "artifacts.zip" || next.Dependencies[0].ArtifactsFile.Size != 19 {
		t.Fatalf("dependent job: %+v", next)
	}
	download := func(token string) (int, []byte) {
		code, _, raw := rawJSON(t, http.MethodGet, fmt.Sprintf("%s/api/v4/jobs/%d/artifacts?direct_download=true", s.URL, job.ID), nil, "JOB-TOKEN", token)
		return code, raw
	}
	if code, raw := download(next.Token); code != 200 || !bytes.Equal(raw, archive) {
		t.Errorf("dependency download: %d %q", code, raw)
	}
	if code, _ := download(job.Token); code != 403 {
		t.Errorf("a finished job's token downloads: %d", code)
	}
	if code, _ := patchTrace(t, s, job.ID, job.Token, "12-13", "x\n"); code != 403 {
		t.Errorf("a finished job's token appends: %d", code)
	}
	if _, err := tryGit(t.TempDir(), "ls-remote", job.GitInfo.RepoURL); err == nil {
		t.Errorf("a finished job's token clones")
	}
	if _, err := tryGit(t.TempDir(), "ls-remote", next.GitInfo.RepoURL); err != nil {
		t.Errorf("a running job's token does not clone: %v", err)
	}
	// Failed with a reason and an exit code.
	code, _, _ = rawJSON(t, http.MethodPut, fmt.Sprintf("%s/api/v4/jobs/%d", s.URL, next.ID), map[string]any{"token": next.Token, "state": "failed", "failure_reason": "script_failure", "exit_code": 3})
	if code != 200 {
		t.Fatalf("failed update: %d", code)
	}
	waitJobStatus(t, s, p.ID, next.ID, 5*time.Second, "failed")
	if code, _ := download(next.Token); code != 403 {
		t.Errorf("a failed job's token downloads: %d", code)
	}
}

// Many runners polling at once for one job: one gets it (201), the others
// 204 at the end of their wait.
func TestRunnerContentionOneWinner(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	// Long enough for the pipeline to be made while all ten wait.
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerPollTimeout = 5 * time.Second }))
	c := s.Client
	p := stocktest.NewProject(t, c, "contention", "private")
	shared := sharedToken(t, s)
	var tokens []string
	for range 10 {
		tokens = append(tokens, registerRunner(t, s, shared, nil).Token)
	}
	var mu sync.Mutex
	codes := map[int]int{}
	var errs []error // no t.Fatal nor t.Error off the test's goroutine
	var wg sync.WaitGroup
	for _, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, _, err := askJob(s, tok, "")
			mu.Lock()
			codes[code]++
			if err != nil {
				errs = append(errs, err)
			}
			mu.Unlock()
		}()
	}
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "one:\n  script: [echo one]\n"})
	wg.Wait()
	if codes[201] != 1 || codes[204] != 9 {
		t.Fatalf("answers %v, errors %v", codes, errs)
	}
}

// Which runner may take which job: tags, run_untagged, shared runners and
// the project's switch, project runners, paused runners.
func TestRunnerMatching(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	// The jobs are pending before any request: a request that may take a
	// job gets it at once, one that may not waits the whole poll timeout,
	// and a paused runner's is answered at once, well within it.
	const poll = 2 * time.Second
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerPollTimeout = poll }))
	c := s.Client
	shared := sharedToken(t, s)
	p := stocktest.NewProject(t, c, "match", "private")
	other := stocktest.NewProject(t, c, "other", "private")
	full, _, _ := c.Projects.GetProject(other.ID, nil)
	tagged := registerRunner(t, s, shared, map[string]any{"tag_list": []string{"gpu"}, "run_untagged": false})
	otherRunner := registerRunner(t, s, full.RunnersToken, nil)
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "plain:\n  script: [echo plain]\ngpu:\n  tags: [gpu]\n  script: [echo gpu]\nboth:\n  tags: [gpu, cuda]\n  script: [echo both]\n"})
	waitPipeline(t, c, p.ID, commit.ID, "pending")
	// The tagged runner takes the gpu job only; the other project's runner
	// takes nothing here.
	code, _, j := requestJob(t, s, tagged.Token, "")
	if code != 201 {
		t.Fatalf("tagged runner: %d", code)
	}
	if v, _, _ := j.variable("CI_JOB_NAME"); v != "gpu" {
		t.Fatalf("tagged runner got %q", v)
	}
	if code, _, _ := requestJob(t, s, tagged.Token, ""); code != 204 {
		t.Errorf("tagged runner took more: %d", code)
	}
	if code, _, _ := requestJob(t, s, otherRunner.Token, ""); code != 204 {
		t.Errorf("another project's runner took a job: %d", code)
	}
	// A project that refuses shared runners gets none.
	if _, _, err := c.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{Name: gitlab.Ptr(p.Name), SharedRunnersEnabled: gitlab.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	untagged := registerRunner(t, s, shared, nil)
	if code, _, _ := requestJob(t, s, untagged.Token, ""); code != 204 {
		t.Errorf("shared runner on a project without shared runners: %d", code)
	}
	// Enabled on the project, the other project's runner takes its
	// untagged job; paused, it takes nothing.
	if _, _, err := c.Runners.EnableProjectRunner(p.ID, &gitlab.EnableProjectRunnerOptions{RunnerID: otherRunner.ID}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Runners.UpdateRunnerDetails(otherRunner.ID, &gitlab.UpdateRunnerDetailsOptions{Active: gitlab.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if code, _, _ := requestJob(t, s, otherRunner.Token, ""); code != 204 || time.Since(began) > poll/2 {
		t.Errorf("paused runner: %d after %v, not at once (poll timeout %v)", code, time.Since(began), poll)
	}
	if _, _, err := c.Runners.UpdateRunnerDetails(otherRunner.ID, &gitlab.UpdateRunnerDetailsOptions{Active: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	code, _, j = requestJob(t, s, otherRunner.Token, "")
	if v, _, _ := j.variable("CI_JOB_NAME"); code != 201 || v != "plain" {
		t.Errorf("enabled runner: %d %q", code, v)
	}
}

// A job handed to a runner that never reports is queued again after the
// start timeout and taken by another; the first runner's token is dead.
func TestRunnerNeverStartedJobRequeued(t *testing.T) {
	t.Parallel()
	// Short, yet long enough for the second runner to report on the job
	// it gets before that job is queued again in turn.
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerStartTimeout = 2 * time.Second }))
	c := s.Client
	p := stocktest.NewProject(t, c, "requeue", "private")
	shared := sharedToken(t, s)
	lost := registerRunner(t, s, shared, nil)
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "one:\n  script: [echo one]\n"})
	waitPipeline(t, c, p.ID, commit.ID, "pending")
	_, _, first := requestJob(t, s, lost.Token, "")
	if first == nil {
		t.Fatal("no job")
	}
	waitJobStatus(t, s, p.ID, first.ID, 30*time.Second, "pending")
	second := registerRunner(t, s, shared, nil)
	_, _, again := requestJob(t, s, second.Token, "")
	if again == nil || again.ID != first.ID || again.Token == first.Token {
		t.Fatalf("requeued job: %+v", again)
	}
	// The new runner's first report at once: it starts the job for good.
	if code, h := patchTrace(t, s, again.ID, again.Token, "0-1", "x\n"); code != 202 || h.Get("Job-Status") != "running" {
		t.Errorf("the new runner's report: %d", code)
	}
	if code, _ := patchTrace(t, s, first.ID, first.Token, "0-1", "x\n"); code != 403 {
		t.Errorf("the lost runner's token still reports: %d", code)
	}
	j := waitJobStatus(t, s, p.ID, first.ID, 10*time.Second, "running")
	if rn, _ := j["runner"].(map[string]any); rn == nil || rn["id"] != float64(second.ID) {
		t.Errorf("runner %v", j["runner"])
	}
}

// A runner's request waiting for a job does not hold up the server's
// shutdown for its 50 s: it is answered 204 as the server stops.
func TestRunnerLongPollEndsWithTheServer(t *testing.T) {
	t.Parallel()
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerPollTimeout = 50 * time.Second }))
	r := registerRunner(t, s, sharedToken(t, s), nil)
	done := make(chan answered, 1)
	go func() {
		code, _, _, err := askJob(s, r.Token, "")
		done <- answered{code, err}
	}()
	// The request has been read once the runner's contact is recorded.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, _, raw := rawJSON(t, http.MethodGet, s.URL+"/api/v4/runners/"+store.IDString(r.ID), nil, "PRIVATE-TOKEN", s.RootToken)
		if code == 200 && !strings.Contains(string(raw), `"contacted_at":null`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never arrived")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	began := time.Now()
	if err := s.App.Stop(ctx); err != nil {
		t.Fatalf("stop: %v after %v", err, time.Since(began))
	}
	if a := <-done; a.err != nil || a.code != 204 {
		t.Fatalf("the waiting request got %d %v", a.code, a.err)
	}
}

// A trace sent again from 0 replaces what was there (a runner resending
// all after a checksum mismatch); a trace a little past the limit is taken
// (the runner's own notice that its log hit the same limit), one well past
// it fails the job.
func TestRunnerTraceResetAndLimit(t *testing.T) {
	t.Parallel()
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.MaxTraceBytes = 32 }))
	c := s.Client
	p := stocktest.NewProject(t, c, "limits", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "one:\n  script: [echo one]\n"})
	_, _, j := requestJob(t, s, r.Token, "")
	if j == nil {
		t.Fatal("no job")
	}
	if code, h := patchTrace(t, s, j.ID, j.Token, "0-9", "first try\n"); code != 202 || h.Get("Range") != "0-10" {
		t.Fatalf("append: %d %v", code, h)
	}
	if code, h := patchTrace(t, s, j.ID, j.Token, "0-3", "redo"); code != 202 || h.Get("Range") != "0-4" {
		t.Fatalf("resend from 0: %d %v", code, h)
	}
	waitTrace(t, c, p.ID, j.ID, "redo")
	if got := trace(t, c, p.ID, j.ID); got != "redo" {
		t.Fatalf("trace after the resend: %q", got)
	}
	code, h := patchTrace(t, s, j.ID, j.Token, "4-43", strings.Repeat("x", 40))
	if code != 202 || h.Get("Range") != "0-44" || h.Get("Job-Status") != "running" {
		t.Fatalf("a little past the limit: %d %v", code, h)
	}
	more := strings.Repeat("y", 64<<10)
	code, h = patchTrace(t, s, j.ID, j.Token, fmt.Sprintf("44-%d", 44+len(more)-1), more)
	if code != 403 || h.Get("Job-Status") != "failed" {
		t.Fatalf("well past the limit: %d %v", code, h)
	}
	waitJobStatus(t, s, p.ID, j.ID, 5*time.Second, "failed")
	if got := trace(t, c, p.ID, j.ID); !strings.Contains(got, "the trace is larger than 32 bytes") {
		t.Errorf("trace: %q", got)
	}
	if code, _, _ := rawJSON(t, http.MethodPut, fmt.Sprintf("%s/api/v4/jobs/%d", s.URL, j.ID), map[string]any{"token": j.Token, "state": "success"}); code != 403 {
		t.Errorf("a failed job's final update: %d", code)
	}
}

// The admin command prints the shared registration token and makes a new
// one with --reset; a token fixed in the configuration is the one, and
// cannot be reset.
func TestRunnersTokenCommandAndSetting(t *testing.T) {
	t.Parallel()
	run := func(s *fennectest.Server, args ...string) (string, error) {
		for _, c := range s.App.Commands() {
			if c.Name == "ci-runners-token" {
				var out bytes.Buffer
				err := c.Run(t.Context(), args, &out)
				return strings.TrimSpace(out.String()), err
			}
		}
		t.Fatal("no ci-runners-token command")
		return "", nil
	}
	s := startRunners(t)
	first, err := run(s)
	if err != nil || len(first) < 32 {
		t.Fatalf("token %q: %v", first, err)
	}
	if again, _ := run(s); again != first {
		t.Fatalf("the token changed without --reset: %q then %q", first, again)
	}
	fresh, err := run(s, "--reset")
	if err != nil || fresh == first || len(fresh) < 32 {
		t.Fatalf("reset: %q %v", fresh, err)
	}
	if code, _, _ := rawJSON(t, http.MethodPost, s.URL+"/api/v4/runners", map[string]any{"token": first}); code != 403 {
		t.Errorf("the old token registers: %d", code)
	}
	registerRunner(t, s, fresh, nil)

	const fixed = "fixed-registration-token-0123456789"
	s2 := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnersRegistrationToken = fixed }))
	if got, _ := run(s2); got != fixed {
		t.Errorf("configured token: %q", got)
	}
	if _, err := run(s2, "--reset"); err == nil {
		t.Errorf("a configured token was reset")
	}
	registerRunner(t, s2, fixed, nil)
}

// A runner removed while its request waits is offered a job by the queue
// (it waited as it was), the assignment does not hold, and its request
// ends with 204 at once; the job stays pending for the others.
func TestRunnerRemovedWhileWaiting(t *testing.T) {
	t.Parallel()
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerPollTimeout = 30 * time.Second }))
	c := s.Client
	p := stocktest.NewProject(t, c, "removed", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	done := make(chan answered, 1)
	go func() {
		code, _, _, err := askJob(s, r.Token, "")
		done <- answered{code, err}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, _, raw := rawJSON(t, http.MethodGet, s.URL+"/api/v4/runners/"+store.IDString(r.ID), nil, "PRIVATE-TOKEN", s.RootToken)
		if code == 200 && !strings.Contains(string(raw), `"contacted_at":null`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never arrived")
		}
	}
	if _, err := c.Runners.RemoveRunner(r.ID); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "one:\n  script: [echo one]\n"})
	select {
	case a := <-done:
		if a.err != nil || a.code != 204 {
			t.Fatalf("the removed runner's request got %d %v", a.code, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the removed runner's request is still waiting")
	}
	t.Logf("answered %v after the job was made", time.Since(began).Round(time.Millisecond))
	pl := waitPipeline(t, c, p.ID, commit.ID, "pending")
	if j := jobsByName(t, c, p.ID, pl.ID)["one"]; j.Status != "pending" || j.Runner.ID != 0 {
		t.Fatalf("job %s on %+v", j.Status, j.Runner)
	}
}

// A job the server cannot hand over to a runner (here: a secret variable
// it cannot open) fails as a scheduler_failure, a failure reason GitLab
// knows, and the runner's request goes on waiting (204).
func TestRunnerJobNotHandedOverFails(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerPollTimeout = 2 * time.Second }))
	c := s.Client
	p := stocktest.NewProject(t, c, "unopened", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("BROKEN"), Value: gitlab.Ptr("cannot-be-opened")}); err != nil {
		t.Fatal(err)
	}
	corruptVariable(t, s, "BROKEN")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "one:\n  script: [echo one]\n"})
	pl := waitPipeline(t, c, p.ID, commit.ID, "pending")
	job := jobsByName(t, c, p.ID, pl.ID)["one"]
	if code, _, j := requestJob(t, s, r.Token, ""); code != 204 {
		t.Errorf("the request for a job that cannot be handed over: %d %+v", code, j)
	}
	waitJobStatus(t, s, p.ID, job.ID, 30*time.Second, "failed")
	if row := jobRow(t, s, job.ID); row["failure_reason"] != "scheduler_failure" {
		t.Errorf("failure_reason %v, want scheduler_failure", row["failure_reason"])
	}
	if tr := trace(t, c, p.ID, job.ID); !strings.Contains(tr, "the job could not be prepared") {
		t.Errorf("trace: %q", tr)
	}
}

// corruptVariable breaks a secret variable's sealed value in the store, as
// a damaged database or a lost key would leave it.
func corruptVariable(t testing.TB, s *fennectest.Server, key string) {
	t.Helper()
	bucket := store.Keys("ci.variables")
	var id []byte
	var row map[string]any
	err := s.Store.View(context.Background(), func(tx *store.Tx) error {
		return bucket.ForEach(tx, func(k, v []byte) error {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			if m["key"] == key {
				id, row = append([]byte(nil), k...), m
			}
			return nil
		})
	})
	if err != nil || row == nil {
		t.Fatalf("variable %s in the store: %v", key, err)
	}
	sealed, _ := row["value"].(string)
	row["value"] = sealed[:len(sealed)-2]
	raw, _ := json.Marshal(row)
	if err := s.Store.Update(context.Background(), func(tx *store.Tx) error { return bucket.Put(tx, id, raw) }); err != nil {
		t.Fatal(err)
	}
}

// A canceled job stays open to its runner for its last trace and final
// state; a runner that dies instead, silent past the silence timeout
// since, loses its token: its reports are refused from then on.
func TestRunnerCanceledJobOfASilentRunnerCloses(t *testing.T) {
	t.Parallel() // mostly waiting on runners and timers
	// Short, yet long enough for the test's own calls between reports.
	const silence = 3 * time.Second
	s := startRunners(t, runnerConfig(func(c *ci.Config) { c.RunnerSilenceTimeout = silence }))
	c := s.Client
	p := stocktest.NewProject(t, c, "cancelsilent", "private")
	r := registerRunner(t, s, sharedToken(t, s), nil)
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": "one:\n  script: [echo one]\n"})
	waitPipeline(t, c, p.ID, commit.ID, "pending")
	_, _, j := requestJob(t, s, r.Token, "")
	if j == nil {
		t.Fatal("no job")
	}
	put := func(state string) (int, http.Header) {
		code, h, _ := rawJSON(t, http.MethodPut, fmt.Sprintf("%s/api/v4/jobs/%d", s.URL, j.ID), map[string]any{"token": j.Token, "state": state})
		return code, h
	}
	if code, _ := patchTrace(t, s, j.ID, j.Token, "0-5", "hello\n"); code != 202 {
		t.Fatalf("append: %d", code)
	}
	if _, _, err := c.Jobs.CancelJob(p.ID, j.ID); err != nil {
		t.Fatal(err)
	}
	// Told to cancel, the runner still reports: a keep-alive, its trace.
	if code, h := put("running"); code != 200 || h.Get("Job-Status") != "canceling" {
		t.Fatalf("keep-alive after the cancel: %d %v", code, h)
	}
	lastWord := time.Now()
	if code, h := patchTrace(t, s, j.ID, j.Token, "6-11", "going\n"); code != 202 || h.Get("Job-Status") != "canceling" {
		t.Fatalf("append after the cancel: %d %v", code, h)
	}
	// Then nothing: the token is dropped once the silence timeout has
	// passed since that last report (not before).
	for deadline := time.Now().Add(silence + 30*time.Second); jobRow(t, s, j.ID)["runner_token_hash"] != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the silent runner's token of the canceled job is still valid")
		}
	}
	if took := time.Since(lastWord); took < silence {
		t.Errorf("the token was dropped %v after the last report, before the silence timeout (%v)", took, silence)
	}
	if code, _ := patchTrace(t, s, j.ID, j.Token, "12-13", "x\n"); code != 403 {
		t.Errorf("append with the dropped token: %d", code)
	}
	if code, _ := put("failed"); code != 403 {
		t.Errorf("final state with the dropped token: %d", code)
	}
	waitJobStatus(t, s, p.ID, j.ID, 10*time.Second, "canceled")
	waitTrace(t, c, p.ID, j.ID, "hello\ngoing\n")
}

// manyTags is n distinct runner tags.
func manyTags(n int) []string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = "t" + strconv.Itoa(i)
	}
	return tags
}
