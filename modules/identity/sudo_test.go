package identity_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const (
	sudoNeedsToken = `{"message":"403 Forbidden - Private token must be specified in order to use sudo"}`
	sudoNeedsAdmin = `{"message":"403 Forbidden - Must be admin to use sudo"}`
	noScope        = `{"message":"403 Forbidden - insufficient scope"}`
)

// newToken creates a personal access or impersonation token through the API
// and returns its secret.
func newToken(t *testing.T, s *fennectest.Server, userID int64, kind string, scopes ...string) string {
	t.Helper()
	r := call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/"+store.IDString(userID)+"/"+kind,
		map[string]any{"name": kind, "scopes": scopes})
	r.expectStatus(t, http.StatusCreated)
	return r.object(t)["token"].(string)
}

// TestSudoMatrix is the credential kind x scope x sudo table of issue 10: a
// leaked read-only administrator token used to become full API access
// through sudo. GitLab 10.2's rule holds: personal access and impersonation
// tokens need the sudo scope; an admin's private (session) token may sudo as
// GitLab 9.x allowed; nothing else may.
func TestSudoMatrix(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	admin := s.CreateUser(t, "sudoadmin", fennectest.Admin())
	plain := s.CreateUser(t, "sudoplain")
	target := s.CreateUser(t, "sudotarget")

	adminSession := s.Login(t, admin.Username, admin.Password)
	plainSession := s.Login(t, plain.Username, plain.Password)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(admin.Username+":"+admin.Password))

	const pat, imp = "personal_access_tokens", "impersonation_tokens"
	creds := []struct {
		name string
		hdr  []string
		// want is the exact answer to GET /user?sudo=sudotarget; "" means
		// 200 acting as the target.
		want   string
		status int
	}{
		{"root session token", []string{"PRIVATE-TOKEN", s.RootToken}, "", 200},
		{"admin session token", []string{"PRIVATE-TOKEN", adminSession}, "", 200},
		{"admin personal api", []string{"PRIVATE-TOKEN", admin.Token}, sudoNeedsToken, 403},
		{"admin personal read_user", []string{"PRIVATE-TOKEN", newToken(t, s, admin.ID, pat, "read_user")}, sudoNeedsToken, 403},
		{"admin personal api+sudo", []string{"PRIVATE-TOKEN", newToken(t, s, admin.ID, pat, "api", "sudo")}, "", 200},
		{"admin personal read_user+sudo", []string{"PRIVATE-TOKEN", newToken(t, s, admin.ID, pat, "read_user", "sudo")}, "", 200},
		// sudo alone passes the sudo check, then GET /user wants api or read_user.
		{"admin personal sudo only", []string{"PRIVATE-TOKEN", newToken(t, s, admin.ID, pat, "sudo")}, noScope, 403},
		{"admin impersonation api", []string{"PRIVATE-TOKEN", newToken(t, s, admin.ID, imp, "api")}, sudoNeedsToken, 403},
		{"admin impersonation read_user", []string{"PRIVATE-TOKEN", newToken(t, s, admin.ID, imp, "read_user")}, sudoNeedsToken, 403},
		{"admin impersonation api+sudo", []string{"PRIVATE-TOKEN", newToken(t, s, admin.ID, imp, "api", "sudo")}, "", 200},
		{"admin personal api+sudo as git password", []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString(
			[]byte("x:"+newToken(t, s, admin.ID, pat, "api", "sudo")))}, "", 200},
		{"admin password (basic auth)", []string{"Authorization", basic}, sudoNeedsToken, 403},
		{"non-admin session token", []string{"PRIVATE-TOKEN", plainSession}, sudoNeedsAdmin, 403},
		{"non-admin personal api", []string{"PRIVATE-TOKEN", plain.Token}, sudoNeedsAdmin, 403},
		{"non-admin personal api+sudo", []string{"PRIVATE-TOKEN", newToken(t, s, plain.ID, pat, "api", "sudo")}, sudoNeedsAdmin, 403},
		{"non-admin impersonation api+sudo", []string{"PRIVATE-TOKEN", newToken(t, s, plain.ID, imp, "api", "sudo")}, sudoNeedsAdmin, 403},
	}
	for _, c := range creds {
		t.Run(c.name, func(t *testing.T) {
			for _, how := range [][]string{{"?sudo=sudotarget"}, {"", "SUDO", store.IDString(target.ID)}} {
				r := call(t, s, "", http.MethodGet, "/api/v4/user"+how[0], nil, append(append([]string{}, c.hdr...), how[1:]...)...)
				if c.want != "" {
					r.expect(t, c.status, c.want)
					continue
				}
				r.expectStatus(t, http.StatusOK)
				m := r.object(t)
				if m["username"] != "sudotarget" || num(m["id"]) != target.ID {
					t.Fatalf("acts as %v, want sudotarget", m["username"])
				}
				// The target's private token comes only with credentials that
				// have full api rights: a read_user+sudo token must not trade
				// itself for it.
				if _, has := m["private_token"]; has != !strings.Contains(c.name, "read_user") {
					t.Fatalf("GET /user with sudo: private_token shown %v: %s", has, r.Body)
				}
			}
		})
	}

	t.Run("refused before the target is looked up", func(t *testing.T) {
		// A token that may not sudo learns nothing about which users exist.
		call(t, s, admin.Token, http.MethodGet, "/api/v4/user?sudo=nobody-here", nil).expect(t, 403, sudoNeedsToken)
		call(t, s, plain.Token, http.MethodGet, "/api/v4/user?sudo=nobody-here", nil).expect(t, 403, sudoNeedsAdmin)
		call(t, s, adminSession, http.MethodGet, "/api/v4/user?sudo=nobody-here", nil).
			expect(t, 404, `{"message":"404 No user id or username for: nobody-here Not Found"}`)
	})

	t.Run("read-only admin token cannot create an administrator", func(t *testing.T) {
		rootID := num(call(t, s, s.RootToken, http.MethodGet, "/api/v4/user", nil).object(t)["id"])
		ro := newToken(t, s, rootID, pat, "read_user")
		roSudo := newToken(t, s, rootID, pat, "read_user", "sudo")
		body := map[string]any{"username": "evil", "email": "evil@example.com", "name": "Evil", "password": "evil-password", "admin": true}
		call(t, s, ro, http.MethodPost, "/api/v4/users?sudo=root", body).expect(t, 403, sudoNeedsToken)
		call(t, s, roSudo, http.MethodPost, "/api/v4/users?sudo=root", body).expect(t, 403, noScope)
		call(t, s, ro, http.MethodGet, "/api/v4/user?sudo=sudoadmin", nil).expect(t, 403, sudoNeedsToken)
		call(t, s, s.RootToken, http.MethodGet, "/api/v4/users?username=evil", nil).expect(t, 200, `[]`)
	})

	t.Run("sudo scope is accepted on creation and listed", func(t *testing.T) {
		r := call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/"+store.IDString(admin.ID)+"/impersonation_tokens", "name=s&scopes[]=api&scopes[]=sudo")
		r.expectStatus(t, http.StatusCreated)
		if got := strings.Join(toStrings(r.object(t)["scopes"]), ","); got != "api,sudo" {
			t.Fatalf("scopes %q", got)
		}
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users/"+store.IDString(admin.ID)+"/personal_access_tokens",
			map[string]any{"name": "x", "scopes": []string{"sudo", "admin"}}).expect(t, 400, `{"error":"scopes does not have a valid value"}`)
	})
}
