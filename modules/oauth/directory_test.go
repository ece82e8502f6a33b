package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/sdk/authprovider"
)

// directory is an in-process auth provider, as an embedder registers with
// fennec.WithAuthProvider (the LDAP plugin answers the same calls; it is
// tested against a real slapd in plugins/auth-ldap): one person.
type directory struct{ login, password string }

func (d directory) Describe(context.Context) (authprovider.Description, error) {
	return authprovider.Description{Name: "dir", Version: "1", APIVersions: []string{"v1"}}, nil
}

func (d directory) Configure(context.Context, []byte) error { return nil }

func (d directory) Authenticate(_ context.Context, login, password string) (authprovider.Identity, error) {
	switch {
	case login != d.login:
		return authprovider.Identity{}, authprovider.ErrUnknownUser
	case password != d.password:
		return authprovider.Identity{}, authprovider.ErrInvalidCredentials
	}
	return authprovider.Identity{ExternalID: "uid=" + d.login + ",dc=example,dc=com", Username: d.login,
		Email: d.login + "@corp.example.com", Name: "Directory " + d.login}, nil
}

func (d directory) SyncUsers(_ context.Context, ids []string) ([]authprovider.Identity, error) {
	return nil, authprovider.ErrUnavailable
}

// Directory (LDAP) users sign in on the page and get tokens by password,
// through the same path as POST /session; their first sign-in creates them.
func TestDirectoryUsersSignInOnThePageAndByPassword(t *testing.T) {
	t.Parallel()
	dir := directory{login: "dora", password: "dir-secret-1"}
	e := start(t, fennectest.WithOptions(fennec.WithAuthProvider("ldapmain", dir)))
	w := e.web(t)
	resp := w.signIn(t, "dora", "dir-secret-1")
	c := sessionCookie(resp)
	if resp.StatusCode != 303 || c == nil {
		t.Fatalf("directory sign-in on the page: %d", resp.StatusCode)
	}
	r, raw := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Cookie", "_fennec_session="+c.Value)
	if r.StatusCode != 200 {
		t.Fatalf("GET /user with the directory user's session: %d %s", r.StatusCode, raw)
	}
	tok := e.passwordToken(t, "dora", "dir-secret-1", url.Values{"scope": {"read_user"}})
	me, _, err := e.bearer(t, tok["access_token"].(string)).Users.CurrentUser()
	if err != nil || me.Username != "dora" {
		t.Fatalf("directory user's token: %v %v", me, err)
	}
	resp2, body := e.post(t, "/oauth/token", url.Values{"grant_type": {"password"}, "username": {"dora"}, "password": {"wrong"}})
	wantOAuthError(t, "directory user, wrong password", resp2, body, 400, "invalid_grant")

	// Sessions end after a week, by the module's clock.
	e.clock.advance(7*24*time.Hour + time.Second)
	if r, _ := e.JSON(t, http.MethodGet, "/api/v4/user", nil, nil, "Cookie", "_fennec_session="+c.Value); r.StatusCode != 401 {
		t.Fatalf("a week-old session: %d", r.StatusCode)
	}
}
