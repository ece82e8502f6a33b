package ci_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const triggeredCI = `show:
  script:
    - echo "source=$CI_PIPELINE_SOURCE triggered=${CI_PIPELINE_TRIGGERED:-no} deploy=${DEPLOY:-none} user=$GITLAB_USER_ID"
on-trigger:
  only: [triggers]
  script: ["echo only-when-triggered"]
`

// Pipeline triggers: Masters manage them; the token runs a pipeline
// without credentials, as the trigger's owner, whose jobs get the
// caller's variables, CI_PIPELINE_SOURCE=trigger and only: [triggers]
// jobs; the owner must still be allowed to run it; the token is shown
// whole to its owner only and stored sealed.
func TestPipelineTriggers(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "triggered", "private")
	commit := stocktest.CommitFiles(t, c, p.ID, "master", "ci", map[string]string{".gitlab-ci.yml": triggeredCI})
	if pl := waitPipeline(t, c, p.ID, commit.ID, "success", "failed"); pl.Status != "success" {
		t.Fatalf("push pipeline %s", pl.Status)
	}
	if _, _, err := c.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature/x"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	master2, dev := s.CreateUser(t, ""), s.CreateUser(t, "")
	for u, level := range map[int64]gitlab.AccessLevelValue{master2.ID: gitlab.MaintainerPermissions, dev.ID: gitlab.DeveloperPermissions} {
		if _, _, err := c.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(u), AccessLevel: gitlab.Ptr(level)}); err != nil {
			t.Fatal(err)
		}
	}
	call := func(token, method, path, contentType, body string) (int, string) {
		t.Helper()
		headers := []string{}
		if token != "" {
			headers = append(headers, "PRIVATE-TOKEN", token)
		}
		if contentType != "" {
			headers = append(headers, "Content-Type", contentType)
		}
		var rd *strings.Reader
		if body != "" {
			rd = strings.NewReader(body)
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
	base := fmt.Sprintf("/api/v4/projects/%d/triggers", p.ID)
	const form, jsonType = "application/x-www-form-urlencoded", "application/json"

	// Create: Masters; the caller owns it and sees the token whole.
	code, raw := call(master2.Token, http.MethodPost, base, form, "description=deploy")
	var created map[string]any
	if err := json.Unmarshal([]byte(raw), &created); code != 201 || err != nil {
		t.Fatalf("create: %d %s", code, raw)
	}
	token, _ := created["token"].(string)
	owner, _ := created["owner"].(map[string]any)
	if !regexp.MustCompile(`^[0-9a-f]{30}$`).MatchString(token) || created["description"] != "deploy" || owner["username"] != master2.Username ||
		created["last_used"] != nil || created["deleted_at"] != nil || created["created_at"] == nil || created["updated_at"] == nil {
		t.Fatalf("created trigger %s", raw)
	}
	id := int64(created["id"].(float64))
	one := fmt.Sprintf("%s/%d", base, id)
	if code, raw := call(dev.Token, http.MethodPost, base, form, "description=x"); code != 403 || raw != `{"message":"403 Forbidden"}` {
		t.Fatalf("create by a Developer: %d %s", code, raw)
	}
	if code, raw := call(master2.Token, http.MethodPost, base, jsonType, `{}`); code != 400 || raw != `{"error":"description is missing"}` {
		t.Fatalf("create without description: %d %s", code, raw)
	}
	tokenOf := func(caller string) string {
		t.Helper()
		code, raw := call(caller, http.MethodGet, one, "", "")
		var v map[string]any
		if err := json.Unmarshal([]byte(raw), &v); code != 200 || err != nil {
			t.Fatalf("get: %d %s", code, raw)
		}
		return v["token"].(string)
	}
	if got := tokenOf(master2.Token); got != token {
		t.Fatalf("the owner sees %q", got)
	}
	if got := tokenOf(s.RootToken); got != token[:4] {
		t.Fatalf("another Master sees %q", got)
	}
	if code, raw := call(s.RootToken, http.MethodGet, base, "", ""); code != 200 || !strings.Contains(raw, `"token":"`+token[:4]+`"`) || strings.Contains(raw, token) {
		t.Fatalf("list by another Master: %d %s", code, raw)
	}
	if code, raw := call(dev.Token, http.MethodGet, base, "", ""); code != 403 {
		t.Fatalf("list by a Developer: %d %s", code, raw)
	}
	if code, raw := call(s.RootToken, http.MethodGet, base+"/999999", "", ""); code != 404 || raw != `{"message":"404 Not found"}` {
		t.Fatalf("no such trigger: %d %s", code, raw)
	}
	// The token is stored sealed.
	err := s.Store.View(context.Background(), func(tx *store.Tx) error {
		return store.Keys("ci.triggers").ForEach(tx, func(k, v []byte) error {
			if strings.Contains(string(v), token) {
				return fmt.Errorf("the token is stored in the clear: %s", v)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}

	// Run a pipeline with the token and a form's variables, no sign-in.
	trigger := fmt.Sprintf("/api/v4/projects/%d/trigger/pipeline", p.ID)
	code, raw = call("", http.MethodPost, trigger, form, "token="+token+"&ref=master&variables[DEPLOY]=prod1")
	var pl map[string]any
	if err := json.Unmarshal([]byte(raw), &pl); code != 201 || err != nil || pl["ref"] != "master" || pl["sha"] != commit.ID {
		t.Fatalf("trigger: %d %s", code, raw)
	}
	if user, _ := pl["user"].(map[string]any); user["username"] != master2.Username {
		t.Fatalf("the pipeline's user %v, want the trigger's owner", pl["user"])
	}
	plID := int64(pl["id"].(float64))
	if got := waitRefPipeline(t, c, p.ID, "master", "success", "failed"); got.ID != plID || got.Status != "success" {
		t.Fatalf("triggered pipeline %d %s", got.ID, got.Status)
	}
	jobs := jobsByName(t, c, p.ID, plID)
	if len(jobs) != 2 || jobs["on-trigger"] == nil {
		t.Fatalf("jobs of the triggered pipeline: %v", jobs)
	}
	want := fmt.Sprintf("source=trigger triggered=true deploy=prod1 user=%d", master2.ID)
	if tr := trace(t, c, p.ID, jobs["show"].ID); !strings.Contains(tr, want) {
		t.Fatalf("trace lacks %q:\n%s", want, tr)
	}
	if v := tokenOf(master2.Token); v != token {
		t.Fatal("token changed")
	}
	code, raw = call(master2.Token, http.MethodGet, one, "", "")
	if !strings.Contains(raw, `"last_used":"20`) {
		t.Fatalf("last_used not set: %s", raw)
	}

	// JSON, as python-gitlab sends it; the deprecated form with the ref
	// in the path (a ref with a slash unescaped, as GitLab took it).
	code, raw = call("", http.MethodPost, trigger, jsonType, `{"ref":"feature/x","token":"`+token+`","variables":{"DEPLOY":"staging"}}`)
	if code != 201 || !strings.Contains(raw, `"ref":"feature/x"`) {
		t.Fatalf("trigger with JSON: %d %s", code, raw)
	}
	for _, path := range []string{"/ref/master/trigger/pipeline", "/ref/feature/x/trigger/pipeline", "/ref/feature%2Fx/trigger/pipeline"} {
		code, raw = call("", http.MethodPost, fmt.Sprintf("/api/v4/projects/%d%s?token=%s", p.ID, path, token), "", "")
		if code != 201 || !strings.Contains(raw, `"ref":"`) {
			t.Fatalf("%s: %d %s", path, code, raw)
		}
	}

	// Refusals, nothing made.
	before := len(pipelinesOf(t, c, p.ID))
	other := stocktest.NewProject(t, c, "elsewhere", "private")
	for _, tc := range []struct {
		path, contentType, body string
		code                    int
		want                    string
	}{
		{trigger, jsonType, `{"ref":"master","token":"` + token + `","variables":{"N":1}}`, 400, `{"message":"variables needs to be a map of key-valued strings"}`},
		{trigger, jsonType, `{"ref":"master","token":"` + token + `","variables":{"bad-key":"x"}}`, 400, `{"message":{"variables":["key \"bad-key\" can contain only letters, digits and '_'."]}}`},
		{trigger, form, "ref=master&token=0123456789abcdef0123456789abcd", 404, `{"message":"404 Not Found"}`},
		{fmt.Sprintf("/api/v4/projects/%d/trigger/pipeline", other.ID), form, "ref=master&token=" + token, 404, `{"message":"404 Not Found"}`},
		{"/api/v4/projects/999999/trigger/pipeline", form, "ref=master&token=" + token, 404, `{"message":"404 Not Found"}`},
		{trigger, form, "token=" + token, 400, `{"error":"ref is missing"}`},
		{trigger, form, "ref=master", 400, `{"error":"token is missing"}`},
		{trigger, form, "ref=nothing&token=" + token, 400, `{"message":{"base":["Reference not found"]}}`},
	} {
		if code, raw := call("", http.MethodPost, tc.path, tc.contentType, tc.body); code != tc.code || raw != tc.want {
			t.Errorf("%s %s: %d %s, want %d %s", tc.path, tc.body, code, raw, tc.code, tc.want)
		}
	}

	// The owner's rights decide: demoted to Developer, the protected
	// master is refused, the feature branch not; removed, nothing.
	if resp, raw := s.JSON(t, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d/repository/branches/master/protect", p.ID), nil, nil, "PRIVATE-TOKEN", s.RootToken); resp.StatusCode != 200 {
		t.Fatalf("protect master: %d %s", resp.StatusCode, raw)
	}
	if _, _, err := c.ProjectMembers.EditProjectMember(p.ID, master2.ID, &gitlab.EditProjectMemberOptions{AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	if code, raw := call("", http.MethodPost, trigger, form, "ref=master&token="+token); code != 400 || raw != `{"message":{"base":["Insufficient permissions for protected ref 'master'"]}}` {
		t.Fatalf("protected ref, owner a Developer: %d %s", code, raw)
	}
	if code, raw := call("", http.MethodPost, trigger, form, "ref=feature/x&token="+token); code != 201 {
		t.Fatalf("unprotected ref, owner a Developer: %d %s", code, raw)
	}
	if _, err := c.ProjectMembers.DeleteProjectMember(p.ID, master2.ID); err != nil {
		t.Fatal(err)
	}
	if code, raw := call("", http.MethodPost, trigger, form, "ref=feature/x&token="+token); code != 400 || raw != `{"message":{"base":["Insufficient permissions to create a new pipeline"]}}` {
		t.Fatalf("owner without access: %d %s", code, raw)
	}
	if got := len(pipelinesOf(t, c, p.ID)); got != before+1 {
		t.Fatalf("%d pipelines, want %d: a refusal made one", got, before+1)
	}

	// Edit: the owner only; take ownership: any Master, who then sees the
	// token whole (and runs its pipelines).
	if code, raw := call(s.RootToken, http.MethodPut, one, form, "description=mine"); code != 403 || raw != `{"message":"403 Forbidden"}` {
		t.Fatalf("edit by another Master: %d %s", code, raw)
	}
	code, raw = call(s.RootToken, http.MethodPost, one+"/take_ownership", "", "")
	if code != 201 || !strings.Contains(raw, `"token":"`+token+`"`) || !strings.Contains(raw, `"username":"root"`) {
		t.Fatalf("take ownership: %d %s", code, raw)
	}
	code, raw = call(s.RootToken, http.MethodPut, one, form, "description=mine")
	if code != 200 || !strings.Contains(raw, `"description":"mine"`) {
		t.Fatalf("edit by the owner: %d %s", code, raw)
	}
	code, raw = call("", http.MethodPost, trigger, form, "ref=master&token="+token)
	if code != 201 || !strings.Contains(raw, `"username":"root"`) {
		t.Fatalf("trigger after taking ownership: %d %s", code, raw)
	}

	// Delete: the token no longer works.
	if code, raw := call(s.RootToken, http.MethodDelete, one, "", ""); code != 204 || raw != "" {
		t.Fatalf("delete: %d %s", code, raw)
	}
	if code, raw := call("", http.MethodPost, trigger, form, "ref=master&token="+url.QueryEscape(token)); code != 404 {
		t.Fatalf("deleted trigger's token: %d %s", code, raw)
	}
	if code, raw := call(s.RootToken, http.MethodGet, one, "", ""); code != 404 {
		t.Fatalf("deleted trigger: %d %s", code, raw)
	}
}

func pipelinesOf(t testing.TB, c *gitlab.Client, project int64) []*gitlab.PipelineInfo {
	t.Helper()
	list, _, err := c.Pipelines.ListProjectPipelines(project, &gitlab.ListProjectPipelinesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	return list
}
