package ci_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
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
	commit := commitFiles(t, c, p.ID, "master", map[string]string{".gitlab-ci.yml": fmt.Sprintf(`show:
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
	s := start(t)
	pusher := s.CreateUser(t, "pusher")
	c := pusher.Client
	own := newProject(t, c, "ci-own")
	other := newProject(t, c, "ci-other-private")
	public, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ci-other-public"),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*gitlab.Project{other, public} {
		commitFiles(t, c, p.ID, "master", map[string]string{"README": p.Name + "\n"})
	}
	dir := t.TempDir()
	tokenFile, done := filepath.Join(dir, "token"), filepath.Join(dir, "done")
	commit := commitFiles(t, c, own.ID, "master", map[string]string{".gitlab-ci.yml": fmt.Sprintf(`holder:
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
