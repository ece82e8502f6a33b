package auth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

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
