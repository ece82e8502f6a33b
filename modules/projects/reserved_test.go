package projects_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestReservedPaths: a group path is a top-level namespace, like a
// username, and may not be one of the host's own top-level routes (the same
// list as usernames, in any case); a project path may not be one of the
// words GitLab reserves after a project (tree, blob, raw, -...). A project
// may be called api or help: under its namespace nothing collides. Before
// the fix, groups took robots.txt, .well-known, favicon.ico, help... and
// projects were checked against the top-level list instead.
func TestReservedPaths(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice := s.CreateUser(t, "alice")
	for _, path := range []string{"api", "Admin", "help", "robots.txt", ".well-known", "favicon.ico", "404.html",
		"users", "u", "health_check", "autocomplete", "unsubscribes", "jwt", "sent_notifications"} {
		grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "G " + path, "path": path}).
			expect(t, http.StatusBadRequest, `{"message":{"path":["`+path+` is a reserved name"]}}`)
	}
	g := grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "Team", "path": "team"})
	g.expect(t, http.StatusCreated, "")
	gid := strconv.FormatInt(int64(g.object(t)["id"].(float64)), 10)
	grpCall(t, s, alice.Token, http.MethodPut, "/api/v4/groups/"+gid, map[string]any{"path": "Explore"}).
		expect(t, http.StatusBadRequest, `{"message":{"path":["Explore is a reserved name"]}}`)

	for _, path := range []string{"tree", "Blob", "raw", "refs", "commits", "edit", "new", "create", "files", "wikis"} {
		grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects", map[string]any{"name": "P " + path, "path": path}).
			expect(t, http.StatusBadRequest, `{"message":{"path":["`+path+` is a reserved name"]}}`)
	}
	for _, path := range []string{"api", "help", "uploads", "robots.txt"} {
		grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects", map[string]any{"name": "P " + path, "path": path}).
			expect(t, http.StatusCreated, "")
	}
}
