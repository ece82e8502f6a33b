package repository_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// pbCall sends a request with token (none when empty) and a JSON body (nil:
// none) and checks the exact status and, unless want is "-", the exact JSON
// answer (compared as values). It returns the raw answer.
func pbCall(t *testing.T, s *fennectest.Server, token, method, path string, body any, status int, want string) string {
	t.Helper()
	var r io.Reader
	hdr := []string{}
	if token != "" {
		hdr = append(hdr, "PRIVATE-TOKEN", token)
	}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
		hdr = append(hdr, "Content-Type", "application/json")
	}
	resp, raw := s.JSON(t, method, path, r, nil, hdr...)
	got := strings.TrimSpace(string(raw))
	if resp.StatusCode != status || (want != "-" && !pbSameJSON(got, want)) {
		t.Fatalf("%s %s: got %d %s\nwant %d %s", method, path, resp.StatusCode, got, status, want)
	}
	return got
}

func pbSameJSON(got, want string) bool {
	if want == "" {
		return got == ""
	}
	var g, w any
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

// pbView is the protected branch resource GitLab 9.x answers.
func pbView(name string, push, merge int) string {
	desc := map[int]string{0: "No one", 30: "Developers + Masters", 40: "Masters"}
	return fmt.Sprintf(`{"name":%q,"push_access_levels":[{"access_level":%d,"access_level_description":%q}],`+
		`"merge_access_levels":[{"access_level":%d,"access_level_description":%q}]}`, name, push, desc[push], merge, desc[merge])
}

// pbBranch reads a branch through the branches API: protected,
// developers_can_push, developers_can_merge.
func pbBranch(t *testing.T, s *fennectest.Server, project int64, branch string) [3]bool {
	t.Helper()
	var v struct {
		Protected          bool `json:"protected"`
		DevelopersCanPush  bool `json:"developers_can_push"`
		DevelopersCanMerge bool `json:"developers_can_merge"`
	}
	resp, raw := s.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/repository/branches/%s", project, strings.ReplaceAll(branch, "/", "%2F")), nil, &v,
		"PRIVATE-TOKEN", s.RootToken)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("branch %s: %d %s", branch, resp.StatusCode, raw)
	}
	return [3]bool{v.Protected, v.DevelopersCanPush, v.DevelopersCanMerge}
}

// pbCommit commits a file to branch through the commits API as token and
// returns the status.
func pbCommit(t *testing.T, s *fennectest.Server, token string, project int64, branch, file string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"branch": branch, "commit_message": file,
		"actions": []map[string]string{{"action": "create", "file_path": file, "content": file}}})
	resp, raw := s.JSON(t, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/repository/commits", project), bytes.NewReader(body), nil,
		"PRIVATE-TOKEN", token, "Content-Type", "application/json")
	return resp.StatusCode, strings.TrimSpace(string(raw))
}

// TestProtectedBranchesAPI: GitLab 9.x's /projects/:id/protected_branches
// (issue 35), on the same protections as .../branches/:branch/protect.
func TestProtectedBranchesAPI(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	dev := g.CreateUser(t, "dev")
	mas := g.CreateUser(t, "mas")
	stranger := g.CreateUser(t, "stranger")
	p := g.project(t, "pb", gitlab.PublicVisibility)
	g.addMember(t, p, dev, gitlab.DeveloperPermissions)
	g.addMember(t, p, mas, gitlab.MaintainerPermissions)
	work := c.newWork(t)
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.seed(t, p, work, "master", "master:refs/heads/release-1", "master:refs/heads/feature/x", "master:refs/heads/topic")
	base := fmt.Sprintf("/api/v4/projects/%d/protected_branches", p.ID)
	root := g.RootToken

	pbCall(t, g.Server, root, http.MethodPost, base, map[string]any{"name": "master", "push_access_level": 40, "merge_access_level": 30},
		http.StatusCreated, pbView("master", 40, 30))
	pbCall(t, g.Server, root, http.MethodPost, base, map[string]any{"name": "master", "push_access_level": 30},
		http.StatusConflict, `{"message":"Protected branch 'master' already exists"}`)
	// Levels default to masters; a wildcard is a name like any other.
	pbCall(t, g.Server, mas.Token, http.MethodPost, base, map[string]any{"name": "release-*"}, http.StatusCreated, pbView("release-*", 40, 40))
	pbCall(t, g.Server, root, http.MethodPost, base, map[string]any{"name": "feature/*", "push_access_level": 0, "merge_access_level": 0},
		http.StatusCreated, pbView("feature/*", 0, 0))

	// Bad input changes nothing.
	for _, bad := range []struct {
		body   any
		status int
		want   string
	}{
		{map[string]any{"name": "x", "push_access_level": 20}, 400, `{"error":"push_access_level does not have a valid value"}`},
		{map[string]any{"name": "x", "merge_access_level": 50}, 400, `{"error":"merge_access_level does not have a valid value"}`},
		{map[string]any{"name": "x", "push_access_level": "masters"}, 400, `{"error":"push_access_level is invalid"}`},
		{map[string]any{"push_access_level": 40}, 400, `{"error":"name is missing"}`},
		{map[string]any{"name": "  "}, 422, `{"message":["Name can't be blank"]}`},
	} {
		pbCall(t, g.Server, root, http.MethodPost, base, bad.body, bad.status, bad.want)
	}
	list := "[" + pbView("master", 40, 30) + "," + pbView("release-*", 40, 40) + "," + pbView("feature/*", 0, 0) + "]"
	pbCall(t, g.Server, root, http.MethodGet, base, nil, http.StatusOK, list)
	pbCall(t, g.Server, mas.Token, http.MethodGet, base+"?per_page=1&page=2", nil, http.StatusOK, "["+pbView("release-*", 40, 40)+"]")

	// One by its exact name, URL-encoded; a branch a wildcard covers is not
	// a protected branch of its own.
	pbCall(t, g.Server, root, http.MethodGet, base+"/release-*", nil, http.StatusOK, pbView("release-*", 40, 40))
	pbCall(t, g.Server, root, http.MethodGet, base+"/feature%2F%2A", nil, http.StatusOK, pbView("feature/*", 0, 0))
	pbCall(t, g.Server, root, http.MethodGet, base+"/release-1", nil, http.StatusNotFound, `{"message":"404 Not found"}`)
	pbCall(t, g.Server, root, http.MethodDelete, base+"/nope", nil, http.StatusNotFound, `{"message":"404 Not found"}`)

	// Masters only, reads included (GitLab 9.x: admin_project).
	pbCall(t, g.Server, dev.Token, http.MethodGet, base, nil, http.StatusForbidden, `{"message":"403 Forbidden"}`)
	pbCall(t, g.Server, dev.Token, http.MethodGet, base+"/master", nil, http.StatusForbidden, `{"message":"403 Forbidden"}`)
	pbCall(t, g.Server, dev.Token, http.MethodPost, base, map[string]any{"name": "topic"}, http.StatusForbidden, `{"message":"403 Forbidden"}`)
	pbCall(t, g.Server, dev.Token, http.MethodDelete, base+"/master", nil, http.StatusForbidden, `{"message":"403 Forbidden"}`)
	pbCall(t, g.Server, stranger.Token, http.MethodGet, base, nil, http.StatusForbidden, `{"message":"403 Forbidden"}`)
	pbCall(t, g.Server, "", http.MethodGet, base, nil, http.StatusUnauthorized, `{"message":"401 Unauthorized"}`)
	priv := g.project(t, "pbprivate", gitlab.PrivateVisibility)
	pbCall(t, g.Server, stranger.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/protected_branches", priv.ID), nil,
		http.StatusNotFound, `{"message":"404 Project Not Found"}`)
	pbCall(t, g.Server, root, http.MethodGet, base, nil, http.StatusOK, list)

	// The branches API sees the same protections, wildcards included.
	for branch, want := range map[string][3]bool{
		"master": {true, false, true}, "release-1": {true, false, false}, "feature/x": {true, false, false}, "topic": {false, false, false},
	} {
		if got := pbBranch(t, g.Server, p.ID, branch); got != want {
			t.Errorf("branch %s: protected, developers_can_push, developers_can_merge = %v, want %v", branch, got, want)
		}
	}

	// And the API's writes obey them: masters only on release-*, no one on
	// feature/* (administrators included).
	if st, raw := pbCommit(t, g.Server, dev.Token, p.ID, "release-1", "dev.txt"); st != http.StatusForbidden ||
		raw != `{"message":"403 Forbidden - You are not allowed to push into this branch"}` {
		t.Fatalf("developer commit to release-1: %d %s", st, raw)
	}
	if st, raw := pbCommit(t, g.Server, mas.Token, p.ID, "release-1", "mas.txt"); st != http.StatusCreated {
		t.Fatalf("master commit to release-1: %d %s", st, raw)
	}
	for who, tok := range map[string]string{"master": mas.Token, "admin": root} {
		if st, raw := pbCommit(t, g.Server, tok, p.ID, "feature/x", who+".txt"); st != http.StatusForbidden {
			t.Fatalf("%s commit to feature/x (no one may push): %d %s", who, st, raw)
		}
	}
	if st, raw := pbCommit(t, g.Server, dev.Token, p.ID, "topic", "topic.txt"); st != http.StatusCreated {
		t.Fatalf("developer commit to an unprotected branch: %d %s", st, raw)
	}
	resp, raw := g.JSON(t, http.MethodDelete, fmt.Sprintf("/api/v4/projects/%d/repository/branches/release-1", p.ID), nil, nil, "PRIVATE-TOKEN", root)
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(raw), "Protected branch cant be removed") {
		t.Fatalf("delete a branch a wildcard protects: %d %s", resp.StatusCode, raw)
	}

	// The older endpoints write the same records.
	branches := fmt.Sprintf("/api/v4/projects/%d/repository/branches/", p.ID)
	pbCall(t, g.Server, root, http.MethodPut, branches+"master/protect?developers_can_push=true", nil, http.StatusOK, "-")
	pbCall(t, g.Server, root, http.MethodGet, base+"/master", nil, http.StatusOK, pbView("master", 30, 40))
	pbCall(t, g.Server, root, http.MethodPut, branches+"master/unprotect", nil, http.StatusOK, "-")
	pbCall(t, g.Server, root, http.MethodGet, base+"/master", nil, http.StatusNotFound, `{"message":"404 Not found"}`)
	pbCall(t, g.Server, root, http.MethodPut, branches+"topic/protect", nil, http.StatusOK, "-")
	pbCall(t, g.Server, root, http.MethodGet, base+"/topic", nil, http.StatusOK, pbView("topic", 40, 40))
	// Unprotecting a branch that only a wildcard covers leaves it protected.
	pbCall(t, g.Server, root, http.MethodPut, branches+"release-1/unprotect", nil, http.StatusOK, "-")
	if got := pbBranch(t, g.Server, p.ID, "release-1"); !got[0] {
		t.Fatal("release-1 unprotected while release-* still protects it")
	}

	// Deleting the wildcard frees its branches.
	pbCall(t, g.Server, mas.Token, http.MethodDelete, base+"/release-%2A", nil, http.StatusNoContent, "")
	pbCall(t, g.Server, root, http.MethodGet, base+"/release-*", nil, http.StatusNotFound, `{"message":"404 Not found"}`)
	if got := pbBranch(t, g.Server, p.ID, "release-1"); got[0] {
		t.Fatal("release-1 still protected after its wildcard was deleted")
	}
	if st, raw := pbCommit(t, g.Server, dev.Token, p.ID, "release-1", "dev2.txt"); st != http.StatusCreated {
		t.Fatalf("developer commit to release-1 after the unprotect: %d %s", st, raw)
	}
	pbCall(t, g.Server, root, http.MethodGet, base, nil, http.StatusOK, "["+pbView("feature/*", 0, 0)+","+pbView("topic", 40, 40)+"]")
}

// TestWildcardProtectionOnPushAndMerge: a wildcard protection made through
// the protected branches API holds for git push (the real git CLI) and for
// merge requests, not only for the API's own writes.
func TestWildcardProtectionOnPushAndMerge(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	dev := g.CreateUser(t, "dev")
	mas := g.CreateUser(t, "mas")
	p := g.project(t, "wild", gitlab.PublicVisibility)
	g.addMember(t, p, dev, gitlab.DeveloperPermissions)
	g.addMember(t, p, mas, gitlab.MaintainerPermissions)
	work := c.newWork(t)
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.seed(t, p, work, "master", "master:refs/heads/release-1", "master:refs/heads/frozen-1")
	base := fmt.Sprintf("/api/v4/projects/%d/protected_branches", p.ID)
	pbCall(t, g.Server, g.RootToken, http.MethodPost, base, map[string]any{"name": "release-*", "push_access_level": 40, "merge_access_level": 40},
		http.StatusCreated, pbView("release-*", 40, 40))
	pbCall(t, g.Server, g.RootToken, http.MethodPost, base, map[string]any{"name": "frozen-*", "push_access_level": 0, "merge_access_level": 40},
		http.StatusCreated, pbView("frozen-*", 0, 40))
	bare := g.bare(p)

	refused := func(what, stderr string) {
		t.Helper()
		if !strings.Contains(stderr, "! [remote rejected] ") || !strings.Contains(strings.ToLower(stderr), "protected") {
			t.Fatalf("%s: git should show a [remote rejected] for a protected branch:\n%s", what, stderr)
		}
	}

	d := c.clone(t, g.url(p, dev.Username, dev.Token))
	c.ok(t, d, "checkout", "-q", "-b", "work", "origin/release-1")
	devHead := c.commit(t, d, "dev", map[string]string{"dev.txt": "d\n"})
	before := refOf(t, bare, "refs/heads/release-1")
	refused("developer push to release-1", c.fail(t, d, "push", "origin", "work:release-1"))
	refused("developer push creating release-2", c.fail(t, d, "push", "origin", "work:release-2"))
	if got, gone := refOf(t, bare, "refs/heads/release-1"), refOf(t, bare, "refs/heads/release-2"); got != before || gone != "" {
		t.Fatalf("refused pushes moved refs: release-1 %s (was %s), release-2 %q", got, before, gone)
	}
	c.ok(t, d, "push", "-q", "origin", "work:topic") // not protected
	if got := refOf(t, bare, "refs/heads/topic"); got != devHead {
		t.Fatalf("topic is %s, want %s", got, devHead)
	}

	m := c.clone(t, g.url(p, mas.Username, mas.Token))
	c.ok(t, m, "checkout", "-q", "-b", "work", "origin/release-1")
	masHead := c.commit(t, m, "mas", map[string]string{"mas.txt": "m\n"})
	c.ok(t, m, "push", "-q", "origin", "work:release-1")
	if got := refOf(t, bare, "refs/heads/release-1"); got != masHead {
		t.Fatalf("release-1 is %s after a master-level push, want %s", got, masHead)
	}
	// No one may push to frozen-*: not a master, not an administrator.
	for who, u := range map[string]string{"master-level": g.url(p, mas.Username, mas.Token), "admin": g.rootURL(p)} {
		refused(who+" push to frozen-1", c.fail(t, m, "push", u, "work:frozen-1"))
	}

	// Merging into a branch a wildcard protects takes its merge level.
	mr, _, err := dev.Client.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr("to release"), SourceBranch: gitlab.Ptr("topic"), TargetBranch: gitlab.Ptr("release-1")})
	if err != nil {
		t.Fatal(err)
	}
	accept := fmt.Sprintf("/api/v4/projects/%d/merge_requests/%d/merge", p.ID, mr.IID)
	pbCall(t, g.Server, dev.Token, http.MethodPut, accept, nil, http.StatusUnauthorized, `{"message":"401 Unauthorized"}`)
	pbCall(t, g.Server, g.RootToken, http.MethodDelete, base+"/release-*", nil, http.StatusNoContent, "")
	pbCall(t, g.Server, g.RootToken, http.MethodPost, base, map[string]any{"name": "release-*", "push_access_level": 40, "merge_access_level": 30},
		http.StatusCreated, pbView("release-*", 40, 30))
	out := pbCall(t, g.Server, dev.Token, http.MethodPut, accept, nil, http.StatusOK, "-")
	if !strings.Contains(out, `"state":"merged"`) {
		t.Fatalf("merge with merge_access_level 30: %s", out)
	}
}
