package projects_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/projects"
)

// TestSubgroups drives a three-level tree (team > backend > db) through the
// API, as a script with client-go would: full paths in every place a path
// is taken, inherited membership, visibility rules and deletion.
func TestSubgroups(t *testing.T) {
	t.Parallel()
	s, rec := grpStart(t)
	alice := s.CreateUser(t, "alice") // owns the tree
	bob := s.CreateUser(t, "bob")     // Developer of team, inherits below
	carol := s.CreateUser(t, "carol") // Developer of team/backend/db only
	dave := s.CreateUser(t, "dave")   // nobody in the tree
	s.CreateUser(t, "backend")        // a username equal to a subgroup's path

	team := grpNewGroup(t, alice.Client, "team", "internal")
	backend, resp, err := alice.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{
		Name: gitlab.Ptr("Backend"), Path: gitlab.Ptr("backend"), ParentID: gitlab.Ptr(team.ID), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create subgroup: %v", err)
	}
	if backend.FullPath != "team/backend" || backend.FullName != "Group team / Backend" || backend.ParentID != team.ID ||
		backend.WebURL != s.URL+"/groups/team/backend" || backend.Path != "backend" || backend.Name != "Backend" {
		t.Fatalf("subgroup view %+v", backend)
	}
	db := grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/groups",
		map[string]any{"name": "DB", "path": "db", "parent_id": backend.ID}).object(t)
	dbID := int64(db["id"].(float64))
	if db["full_path"] != "team/backend/db" || db["full_name"] != "Group team / Backend / DB" || db["parent_id"] != float64(backend.ID) || db["visibility"] != "private" {
		t.Fatalf("second level %v", db)
	}
	grpAddMember(t, alice.Client, team.ID, bob.ID, gitlab.DeveloperPermissions)
	grpAddMember(t, alice.Client, dbID, carol.ID, gitlab.DeveloperPermissions)

	api := grpNewProject(t, alice.Client, backend.ID, "api", "private")
	if api.PathWithNamespace != "team/backend/api" || api.NameWithNamespace != "Group team / Backend / api" ||
		api.Namespace.FullPath != "team/backend" || api.Namespace.Path != "backend" || api.Namespace.Name != "Backend" ||
		api.WebURL != s.URL+"/team/backend/api" {
		t.Fatalf("project in a subgroup %+v %+v", api, api.Namespace)
	}
	schema := grpNewProject(t, alice.Client, dbID, "schema", "private")

	t.Run("full paths resolve", func(t *testing.T) {
		grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/"+url.PathEscape("team/backend/db"), nil).expect(t, 200, "")
		grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/"+url.PathEscape("TEAM/Backend"), nil).expect(t, 200, "")
		p := grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+url.PathEscape("team/backend/db/schema"), nil).object(t)
		if p["id"] != float64(schema.ID) {
			t.Fatalf("project by nested path %v", p["id"])
		}
		for _, missing := range []string{"team/db", "backend", "team//backend", "team/backend/db/schema", "team/backend/"} {
			grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/"+url.PathEscape(missing), nil).expect(t, 404, `{"message":"404 Group Not Found"}`)
		}
		grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/projects/"+url.PathEscape("team/api"), nil).expect(t, 404, `{"message":"404 Project Not Found"}`)
		ns := grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/"+url.PathEscape("team/backend"), nil)
		ns.expect(t, 200, fmt.Sprintf(`{"id":%d,"name":"Backend","path":"backend","kind":"group","full_path":"team/backend","parent_id":%d}`, backend.ID, team.ID))
		// The user "backend" keeps its own namespace.
		grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/namespaces/backend", nil).expect(t, 404, `{"message":"404 Namespace Not Found"}`)
	})

	t.Run("git reaches a nested path", func(t *testing.T) {
		grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/projects/"+url.PathEscape("team/backend/api")+"/repository/files/README.md",
			map[string]any{"branch": "main", "content": "hello", "commit_message": "first"}).expect(t, 201, "")
		u, _ := url.Parse(s.URL + "/team/backend/api.git")
		u.User = url.UserPassword("bob", bob.Token)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "git", "-c", "credential.helper=", "ls-remote", u.String()).CombinedOutput()
		if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "refs/heads/main") {
			t.Fatalf("ls-remote as an inherited member: %v\n%s", err, out)
		}
	})

	t.Run("membership is inherited", func(t *testing.T) {
		// bob, Developer of team, pushes to a project two levels below.
		grpCall(t, s, bob.Token, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/repository/branches?branch=feature&ref=main", api.ID), nil).expect(t, 201, "")
		// ...but may not administer it, nor make subgroups.
		grpCall(t, s, bob.Token, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d", api.ID), map[string]any{"description": "x"}).expect(t, 403, "")
		grpCall(t, s, bob.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "X", "path": "x", "parent_id": backend.ID}).
			expect(t, 403, `{"message":"403 Forbidden"}`)
		all := grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/members/all", dbID), nil).list(t)
		grpSame(t, "members/all of db", grpField(all, "username"), []string{"alice", "bob", "carol"})
		direct := grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/members", dbID), nil).list(t)
		grpSame(t, "direct members of db", grpField(direct, "username"), []string{"alice", "carol"})
		users := grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/users", schema.ID), nil).list(t)
		grpSame(t, "users of schema", grpField(users, "username"), []string{"alice", "bob", "carol"})
		mine := grpCall(t, s, bob.Token, http.MethodGet, "/api/v4/projects?membership=true&order_by=id&sort=asc", nil).list(t)
		grpSame(t, "bob's projects", grpField(mine, "path_with_namespace"), []string{"team/backend/api", "team/backend/db/schema"})
	})

	t.Run("a member below sees the groups above", func(t *testing.T) {
		// carol is only in db: she sees its private parent backend (and
		// internal team), but not backend's project.
		grpCall(t, s, carol.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d", backend.ID), nil).expect(t, 200, "")
		grpCall(t, s, carol.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", api.ID), nil).expect(t, 404, "")
		grpCall(t, s, carol.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", schema.ID), nil).expect(t, 200, "")
		// dave sees internal team but neither private subgroup.
		grpCall(t, s, dave.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d", team.ID), nil).expect(t, 200, "")
		grpCall(t, s, dave.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d", backend.ID), nil).expect(t, 404, `{"message":"404 Group Not Found"}`)
		grpCall(t, s, "", http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/subgroups", team.ID), nil).expect(t, 404, `{"message":"404 Group Not Found"}`)
		grpCall(t, s, dave.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/subgroups", team.ID), nil).expect(t, 200, "[]")
		sub := grpCall(t, s, carol.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/subgroups", team.ID), nil).list(t)
		grpSame(t, "carol's subgroups of team", grpField(sub, "full_path"), []string{"team/backend"})
		desc := grpCall(t, s, bob.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/descendant_groups", team.ID), nil)
		if desc.header.Get("X-Total") != "2" {
			t.Fatalf("X-Total %q", desc.header.Get("X-Total"))
		}
		grpSame(t, "descendants of team", grpField(desc.list(t), "full_path"), []string{"team/backend", "team/backend/db"})
		desc = grpCall(t, s, bob.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/descendant_groups?search=DB&per_page=1", team.ID), nil)
		grpSame(t, "descendants of team named db", grpField(desc.list(t), "full_path"), []string{"team/backend/db"})
		top := grpCall(t, s, bob.Token, http.MethodGet, "/api/v4/groups?top_level_only=true", nil).list(t)
		grpSame(t, "top-level groups", grpField(top, "full_path"), []string{"team"})
		withSub := grpCall(t, s, bob.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/projects?include_subgroups=true&order_by=id&sort=asc", team.ID), nil).list(t)
		grpSame(t, "projects with subgroups", grpField(withSub, "path"), []string{"api", "schema"})
		grpSame(t, "projects of team itself", grpField(grpCall(t, s, bob.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/projects", team.ID), nil).list(t), "path"), []string{})
	})

	t.Run("forks and transfers take a full path", func(t *testing.T) {
		tool := grpNewProject(t, alice.Client, 0, "tool", "private")
		f := grpCall(t, s, alice.Token, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/fork", tool.ID), map[string]any{"namespace": "team/backend/db"})
		f.expect(t, 201, "")
		if got := f.object(t)["path_with_namespace"]; got != "team/backend/db/tool" {
			t.Fatalf("fork into a subgroup by path: %v", got)
		}
		tr := grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d/transfer", tool.ID), map[string]any{"namespace": "team/backend"})
		tr.expect(t, 200, "")
		if got := tr.object(t)["path_with_namespace"]; got != "team/backend/tool" {
			t.Fatalf("transfer into a subgroup by path: %v", got)
		}
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d/transfer", tool.ID), map[string]any{"namespace": "team/nowhere"}).
			expect(t, 404, `{"message":"404 Namespace Not Found"}`)
	})

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			token  string
			method string
			path   string
			body   map[string]any
			status int
			want   string
		}{
			{"unknown parent", alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "X", "path": "x", "parent_id": 999999}, 404, `{"message":"404 Group Not Found"}`},
			{"parent one cannot see", dave.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "X", "path": "x", "parent_id": backend.ID}, 404, `{"message":"404 Group Not Found"}`},
			{"more visible than its parent", alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "X", "path": "x", "parent_id": backend.ID, "visibility": "internal"},
				400, `{"message":{"visibility_level":["internal is not allowed since the parent group has private visibility."]}}`},
			{"path taken among siblings", alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "X", "path": "DB", "parent_id": backend.ID}, 400, `{"message":{"path":["has already been taken"]}}`},
			{"name taken among siblings", alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "db", "path": "db2", "parent_id": backend.ID}, 400, `{"message":{"name":["has already been taken"]}}`},
			{"moving a group", alice.Token, http.MethodPut, fmt.Sprintf("/api/v4/groups/%d", dbID), map[string]any{"parent_id": team.ID}, 400, `{"message":{"parent_id":["cannot be changed: groups are not moved"]}}`},
			{"parent less visible than a subgroup", alice.Token, http.MethodPut, fmt.Sprintf("/api/v4/groups/%d", team.ID), map[string]any{"visibility": "private"}, 200, ""},
			{"subgroup above its parent", alice.Token, http.MethodPut, fmt.Sprintf("/api/v4/groups/%d", backend.ID), map[string]any{"visibility": "public"},
				400, `{"message":{"visibility_level":["public is not allowed since the parent group has private visibility."]}}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				grpCall(t, s, tc.token, tc.method, tc.path, tc.body).expect(t, tc.status, tc.want)
			})
		}
		// team is private now; making backend internal first is refused
		// from the other side too.
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("/api/v4/groups/%d", team.ID), map[string]any{"visibility": "internal"}).expect(t, 200, "")
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("/api/v4/groups/%d", backend.ID), map[string]any{"visibility": "internal"}).expect(t, 200, "")
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("/api/v4/groups/%d", team.ID), map[string]any{"visibility": "private"}).
			expect(t, 400, `{"message":{"visibility_level":["private is not allowed since there are subgroups with higher visibility."]}}`)
		// The same path under another parent, and a subgroup named as a
		// user, are fine.
		grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "DB", "path": "db", "parent_id": team.ID}).expect(t, 201, "")
	})

	t.Run("deleting a group deletes what is below it", func(t *testing.T) {
		grpCall(t, s, bob.Token, http.MethodDelete, fmt.Sprintf("/api/v4/groups/%d", backend.ID), nil).expect(t, 403, "")
		grpCall(t, s, alice.Token, http.MethodDelete, fmt.Sprintf("/api/v4/groups/%d", backend.ID), nil).expect(t, 204, "")
		for _, p := range []string{fmt.Sprint(dbID), fmt.Sprint(backend.ID)} {
			grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/"+p, nil).expect(t, 404, `{"message":"404 Group Not Found"}`)
		}
		for _, id := range []int64{api.ID, schema.ID} {
			grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", id), nil).expect(t, 404, "")
			rec.waitProject(t, projects.ProjectEvent{Action: projects.ProjectDeleted, ProjectID: id, UserID: alice.ID})
		}
		grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d", team.ID), nil).expect(t, 200, "")
		// carol's membership went with db.
		grpSame(t, "carol's groups", grpField(grpCall(t, s, carol.Token, http.MethodGet, "/api/v4/groups?all_available=false", nil).list(t), "path"), []string{})
	})
}
