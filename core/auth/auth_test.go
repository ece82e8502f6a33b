package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/auth"
)

func TestCredentialsFromFollowsGitLabPrecedence(t *testing.T) {
	params := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name    string
		headers map[string]string
		basic   [2]string
		params  map[string]string
		want    auth.Credentials
	}{
		{name: "nothing", want: auth.Credentials{}},
		{name: "header beats parameter", headers: map[string]string{"PRIVATE-TOKEN": "h"}, params: map[string]string{"private_token": "p"},
			want: auth.Credentials{PrivateToken: "h"}},
		{name: "parameter", params: map[string]string{"private_token": "p"}, want: auth.Credentials{PrivateToken: "p"}},
		{name: "bearer, any case", headers: map[string]string{"Authorization": "bEaReR  tok "}, want: auth.Credentials{BearerToken: "tok"}},
		{name: "access_token parameter", params: map[string]string{"access_token": "o"}, want: auth.Credentials{BearerToken: "o"}},
		{name: "basic", basic: [2]string{"alice", "pw"}, want: auth.Credentials{BasicUser: "alice", BasicPass: "pw", HasBasic: true}},
		{name: "sudo header beats parameter", headers: map[string]string{"SUDO": "1"}, params: map[string]string{"sudo": "bob"},
			want: auth.Credentials{Sudo: "1"}},
		{name: "sudo parameter", params: map[string]string{"sudo": "bob"}, want: auth.Credentials{Sudo: "bob"}},
		{name: "a short authorization header is not bearer", headers: map[string]string{"Authorization": "Bearer"}, want: auth.Credentials{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			for k, v := range c.headers {
				r.Header.Set(k, v)
			}
			if c.basic[0] != "" {
				r.SetBasicAuth(c.basic[0], c.basic[1])
			}
			got := auth.CredentialsFrom(r, params(c.params))
			if got.Addr != r.RemoteAddr {
				t.Fatalf("Addr %q, want the request's %q", got.Addr, r.RemoteAddr)
			}
			got.Addr = ""
			if got != c.want {
				t.Fatalf("got %+v want %+v", got, c.want)
			}
			if got.Empty() != (c.want.PrivateToken == "" && c.want.BearerToken == "" && !c.want.HasBasic) {
				t.Fatalf("Empty() wrong for %+v", got)
			}
		})
	}
}

func TestParseUserRef(t *testing.T) {
	for in, want := range map[string]struct {
		id   int64
		name string
	}{"42": {42, ""}, "alice": {0, "alice"}, "0": {0, "0"}, "-3": {0, "-3"}, "12abc": {0, "12abc"}} {
		id, name := auth.ParseUserRef(in)
		if id != want.id || name != want.name {
			t.Errorf("%q: got (%d, %q) want (%d, %q)", in, id, name, want.id, want.name)
		}
	}
}

func TestPrincipalScopes(t *testing.T) {
	anon := auth.Anonymous()
	if !anon.IsAnonymous() || anon.IsAdmin() || anon.UserID() != 0 {
		t.Fatal("anonymous principal")
	}
	u := &auth.User{ID: 7, Username: "u"}
	password := &auth.Principal{User: u, Method: auth.MethodPassword}
	readUser := &auth.Principal{User: u, Method: auth.MethodPersonal, Scopes: []string{auth.ScopeReadUser}}
	if !password.HasScope(auth.ScopeAPI) || !password.AllowsAny([]string{auth.ScopeAPI}) {
		t.Fatal("a password login is unrestricted")
	}
	if readUser.HasScope(auth.ScopeAPI) || readUser.AllowsAny([]string{auth.ScopeAPI}) {
		t.Fatal("read_user must not allow api")
	}
	if !readUser.AllowsAny([]string{auth.ScopeAPI, auth.ScopeReadUser}) {
		t.Fatal("read_user must allow an operation that accepts read_user")
	}
}

// fakeTokens resolves every secret to the principal of the same name.
type fakeTokens map[string]*auth.Principal

func (f fakeTokens) ResolveToken(_ context.Context, _ auth.TokenKind, secret string) (*auth.Principal, error) {
	if p, ok := f[secret]; ok {
		return p, nil
	}
	return nil, auth.ErrUnknownToken
}

type fakeUsers map[string]*auth.User

func (f fakeUsers) LookupUser(_ context.Context, ref string) (*auth.User, error) {
	if u, ok := f[ref]; ok {
		return u, nil
	}
	return nil, auth.ErrUserNotFound
}

type fakePasswords map[string]*auth.User

func (f fakePasswords) AuthenticatePassword(_ context.Context, login, password string) (*auth.User, error) {
	if u, ok := f[login]; ok && password == "right" {
		return u, nil
	}
	return nil, auth.ErrInvalidPassword
}

// TestSudoRules is the method x scope table of who may sudo (issue 10):
// GitLab 10.2's rule for tokens with scopes (personal access, impersonation
// and OAuth tokens need the sudo scope), an administrator's private token as
// in 9.x, and nothing else: not a password, not a job token.
func TestSudoRules(t *testing.T) {
	admin := &auth.User{ID: 1, Username: "root", Admin: true}
	plain := &auth.User{ID: 2, Username: "alice"}
	target := &auth.User{ID: 3, Username: "bob"}
	tokens := fakeTokens{}
	add := func(name string, u *auth.User, m auth.Method, scopes ...string) string {
		tokens[name] = &auth.Principal{User: u, Method: m, Scopes: scopes, TokenID: int64(len(tokens) + 1)}
		return name
	}
	r := &auth.Resolver{Tokens: []auth.TokenResolver{tokens}, Users: fakeUsers{"bob": target, "3": target},
		Passwords: fakePasswords{"root": admin}}
	needsToken := "auth: forbidden: Private token must be specified in order to use sudo"
	needsAdmin := "auth: forbidden: Must be admin to use sudo"
	cases := []struct {
		creds auth.Credentials
		want  string // error text, "" for acting as bob
	}{
		{auth.Credentials{PrivateToken: add("private", admin, auth.MethodPrivateToken)}, ""},
		{auth.Credentials{PrivateToken: add("pat-api", admin, auth.MethodPersonal, "api")}, needsToken},
		{auth.Credentials{PrivateToken: add("pat-read", admin, auth.MethodPersonal, "read_user")}, needsToken},
		{auth.Credentials{PrivateToken: add("pat-api-sudo", admin, auth.MethodPersonal, "api", "sudo")}, ""},
		{auth.Credentials{PrivateToken: add("pat-read-sudo", admin, auth.MethodPersonal, "read_user", "sudo")}, ""},
		{auth.Credentials{PrivateToken: add("pat-no-scopes", admin, auth.MethodPersonal)}, needsToken},
		{auth.Credentials{PrivateToken: add("imp-api", admin, auth.MethodImpersonation, "api")}, needsToken},
		{auth.Credentials{PrivateToken: add("imp-api-sudo", admin, auth.MethodImpersonation, "api", "sudo")}, ""},
		{auth.Credentials{BearerToken: add("oauth-api", admin, auth.MethodOAuth, "api")}, needsToken},
		{auth.Credentials{BearerToken: add("oauth-read", admin, auth.MethodOAuth, "read_user")}, needsToken},
		{auth.Credentials{BearerToken: add("oauth-api-sudo", admin, auth.MethodOAuth, "api", "sudo")}, ""},
		// An OAuth resolver that forgets to set scopes must not get sudo for free.
		{auth.Credentials{BearerToken: add("oauth-nil", admin, auth.MethodOAuth)}, needsToken},
		{auth.Credentials{PrivateToken: add("job", admin, auth.MethodJobToken)}, needsToken},
		{auth.Credentials{PrivateToken: add("unknown-method", admin, auth.Method("future"))}, needsToken},
		{auth.Credentials{HasBasic: true, BasicUser: "root", BasicPass: "right"}, needsToken},
		{auth.Credentials{HasBasic: true, BasicUser: "x", BasicPass: add("basic-pat-sudo", admin, auth.MethodPersonal, "api", "sudo")}, ""},
		{auth.Credentials{PrivateToken: add("plain-private", plain, auth.MethodPrivateToken)}, needsAdmin},
		{auth.Credentials{PrivateToken: add("plain-pat-sudo", plain, auth.MethodPersonal, "api", "sudo")}, needsAdmin},
		{auth.Credentials{BearerToken: add("plain-oauth-sudo", plain, auth.MethodOAuth, "api", "sudo")}, needsAdmin},
	}
	for _, c := range cases {
		name := c.creds.PrivateToken + c.creds.BearerToken + c.creds.BasicPass
		t.Run(name, func(t *testing.T) {
			for _, sudo := range []string{"bob", "3"} {
				c.creds.Sudo = sudo
				p, err := r.Resolve(context.Background(), c.creds)
				if c.want != "" {
					if err == nil || err.Error() != c.want {
						t.Fatalf("sudo %s: got %v, %v; want %q", sudo, p, err, c.want)
					}
					continue
				}
				if err != nil || p.User != target || p.Sudoer == nil || p.Sudoer.ID != admin.ID {
					t.Fatalf("sudo %s: got %+v, %v; want acting as bob", sudo, p, err)
				}
			}
		})
	}
	t.Run("unknown target after a permitted token", func(t *testing.T) {
		_, err := r.Resolve(context.Background(), auth.Credentials{PrivateToken: "private", Sudo: "ghost"})
		var nf *auth.SudoNotFoundError
		if !errors.As(err, &nf) || nf.Value != "ghost" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("anonymous", func(t *testing.T) {
		if _, err := r.Resolve(context.Background(), auth.Credentials{Sudo: "bob"}); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("got %v", err)
		}
	})
}

type recordingPasswords struct {
	addr string
	err  error
}

func (p *recordingPasswords) AuthenticatePassword(ctx context.Context, _, _ string) (*auth.User, error) {
	p.addr = auth.ClientAddrFrom(ctx)
	return nil, p.err
}

// TestBasicPasswordThrottle: the resolver hands the client's address to the
// password check and lets its throttling answer through, which is still an
// ErrUnauthorized for callers that know nothing of throttling.
func TestBasicPasswordThrottle(t *testing.T) {
	pw := &recordingPasswords{err: &auth.ThrottledError{RetryAfter: 90*time.Second + time.Millisecond}}
	r := &auth.Resolver{Passwords: pw}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "192.0.2.4:5555"
	req.SetBasicAuth("alice", "pw")
	_, err := r.Resolve(context.Background(), auth.CredentialsFrom(req, nil))
	var th *auth.ThrottledError
	if !errors.As(err, &th) || !errors.Is(err, auth.ErrUnauthorized) || th.RetryAfterSeconds() != "91" {
		t.Fatalf("got %v", err)
	}
	if pw.addr != "192.0.2.4:5555" {
		t.Fatalf("password check saw address %q", pw.addr)
	}
	if s := (&auth.ThrottledError{}).RetryAfterSeconds(); s != "1" {
		t.Fatalf("Retry-After of a spent lock: %q, want 1", s)
	}
	pw.err = auth.ErrInvalidPassword
	if _, err := r.Resolve(context.Background(), auth.CredentialsFrom(req, nil)); err != auth.ErrUnauthorized {
		t.Fatalf("wrong password: %v", err)
	}
}

// The session cookie is a credential for GET and HEAD only: a browser sends
// it with any cross-site form, so a write must never be authenticated by it.
func TestSessionCookieIsReadForGetAndHeadOnly(t *testing.T) {
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		r := httptest.NewRequest(m, "/", nil)
		r.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: "s3ss"})
		c := auth.CredentialsFrom(r, nil)
		readable := m == http.MethodGet || m == http.MethodHead
		if (c.Session == "s3ss") != readable || c.Empty() == readable {
			t.Fatalf("%s: session %q, empty %v", m, c.Session, c.Empty())
		}
	}
}

type sessionResolver struct{ user *auth.User }

func (s sessionResolver) ResolveToken(_ context.Context, kind auth.TokenKind, secret string) (*auth.Principal, error) {
	if kind != auth.KindSession {
		return nil, auth.ErrUnknownToken
	}
	if secret != "good" {
		return nil, auth.ErrUnauthorized
	}
	return &auth.Principal{User: s.user, Method: auth.MethodSession}, nil
}

// A stale session cookie browses as anonymous; a live one is its user; any
// other credential wins over the cookie.
func TestSessionResolvesLastAndStaleIsAnonymous(t *testing.T) {
	alice := &auth.User{ID: 7, Username: "alice"}
	r := &auth.Resolver{Tokens: []auth.TokenResolver{sessionResolver{alice}}}
	p, err := r.Resolve(context.Background(), auth.Credentials{Session: "good"})
	if err != nil || p.UserID() != 7 || p.Method != auth.MethodSession {
		t.Fatalf("live session: %+v %v", p, err)
	}
	p, err = r.Resolve(context.Background(), auth.Credentials{Session: "stale"})
	if err != nil || !p.IsAnonymous() {
		t.Fatalf("stale session: %+v %v", p, err)
	}
	if _, err = r.Resolve(context.Background(), auth.Credentials{Session: "good", PrivateToken: "x"}); !errors.Is(err, auth.ErrUnauthorized) {
		t.Fatalf("a bad private token beside a session cookie: %v, want unauthorized", err)
	}
}
