package ci_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// waitFile waits for a job's script to create path and returns its
// content.
func waitFile(t testing.TB, path string) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if raw, err := os.ReadFile(path); err == nil && len(raw) > 0 {
			return strings.TrimSpace(string(raw))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written", path)
		}
	}
}

// release lets a job waiting for path go on.
func release(t testing.TB, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitScript is a shell line that waits (at most 60 s) for path.
func waitScript(path string) string {
	return fmt.Sprintf("for i in $(seq 1 600); do [ -f %s ] && break; sleep 0.1; done", path)
}

// A job of a public project echoes its secret variables and its job token
// through the real shell executor: the stored trace, which anonymous
// readers get, shows [MASKED] instead, also for a secret printed in two
// halves that reach the server as two chunks; a user's variable shorter
// than 8 characters is not masked.
func TestTraceMasksSecrets(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-masked"),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"LONG_SECRET": "hunter2-very-secret", "SPLIT_SECRET": "split-secret-value-123", "SHORT_VAR": "abc1234"} {
		if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr(k), Value: gitlab.Ptr(v)}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	tokenFile, half, rest := filepath.Join(dir, "token"), filepath.Join(dir, "half"), filepath.Join(dir, "rest")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": fmt.Sprintf(`show:
  script:
    - echo "$CI_JOB_TOKEN" > %s
    - echo "pw=$LONG_SECRET tok=$CI_JOB_TOKEN short=$SHORT_VAR end"
    - echo "url=$CI_REPOSITORY_URL"
    - echo before-split; printf 'split=%%s' "${SPLIT_SECRET:0:9}"; echo x > %s; %s; printf '%%s done\n' "${SPLIT_SECRET:9}"
    - echo after-split
`, tokenFile, half, waitScript(rest))})
	pl := waitPipeline(t, c, p.ID, commit.ID, "running", "success", "failed")
	job := jobsByName(t, c, p.ID, pl.ID)["show"]
	token := waitFile(t, tokenFile)
	if len(token) < 20 {
		t.Fatalf("job token %q", token)
	}
	// The first half has been written to the trace as a chunk of its own
	// (the executor sends every write at once); the server holds it back,
	// since it may be the start of a secret.
	waitFile(t, half)
	waitTrace(t, c, p.ID, job.ID, "before-split")
	time.Sleep(500 * time.Millisecond)
	if live := trace(t, c, p.ID, job.ID); strings.Contains(live, "split-sec") {
		t.Errorf("the live trace shows the first half of a secret:\n%s", live)
	}
	release(t, rest)
	if j := waitJob(t, c, p.ID, job.ID, "success", "failed"); j.Status != "success" {
		t.Fatalf("job %s:\n%s", j.Status, trace(t, c, p.ID, job.ID))
	}
	// What an anonymous reader gets.
	resp, raw := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/trace", p.ID, job.ID), nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("anonymous trace: %d %s", resp.StatusCode, raw)
	}
	tr := string(raw)
	for _, secret := range []string{"hunter2-very-secret", token, "split-secret-value-123", "split-sec", "ret-value-123"} {
		if strings.Contains(tr, secret) {
			t.Errorf("the trace shows %q:\n%s", secret, tr)
		}
	}
	for _, want := range []string{
		"\npw=[MASKED] tok=[MASKED] short=abc1234 end\n",
		"\nurl=[MASKED]\n", // the clone URL is a masked variable of its own (it holds the token)
		"\nbefore-split\nsplit=[MASKED] done\n",
		"\nafter-split\n",
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("the trace lacks %q:\n%s", want, tr)
		}
	}
}

// basicAuth is an Authorization header value.
func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// A running job's token reads its own project's repository over HTTP with
// the user name gitlab-ci-token only (another name: 401), and no other
// private project, not even one the pusher owns (403); a public project
// stays readable with it, as without it.
func TestJobTokenGitScope(t *testing.T) {
	t.Parallel()
	s := start(t)
	pusher := s.CreateUser(t, "pusher")
	c := pusher.Client
	own := stocktest.NewProject(t, c, "ci-own", "private")
	other := stocktest.NewProject(t, c, "ci-other-private", "private")
	public, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-other-public"),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*gitlab.Project{other, public} {
		stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{"README": p.Name + "\n"})
	}
	dir := t.TempDir()
	tokenFile, done := filepath.Join(dir, "token"), filepath.Join(dir, "done")
	commit := stocktest.CommitFiles(t, c, own.ID, "master", "ci", map[string]string{".gitlab-ci.yml": fmt.Sprintf(`holder:
  script:
    - echo "$CI_JOB_TOKEN" > %s
    - %s
`, tokenFile, waitScript(done))})
	pl := waitPipeline(t, c, own.ID, commit.ID, "running")
	job := jobsByName(t, c, own.ID, pl.ID)["holder"]
	token := waitFile(t, tokenFile)
	defer func() {
		release(t, done)
		waitJob(t, c, own.ID, job.ID, "success", "failed")
	}()
	infoRefs := func(p *gitlab.Project) string {
		return "/" + p.PathWithNamespace + ".git/info/refs?service=git-upload-pack"
	}

	// Its own project, as gitlab-ci-token: the real git CLI clones it.
	if out, err := tryGit("", "clone", "-q", projectGitURL(s, own, "gitlab-ci-token", token), filepath.Join(dir, "own")); err != nil {
		t.Fatalf("clone of the job's project with its token: %v\n%s", err, out)
	}
	// Any other user name: the token is no credential.
	for _, user := range []string{"pusher", "root", "oauth2", "x"} {
		if out, err := tryGit("", "ls-remote", projectGitURL(s, own, user, token)); err == nil {
			t.Errorf("ls-remote with the job token as %s worked:\n%s", user, out)
		}
		resp, raw := s.JSON(t, http.MethodGet, infoRefs(own), nil, nil, "Authorization", basicAuth(user, token))
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="Fennec"` {
			t.Errorf("info/refs with the job token as %s: %d %s", user, resp.StatusCode, raw)
		}
	}
	// Another private project of the pusher's, which the job does not
	// need: refused.
	if out, err := tryGit("", "clone", "-q", projectGitURL(s, other, "gitlab-ci-token", token), filepath.Join(dir, "other")); err == nil {
		t.Errorf("clone of another private project of the pusher with the job token worked:\n%s", out)
	}
	resp, raw := s.JSON(t, http.MethodGet, infoRefs(other), nil, nil, "Authorization", basicAuth("gitlab-ci-token", token))
	if resp.StatusCode != 403 || strings.TrimSpace(string(raw)) != "A CI job token may only read its own project's repository." {
		t.Errorf("info/refs of another private project with the job token: %d %s", resp.StatusCode, raw)
	}
	// The pusher's own credentials still read it (the refusal is the
	// token's).
	if out, err := tryGit("", "ls-remote", projectGitURL(s, other, "pusher", pusher.Token)); err != nil {
		t.Errorf("ls-remote as the pusher: %v\n%s", err, out)
	}
	// A public project: as for anyone.
	resp, raw = s.JSON(t, http.MethodGet, infoRefs(public), nil, nil, "Authorization", basicAuth("gitlab-ci-token", token))
	if resp.StatusCode != 200 {
		t.Errorf("info/refs of a public project with the job token: %d %s", resp.StatusCode, raw)
	}
	if out, err := tryGit("", "clone", "-q", projectGitURL(s, public, "gitlab-ci-token", token), filepath.Join(dir, "public")); err != nil {
		t.Errorf("clone of a public project with the job token: %v\n%s", err, out)
	}
	// Never a push, even to its own project.
	resp, raw = s.JSON(t, http.MethodGet, "/"+own.PathWithNamespace+".git/info/refs?service=git-receive-pack", nil, nil,
		"Authorization", basicAuth("gitlab-ci-token", token))
	if resp.StatusCode != 403 {
		t.Errorf("receive-pack with the job token: %d %s", resp.StatusCode, raw)
	}
}

// Who controls jobs and pipelines: erasing a job is for Masters and the
// job's own user; playing, retrying or canceling a job of a protected
// branch, retrying its pipeline or running one for it needs the right to
// push or merge to it (a Developer's job would get the protected
// variables), while on other branches Developer is enough.
func TestJobControlsOnProtectedBranches(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "ci-protected-controls", "private")
	dev, master := s.CreateUser(t, "ctl-dev"), s.CreateUser(t, "ctl-master")
	for _, m := range []struct {
		u     *fennectest.User
		level gitlab.AccessLevelValue
	}{{dev, gitlab.DeveloperPermissions}, {master, gitlab.MaintainerPermissions}} {
		if _, _, err := c.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: m.u.ID, AccessLevel: gitlab.Ptr(m.level)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("PROD_SECRET"),
		Value: gitlab.Ptr("production-credential"), Protected: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{"README": "x\n"})
	if resp, raw := s.JSON(t, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d/repository/branches/master/protect", p.ID), nil, nil, "PRIVATE-TOKEN", s.RootToken); resp.StatusCode != 200 {
		t.Fatalf("protect master: %d %s", resp.StatusCode, raw)
	}
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	ciFile := `build:
  stage: build
  script: ["echo built"]
deploy:
  stage: deploy
  when: manual
  script: ['echo "deploying with ${PROD_SECRET:-no-secret}"']
`
	// post sends a control; "/pipeline?ref=x" sends the ref in a JSON
	// body, as clients do.
	post := func(who *fennectest.User, path string) (int, string) {
		t.Helper()
		var body io.Reader
		if ref, ok := strings.CutPrefix(path, "/pipeline?ref="); ok {
			path, body = "/pipeline", strings.NewReader(`{"ref":"`+ref+`"}`)
		}
		resp, raw := s.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d%s", p.ID, path), body, nil,
			"PRIVATE-TOKEN", who.Token, "Content-Type", "application/json")
		return resp.StatusCode, strings.TrimSpace(string(raw))
	}
	erased := func(job int64) bool {
		resp, _ := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/jobs/%d/trace", p.ID, job), nil, nil, "PRIVATE-TOKEN", s.RootToken)
		return resp.StatusCode == 404
	}
	forbidden := `{"message":"403 Forbidden"}`
	pipelineOf := func(branch string) (*gitlab.Pipeline, map[string]*gitlab.Job) {
		t.Helper()
		// Pushed by root; the branch's name in a file keeps the two
		// branches' commits apart (same tree, parent and second: same sha).
		commit := stocktest.CommitFiles(t, c, p.ID, branch, "ci", map[string]string{".gitlab-ci.yml": ciFile, "branch.txt": branch})
		pl := waitPipeline(t, c, p.ID, commit.ID, "manual", "success", "failed")
		jobs := jobsByName(t, c, p.ID, pl.ID)
		if jobs["build"].Status != "success" || jobs["deploy"].Status != "manual" {
			t.Fatalf("%s: build %s, deploy %s", branch, jobs["build"].Status, jobs["deploy"].Status)
		}
		return pl, jobs
	}

	// The protected branch: the Developer may do none of it.
	pl, jobs := pipelineOf("master")
	for _, path := range []string{
		fmt.Sprintf("/jobs/%d/play", jobs["deploy"].ID),
		fmt.Sprintf("/jobs/%d/retry", jobs["build"].ID),
		fmt.Sprintf("/jobs/%d/cancel", jobs["deploy"].ID),
		fmt.Sprintf("/jobs/%d/erase", jobs["build"].ID),
		fmt.Sprintf("/pipelines/%d/retry", pl.ID),
		fmt.Sprintf("/pipelines/%d/cancel", pl.ID),
		"/pipeline?ref=master",
	} {
		if code, body := post(dev, path); code != 403 || body != forbidden {
			t.Errorf("developer POST %s on the protected branch: %d %s", path, code, body)
		}
	}
	if j := waitJob(t, c, p.ID, jobs["deploy"].ID, "manual", "pending", "running", "success"); j.Status != "manual" {
		t.Fatalf("the deploy the developer was refused is %s", j.Status)
	}
	if list, _, err := c.Pipelines.ListProjectPipelines(p.ID, &gitlab.ListProjectPipelinesOptions{Ref: gitlab.Ptr("master")}); err != nil || len(list) != 1 {
		t.Fatalf("master's pipelines after the refusals: %d %v", len(list), err)
	}
	// The Master may: the deploy runs with the protected variable (masked
	// in its trace).
	if code, body := post(master, fmt.Sprintf("/jobs/%d/play", jobs["deploy"].ID)); code != 201 || !strings.Contains(body, `"status":"started"`) {
		t.Fatalf("master plays the deploy: %d %s", code, body)
	}
	waitJob(t, c, p.ID, jobs["deploy"].ID, "success")
	if tr := trace(t, c, p.ID, jobs["deploy"].ID); !strings.Contains(tr, "\ndeploying with [MASKED]\n") {
		t.Fatalf("the master's deploy:\n%s", tr)
	}
	code, body := post(master, fmt.Sprintf("/jobs/%d/retry", jobs["build"].ID))
	if code != 201 {
		t.Fatalf("master retries the build: %d %s", code, body)
	}
	if code, body := post(master, fmt.Sprintf("/jobs/%d/erase", jobs["build"].ID)); code != 201 || !erased(jobs["build"].ID) {
		t.Fatalf("master erases the build: %d %s", code, body)
	}
	waitRefPipeline(t, c, p.ID, "master", "success", "failed")
	if code, body := post(master, fmt.Sprintf("/pipelines/%d/retry", pl.ID)); code != 201 {
		t.Fatalf("master retries the pipeline: %d %s", code, body)
	}
	if code, body := post(master, "/pipeline?ref=master"); code != 201 || !strings.Contains(body, `"ref":"master"`) {
		t.Fatalf("master runs a pipeline for master: %d %s", code, body)
	}

	// An unprotected branch: Developer is enough, but erasing a job is
	// still for Masters and the job's own user.
	pl, jobs = pipelineOf("feature")
	if code, body := post(dev, fmt.Sprintf("/jobs/%d/erase", jobs["build"].ID)); code != 403 || body != forbidden {
		t.Errorf("developer erases root's job: %d %s", code, body)
	}
	if code, body := post(dev, fmt.Sprintf("/jobs/%d/play", jobs["deploy"].ID)); code != 201 || !strings.Contains(body, `"status":"started"`) {
		t.Fatalf("developer plays the feature deploy: %d %s", code, body)
	}
	waitJob(t, c, p.ID, jobs["deploy"].ID, "success")
	if tr := trace(t, c, p.ID, jobs["deploy"].ID); !strings.Contains(tr, "\ndeploying with no-secret\n") {
		t.Fatalf("the feature deploy:\n%s", tr)
	}
	code, body = post(dev, fmt.Sprintf("/jobs/%d/retry", jobs["build"].ID))
	if code != 201 {
		t.Fatalf("developer retries the feature build: %d %s", code, body)
	}
	var retried struct {
		ID   int64
		User struct{ Username string }
	}
	if err := json.Unmarshal([]byte(body), &retried); err != nil || retried.ID == 0 || retried.User.Username != dev.Username {
		t.Fatalf("retried job: %v %s", err, body)
	}
	waitJob(t, c, p.ID, retried.ID, "success")
	// The developer's own job (they retried it).
	if code, body := post(dev, fmt.Sprintf("/jobs/%d/erase", retried.ID)); code != 201 || !erased(retried.ID) {
		t.Errorf("developer erases their own job: %d %s", code, body)
	}
	if code, body := post(dev, fmt.Sprintf("/pipelines/%d/retry", pl.ID)); code != 201 {
		t.Errorf("developer retries the feature pipeline: %d %s", code, body)
	}
	if code, body := post(dev, "/pipeline?ref=feature"); code != 201 || !strings.Contains(body, `"ref":"feature"`) {
		t.Errorf("developer runs a pipeline for feature: %d %s", code, body)
	}
	if code, body := post(master, fmt.Sprintf("/jobs/%d/erase", jobs["deploy"].ID)); code != 201 || !erased(jobs["deploy"].ID) {
		t.Errorf("master erases the developer's deploy: %d %s", code, body)
	}
}
