package ci_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// The runners API for people, with GitLab's permissions: a project's
// masters manage its runners, administrators every runner, shared runners
// are the administrators'.
func TestRunnersManagementAPI(t *testing.T) {
	t.Parallel()
	s := startRunners(t)
	root := s.Client
	alice, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "bob")
	ap := stocktest.NewProject(t, alice.Client, "alpha", "private")
	ap2 := stocktest.NewProject(t, alice.Client, "beta", "private")
	bp := stocktest.NewProject(t, bob.Client, "bravo", "private")
	full, _, _ := alice.Client.Projects.GetProject(ap.ID, nil)
	mine := registerRunner(t, s, full.RunnersToken, map[string]any{"description": "alice's"})
	shared := registerRunner(t, s, sharedToken(t, s), map[string]any{"description": "shared"})
	locked := registerRunner(t, s, full.RunnersToken, map[string]any{"description": "locked", "locked": true})

	tokens := map[*gitlab.Client]string{root: s.RootToken, alice.Client: alice.Token, bob.Client: bob.Token}
	get := func(c *gitlab.Client, path string) (int, string) {
		code, _, raw := rawJSON(t, http.MethodGet, s.URL+"/api/v4/"+path, nil, "PRIVATE-TOKEN", tokens[c])
		return code, bodyMessage(raw)
	}

	list, _, err := alice.Client.Runners.ListRunners(nil)
	if err != nil || len(list) != 2 || list[0].ID != mine.ID || list[1].ID != locked.ID {
		t.Fatalf("alice's runners: %v %+v", err, list)
	}
	if list, _, _ := bob.Client.Runners.ListRunners(nil); len(list) != 0 {
		t.Errorf("bob sees %d runners", len(list))
	}
	if code, _ := get(bob.Client, "runners/all"); code != 403 {
		t.Errorf("bob lists all runners: %d", code)
	}
	all, _, err := root.Runners.ListAllRunners(nil)
	if err != nil || len(all) != 3 {
		t.Fatalf("all runners: %v %d", err, len(all))
	}
	sharedOnly, _, _ := root.Runners.ListAllRunners(&gitlab.ListRunnersOptions{Scope: gitlab.Ptr("shared")})
	if len(sharedOnly) != 1 || sharedOnly[0].ID != shared.ID || !sharedOnly[0].IsShared {
		t.Errorf("shared scope: %+v", sharedOnly)
	}
	if code, msg := get(root, "runners/all?scope=bogus"); code != 400 || msg != "scope does not have a valid value" {
		t.Errorf("bad scope: %d %q", code, msg)
	}
	if code, _ := get(alice.Client, "runners?scope=shared"); code != 400 {
		t.Errorf("shared scope on /runners: %d", code)
	}
	if code, msg := get(bob.Client, "runners/"+store.IDString(mine.ID)); code != 403 || msg != "403 Forbidden - No access granted" {
		t.Errorf("bob sees alice's runner: %d %q", code, msg)
	}
	if code, _ := get(bob.Client, "runners/"+store.IDString(shared.ID)); code != 200 {
		t.Errorf("bob sees a shared runner: %d", code)
	}
	if code, msg := get(alice.Client, "runners/424242"); code != 404 || msg != "404 Runner Not Found" {
		t.Errorf("unknown runner: %d %q", code, msg)
	}

	d, _, err := alice.Client.Runners.UpdateRunnerDetails(mine.ID, &gitlab.UpdateRunnerDetailsOptions{
		Description: gitlab.Ptr("renamed"), TagList: &[]string{"x", "y"}, RunUntagged: gitlab.Ptr(false)})
	if err != nil || d.Description != "renamed" || len(d.TagList) != 2 || d.RunUntagged {
		t.Fatalf("update: %v %+v", err, d)
	}
	if _, _, err := alice.Client.Runners.UpdateRunnerDetails(mine.ID, &gitlab.UpdateRunnerDetailsOptions{TagList: &[]string{}}); errMessage(err) == "" {
		t.Errorf("no tags and no untagged jobs accepted")
	}
	if d, _, _ := alice.Client.Runners.GetRunnerDetails(mine.ID); len(d.TagList) != 2 {
		t.Errorf("a refused update changed the tags: %v", d.TagList)
	}
	if _, resp, err := alice.Client.Runners.UpdateRunnerDetails(shared.ID, &gitlab.UpdateRunnerDetailsOptions{Description: gitlab.Ptr("mine")}); resp.StatusCode != 403 || errMessage(err) != "403 Forbidden - Runner is shared" {
		t.Errorf("alice edits a shared runner: %d %v", resp.StatusCode, err)
	}
	if _, resp, _ := bob.Client.Runners.UpdateRunnerDetails(mine.ID, &gitlab.UpdateRunnerDetailsOptions{Description: gitlab.Ptr("bob's")}); resp.StatusCode != 403 {
		t.Errorf("bob edits alice's runner: %d", resp.StatusCode)
	}

	// Enable and disable on projects.
	r, resp, err := alice.Client.Runners.EnableProjectRunner(ap2.ID, &gitlab.EnableProjectRunnerOptions{RunnerID: mine.ID})
	if err != nil || resp.StatusCode != 201 || r.ID != mine.ID {
		t.Fatalf("enable: %v %+v", err, r)
	}
	if _, resp, err := alice.Client.Runners.EnableProjectRunner(ap2.ID, &gitlab.EnableProjectRunnerOptions{RunnerID: mine.ID}); resp.StatusCode != 409 || errMessage(err) != "Runner was already enabled for this project" {
		t.Errorf("enable twice: %d %v", resp.StatusCode, err)
	}
	for _, tc := range []struct {
		who     *gitlab.Client
		project int64
		runner  int64
		code    int
		msg     string
	}{
		{alice.Client, ap2.ID, shared.ID, 403, "403 Forbidden - Runner is shared"},
		{alice.Client, ap2.ID, locked.ID, 403, "403 Forbidden - Runner is locked"},
		{alice.Client, ap2.ID, 424242, 404, "404 Runner Not Found"},
		{bob.Client, bp.ID, mine.ID, 403, "403 Forbidden - No access granted"},
		{bob.Client, ap2.ID, mine.ID, 404, "404 Project Not Found"},
	} {
		code, _, raw := rawJSON(t, http.MethodPost, s.URL+"/api/v4/projects/"+store.IDString(tc.project)+"/runners", map[string]any{"runner_id": tc.runner}, "PRIVATE-TOKEN", tokens[tc.who])
		if code != tc.code || bodyMessage(raw) != tc.msg {
			t.Errorf("enable %d on %d: %d %s, want %d %q", tc.runner, tc.project, code, raw, tc.code, tc.msg)
		}
	}
	if code, _, raw := rawJSON(t, http.MethodPost, s.URL+"/api/v4/projects/"+store.IDString(ap2.ID)+"/runners", map[string]any{}, "PRIVATE-TOKEN", alice.Token); code != 400 || bodyMessage(raw) != "runner_id is missing" {
		t.Errorf("enable without runner_id: %d %s", code, raw)
	}
	pr, _, err := alice.Client.Runners.ListProjectRunners(ap2.ID, nil)
	if err != nil || len(pr) != 2 { // alice's runner and the shared one
		t.Fatalf("project runners: %v %+v", err, pr)
	}
	if code, _ := get(bob.Client, "projects/"+store.IDString(bp.ID)+"/runners"); code != 200 {
		t.Errorf("bob's own project runners: %d", code)
	}
	if code, _ := get(bob.Client, "projects/"+store.IDString(ap.ID)+"/runners"); code != 404 {
		t.Errorf("bob lists alice's project's runners: %d", code)
	}
	if resp, err := alice.Client.Runners.DisableProjectRunner(ap.ID, mine.ID); err != nil || resp.StatusCode != 204 {
		t.Fatalf("disable: %v", err)
	}
	if code, _, raw := rawJSON(t, http.MethodDelete, s.URL+"/api/v4/projects/"+store.IDString(ap.ID)+"/runners/"+store.IDString(mine.ID), nil, "PRIVATE-TOKEN", alice.Token); code != 404 || bodyMessage(raw) != "404 Runner Not Found" {
		t.Errorf("disable twice: %d %s", code, raw)
	}
	if resp, err := alice.Client.Runners.DisableProjectRunner(ap2.ID, mine.ID); resp.StatusCode != 403 ||
		errMessage(err) != "403 Forbidden - Only one project associated with the runner. Please remove the runner instead" {
		t.Errorf("disable the last project: %d %v", resp.StatusCode, err)
	}

	// Jobs of a runner, and removal.
	if code, msg := get(alice.Client, "runners/"+store.IDString(shared.ID)+"/jobs"); code != 403 || msg != "403 Forbidden - Runner is shared" {
		t.Errorf("alice lists a shared runner's jobs: %d %q", code, msg)
	}
	if code, _ := get(alice.Client, "runners/"+store.IDString(mine.ID)+"/jobs?status=bogus"); code != 400 {
		t.Errorf("bad status: %d", code)
	}
	if code, _ := get(alice.Client, "runners/"+store.IDString(mine.ID)+"/jobs"); code != 200 {
		t.Errorf("alice lists her runner's jobs: %d", code)
	}
	if resp, _ := alice.Client.Runners.RemoveRunner(shared.ID); resp.StatusCode != 403 {
		t.Errorf("alice removes a shared runner: %d", resp.StatusCode)
	}
	if resp, err := alice.Client.Runners.RemoveRunner(mine.ID); err != nil || resp.StatusCode != 204 {
		t.Fatalf("remove: %v", err)
	}
	if code, _ := get(alice.Client, "runners/"+store.IDString(mine.ID)); code != 404 {
		t.Errorf("removed runner: %d", code)
	}
	if code, _, _ := rawJSON(t, http.MethodPost, s.URL+"/api/v4/runners/verify", map[string]any{"token": mine.Token}); code != 403 {
		t.Errorf("a removed runner verifies: %d", code)
	}
	if resp, err := root.Runners.RemoveRunner(shared.ID); err != nil || resp.StatusCode != 204 {
		t.Errorf("admin removes a shared runner: %v", err)
	}
}

// errMessage is the GitLab message of a client error ("" for none).
func errMessage(err error) string {
	var e *gitlab.ErrorResponse
	if err == nil || !errors.As(err, &e) {
		return ""
	}
	return bodyMessage(e.Body)
}

// bodyMessage is the "message" (or "error") string of an error body.
func bodyMessage(raw []byte) string {
	var body struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	_ = json.Unmarshal(raw, &body)
	if m, ok := body.Message.(string); ok {
		return m
	}
	if body.Message != nil {
		b, _ := json.Marshal(body.Message)
		return string(b)
	}
	return body.Error
}
