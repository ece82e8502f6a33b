package identity_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestReservedUsernames: a username is a top-level namespace, so the paths
// GitLab reserves for its own routes (api, admin, help, robots.txt...) are
// refused, in any case, on create and on update, with GitLab's record
// validation shape. Before the fix, "api" and the others were accepted.
func TestReservedUsernames(t *testing.T) {
	t.Parallel()
	var prov auth.Provisioner
	s := stocktest.Start(t, fennectest.WithExtract(&prov))
	for i, name := range []string{"api", "API", "Admin", "help", "assets", "dashboard", "explore", "groups", "projects",
		"users", "oauth", "profile", "public", "s", "search", "snippets", "u", "uploads", ".well-known", "robots.txt",
		"favicon.ico", "abuse_reports", "ci", "files", "import", "jwt", "notification_settings", "sent_notifications",
		"autocomplete", "unsubscribes", "health_check", "404.html"} {
		body := map[string]any{"email": "r" + store.IDString(int64(i)) + "@example.com", "username": name, "name": "R", "password": "reserved-password"}
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users", body).
			expect(t, http.StatusBadRequest, `{"message":{"username":["`+name+` is a reserved name"]}}`)
		if !identity.ReservedNamespace(name) {
			t.Errorf("ReservedNamespace(%q) = false", name)
		}
	}
	// Names that merely contain a reserved word are fine.
	for _, name := range []string{"apiary", "my-api", "admins", "help.desk"} {
		call(t, s, s.RootToken, http.MethodPost, "/api/v4/users",
			map[string]any{"email": name + "@example.com", "username": name, "name": "N", "password": "fine-password"}).expectStatus(t, http.StatusCreated)
	}
	// Renaming into a reserved name is refused too, and nothing changes.
	alice := s.CreateUser(t, "alice")
	call(t, s, s.RootToken, http.MethodPut, "/api/v4/users/"+store.IDString(alice.ID), map[string]any{"username": "Explore"}).
		expect(t, http.StatusBadRequest, `{"message":{"username":["Explore is a reserved name"]}}`)
	call(t, s, s.RootToken, http.MethodGet, "/api/v4/users?username=alice", nil).expectStatus(t, http.StatusOK)
	// The provisioner (first start, admin commands) follows the same rule.
	_, err := prov.CreateUser(context.Background(), auth.NewUser{Username: "admin", Email: "adm@example.com", Name: "A", Password: "admin-password"})
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("provisioner created a user named admin: %v", err)
	}
}

// TestDirectoryUserWithReservedName: a directory account named like a
// reserved path gets a free username instead (admin -> admin1), as with a
// taken one.
func TestDirectoryUserWithReservedName(t *testing.T) {
	t.Parallel()
	s, dir, _ := startWithDirectory(t)
	dir.set("admin", "dir-password", "uid=admin,ou=people,dc=example,dc=com", "admin@corp.example.com", "Directory Admin")
	code, v := sessionLogin(t, s, "admin", "dir-password")
	if code != http.StatusCreated || v.Username != "admin1" {
		t.Fatalf("directory login of admin: %d %+v", code, v)
	}
}
