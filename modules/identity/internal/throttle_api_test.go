package internal_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/identity/internal"
)

const (
	tooMany      = `{"message":"429 Too Many Requests"}`
	unauthorized = `{"message":"401 Unauthorized"}`
)

// fakeClock is the throttle's clock in these tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func startThrottled(t *testing.T) (*fennectest.Server, *fakeClock) {
	t.Helper()
	// The harness relaxes the throttle for other tests: these check the
	// defaults a server starts with.
	s, svc := start(t, fennectest.WithModuleConfig("identity", func(c *internal.Config) { c.SignInThrottle = internal.DefaultConfig().SignInThrottle }))
	clock := &fakeClock{t: time.Now()}
	svc.SetThrottleClock(clock.now)
	return s, clock
}

type answer struct {
	status     int
	body       string
	retryAfter string
}

func (a answer) is(t *testing.T, what string, status int, body, retryAfter string) {
	t.Helper()
	if a.status != status || a.body != body || a.retryAfter != retryAfter {
		t.Fatalf("%s: got %d %q Retry-After %q; want %d %q Retry-After %q", what, a.status, a.body, a.retryAfter, status, body, retryAfter)
	}
}

func send(t *testing.T, s *fennectest.Server, method, path string, body io.Reader, headers ...string) answer {
	t.Helper()
	resp := s.Do(t, method, path, body, headers...)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, strings.TrimSuffix(string(raw), "\n"), resp.Header.Get("Retry-After")}
}

func session(t *testing.T, s *fennectest.Server, login, password string) answer {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"login": login, "password": password})
	return send(t, s, http.MethodPost, "/api/v4/session", strings.NewReader(string(b)), "Content-Type", "application/json")
}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// TestThrottleLogin: ten failed sign-ins of one login lock it for ten
// minutes, on every password path (POST /session, basic auth on the API and
// on git), and the right password is refused too until the lock runs out.
// Tokens keep working; other logins from the same address are not affected.
func TestThrottleLogin(t *testing.T) {
	t.Parallel()
	s, clock := startThrottled(t)
	victim := s.CreateUser(t, "victim")
	other := s.CreateUser(t, "bystander")
	if _, _, err := victim.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("secret")}); err != nil {
		t.Fatal(err)
	}
	refs := "/victim/secret.git/info/refs?service=git-upload-pack"

	// Nine failures, through POST /session and basic auth on the API.
	for i := 0; i < 9; i++ {
		if i%2 == 0 {
			session(t, s, "victim", "wrong-password").is(t, "failure", 401, unauthorized, "")
		} else {
			send(t, s, http.MethodGet, "/api/v4/user", nil, "Authorization", basic("victim", "wrong-password")).
				is(t, "basic failure", 401, unauthorized, "")
		}
	}
	// The tenth is still checked (and fails) and sets the lock.
	r := send(t, s, http.MethodGet, refs, nil, "Authorization", basic("victim", "wrong-password"))
	if r.status != 401 {
		t.Fatalf("tenth failure over git: %d %q", r.status, r.body)
	}

	for what, got := range map[string]func() answer{
		"session, right password": func() answer { return session(t, s, "victim", victim.Password) },
		"session, wrong password": func() answer { return session(t, s, "victim", "wrong-again") },
		"session, folded login":   func() answer { return session(t, s, "VICTIM", victim.Password) },
		"api basic, right password": func() answer {
			return send(t, s, http.MethodGet, "/api/v4/user", nil, "Authorization", basic("victim", victim.Password))
		},
	} {
		got().is(t, what, 429, tooMany, "600")
	}
	send(t, s, http.MethodGet, refs, nil, "Authorization", basic("victim", victim.Password)).
		is(t, "git basic, right password", 429, "Retry later", "600")

	// Not checked while locked: tokens (also as the git password), and
	// other logins from the same address.
	send(t, s, http.MethodGet, "/api/v4/user", nil, "PRIVATE-TOKEN", victim.Token).is200(t, "victim's token")
	if r := send(t, s, http.MethodGet, refs, nil, "Authorization", basic("victim", victim.Token)); r.status != 200 {
		t.Fatalf("victim's token as git password: %d %q", r.status, r.body)
	}
	if r := session(t, s, other.Username, other.Password); r.status != 201 {
		t.Fatalf("another login from the same address: %d %q", r.status, r.body)
	}

	clock.advance(4 * time.Minute)
	session(t, s, "victim", victim.Password).is(t, "four minutes on", 429, tooMany, "360")
	clock.advance(6*time.Minute - time.Second)
	session(t, s, "victim", victim.Password).is(t, "a second before the end", 429, tooMany, "1")
	clock.advance(time.Second)
	if r := session(t, s, "victim", victim.Password); r.status != 201 {
		t.Fatalf("after the lock: %d %q", r.status, r.body)
	}
	// The success cleared the login's failures: nine more are allowed.
	for i := 0; i < 9; i++ {
		session(t, s, "victim", "wrong-password").is(t, "failure after success", 401, unauthorized, "")
	}
	if r := session(t, s, "victim", victim.Password); r.status != 201 {
		t.Fatalf("nine failures after a success locked the login: %d %q", r.status, r.body)
	}
}

func (a answer) is200(t *testing.T, what string) {
	t.Helper()
	if a.status != 200 {
		t.Fatalf("%s: %d %q", what, a.status, a.body)
	}
}

// TestThrottleSuccessDoesNotCount: signing in right, however often, never
// throttles; only failures count.
func TestThrottleSuccessDoesNotCount(t *testing.T) {
	t.Parallel()
	s, _ := startThrottled(t)
	u := s.CreateUser(t, "regular")
	for i := 0; i < 60; i++ {
		if i%10 == 9 {
			session(t, s, "regular", "typo-password").is(t, "typo", 401, unauthorized, "")
			continue
		}
		if r := session(t, s, "regular", u.Password); r.status != 201 {
			t.Fatalf("sign-in %d: %d %q", i, r.status, r.body)
		}
	}
}

// TestThrottleAddress: one address guessing at many logins is locked after
// 50 failures, whatever login it tries next, and a success of its own does
// not clear the count.
func TestThrottleAddress(t *testing.T) {
	t.Parallel()
	s, clock := startThrottled(t)
	mine := s.CreateUser(t, "mine")
	victim := s.CreateUser(t, "target")
	for i := 0; i < 49; i++ {
		login := "guess" + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		if i == 20 {
			login = "target"
		}
		session(t, s, login, "password-guess").is(t, "guess", 401, unauthorized, "")
		if i == 30 { // signing in to an account of one's own clears nothing
			if r := session(t, s, "mine", mine.Password); r.status != 201 {
				t.Fatalf("own sign-in: %d", r.status)
			}
		}
	}
	send(t, s, http.MethodGet, "/api/v4/user", nil, "Authorization", basic("someone", "guess")).
		is(t, "fiftieth failure", 401, unauthorized, "")
	session(t, s, "target", victim.Password).is(t, "address locked", 429, tooMany, "600")
	session(t, s, "mine", mine.Password).is(t, "address locked, own account", 429, tooMany, "600")
	clock.advance(10 * time.Minute)
	if r := session(t, s, "target", victim.Password); r.status != 201 {
		t.Fatalf("after the lock: %d %q", r.status, r.body)
	}
}

// TestThrottleGitCLI drives the lock with the git CLI. A locked login is 429
// for git, not 401: on a 401 git's credential helper would erase the user's
// stored (right) password, so an attacker could wipe it remotely.
func TestThrottleGitCLI(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git CLI")
	}
	s, clock := startThrottled(t)
	victim := s.CreateUser(t, "gitvictim")
	if _, _, err := victim.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("code")}); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	store := filepath.Join(home, "credentials")
	host := strings.TrimPrefix(s.URL, "http://")
	if err := os.WriteFile(store, []byte("http://gitvictim:"+victim.Password+"@"+host+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	git := func(url string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", "-c", "credential.helper=", "-c", "credential.helper=store --file="+store, "ls-remote", url)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
			"GIT_ASKPASS=", "SSH_ASKPASS=", "NO_PROXY=*", "no_proxy=*", "LC_ALL=C"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	plain := s.URL + "/gitvictim/code.git"
	wrong := "http://gitvictim:wrong-password@" + host + "/gitvictim/code.git"

	if out, err := git(plain); err != nil {
		t.Fatalf("ls-remote with the stored password: %v\n%s", err, out)
	}
	for i := 0; i < 10; i++ {
		out, err := git(wrong)
		if err == nil || !strings.Contains(out, "Authentication failed") {
			t.Fatalf("failure %d: %v\n%s", i, err, out)
		}
	}
	// Those 401s made git erase the stored entry for this user and host
	// (as it should for a wrong password): store the right one again.
	if err := os.WriteFile(store, []byte("http://gitvictim:"+victim.Password+"@"+host+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := git(plain)
	if err == nil || !strings.Contains(out, "429") {
		t.Fatalf("locked: want a 429 from git, got %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(store); !strings.Contains(string(b), victim.Password) {
		t.Fatalf("the throttled answer made git erase the stored password: %q", b)
	}
	clock.advance(10 * time.Minute)
	if out, err := git(plain); err != nil {
		t.Fatalf("after the lock: %v\n%s", err, out)
	}
}
