package ci_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// jobPagesCI prints colours, a collapsed section and a masked variable,
// and keeps artifacts, one of them an HTML page.
const jobPagesCI = `build:
  script:
    - |
      printf '\033[32mgreen words\033[0m\n'
      printf 'section_start:%s:tests[collapsed=true]\r\033[0K\033[36mRunning tests\033[0m\n' "$(date +%s)"
      echo "inside the section"
      printf 'section_end:%s:tests\r\033[0K\n' "$(date +%s)"
      echo "secret=$JOB_SECRET"
      mkdir -p out/sub && printf 'hello' > out/a.txt && printf '<script>alert(1)</script>' > out/sub/page.html
  artifacts:
    paths: [out/]
    expire_in: 3 days
broken:
  script: ["echo failing", "exit 1"]
long:
  script:
    - awk 'BEGIN { for (i = 0; i < 8000; i++) printf "long line %d, padded to about eighty bytes with these words.....\n", i }'
later:
  when: manual
  script: ["echo manual ran"]
`

const jobSecret = "s3cr3t-Value-42"

// The job page as each visitor gets it: its log rendered with colours and
// sections and the masked variable masked, the buttons the API allows,
// each action as the API's (refused as it refuses, with the CSRF check),
// the raw log, the log's next lines from an offset, and the artifacts
// browser with its files and archive, traversal refused.
func TestJobPages(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "job-pages", "private")
	if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("JOB_SECRET"),
		Value: gitlab.Ptr(jobSecret), Masked: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	dev, reporter, outsider := s.CreateUser(t, "jp-dev"), s.CreateUser(t, "jp-reporter"), s.CreateUser(t, "jp-outsider")
	stocktest.AddMember(t, c, p.ID, dev.ID, gitlab.DeveloperPermissions)
	stocktest.AddMember(t, c, p.ID, reporter.ID, gitlab.ReporterPermissions)
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": jobPagesCI})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	jobs := jobsByName(t, c, p.ID, pl.ID)
	build, broken, later := jobs["build"], jobs["broken"], jobs["later"]
	if build.Status != "success" || broken.Status != "failed" || later.Status != "manual" {
		t.Fatalf("jobs: %s %s %s", build.Status, broken.Status, later.Status)
	}
	jobURL := func(id int64) string { return fmt.Sprintf("/root/job-pages/-/jobs/%d", id) }
	buildURL := jobURL(build.ID)
	countJobs := func() int {
		list, _, err := c.Jobs.ListProjectJobs(p.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}

	rb := s.SignedIn(t, "root", s.RootPassword)
	db := s.SignedIn(t, dev.Username, dev.Password)
	rep := s.SignedIn(t, reporter.Username, reporter.Password)
	out := s.SignedIn(t, outsider.Username, outsider.Password)

	t.Run("page", func(t *testing.T) {
		page := db.Get(t, buildURL)
		page.Want(t, "the build's page", http.StatusOK,
			`<span class="term-fg32">green words</span>`,
			`<details class="ts" data-section="tests"><summary><span class="tx"><span class="term-fg36">Running tests</span></span><span class="sd">`,
			"inside the section", "secret=[MASKED]",
			fmt.Sprintf(`href="/root/job-pages/-/pipelines/%d"`, pl.ID), "<dt>Stage</dt><dd><bdi>test</bdi>",
			"executor shell", `action="`+buildURL+`/retry"`, ">Retry</button>", "these artifacts expire in 3 days",
			`href="`+buildURL+`/artifacts/browse"`, `action="`+buildURL+`/artifacts/keep"`)
		page.WantNot(t, "the build's page", jobSecret, "\x1b", ">Erase<", "data-poll")
		if m := regexp.MustCompile(`section_(start|end):[0-9]`).FindString(page.Body); m != "" {
			t.Errorf("a section marker shows: %q", m)
		}
		// A long log: its last 512 KiB, from a line's start, and the link to the rest.
		long := db.Get(t, jobURL(jobs["long"].ID))
		long.Want(t, "a long log", http.StatusOK, "Showing the last 5", "complete raw log</a> has it all", "<span class=\"tx\">long line 7999, padded")
		long.WantNot(t, "a long log", "long line 0, padded", "long line 100, padded")
		// A Reporter reads, with no button; root, the job's user, may erase.
		r := rep.Get(t, buildURL)
		r.Want(t, "the Reporter's page", http.StatusOK, "green words")
		r.WantNot(t, "the Reporter's page", "/retry\"", "/erase\"", "/artifacts/keep\"", jobSecret)
		rb.Get(t, buildURL).Want(t, "root's page", http.StatusOK, `action="`+buildURL+`/erase"`, "Erase job log and artifacts")
		db.Get(t, jobURL(later.ID)).Want(t, "the manual job's page", http.StatusOK, `action="`+jobURL(later.ID)+`/play"`, ">Run</button>")
		// Hidden from others, and missing ids.
		out.Get(t, buildURL).Want(t, "an outsider", http.StatusNotFound)
		anon := s.NewBrowser(t).Get(t, buildURL)
		if anon.StatusCode != http.StatusFound || !strings.Contains(anon.Header.Get("Location"), "/users/sign_in") {
			t.Errorf("anonymous: %d %s", anon.StatusCode, anon.Header.Get("Location"))
		}
		for _, path := range []string{jobURL(999999), "/root/job-pages/-/jobs/0" + fmt.Sprint(build.ID), "/root/job-pages/-/jobs/x",
			buildURL + "/nothing", "/root/job-pages/-/jobs"} {
			db.Get(t, path).Want(t, path, http.StatusNotFound)
		}
	})

	t.Run("raw and offsets", func(t *testing.T) {
		want := trace(t, c, p.ID, build.ID)
		raw := db.Get(t, buildURL+"/raw")
		if raw.StatusCode != 200 || raw.Body != want || raw.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			raw.Header.Get("X-Content-Type-Options") != "nosniff" || strings.Contains(raw.Body, jobSecret) {
			t.Fatalf("raw: %d %v\n%q\nwant %q", raw.StatusCode, raw.Header, raw.Body, want)
		}
		out.Get(t, buildURL+"/raw").Want(t, "an outsider's raw", http.StatusNotFound)
		at := strings.LastIndex(want, "secret=[MASKED]")
		at = strings.LastIndex(want[:at], "\n") + 1
		var chunk struct {
			Parts []struct {
				Close []string
				HTML  string
			}
			Offset   int
			Status   string
			Complete bool
		}
		page := db.Get(t, fmt.Sprintf("%s/trace.json?offset=%d", buildURL, at))
		if err := json.Unmarshal([]byte(page.Body), &chunk); err != nil || page.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("trace.json: %v %s", err, page.Body)
		}
		html := ""
		for _, p := range chunk.Parts {
			html += p.HTML
		}
		if chunk.Offset != len(want) || !chunk.Complete || chunk.Status != "success" || !strings.Contains(html, "secret=[MASKED]") ||
			strings.Contains(html, "green words") || strings.Contains(html, "inside the section") {
			t.Fatalf("trace.json from %d: %+v", at, chunk)
		}
		page = db.Get(t, fmt.Sprintf("%s/trace.json?offset=%d", buildURL, len(want)))
		if err := json.Unmarshal([]byte(page.Body), &chunk); err != nil || len(chunk.Parts) != 0 || chunk.Offset != len(want) || !chunk.Complete {
			t.Fatalf("trace.json at the end: %v %s", err, page.Body)
		}
		db.Get(t, buildURL+"/trace.json?offset=-1").Want(t, "a negative offset", http.StatusBadRequest)
		db.Get(t, buildURL+"/trace.json?offset=x").Want(t, "no offset", http.StatusBadRequest)
		out.Get(t, buildURL+"/trace.json?offset=0").Want(t, "an outsider's trace.json", http.StatusNotFound)
		// A hostile state renders as no state.
		page = db.Get(t, buildURL+"/trace.json?offset=0&state="+url.QueryEscape("eyJnIjoiPHNjcmlwdD4ifQ"))
		if page.StatusCode != 200 || strings.Contains(page.Body, "<script>") {
			t.Fatalf("hostile state: %d %s", page.StatusCode, page.Body)
		}
	})

	t.Run("artifacts", func(t *testing.T) {
		top := db.Get(t, buildURL+"/artifacts/browse")
		top.Want(t, "the artifacts' top", http.StatusOK, `href="`+buildURL+`/artifacts/browse/out"`, "<bdi>out</bdi>/", "expire in 3 days")
		db.Get(t, buildURL+"/artifacts/browse/out").Want(t, "out/", http.StatusOK,
			`href="`+buildURL+`/artifacts/browse/out/sub"`, `href="`+buildURL+`/artifacts/file/out/a.txt"`, "<bdi>a.txt</bdi>", "5 B")
		db.Get(t, buildURL+"/artifacts/browse/out/sub/").Want(t, "out/sub/", http.StatusOK, `href="`+buildURL+`/artifacts/file/out/sub/page.html"`)
		f := db.Get(t, buildURL+"/artifacts/file/out/a.txt")
		if f.StatusCode != 200 || f.Body != "hello" || f.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			f.Header.Get("Content-Disposition") != "inline; filename=a.txt" {
			t.Fatalf("a.txt: %d %v %q", f.StatusCode, f.Header, f.Body)
		}
		if raw := db.Get(t, buildURL+"/artifacts/raw/out/a.txt"); raw.StatusCode != 200 || raw.Body != "hello" {
			t.Fatalf("a.txt by artifacts/raw: %d %q", raw.StatusCode, raw.Body)
		}
		f = db.Get(t, buildURL+"/artifacts/file/out/sub/page.html")
		if f.StatusCode != 200 || f.Body != "<script>alert(1)</script>" || f.Header.Get("Content-Disposition") != "attachment; filename=page.html" ||
			f.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(f.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Fatalf("page.html: %d %v", f.StatusCode, f.Header)
		}
		resp := s.Do(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/artifacts", p.ID, build.ID), nil, "PRIVATE-TOKEN", s.RootToken)
		zip, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		d := db.Get(t, buildURL+"/artifacts/download")
		if d.StatusCode != 200 || d.Body != string(zip) || !strings.HasPrefix(d.Header.Get("Content-Disposition"), "attachment; filename=") {
			t.Fatalf("download: %d %v (%d bytes, want %d)", d.StatusCode, d.Header, len(d.Body), len(zip))
		}
		for _, path := range []string{"/artifacts/browse/../../../etc", "/artifacts/browse/out/../out", "/artifacts/browse/%2e%2e",
			"/artifacts/browse/nothing", "/artifacts/file/out/../out/a.txt", "/artifacts/file/%2e%2e%2fetc%2fpasswd", "/artifacts/file//etc/passwd",
			"/artifacts/file/out", "/artifacts/file/out/missing.txt", "/artifacts/file/", "/artifacts/raw/../out/a.txt"} {
			db.Get(t, buildURL+path).Want(t, path, http.StatusNotFound)
		}
		out.Get(t, buildURL+"/artifacts/browse").Want(t, "an outsider's browse", http.StatusNotFound)
		out.Get(t, buildURL+"/artifacts/file/out/a.txt").Want(t, "an outsider's file", http.StatusNotFound)
		out.Get(t, buildURL+"/artifacts/download").Want(t, "an outsider's download", http.StatusNotFound)
		db.Get(t, jobURL(broken.ID)+"/artifacts/browse").Want(t, "a job without artifacts", http.StatusNotFound)
	})

	t.Run("actions", func(t *testing.T) {
		before := countJobs()
		token := db.Get(t, buildURL).CSRF()
		db.Post(t, buildURL+"/retry", url.Values{"authenticity_token": {"00" + token[2:]}}).Want(t, "a forged form", http.StatusForbidden)
		db.Post(t, buildURL+"/retry", url.Values{}).Want(t, "a form without its token", http.StatusForbidden)
		repToken := rep.Get(t, buildURL).CSRF()
		rep.Post(t, buildURL+"/retry", url.Values{"authenticity_token": {repToken}}).Want(t, "the Reporter's retry", http.StatusForbidden)
		rep.Post(t, buildURL+"/erase", url.Values{"authenticity_token": {repToken}}).Want(t, "the Reporter's erase", http.StatusForbidden)
		outToken := out.Get(t, "/").CSRF()
		out.Post(t, buildURL+"/retry", url.Values{"authenticity_token": {outToken}}).Want(t, "the outsider's retry", http.StatusNotFound)
		db.Post(t, buildURL+"/erase", url.Values{"authenticity_token": {token}}).Want(t, "the Developer's erase of root's job", http.StatusForbidden)
		db.Post(t, jobURL(later.ID)+"/retry", url.Values{"authenticity_token": {token}}).Want(t, "a manual job's retry", http.StatusForbidden)
		db.Post(t, buildURL+"/explode", url.Values{"authenticity_token": {token}}).Want(t, "no such action", http.StatusNotFound)
		if n := countJobs(); n != before {
			t.Fatalf("refused actions made jobs: %d, were %d", n, before)
		}
		if j, _, _ := c.Jobs.GetJob(p.ID, build.ID); j.ErasedAt != nil || j.ArtifactsFile.Filename == "" {
			t.Fatalf("refused erase erased: %+v", j)
		}

		// The Developer retries the failed job: 303 to the new job's page.
		res := db.Post(t, jobURL(broken.ID)+"/retry", url.Values{"authenticity_token": {token}})
		if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/root/job-pages/-/jobs/") ||
			res.Header.Get("Location") == jobURL(broken.ID) {
			t.Fatalf("retry: %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		if n := countJobs(); n != before+1 {
			t.Fatalf("after retry: %d jobs, want %d", n, before+1)
		}
		// Plays the manual job.
		db.Post(t, jobURL(later.ID)+"/play", url.Values{"authenticity_token": {token}}).WantRedirect(t, "play", http.StatusSeeOther, jobURL(later.ID))
		waitJob(t, c, p.ID, later.ID, "success")
		// Root keeps the artifacts, then erases the job.
		rootToken := rb.Get(t, buildURL).CSRF()
		rb.Post(t, buildURL+"/artifacts/keep", url.Values{"authenticity_token": {rootToken}}).WantRedirect(t, "keep", http.StatusSeeOther, buildURL)
		rb.Get(t, buildURL).Want(t, "kept", http.StatusOK, "· kept")
		rb.Post(t, buildURL+"/erase", url.Values{"authenticity_token": {rootToken}}).WantRedirect(t, "erase", http.StatusSeeOther, buildURL)
		erased := rb.Get(t, buildURL)
		erased.Want(t, "the erased job", http.StatusOK, "The job's log and artifacts were erased.")
		erased.WantNot(t, "the erased job", "green words", "/erase\"")
		db.Get(t, buildURL+"/raw").Want(t, "an erased job's raw log", http.StatusNotFound)
		db.Get(t, buildURL+"/artifacts/browse").Want(t, "an erased job's artifacts", http.StatusNotFound)
	})

	t.Run("delayed and running", func(t *testing.T) {
		q := stocktest.NewProject(t, c, "job-waits", "private")
		stocktest.AddMember(t, c, q.ID, dev.ID, gitlab.DeveloperPermissions)
		stocktest.AddMember(t, c, q.ID, reporter.ID, gitlab.ReporterPermissions)
		sha := stocktest.CommitFiles(t, c, q.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `wait:
  when: delayed
  start_in: 1 hour
  script: ["echo later"]
hold:
  script: ["echo holding", "sleep 60"]
`}).ID
		var wait, hold *gitlab.Job
		fennectest.Poll(t, 60*time.Second, func() (bool, string) {
			list, _, err := c.Pipelines.ListProjectPipelines(q.ID, nil)
			if err != nil || len(list) == 0 || list[0].SHA != sha {
				return false, "no pipeline"
			}
			jobs := jobsByName(t, c, q.ID, list[0].ID)
			wait, hold = jobs["wait"], jobs["hold"]
			return wait != nil && hold != nil && wait.Status == "scheduled" && hold.Status == "running", fmt.Sprintf("jobs %+v", jobs)
		})
		waitTrace(t, c, q.ID, hold.ID, "holding")
		base := "/root/job-waits/-/jobs/"
		waitURL, holdURL := base+fmt.Sprint(wait.ID), base+fmt.Sprint(hold.ID)
		page := db.Get(t, waitURL)
		page.Want(t, "the delayed job", http.StatusOK, `action="`+waitURL+`/play"`, ">Run now</button>", `action="`+waitURL+`/unschedule"`, "delayed")
		page.WantNot(t, "the delayed job", "data-poll")
		rep.Get(t, waitURL).WantNot(t, "the Reporter's delayed job", "/unschedule\"", "/play\"")
		running := db.Get(t, holdURL)
		running.Want(t, "the running job", http.StatusOK, `action="`+holdURL+`/cancel"`, ">Cancel</button>",
			`data-poll="`+holdURL+`/trace.json"`, "holding", "The job is running")
		token := page.CSRF()
		repToken := rep.Get(t, waitURL).CSRF()
		rep.Post(t, holdURL+"/cancel", url.Values{"authenticity_token": {repToken}}).Want(t, "the Reporter's cancel", http.StatusForbidden)
		rep.Post(t, waitURL+"/unschedule", url.Values{"authenticity_token": {repToken}}).Want(t, "the Reporter's unschedule", http.StatusForbidden)
		if j, _, _ := c.Jobs.GetJob(q.ID, hold.ID); j.Status != "running" {
			t.Fatalf("after the Reporter's cancel: %s", j.Status)
		}
		db.Post(t, waitURL+"/unschedule", url.Values{"authenticity_token": {token}}).WantRedirect(t, "unschedule", http.StatusSeeOther, waitURL)
		waitJob(t, c, q.ID, wait.ID, "manual")
		db.Get(t, waitURL).Want(t, "the unscheduled job", http.StatusOK, ">Run</button>")
		db.Post(t, holdURL+"/cancel", url.Values{"authenticity_token": {token}}).WantRedirect(t, "cancel", http.StatusSeeOther, holdURL)
		waitJob(t, c, q.ID, hold.ID, "canceled")
		db.Get(t, holdURL).Want(t, "the canceled job", http.StatusOK, ">Retry</button>", "canceled")
	})
}
