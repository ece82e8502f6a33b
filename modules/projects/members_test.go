package projects_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/modules/projects"
)

const grpMemberKeys = "access_level,avatar_url,expires_at,id,name,state,username,web_url"

// grpFuture is an expiry date well ahead, as YYYY-MM-DD.
var grpFuture = time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")

func TestGroupMembers(t *testing.T) {
	t.Parallel()
	s, rec := grpStart(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	dave := s.CreateUser(t, "dave")
	g := grpNewGroup(t, alice.Client, "team", "private")
	grpNewGroup(t, alice.Client, "open", "public")
	base := fmt.Sprintf("/api/v4/groups/%d/members", g.ID)

	t.Run("add with client-go", func(t *testing.T) {
		m, resp, err := alice.Client.GroupMembers.AddGroupMember(g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(bob.ID),
			AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions), ExpiresAt: gitlab.Ptr(grpFuture)})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("%v %v", resp, err)
		}
		if m.ID != bob.ID || m.Username != "bob" || m.Name != "User bob" || m.State != "active" || m.AccessLevel != gitlab.DeveloperPermissions ||
			m.WebURL != s.URL+"/bob" || m.AvatarURL == "" || m.ExpiresAt == nil || m.ExpiresAt.String() != grpFuture {
			t.Fatalf("member %+v", m)
		}
		rec.waitMember(t, projects.MemberEvent{Action: "joined", GroupID: g.ID, UserID: bob.ID, AuthorID: alice.ID})
	})
	t.Run("add raw, form-encoded, no expiry", func(t *testing.T) {
		r := grpCall(t, s, alice.Token, http.MethodPost, base, fmt.Sprintf("user_id=%d&access_level=20", carol.ID))
		r.expect(t, http.StatusCreated, "")
		m := r.object(t)
		if grpKeys(m) != grpMemberKeys || m["expires_at"] != nil || m["access_level"] != float64(20) {
			t.Fatalf("member %s", r.raw)
		}
	})
	t.Run("list, paginated, with query", func(t *testing.T) {
		ms, resp, err := bob.Client.Groups.ListGroupMembers("team", nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatal(err)
		}
		var got []string
		for _, m := range ms {
			got = append(got, fmt.Sprintf("%s:%d", m.Username, m.AccessLevel))
		}
		grpSame(t, "members", got, []string{"alice:50", "bob:30", "carol:20"})
		r := grpCall(t, s, alice.Token, http.MethodGet, base+"?per_page=2&page=2", nil)
		r.expect(t, http.StatusOK, "")
		grpSame(t, "page 2", grpField(r.list(t), "username"), []string{"carol"})
		if r.header.Get("X-Total") != "3" || r.header.Get("X-Total-Pages") != "2" {
			t.Fatalf("headers %v", r.header)
		}
		r = grpCall(t, s, alice.Token, http.MethodGet, base+"?query=CAR", nil)
		grpSame(t, "query", grpField(r.list(t), "username"), []string{"carol"})
		if r.header.Get("X-Total") != "1" {
			t.Fatalf("X-Total %q", r.header.Get("X-Total"))
		}
	})
	t.Run("get one", func(t *testing.T) {
		m, _, err := carol.Client.GroupMembers.GetGroupMember(g.ID, bob.ID)
		if err != nil || m.ID != bob.ID || m.AccessLevel != gitlab.DeveloperPermissions {
			t.Fatalf("%v %+v", err, m)
		}
		grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("%s/%d", base, dave.ID), nil).expect(t, 404, `{"message":"404 Member Not Found"}`)
		grpCall(t, s, dave.Token, http.MethodGet, fmt.Sprintf("%s/%d", base, bob.ID), nil).expect(t, 404, `{"message":"404 Group Not Found"}`)
	})
	for _, tc := range []struct {
		name   string
		token  string
		body   any
		status int
		want   string
	}{
		{"already a member", alice.Token, map[string]any{"user_id": bob.ID, "access_level": 10}, 409, `{"message":"Member already exists"}`},
		{"unknown user", alice.Token, map[string]any{"user_id": 999999, "access_level": 10}, 404, `{"message":"404 User Not Found"}`},
		{"invalid level", alice.Token, map[string]any{"user_id": dave.ID, "access_level": 35}, 400, `{"error":"access_level does not have a valid value"}`},
		{"level 60", alice.Token, map[string]any{"user_id": dave.ID, "access_level": 60}, 400, `{"error":"access_level does not have a valid value"}`},
		{"missing all", alice.Token, map[string]any{}, 400, `{"error":"user_id is missing, access_level is missing"}`},
		{"missing level", alice.Token, map[string]any{"user_id": dave.ID}, 400, `{"error":"access_level is missing"}`},
		{"bad date", alice.Token, map[string]any{"user_id": dave.ID, "access_level": 10, "expires_at": "soon"}, 400, `{"error":"expires_at is invalid"}`},
		{"past date", alice.Token, map[string]any{"user_id": dave.ID, "access_level": 10, "expires_at": "2001-01-01"}, 400, `{"message":{"expires_at":["must be a date in the future"]}}`},
		{"a Developer may not add", bob.Token, map[string]any{"user_id": dave.ID, "access_level": 10}, 403, `{"message":"403 Forbidden"}`},
		{"a non-member cannot see the group", dave.Token, map[string]any{"user_id": dave.ID, "access_level": 10}, 404, `{"message":"404 Group Not Found"}`},
		{"anonymous", "", map[string]any{"user_id": dave.ID, "access_level": 10}, 401, `{"message":"401 Unauthorized"}`},
	} {
		t.Run("add: "+tc.name, func(t *testing.T) {
			grpCall(t, s, tc.token, http.MethodPost, base, tc.body).expect(t, tc.status, tc.want)
		})
	}
	t.Run("public group: anyone lists members, a non-member cannot add", func(t *testing.T) {
		r := grpCall(t, s, "", http.MethodGet, "/api/v4/groups/open/members", nil)
		r.expect(t, http.StatusOK, "")
		grpSame(t, "open", grpField(r.list(t), "username"), []string{"alice"})
		grpCall(t, s, dave.Token, http.MethodPost, "/api/v4/groups/open/members", map[string]any{"user_id": dave.ID, "access_level": 50}).
			expect(t, 403, `{"message":"403 Forbidden"}`)
	})
	t.Run("edit", func(t *testing.T) {
		m, resp, err := alice.Client.GroupMembers.EditGroupMember(g.ID, bob.ID, &gitlab.EditGroupMemberOptions{AccessLevel: gitlab.Ptr(gitlab.MaintainerPermissions)})
		if err != nil || resp.StatusCode != http.StatusOK || m.AccessLevel != gitlab.MaintainerPermissions || m.ExpiresAt == nil {
			t.Fatalf("%v %+v", err, m)
		}
		// An empty expires_at removes the expiry.
		r := grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, bob.ID), "access_level=40&expires_at=")
		r.expect(t, http.StatusOK, "")
		if m := r.object(t); m["expires_at"] != nil || m["access_level"] != float64(40) {
			t.Fatalf("member %s", r.raw)
		}
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, bob.ID), map[string]any{}).expect(t, 400, `{"error":"access_level is missing"}`)
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, bob.ID), map[string]any{"access_level": 5}).expect(t, 400, `{"error":"access_level does not have a valid value"}`)
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, dave.ID), map[string]any{"access_level": 10}).expect(t, 404, `{"message":"404 Member Not Found"}`)
		grpCall(t, s, bob.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, carol.ID), map[string]any{"access_level": 10}).expect(t, 403, `{"message":"403 Forbidden"}`)
	})
	t.Run("the last Owner stays", func(t *testing.T) {
		last := `{"message":"403 Forbidden - a group must keep at least one Owner"}`
		grpCall(t, s, alice.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, alice.ID), nil).expect(t, 403, last)
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, alice.ID), map[string]any{"access_level": 40}).expect(t, 403, last)
		grpCall(t, s, s.RootToken, http.MethodDelete, fmt.Sprintf("%s/%d", base, alice.ID), nil).expect(t, 403, last)
		// With a second Owner, the first may step down.
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, bob.ID), map[string]any{"access_level": 50}).expect(t, 200, "")
		grpCall(t, s, alice.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, alice.ID), map[string]any{"access_level": 40}).expect(t, 200, "")
		grpCall(t, s, bob.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, bob.ID), nil).expect(t, 403, last)
		grpCall(t, s, bob.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, alice.ID), map[string]any{"access_level": 50}).expect(t, 200, "")
	})
	t.Run("remove and leave", func(t *testing.T) {
		// carol (Reporter) may not remove others, but may leave.
		grpCall(t, s, carol.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, bob.ID), nil).expect(t, 403, `{"message":"403 Forbidden"}`)
		resp, err := carol.Client.GroupMembers.RemoveGroupMember(g.ID, carol.ID, nil)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("%v %v", resp, err)
		}
		rec.waitMember(t, projects.MemberEvent{Action: "left", GroupID: g.ID, UserID: carol.ID, AuthorID: carol.ID})
		grpCall(t, s, carol.Token, http.MethodGet, base, nil).expect(t, 404, `{"message":"404 Group Not Found"}`)
		r := grpCall(t, s, alice.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, bob.ID), nil)
		r.expect(t, http.StatusNoContent, "")
		rec.waitMember(t, projects.MemberEvent{Action: "left", GroupID: g.ID, UserID: bob.ID, AuthorID: alice.ID})
		grpCall(t, s, alice.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, bob.ID), nil).expect(t, 404, `{"message":"404 Member Not Found"}`)
		// An administrator manages any group.
		grpCall(t, s, s.RootToken, http.MethodPost, base, map[string]any{"user_id": dave.ID, "access_level": 10}).expect(t, 201, "")
		grpCall(t, s, s.RootToken, http.MethodDelete, fmt.Sprintf("%s/%d", base, dave.ID), nil).expect(t, 204, "")
	})
}

func TestProjectMembers(t *testing.T) {
	t.Parallel()
	s, rec := grpStart(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	dave := s.CreateUser(t, "dave")
	p := grpNewProject(t, alice.Client, 0, "app", "private")
	pub := grpNewProject(t, alice.Client, 0, "lib", "public")
	base := fmt.Sprintf("/api/v4/projects/%d/members", p.ID)

	t.Run("add gives access", func(t *testing.T) {
		grpCall(t, s, bob.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", p.ID), nil).expect(t, 404, `{"message":"404 Project Not Found"}`)
		m, resp, err := alice.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: bob.ID,
			AccessLevel: gitlab.Ptr(gitlab.ReporterPermissions)})
		if err != nil || resp.StatusCode != http.StatusCreated || m.ID != bob.ID || m.AccessLevel != gitlab.ReporterPermissions || m.ExpiresAt != nil {
			t.Fatalf("%v %+v", err, m)
		}
		rec.waitMember(t, projects.MemberEvent{Action: "joined", ProjectID: p.ID, UserID: bob.ID, AuthorID: alice.ID})
		r := grpCall(t, s, bob.Token, http.MethodGet, "/api/v4/projects/alice%2Fapp", nil)
		r.expect(t, http.StatusOK, "")
		if !strings.Contains(string(r.raw), `"permissions":{"project_access":{"access_level":20,"notification_level":3},"group_access":null}`) {
			t.Fatalf("permissions in %s", r.raw)
		}
	})
	t.Run("list holds explicit members only", func(t *testing.T) {
		ms, _, err := bob.Client.ProjectMembers.ListProjectMembers(p.ID, nil)
		if err != nil || len(ms) != 1 || ms[0].Username != "bob" {
			t.Fatalf("%v %+v", err, ms)
		}
		r := grpCall(t, s, alice.Token, http.MethodGet, base, nil)
		r.expect(t, http.StatusOK, "")
		if l := r.list(t); len(l) != 1 || grpKeys(l[0]) != grpMemberKeys {
			t.Fatalf("members %s", r.raw)
		}
		m, _, err := alice.Client.ProjectMembers.GetProjectMember("alice/app", bob.ID)
		if err != nil || m.ID != bob.ID {
			t.Fatalf("%v %+v", err, m)
		}
		grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("%s/%d", base, alice.ID), nil).expect(t, 404, `{"message":"404 Member Not Found"}`)
	})
	for _, tc := range []struct {
		name   string
		token  string
		body   any
		status int
		want   string
	}{
		{"Owner level is for groups", alice.Token, map[string]any{"user_id": carol.ID, "access_level": 50}, 400, `{"error":"access_level does not have a valid value"}`},
		{"already a member", alice.Token, map[string]any{"user_id": bob.ID, "access_level": 30}, 409, `{"message":"Member already exists"}`},
		{"unknown user", alice.Token, map[string]any{"user_id": 424242, "access_level": 30}, 404, `{"message":"404 User Not Found"}`},
		{"a Reporter may not add", bob.Token, map[string]any{"user_id": carol.ID, "access_level": 30}, 403, `{"message":"403 Forbidden"}`},
		{"a non-member cannot see it", carol.Token, map[string]any{"user_id": carol.ID, "access_level": 30}, 404, `{"message":"404 Project Not Found"}`},
		{"missing", alice.Token, map[string]any{"access_level": 30}, 400, `{"error":"user_id is missing"}`},
	} {
		t.Run("add: "+tc.name, func(t *testing.T) {
			grpCall(t, s, tc.token, http.MethodPost, base, tc.body).expect(t, tc.status, tc.want)
		})
	}
	t.Run("a Master manages members", func(t *testing.T) {
		if _, _, err := alice.Client.ProjectMembers.EditProjectMember(p.ID, bob.ID, &gitlab.EditProjectMemberOptions{AccessLevel: gitlab.Ptr(gitlab.MaintainerPermissions)}); err != nil {
			t.Fatal(err)
		}
		m, _, err := bob.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: carol.ID, AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions),
			ExpiresAt: gitlab.Ptr(grpFuture)})
		if err != nil || m.ExpiresAt == nil || m.ExpiresAt.String() != grpFuture {
			t.Fatalf("%v %+v", err, m)
		}
		grpCall(t, s, bob.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, carol.ID), map[string]any{"access_level": 50}).expect(t, 400, `{"error":"access_level does not have a valid value"}`)
		grpCall(t, s, carol.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, carol.ID), map[string]any{"access_level": 40}).expect(t, 403, `{"message":"403 Forbidden"}`)
		grpCall(t, s, bob.Token, http.MethodPut, fmt.Sprintf("%s/%d", base, carol.ID), map[string]any{"access_level": 10}).expect(t, 200, "")
	})
	t.Run("remove and leave", func(t *testing.T) {
		grpCall(t, s, carol.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, bob.ID), nil).expect(t, 403, `{"message":"403 Forbidden"}`)
		grpCall(t, s, carol.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, carol.ID), nil).expect(t, 204, "")
		rec.waitMember(t, projects.MemberEvent{Action: "left", ProjectID: p.ID, UserID: carol.ID, AuthorID: carol.ID})
		grpCall(t, s, carol.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", p.ID), nil).expect(t, 404, `{"message":"404 Project Not Found"}`)
		resp, err := alice.Client.ProjectMembers.DeleteProjectMember(p.ID, bob.ID)
		if err != nil || resp.StatusCode != http.StatusNoContent {
			t.Fatalf("%v %v", resp, err)
		}
		grpCall(t, s, alice.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, bob.ID), nil).expect(t, 404, `{"message":"404 Member Not Found"}`)
		grpCall(t, s, alice.Token, http.MethodDelete, fmt.Sprintf("%s/%d", base, alice.ID), nil).expect(t, 404, `{"message":"404 Member Not Found"}`)
	})
	t.Run("public project: anyone lists, only managers add", func(t *testing.T) {
		grpCall(t, s, alice.Token, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/members", pub.ID), map[string]any{"user_id": dave.ID, "access_level": 10}).expect(t, 201, "")
		r := grpCall(t, s, "", http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/members", pub.ID), nil)
		r.expect(t, http.StatusOK, "")
		grpSame(t, "public members", grpField(r.list(t), "username"), []string{"dave"})
		grpCall(t, s, carol.Token, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/members", pub.ID), map[string]any{"user_id": carol.ID, "access_level": 40}).
			expect(t, 403, `{"message":"403 Forbidden"}`)
		grpCall(t, s, s.RootToken, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/members", pub.ID), map[string]any{"user_id": carol.ID, "access_level": 40}).
			expect(t, 201, "")
	})
}

// TestConcurrentAdds: racing adds of the same user make one member, the
// others are 409.
func TestConcurrentMemberAdds(t *testing.T) {
	t.Parallel()
	s, _ := grpStart(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	g := grpNewGroup(t, alice.Client, "team", "private")
	var wg sync.WaitGroup
	statuses := make([]int, 8)
	for i := range statuses {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, resp, _ := alice.Client.GroupMembers.AddGroupMember(g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(bob.ID), AccessLevel: gitlab.Ptr(gitlab.GuestPermissions)})
			if resp != nil {
				statuses[i] = resp.StatusCode
			}
		}(i)
	}
	wg.Wait()
	created := 0
	for _, st := range statuses {
		switch st {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Fatalf("status %d", st)
		}
	}
	ms, _, err := alice.Client.Groups.ListGroupMembers(g.ID, nil)
	if created != 1 || err != nil || len(ms) != 2 {
		t.Fatalf("created %d, members %d (%v)", created, len(ms), err)
	}
}
