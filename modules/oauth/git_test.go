package oauth_test

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// git runs the git CLI in dir with no user or system configuration.
func git(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// An access token works as a git password ("oauth2" as the user) for
// clones and fetches only, as in GitLab 9.x; pushes need a personal token.
func TestAccessTokenAsGitPasswordIsReadOnly(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	e := start(t)
	u := e.CreateUser(t, "")
	p, _, err := u.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("oauth-git"),
		Visibility: gitlab.Ptr(gitlab.PrivateVisibility), InitializeWithReadme: gitlab.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	remote := func(user, password string) string {
		r, _ := url.Parse(p.HTTPURLToRepo)
		r.User = url.UserPassword(user, password)
		return r.String()
	}
	work := t.TempDir()
	api := e.passwordToken(t, u.Username, u.Password, nil)["access_token"].(string)
	if out, err := git(t, work, "clone", "-q", remote("oauth2", api), "clone"); err != nil {
		t.Fatalf("clone with an api token: %v\n%s", err, out)
	}
	clone := filepath.Join(work, "clone")
	if err := os.WriteFile(filepath.Join(clone, "new.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := git(t, clone, "add", "new.txt"); err != nil {
		t.Fatal(out)
	}
	if out, err := git(t, clone, "commit", "-q", "-m", "by oauth"); err != nil {
		t.Fatal(out)
	}
	if out, err := git(t, clone, "push", "-q", "origin", "HEAD"); err == nil || !strings.Contains(out, "403") {
		t.Fatalf("push with an OAuth token: %v\n%s", err, out)
	}
	readUser := e.passwordToken(t, u.Username, u.Password, url.Values{"scope": {"read_user"}})["access_token"].(string)
	if out, err := git(t, work, "clone", "-q", remote("oauth2", readUser), "clone2"); err == nil || !strings.Contains(out, "401") && !strings.Contains(out, "Authentication failed") {
		t.Fatalf("clone with a read_user token: %v\n%s", err, out)
	}
	// A revoked token no longer clones.
	if resp, _ := e.post(t, "/oauth/revoke", url.Values{"token": {api}}); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if out, err := git(t, work, "clone", "-q", remote("oauth2", api), "clone3"); err == nil {
		t.Fatalf("clone with a revoked token: %s", out)
	}
}
