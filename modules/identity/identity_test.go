package identity_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

type sessionOptions struct {
	Login    *string `json:"login,omitempty"`
	Email    *string `json:"email,omitempty"`
	Password *string `json:"password,omitempty"`
}

type sessionUser struct {
	gitlab.User
	PrivateToken string `json:"private_token"`
}

// login posts /session through client-go's own request machinery.
func login(t *testing.T, c *gitlab.Client, opt sessionOptions) (*sessionUser, *gitlab.Response, error) {
	t.Helper()
	req, err := c.NewRequest(http.MethodPost, "session", opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	var u sessionUser
	resp, err := c.Do(req, &u)
	return &u, resp, err
}

func anonymous(t *testing.T, s *fennectest.Server) *gitlab.Client { return s.NewClient(t, "") }

func statusOf(t *testing.T, resp *gitlab.Response) int {
	t.Helper()
	if resp == nil {
		t.Fatal("no response")
	}
	return resp.StatusCode
}

var msTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestSessionLogin(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	c := anonymous(t, s)

	t.Run("by username", func(t *testing.T) {
		u, resp, err := login(t, c, sessionOptions{Login: gitlab.Ptr("alice"), Password: gitlab.Ptr(alice.Password)})
		if err != nil || statusOf(t, resp) != http.StatusCreated {
			t.Fatalf("login: %v (status %v)", err, resp.StatusCode)
		}
		if u.Username != "alice" || u.Email != "alice@example.com" || u.ID != alice.ID || u.IsAdmin {
			t.Fatalf("unexpected user %+v", u.User)
		}
		if len(u.PrivateToken) != 20 {
			t.Fatalf("private_token %q is not a 20-character token", u.PrivateToken)
		}
		me, _, err := s.NewClient(t, u.PrivateToken).Users.CurrentUser()
		if err != nil || me.Username != "alice" {
			t.Fatalf("the session token does not work: %v %+v", err, me)
		}
		if u.CurrentSignInAt == nil || u.State != "active" || u.WebURL != s.URL+"/alice" {
			t.Fatalf("sign-in not recorded or wrong shape: %+v", u.User)
		}
	})
	t.Run("by email, any case", func(t *testing.T) {
		u, resp, err := login(t, c, sessionOptions{Email: gitlab.Ptr("Alice@Example.com"), Password: gitlab.Ptr(alice.Password)})
		if err != nil || statusOf(t, resp) != http.StatusCreated || u.Username != "alice" {
			t.Fatalf("login by email: %v %+v", err, u)
		}
	})
	t.Run("login may be an email too", func(t *testing.T) {
		u, resp, err := login(t, c, sessionOptions{Login: gitlab.Ptr("alice@example.com"), Password: gitlab.Ptr(alice.Password)})
		if err != nil || statusOf(t, resp) != http.StatusCreated || u.Username != "alice" {
			t.Fatalf("login with an email as login: %v %+v", err, u)
		}
	})
	for name, opt := range map[string]sessionOptions{
		"wrong password": {Login: gitlab.Ptr("alice"), Password: gitlab.Ptr("not-the-password")},
		"unknown user":   {Login: gitlab.Ptr("nobody"), Password: gitlab.Ptr("whatever-123")},
		"empty password": {Login: gitlab.Ptr("alice"), Password: gitlab.Ptr("")},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := s.JSON(t, http.MethodPost, "/api/v4/session", jsonBody(t, opt), nil, "Content-Type", "application/json")
			if resp.StatusCode != http.StatusUnauthorized || strings.TrimSpace(string(body)) != `{"message":"401 Unauthorized"}` {
				t.Fatalf("got %d %s", resp.StatusCode, body)
			}
		})
	}
	t.Run("neither login nor email", func(t *testing.T) {
		resp, body := s.JSON(t, http.MethodPost, "/api/v4/session", strings.NewReader("password=secret123"), nil, "Content-Type", "application/x-www-form-urlencoded")
		want := `{"error":"login, email are missing, at least one parameter must be provided"}`
		if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(string(body)) != want {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
	})
	t.Run("no password", func(t *testing.T) {
		resp, body := s.JSON(t, http.MethodPost, "/api/v4/session?login=alice", nil, nil)
		if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(string(body)) != `{"error":"password is missing"}` {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
	})
	t.Run("form, query and multipart all work", func(t *testing.T) {
		for _, r := range []struct {
			path, body, ctype string
		}{
			{"/api/v4/session?login=alice&password=" + alice.Password, "", ""},
			{"/api/v4/session", "login=alice&password=" + alice.Password, "application/x-www-form-urlencoded"},
		} {
			resp, body := s.JSON(t, http.MethodPost, r.path, strings.NewReader(r.body), nil, "Content-Type", r.ctype)
			if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"private_token":"`) {
				t.Fatalf("%s: got %d %s", r.path, resp.StatusCode, body)
			}
		}
	})
}

func TestCurrentUser(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	carol := s.CreateUser(t, "carol")

	t.Run("own full view", func(t *testing.T) {
		me, resp, err := carol.Client.Users.CurrentUser()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatal(err)
		}
		if me.ID != carol.ID || me.Username != "carol" || me.Email != "carol@example.com" || me.Name != "User carol" {
			t.Fatalf("wrong user %+v", me)
		}
		if me.IsAdmin || me.External || !me.CanCreateGroup || !me.CanCreateProject || me.ProjectsLimit == 0 {
			t.Fatalf("wrong flags %+v", me)
		}
	})
	t.Run("raw shape", func(t *testing.T) {
		var raw map[string]any
		resp, body := s.JSON(t, http.MethodGet, "/api/v4/user", nil, &raw, "PRIVATE-TOKEN", carol.Token)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		for _, key := range []string{"id", "username", "name", "state", "avatar_url", "web_url", "created_at", "is_admin",
			"bio", "location", "skype", "linkedin", "twitter", "website_url", "organization", "email", "last_sign_in_at",
			"confirmed_at", "current_sign_in_at", "last_activity_on", "color_scheme_id", "projects_limit", "identities",
			"can_create_group", "can_create_project", "two_factor_enabled", "external"} {
			if _, ok := raw[key]; !ok {
				t.Errorf("key %q missing from GET /user", key)
			}
		}
		if _, ok := raw["private_token"]; ok {
			t.Error("GET /user without sudo must not show a private_token")
		}
		if raw["bio"] != nil || raw["last_sign_in_at"] != nil {
			t.Errorf("bio and last_sign_in_at of a fresh user must be null: %v %v", raw["bio"], raw["last_sign_in_at"])
		}
		if ids, ok := raw["identities"].([]any); !ok || len(ids) != 0 {
			t.Errorf("identities must be [] not %v", raw["identities"])
		}
		if !msTimestamp.MatchString(raw["created_at"].(string)) {
			t.Errorf("created_at %q is not millisecond UTC", raw["created_at"])
		}
		if av, _ := raw["avatar_url"].(string); !strings.HasPrefix(av, "https://www.gravatar.com/avatar/") || !strings.HasSuffix(av, "?s=80&d=identicon") {
			t.Errorf("avatar_url %q", av)
		}
		if _, ok := raw["$schema"]; ok {
			t.Error("response has a $schema key")
		}
	})
	t.Run("private_token parameter", func(t *testing.T) {
		resp, _ := s.JSON(t, http.MethodGet, "/api/v4/user?private_token="+carol.Token, nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("private_token param: %d", resp.StatusCode)
		}
	})
	for name, hdr := range map[string][]string{
		"no credentials":     nil,
		"bad private token":  {"PRIVATE-TOKEN", "nope"},
		"bad bearer token":   {"Authorization", "Bearer nope"},
		"bad basic password": {"Authorization", "Basic Y2Fyb2w6d3Jvbmc="},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := s.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, hdr...)
			if resp.StatusCode != 401 || strings.TrimSpace(string(body)) != `{"message":"401 Unauthorized"}` {
				t.Fatalf("got %d %s", resp.StatusCode, body)
			}
		})
	}
	t.Run("basic auth with password", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v4/user", nil)
		req.SetBasicAuth("carol", carol.Password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("basic auth: %d", resp.StatusCode)
		}
	})
	t.Run("read_user scope may read /user", func(t *testing.T) {
		ro := s.CreateUser(t, "", fennectest.Scopes("read_user"))
		if _, _, err := ro.Client.Users.CurrentUser(); err != nil {
			t.Fatalf("read_user token on GET /user: %v", err)
		}
		resp, body := s.JSON(t, http.MethodGet, "/api/v4/version", nil, nil, "PRIVATE-TOKEN", ro.Token)
		if resp.StatusCode != 200 {
			t.Fatalf("read_user token on /version: %d %s", resp.StatusCode, body)
		}
	})
}

func TestSudo(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	dave := s.CreateUser(t, "dave")
	erin := s.CreateUser(t, "erin")

	t.Run("admin by username returns that user with their private token", func(t *testing.T) {
		var got map[string]any
		req, _ := s.Client.NewRequest(http.MethodGet, "user", nil, []gitlab.RequestOptionFunc{gitlab.WithSudo("dave")})
		resp, err := s.Client.Do(req, &got)
		if err != nil || resp.StatusCode != 200 {
			t.Fatal(err)
		}
		// The spec's sudo view carries the target's one private token
		// (issue 35), the same on every read (issue 10: a read never mints
		// a new one per call).
		tok, _ := got["private_token"].(string)
		if len(tok) != 20 || got["username"] != "dave" {
			t.Fatalf("sudo returned %+v", got)
		}
		if me, _, err := s.NewClient(t, tok).Users.CurrentUser(); err != nil || me.Username != "dave" {
			t.Fatalf("dave's private token from sudo: %v %+v", err, me)
		}
	})
	t.Run("admin by id in the SUDO header", func(t *testing.T) {
		var got map[string]any
		resp, body := s.JSON(t, http.MethodGet, "/api/v4/user", nil, &got, "PRIVATE-TOKEN", s.RootToken, "SUDO", strconv.FormatInt(erin.ID, 10))
		if resp.StatusCode != 200 || got["username"] != "erin" {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("non-admin", func(t *testing.T) {
		resp, body := s.JSON(t, http.MethodGet, "/api/v4/user?sudo=erin", nil, nil, "PRIVATE-TOKEN", dave.Token)
		if resp.StatusCode != 403 || strings.TrimSpace(string(body)) != `{"message":"403 Forbidden - Must be admin to use sudo"}` {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
	t.Run("unknown user", func(t *testing.T) {
		resp, body := s.JSON(t, http.MethodGet, "/api/v4/user?sudo=ghost", nil, nil, "PRIVATE-TOKEN", s.RootToken)
		if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"message":"404 No user id or username for: ghost Not Found"}` {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	})
}

func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	u := s.CreateUser(t, "frank")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				me, _, err := u.Client.Users.CurrentUser()
				if err != nil {
					errs <- err
					return
				}
				if me.Username != "frank" {
					errs <- context.Canceled
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestAdministratorBootstrap: the first start creates root with a generated
// password printed once in the log; the next start on the same data creates
// nothing and prints no password.
func TestAdministratorBootstrap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := func() (*fennec.App, *observer.ObservedLogs) {
		core, logs := observer.New(zap.InfoLevel)
		cfg := config.Default()
		cfg.Listen = "127.0.0.1:0"
		cfg.Data = dir
		config.Modify(&cfg, identity.SectionName, func(c *identity.Config) { c.PasswordCost = 4 })
		app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(identity.Module()), fennec.WithLogger(zap.New(core)))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return app, logs
	}
	stop := func(app *fennec.App) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}

	app, logs := start()
	entries := logs.FilterMessageSnippet("administrator").All()
	if len(entries) != 1 {
		t.Fatalf("want one administrator log line, got %d", len(entries))
	}
	fields := entries[0].ContextMap()
	password, _ := fields["password"].(string)
	if fields["login"] != "root" || len(password) < 16 {
		t.Fatalf("log line does not give the login: %v", fields)
	}
	c, _ := gitlab.NewClient("", gitlab.WithBaseURL(app.URL()+"/api/v4"), gitlab.WithoutRetries())
	u, resp, err := login(t, c, sessionOptions{Login: gitlab.Ptr("root"), Password: gitlab.Ptr(password)})
	if err != nil || resp.StatusCode != 201 || !u.IsAdmin || u.Email != "admin@example.com" {
		t.Fatalf("root login with the printed password: %v %+v", err, u)
	}
	stop(app)

	app, logs = start()
	defer stop(app)
	if n := logs.FilterMessageSnippet("administrator").Len(); n != 0 {
		t.Fatalf("second start logged the administrator again (%d lines)", n)
	}
	c, _ = gitlab.NewClient("", gitlab.WithBaseURL(app.URL()+"/api/v4"), gitlab.WithoutRetries())
	if _, resp, err := login(t, c, sessionOptions{Login: gitlab.Ptr("root"), Password: gitlab.Ptr(password)}); err != nil || resp.StatusCode != 201 {
		t.Fatalf("root password changed across restarts: %v", err)
	}
}
