package projects_test

import (
	"fmt"
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

func TestShareWithGroup(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "showner")
	teammate := a.CreateUser(t, "shmate")
	p := actProject(t, owner.Client, "shared", gitlab.PrivateVisibility)
	g := actGroup(t, owner.Client, "shteam", gitlab.PrivateVisibility)
	actAddGroupMember(t, owner.Client, g.ID, teammate.ID, gitlab.DeveloperPermissions)
	share := fmt.Sprintf("/projects/%d/share", p.ID)

	// Before the share the teammate cannot see the project.
	if _, resp, _ := teammate.Client.Projects.GetProject(p.ID, nil); actStatus(resp) != 404 {
		t.Fatalf("before share: %d", actStatus(resp))
	}
	resp, err := owner.Client.Projects.ShareProjectWithGroup(p.ID, &gitlab.ShareWithGroupOptions{
		GroupID: gitlab.Ptr(g.ID), GroupAccess: gitlab.Ptr(gitlab.ReporterPermissions)})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("share: %d %v", actStatus(resp), err)
	}
	// The teammate now has the lower of the two levels: Reporter.
	got, _, err := teammate.Client.Projects.GetProject(p.ID, nil)
	if err != nil {
		t.Fatalf("after share: %v", err)
	}
	if got.Permissions == nil || got.Permissions.GroupAccess == nil || got.Permissions.GroupAccess.AccessLevel != gitlab.ReporterPermissions {
		t.Fatalf("permissions %+v", got.Permissions)
	}
	if len(got.SharedWithGroups) != 1 || got.SharedWithGroups[0].GroupID != g.ID || got.SharedWithGroups[0].GroupName != "shteam" ||
		got.SharedWithGroups[0].GroupAccessLevel != int64(gitlab.ReporterPermissions) {
		t.Fatalf("shared_with_groups %+v", got.SharedWithGroups)
	}
	// A Reporter may read but not administer.
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/hooks", p.ID), teammate.Token, nil, 403, `{"message":"403 Forbidden"}`)

	// Sharing again: 409.
	a.expect(t, http.MethodPost, share, owner.Token, map[string]any{"group_id": g.ID, "group_access": 30}, 409,
		`{"message":"Group already shared with this group"}`)

	// Unshare: 204, access gone; again: 404.
	resp, err = owner.Client.Projects.DeleteSharedProjectFromGroup(p.ID, g.ID)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("unshare: %d %v", actStatus(resp), err)
	}
	if _, resp, _ := teammate.Client.Projects.GetProject(p.ID, nil); actStatus(resp) != 404 {
		t.Fatalf("after unshare: %d", actStatus(resp))
	}
	a.expect(t, http.MethodDelete, fmt.Sprintf("%s/%d", share, g.ID), owner.Token, nil, 404, `{"message":"404 Group Link Not Found"}`)
	a.expect(t, http.MethodDelete, share+"/999999", owner.Token, nil, 404, `{"message":"404 Group Link Not Found"}`)

	// Raw answer with an expiry date; the share ends when that day begins.
	raw := a.expect(t, http.MethodPost, share, owner.Token,
		map[string]any{"group_id": g.ID, "group_access": 40, "expires_at": "2999-12-31"}, 201, "")
	actSameJSON(t, "share", raw, fmt.Sprintf(`{"id":%d,"project_id":%d,"group_id":%d,"group_access":40,"expires_at":"2999-12-31"}`, g.ID, p.ID, g.ID))
	a.expect(t, http.MethodDelete, fmt.Sprintf("%s/%d", share, g.ID), owner.Token, nil, 204, "")
	a.expect(t, http.MethodPost, share, owner.Token,
		map[string]any{"group_id": g.ID, "group_access": 40, "expires_at": "2001-01-01"}, 201, "")
	if _, resp, _ := teammate.Client.Projects.GetProject(p.ID, nil); actStatus(resp) != 404 {
		t.Fatalf("an expired share still grants access: %d", actStatus(resp))
	}
	a.expect(t, http.MethodDelete, fmt.Sprintf("%s/%d", share, g.ID), owner.Token, nil, 204, "")
	// Form parameters, as GitLab clients send them, without expires_at.
	resp2, raw := a.JSON(t, http.MethodPost, "/api/v4"+share, nil, nil, "PRIVATE-TOKEN", owner.Token)
	if resp2.StatusCode != 400 {
		t.Fatalf("no parameters: %d %s", resp2.StatusCode, raw)
	}
	actSameJSON(t, "no parameters", raw, `{"error":"group_access is missing, group_id is missing"}`)
	a.expect(t, http.MethodPost, share+fmt.Sprintf("?group_id=%d&group_access=20", g.ID), owner.Token, nil, 201, "")
}

func TestShareBadInputAndAccess(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "sbowner")
	dev := a.CreateUser(t, "sbdev")
	master := a.CreateUser(t, "sbmaster")
	stranger := a.CreateUser(t, "sbstranger")
	p := actProject(t, owner.Client, "guarded", gitlab.PrivateVisibility)
	mine := actGroup(t, owner.Client, "sbmine", gitlab.PrivateVisibility)
	hidden := actGroup(t, stranger.Client, "sbhidden", gitlab.PrivateVisibility)
	open := actGroup(t, stranger.Client, "sbopen", gitlab.PublicVisibility)
	actAddProjectMember(t, owner.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	actAddProjectMember(t, owner.Client, p.ID, master.ID, gitlab.MaintainerPermissions)
	share := fmt.Sprintf("/projects/%d/share", p.ID)

	for _, tc := range []struct {
		body   map[string]any
		status int
		want   string
	}{
		{map[string]any{"group_access": 30}, 400, `{"error":"group_id is missing"}`},
		{map[string]any{"group_id": mine.ID}, 400, `{"error":"group_access is missing"}`},
		{map[string]any{"group_id": mine.ID, "group_access": 35}, 400, `{"error":"group_access does not have a valid value"}`},
		{map[string]any{"group_id": mine.ID, "group_access": 60}, 400, `{"error":"group_access does not have a valid value"}`},
		{map[string]any{"group_id": "abc", "group_access": 30}, 400, `{"error":"group_id is invalid"}`},
		{map[string]any{"group_id": mine.ID, "group_access": 30, "expires_at": "tomorrow"}, 400, `{"error":"expires_at is invalid"}`},
		{map[string]any{"group_id": 999999, "group_access": 30}, 404, `{"message":"404 Group Not Found"}`},
		{map[string]any{"group_id": 0, "group_access": 30}, 404, `{"message":"404 Group Not Found"}`},
		// A private group the caller is not in does not exist for them.
		{map[string]any{"group_id": hidden.ID, "group_access": 30}, 404, `{"message":"404 Group Not Found"}`},
		// A user's personal namespace is not a group.
		{map[string]any{"group_id": p.Namespace.ID, "group_access": 30}, 404, `{"message":"404 Group Not Found"}`},
	} {
		a.expect(t, http.MethodPost, share, owner.Token, tc.body, tc.status, tc.want)
	}

	// Master and up; Developers 403; strangers 404; anonymous 401.
	a.expect(t, http.MethodPost, share, dev.Token, map[string]any{"group_id": mine.ID, "group_access": 30}, 403, `{"message":"403 Forbidden"}`)
	a.expect(t, http.MethodPost, share, stranger.Token, map[string]any{"group_id": open.ID, "group_access": 30}, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodPost, share, "", map[string]any{"group_id": open.ID, "group_access": 30}, 401, `{"message":"401 Unauthorized"}`)
	// A public group may be shared with by anyone who administers the project.
	a.expect(t, http.MethodPost, share, master.Token, map[string]any{"group_id": open.ID, "group_access": 10}, 201, "")
	a.expect(t, http.MethodDelete, fmt.Sprintf("%s/%d", share, open.ID), dev.Token, nil, 403, `{"message":"403 Forbidden"}`)
	a.expect(t, http.MethodDelete, fmt.Sprintf("%s/%d", share, open.ID), master.Token, nil, 204, "")

	// A group project cannot be shared with its own group.
	gp, _, err := owner.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("inside"), NamespaceID: gitlab.Ptr(mine.ID)})
	if err != nil {
		t.Fatal(err)
	}
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/share", gp.ID), owner.Token, map[string]any{"group_id": mine.ID, "group_access": 30}, 409,
		`{"message":"Project cannot be shared with the group it is in or one of its ancestors."}`)
}
