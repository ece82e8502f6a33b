package ci_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const artifactFilesCI = `build:
  script:
    - mkdir -p out/sub && printf 'hello %s' "$CI_JOB_NAME" > out/result.txt
    - printf '{"a":1}' > out/sub/data.json
    - printf 'spaced' > "out/a b.txt"
  artifacts:
    paths: [out/]
plain:
  script: ["true"]
`

// One file of a job's artifacts, by job and by ref and job name, as
// GitLab's raw artifact endpoints serve it: the file's bytes with a type
// by its extension, as an attachment; 404 for a file, job or archive that
// is not there, whatever the path tries.
func TestArtifactFiles(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "artifact-files", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": artifactFilesCI})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	if pl.Status != "success" {
		t.Fatalf("pipeline %s", pl.Status)
	}
	jobs := jobsByName(t, c, p.ID, pl.ID)
	build, plain := jobs["build"], jobs["plain"]
	root := []string{"PRIVATE-TOKEN", s.RootToken}
	get := func(path string, headers ...string) (*http.Response, string) {
		t.Helper()
		resp := s.Do(t, http.MethodGet, path, nil, headers...)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 400 {
			b = bytes.TrimSpace(b) // JSON errors end with a newline
		}
		return resp, string(b)
	}
	byJob := func(job int64, file string) string {
		return fmt.Sprintf("/api/v4/projects/%d/jobs/%d/artifacts/%s", p.ID, job, file)
	}

	for _, tc := range []struct{ file, body, typ, name string }{
		{"out/result.txt", "hello build", "text/plain; charset=utf-8", "result.txt"},
		{"out/sub/data.json", `{"a":1}`, "application/json", "data.json"},
		{"out/a%20b.txt", "spaced", "text/plain; charset=utf-8", `"a b.txt"`},
		{"out%2Fsub%2Fdata.json", `{"a":1}`, "application/json", "data.json"},
	} {
		resp, body := get(byJob(build.ID, tc.file), root...)
		if resp.StatusCode != 200 || body != tc.body || resp.Header.Get("Content-Type") != tc.typ ||
			resp.Header.Get("Content-Disposition") != "attachment; filename="+tc.name ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Length") != fmt.Sprint(len(tc.body)) {
			t.Fatalf("%s: %d %q %v", tc.file, resp.StatusCode, body, resp.Header)
		}
	}

	// By ref and job name: the latest successful job's archive.
	resp, body := get(fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/master/raw/out/sub/data.json?job=build", p.ID), root...)
	if resp.StatusCode != 200 || body != `{"a":1}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("by ref: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = get(fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/master/raw/result.txt?job=build", p.ID), root...)
	if resp.StatusCode != 404 || body != `{"message":"404 Not Found"}` {
		t.Fatalf("by ref, a file at the archive's top that is not there: %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{
		fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/master/raw/out/result.txt?job=nobody", p.ID),
		fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/other/raw/out/result.txt?job=build", p.ID),
	} {
		if resp, body := get(path, root...); resp.StatusCode != 404 || body != `{"message":"404 Not Found"}` {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, body := get(fmt.Sprintf("/api/v4/projects/%d/jobs/artifacts/master/raw/out/result.txt", p.ID), root...); resp.StatusCode != 400 || body != `{"error":"job is missing"}` {
		t.Fatalf("by ref without job: %d %s", resp.StatusCode, body)
	}

	// Nothing but a regular file of the archive, whatever the path.
	for _, file := range []string{"out/missing.txt", "out/", "out", "out/sub/", "..%2F..%2F..%2Fetc%2Fpasswd",
		"%2Fout%2Fresult.txt", "out%2F..%2Fout%2Fresult.txt", ".%2Fout%2Fresult.txt"} {
		if resp, body := get(byJob(build.ID, file), root...); resp.StatusCode != 404 || body != `{"message":"404 Not Found"}` {
			t.Fatalf("%s: %d %s", file, resp.StatusCode, body)
		}
	}
	// Dot segments in the URL itself are no route at all.
	for _, file := range []string{"out/../out/result.txt", "./out/result.txt"} {
		if resp, body := get(byJob(build.ID, file), root...); resp.StatusCode != 404 || body != `{"error":"404 Not Found"}` {
			t.Fatalf("%s: %d %s", file, resp.StatusCode, body)
		}
	}
	if resp, body := get(byJob(build.ID, "out%00x"), root...); resp.StatusCode != 400 || body != `{"message":"400 (Bad request)"}` {
		t.Fatalf("a NUL in the path: %d %s", resp.StatusCode, body)
	}
	// A job without artifacts, a job of no such id.
	if resp, body := get(byJob(plain.ID, "out/result.txt"), root...); resp.StatusCode != 404 || body != `{"message":"404 Not Found"}` {
		t.Fatalf("a job without artifacts: %d %s", resp.StatusCode, body)
	}
	if resp, body := get(byJob(999999, "out/result.txt"), root...); resp.StatusCode != 404 || body != `{"message":"404 Job Not Found"}` {
		t.Fatalf("no such job: %d %s", resp.StatusCode, body)
	}
	// The keep action is still a POST of its own.
	if resp, raw := s.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/artifacts/keep", p.ID, build.ID), nil, nil, root...); resp.StatusCode != 200 {
		t.Fatalf("keep: %d %s", resp.StatusCode, raw)
	}

	// The project is private: others see no project.
	if resp, body := get(byJob(build.ID, "out/result.txt")); resp.StatusCode != 404 || body != `{"message":"404 Project Not Found"}` {
		t.Fatalf("anonymous: %d %s", resp.StatusCode, body)
	}
	// Once erased, the files are gone with the archive.
	if resp, raw := s.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/erase", p.ID, build.ID), nil, nil, root...); resp.StatusCode != 201 {
		t.Fatalf("erase: %d %s", resp.StatusCode, raw)
	}
	if resp, body := get(byJob(build.ID, "out/result.txt"), root...); resp.StatusCode != 404 || body != `{"message":"404 Not Found"}` {
		t.Fatalf("an erased job's file: %d %s", resp.StatusCode, body)
	}
}

// The OpenAPI document shows the raw artifact routes as GitLab spells
// them, and not the single-segment route they are served by.
func TestArtifactFileRoutesDocumented(t *testing.T) {
	t.Parallel()
	s := startRunners(t)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		}
	}
	if resp, raw := s.JSON(t, http.MethodGet, "/api/v4/openapi.json", nil, &doc); resp.StatusCode != 200 {
		t.Fatalf("openapi: %d %s", resp.StatusCode, raw)
	}
	for path, id := range map[string]string{
		"/api/v4/projects/{id}/jobs/{job_id}/artifacts/{artifact_path}":       "get-job-artifact-file",
		"/api/v4/projects/{id}/jobs/artifacts/{ref_name}/raw/{artifact_path}": "get-job-artifact-file-by-ref",
		"/api/v4/projects/{id}/jobs/artifacts/{ref_name}/download":            "get-job-artifacts-by-ref",
		"/api/v4/projects/{id}/jobs/{job_id}/artifacts":                       "get-job-artifacts",
	} {
		if got := doc.Paths[path]["get"].OperationID; got != id {
			t.Errorf("GET %s: operation %q, want %q", path, got, id)
		}
	}
	if _, ok := doc.Paths["/api/v4/projects/{id}/jobs/{job_id}/artifacts/entry/{artifact_path}"]; ok {
		t.Error("the internal route is documented")
	}
}
