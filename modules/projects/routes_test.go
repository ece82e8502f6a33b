package projects_test

import (
	"fmt"
	"net/http"
	"testing"
)

// TestGroupsAndProjectsShareOnePathTree: a subgroup and a project may not
// take the same path under one group, whichever comes first and however
// the second arrives (create, rename, transfer, fork), as GitLab's routes
// forbid: "team/x" must name one thing for the API's :id and the pages.
// The refused request changes nothing.
func TestGroupsAndProjectsShareOnePathTree(t *testing.T) {
	t.Parallel()
	s, _ := grpStart(t)
	alice := s.CreateUser(t, "alice")
	team := grpNewGroup(t, alice.Client, "team", "private")
	taken := `{"message":{"path":["has already been taken"]}}`
	call := func(method, path string, body map[string]any, status int, want string) map[string]any {
		t.Helper()
		r := s.Call(t, alice.Token, method, "/api/v4"+path, body).Expect(t, status, want)
		if status < 300 {
			return r.Object(t)
		}
		return nil
	}
	// A project first, then a subgroup of its path, created or renamed.
	call(http.MethodPost, "/projects", map[string]any{"name": "x", "namespace_id": team.ID}, 201, "")
	call(http.MethodPost, "/groups", map[string]any{"name": "X group", "path": "x", "parent_id": team.ID}, 400, taken)
	call(http.MethodPost, "/groups", map[string]any{"name": "X group", "path": "X", "parent_id": team.ID}, 400, taken)
	sub := call(http.MethodPost, "/groups", map[string]any{"name": "Y", "path": "y", "parent_id": team.ID}, 201, "")
	call(http.MethodPut, fmt.Sprintf("/groups/%v", sub["id"]), map[string]any{"path": "x"}, 400, taken)
	// A subgroup first, then a project of its path: created, renamed,
	// transferred in, forked in.
	call(http.MethodPost, "/projects", map[string]any{"name": "y", "namespace_id": team.ID}, 400, taken)
	z := call(http.MethodPost, "/projects", map[string]any{"name": "z", "namespace_id": team.ID}, 201, "")
	call(http.MethodPut, fmt.Sprintf("/projects/%v", z["id"]), map[string]any{"path": "y"}, 400, taken)
	mine := call(http.MethodPost, "/projects", map[string]any{"name": "y"}, 201, "") // alice/y
	call(http.MethodPut, fmt.Sprintf("/projects/%v/transfer", mine["id"]), map[string]any{"namespace": team.ID}, 400,
		`{"message":"Failed to transfer project {:new_namespace=\u003e[\"Project with same name or path in target namespace already exists\"]}"}`)
	call(http.MethodPost, fmt.Sprintf("/projects/%v/fork", mine["id"]), map[string]any{"namespace": "team"}, 409,
		`{"message":{"path":["has already been taken"]}}`)
	// Nothing moved: team/y is still the subgroup, team/x the project,
	// team/z kept its path, alice/y is where it was.
	call(http.MethodGet, "/groups/team%2Fy", nil, 200, "")
	call(http.MethodGet, "/projects/team%2Fx", nil, 200, "")
	call(http.MethodGet, "/projects/team%2Fz", nil, 200, "")
	call(http.MethodGet, "/projects/alice%2Fy", nil, 200, "")
	call(http.MethodGet, "/projects/team%2Fy", nil, 404, `{"message":"404 Project Not Found"}`)
	// Paths that differ are fine, and renaming to one's own path too.
	call(http.MethodPost, "/groups", map[string]any{"name": "W", "path": "w", "parent_id": team.ID}, 201, "")
	call(http.MethodPut, fmt.Sprintf("/projects/%v", z["id"]), map[string]any{"path": "z", "description": "d"}, 200, "")
}
