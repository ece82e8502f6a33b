package identity_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// loginToken signs in through POST /session and returns the private_token
// of the answer.
func loginToken(t *testing.T, s *fennectest.Server, login, password string) string {
	t.Helper()
	r := call(t, s, "", http.MethodPost, "/api/v4/session", map[string]string{"login": login, "password": password})
	r.expectStatus(t, http.StatusCreated)
	tok, _ := r.object(t)["private_token"].(string)
	if len(tok) != 20 {
		t.Fatalf("POST /session: private_token %q is not a 20-character token", tok)
	}
	return tok
}

// sudoToken reads GET /user?sudo=ref with the administrator's credential
// and returns its private_token ("" when the answer has none).
func sudoToken(t *testing.T, s *fennectest.Server, adminToken, ref string) string {
	t.Helper()
	r := call(t, s, adminToken, http.MethodGet, "/api/v4/user?sudo="+ref, nil)
	r.expectStatus(t, http.StatusOK)
	m := r.object(t)
	if _, ok := m["private_token"]; !ok {
		return ""
	}
	tok, _ := m["private_token"].(string)
	if tok == "" {
		t.Fatalf("GET /user?sudo=%s: private_token %v", ref, m["private_token"])
	}
	return tok
}

// TestPrivateTokenOnePerUser: the spec's POST /session returns the user's
// private token, GitLab 9.x's one per user; Fennec minted a new one per
// login (issue 35).
func TestPrivateTokenOnePerUser(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")

	first := loginToken(t, s, "alice", alice.Password)
	for i := 0; i < 3; i++ {
		if again := loginToken(t, s, "alice@example.com", alice.Password); again != first {
			t.Fatalf("login %d returned another private token", i+2)
		}
	}
	if loginToken(t, s, "bob", bob.Password) == first {
		t.Fatal("bob got alice's private token")
	}

	// It authenticates with full api rights, as header and as parameter.
	call(t, s, first, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusOK)
	if u := call(t, s, "", http.MethodGet, "/api/v4/user?private_token="+first, nil).object(t); u["username"] != "alice" {
		t.Fatalf("private_token parameter acts as %v", u["username"])
	}
	r := call(t, s, first, http.MethodPost, "/api/v4/projects", map[string]any{"name": "tokproject"})
	r.expectStatus(t, http.StatusCreated)

	// No other view shows it: the own view, a single user (to oneself, to
	// another user, to an administrator), the lists.
	for _, c := range []struct{ token, path string }{
		{first, "/api/v4/user"},
		{first, "/api/v4/users/" + store.IDString(alice.ID)},
		{bob.Token, "/api/v4/users/" + store.IDString(alice.ID)},
		{s.RootToken, "/api/v4/users/" + store.IDString(alice.ID)},
		{s.RootToken, "/api/v4/users?username=alice"},
		{first, "/api/v4/users?username=alice"},
	} {
		r := call(t, s, c.token, http.MethodGet, c.path, nil)
		r.expectStatus(t, http.StatusOK)
		if strings.Contains(r.Body, "private_token") || strings.Contains(r.Body, first) {
			t.Fatalf("GET %s shows the private token: %s", c.path, r.Body)
		}
	}
}

// TestSudoShowsThePrivateToken: GET /user?sudo=ID by an administrator has
// the target's private_token in the spec; Fennec left it out.
func TestSudoShowsThePrivateToken(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	never := s.CreateUser(t, "never") // has not signed in yet
	plain := s.CreateUser(t, "plain")
	rootID := num(call(t, s, s.RootToken, http.MethodGet, "/api/v4/user", nil).object(t)["id"])

	own := loginToken(t, s, "alice", alice.Password)
	if got := sudoToken(t, s, s.RootToken, "alice"); got != own {
		t.Fatalf("sudo shows %q, want alice's own private token", got)
	}
	if got := sudoToken(t, s, s.RootToken, store.IDString(alice.ID)); got != own {
		t.Fatal("sudo by id shows another token")
	}

	// A user who never signed in gets theirs at the first sudo read, and the
	// same one from every later read and from their own login.
	made := sudoToken(t, s, s.RootToken, "never")
	if len(made) != 20 || made == own {
		t.Fatalf("sudo on a user without a token shows %q", made)
	}
	if sudoToken(t, s, s.RootToken, "never") != made || loginToken(t, s, "never", never.Password) != made {
		t.Fatal("the private token made by sudo is not the user's one token")
	}
	call(t, s, made, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusOK)

	// A token with api and sudo shows it; one with read_user and sudo gets
	// the view without it (it must not trade itself for full rights).
	apiSudo := newToken(t, s, rootID, "personal_access_tokens", "api", "sudo")
	if sudoToken(t, s, apiSudo, "alice") != own {
		t.Fatal("an api+sudo token does not see the private token")
	}
	readSudo := newToken(t, s, rootID, "personal_access_tokens", "read_user", "sudo")
	if got := sudoToken(t, s, readSudo, "alice"); got != "" {
		t.Fatal("a read_user+sudo token was given the target's private token")
	}

	// Non-administrators never see one: sudo is refused, and their own
	// GET /user has none.
	call(t, s, plain.Token, http.MethodGet, "/api/v4/user?sudo=alice", nil).expect(t, http.StatusForbidden, sudoNeedsAdmin)
	plainOwn := loginToken(t, s, "plain", plain.Password)
	for _, tok := range []string{plain.Token, plainOwn} {
		r := call(t, s, tok, http.MethodGet, "/api/v4/user", nil)
		r.expectStatus(t, http.StatusOK)
		if strings.Contains(r.Body, "private_token") {
			t.Fatalf("GET /user without sudo shows a private token: %s", r.Body)
		}
	}
}

// TestResetPrivateToken: the private token is resettable; the old one stops
// working at once and the next login returns a new one.
func TestResetPrivateToken(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	readOnly := s.CreateUser(t, "readonly", fennectest.Scopes("read_user"))

	old := loginToken(t, s, "alice", alice.Password)
	call(t, s, old, http.MethodPost, "/api/v4/user/private_token/reset", nil).expect(t, http.StatusNoContent, "")
	call(t, s, old, http.MethodGet, "/api/v4/user", nil).expect(t, http.StatusUnauthorized, `{"message":"401 Unauthorized"}`)
	fresh := loginToken(t, s, "alice", alice.Password)
	if fresh == old {
		t.Fatal("the reset kept the token")
	}
	call(t, s, fresh, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusOK)
	if sudoToken(t, s, s.RootToken, "alice") != fresh {
		t.Fatal("sudo shows another token than the new one")
	}
	// The personal access token is not the private token and keeps working.
	call(t, s, alice.Token, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusOK)

	// An administrator resets someone else's with sudo.
	call(t, s, s.RootToken, http.MethodPost, "/api/v4/user/private_token/reset?sudo=alice", nil).expect(t, http.StatusNoContent, "")
	call(t, s, fresh, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusUnauthorized)
	third := sudoToken(t, s, s.RootToken, "alice")
	if third == fresh || third == old || loginToken(t, s, "alice", alice.Password) != third {
		t.Fatal("after an administrator's reset the user does not have one new token")
	}

	// A read-only token may not reset, and nobody anonymous.
	own := loginToken(t, s, "readonly", readOnly.Password)
	call(t, s, readOnly.Token, http.MethodPost, "/api/v4/user/private_token/reset", nil).expect(t, http.StatusForbidden, noScope)
	call(t, s, "", http.MethodPost, "/api/v4/user/private_token/reset", nil).expect(t, http.StatusUnauthorized, `{"message":"401 Unauthorized"}`)
	call(t, s, own, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusOK)
}

// TestPrivateTokenRevokedWithTheUser: blocking revokes the private token
// (it does not come back with an unblock); deleting the user removes it.
func TestPrivateTokenRevokedWithTheUser(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")

	before := loginToken(t, s, "alice", alice.Password)
	call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/"+store.IDString(alice.ID)+"/block", nil).expect(t, http.StatusCreated, "true")
	call(t, s, before, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusUnauthorized)
	call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/"+store.IDString(alice.ID)+"/unblock", nil).expect(t, http.StatusCreated, "true")
	call(t, s, before, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusUnauthorized)
	after := loginToken(t, s, "alice", alice.Password)
	if after == before {
		t.Fatal("the unblocked user got the revoked token back")
	}
	call(t, s, after, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusOK)

	gone := loginToken(t, s, "bob", bob.Password)
	call(t, s, s.RootToken, http.MethodDelete, "/api/v4/users/"+store.IDString(bob.ID), nil).expectStatus(t, http.StatusOK)
	call(t, s, gone, http.MethodGet, "/api/v4/user", nil).expect(t, http.StatusUnauthorized, `{"message":"401 Unauthorized"}`)
}

// TestPrivateTokenNotInTheClearAtRest: the token is shown again, so it is
// kept, but sealed with the instance key: the store never holds it
// in the clear.
func TestPrivateTokenNotInTheClearAtRest(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	tok := loginToken(t, s, "alice", alice.Password)
	sudoed := sudoToken(t, s, s.RootToken, store.IDString(s.CreateUser(t, "carol").ID))
	db := s.StoreBytes(t)
	for _, secret := range []string{tok, sudoed, s.RootToken} {
		if len(secret) != 20 {
			t.Fatalf("no private token to look for: %q", secret)
		}
		if strings.Contains(string(db), secret) {
			t.Fatal("the store holds a private token in the clear")
		}
	}
}

// TestPrivateTokenNeverLogged: everything a private token goes through
// (login, sudo, use as header and as parameter, reset) leaves no trace of it
// in any log entry, at any level.
func TestPrivateTokenNeverLogged(t *testing.T) {
	t.Parallel()
	obs, logs := observer.New(zapcore.DebugLevel)
	s := stocktest.Start(t, fennectest.WithLogger(zap.New(obs)))
	alice := s.CreateUser(t, "alice")

	tok := loginToken(t, s, "alice", alice.Password)
	if sudoToken(t, s, s.RootToken, "alice") != tok {
		t.Fatal("sudo shows another token")
	}
	call(t, s, tok, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusOK)
	call(t, s, "", http.MethodGet, "/api/v4/projects?private_token="+tok, nil).expectStatus(t, http.StatusOK)
	call(t, s, "", http.MethodPost, "/api/v4/projects", "name=logged&private_token="+tok).expectStatus(t, http.StatusCreated)
	call(t, s, "", http.MethodGet, "/api/v4/user?private_token="+tok+"x", nil).expectStatus(t, http.StatusUnauthorized)
	call(t, s, tok, http.MethodPost, "/api/v4/user/private_token/reset", nil).expect(t, http.StatusNoContent, "")
	call(t, s, tok, http.MethodGet, "/api/v4/user", nil).expectStatus(t, http.StatusUnauthorized)
	fresh := loginToken(t, s, "alice", alice.Password)
	s.Drain(t)

	if logs.Len() == 0 {
		t.Fatal("no log entries were captured: the test would prove nothing")
	}
	for _, e := range logs.All() {
		var text strings.Builder
		text.WriteString(e.Message)
		enc := zapcore.NewMapObjectEncoder()
		for _, f := range e.Context {
			f.AddTo(enc)
		}
		for k, v := range enc.Fields {
			text.WriteString(" " + k + "=")
			text.WriteString(strings.TrimSpace(strings.ReplaceAll(fmt.Sprint(v), "\n", " ")))
		}
		for _, secret := range []string{tok, fresh} {
			if strings.Contains(text.String(), secret) {
				t.Fatalf("a log entry holds a private token: %s", text.String())
			}
		}
	}
}
