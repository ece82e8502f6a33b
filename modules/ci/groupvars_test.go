package ci_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// TestGroupVariables covers /groups/:id/variables (Masters and Owners only)
// and a job of a project of the group receiving them through the real
// shell executor: a project variable of the same key wins, and a long
// value is masked in the trace like a project's.
func TestGroupVariables(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	g, _, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Vars"), Path: gitlab.Ptr("vars")})
	if err != nil {
		t.Fatal(err)
	}
	dev := s.CreateUser(t, "gvdev")
	stranger := s.CreateUser(t, "gvstranger")
	if _, _, err := c.GroupMembers.AddGroupMember(g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(dev.ID),
		AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/api/v4/groups/%d/variables", g.ID)
	call := func(token, method, path string, body any) (int, string) {
		t.Helper()
		var rd *bytes.Reader
		headers := []string{}
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
			headers = append(headers, "Content-Type", "application/json")
		}
		if token != "" {
			headers = append(headers, "PRIVATE-TOKEN", token)
		}
		var resp *http.Response
		var raw []byte
		if rd != nil {
			resp, raw = s.JSON(t, method, path, rd, nil, headers...)
		} else {
			resp, raw = s.JSON(t, method, path, nil, nil, headers...)
		}
		return resp.StatusCode, strings.TrimSpace(string(raw))
	}
	expect := func(token, method, path string, body any, status int, want string) {
		t.Helper()
		if st, got := call(token, method, path, body); st != status || got != want {
			t.Fatalf("%s %s: %d %s, want %d %s", method, path, st, got, status, want)
		}
	}
	admin := s.RootToken
	expect(admin, http.MethodPost, base, map[string]any{"key": "GROUP_SECRET", "value": "group-secret-value-42"}, 201,
		`{"key":"GROUP_SECRET","value":"group-secret-value-42","protected":false}`)
	expect(admin, http.MethodPost, base, map[string]any{"key": "OVERRIDE", "value": "grp-v"}, 201,
		`{"key":"OVERRIDE","value":"grp-v","protected":false}`)
	expect(admin, http.MethodPost, base, map[string]any{"key": "TEMP", "value": "t", "protected": true}, 201,
		`{"key":"TEMP","value":"t","protected":true}`)
	expect(admin, http.MethodPost, base, map[string]any{"key": "TEMP", "value": "again"}, 400, `{"message":{"key":["has already been taken"]}}`)
	expect(admin, http.MethodPost, base, map[string]any{"key": "bad-key", "value": "x"}, 400, `{"message":{"key":["can contain only letters, digits and '_'."]}}`)
	expect(admin, http.MethodPost, base, map[string]any{"key": "V"}, 400, `{"error":"value is missing"}`)
	expect(admin, http.MethodPut, base+"/TEMP", map[string]any{"value": "u", "protected": false}, 200, `{"key":"TEMP","value":"u","protected":false}`)
	expect(admin, http.MethodGet, base+"/TEMP", nil, 200, `{"key":"TEMP","value":"u","protected":false}`)
	expect(admin, http.MethodDelete, base+"/TEMP", nil, 200, `{"key":"TEMP","value":"u","protected":false}`)
	expect(admin, http.MethodGet, base+"/TEMP", nil, 404, `{"message":"404 Variable Not Found"}`)
	expect(admin, http.MethodGet, base, nil, 200,
		`[{"key":"GROUP_SECRET","value":"group-secret-value-42","protected":false},{"key":"OVERRIDE","value":"grp-v","protected":false}]`)
	// A Developer sees the group but may not touch its variables; a
	// stranger does not see the private group.
	expect(dev.Token, http.MethodGet, base, nil, 403, `{"message":"403 Forbidden"}`)
	expect(dev.Token, http.MethodPost, base, map[string]any{"key": "X", "value": "y"}, 403, `{"message":"403 Forbidden"}`)
	expect(stranger.Token, http.MethodGet, base, nil, 404, `{"message":"404 Group Not Found"}`)
	expect("", http.MethodGet, base, nil, 401, `{"message":"401 Unauthorized"}`)

	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("gv-proj"), NamespaceID: gitlab.Ptr(g.ID),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	// The project's key is not the group's: its own API does not see them.
	expect(admin, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/variables/GROUP_SECRET", p.ID), nil, 404, `{"message":"404 Variable Not Found"}`)
	if _, _, err := c.ProjectVariables.CreateVariable(p.ID, &gitlab.CreateProjectVariableOptions{Key: gitlab.Ptr("OVERRIDE"), Value: gitlab.Ptr("proj-v")}); err != nil {
		t.Fatal(err)
	}
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": `show:
  script:
    - echo "secret=$GROUP_SECRET len=${#GROUP_SECRET} override=$OVERRIDE end"
`})
	pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed")
	job := jobsByName(t, c, p.ID, pl.ID)["show"]
	tr := trace(t, c, p.ID, job.ID)
	if pl.Status != "success" || !strings.Contains(tr, "\nsecret=[MASKED] len=21 override=proj-v end\n") || strings.Contains(tr, "group-secret-value-42") {
		t.Fatalf("pipeline %s, trace:\n%s", pl.Status, tr)
	}
}
