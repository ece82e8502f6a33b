package repository_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

func TestBranchWrites(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.Client
	br, resp, err := c.Branches.CreateBranch(w.project.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("topic/x"), Ref: gitlab.Ptr("v1.0")})
	if err != nil || resp.StatusCode != 201 || br.Name != "topic/x" || br.Commit.ID != gitCmd(t, w.work, "rev-parse", "v1.0^{commit}") || !br.Merged {
		t.Fatalf("create %+v %v", br, err)
	}
	if got := gitCmd(t, w.bare, "rev-parse", "refs/heads/topic/x"); got != br.Commit.ID {
		t.Fatalf("the ref on disk is %s", got)
	}
	for body, want := range map[string]string{
		`{"branch":"topic/x","ref":"master"}`: `{"message":"Branch already exists"}`,
		`{"branch":"a..b","ref":"master"}`:    `{"message":"Branch name is invalid"}`,
		`{"branch":"-rf","ref":"master"}`:     `{"message":"Branch name is invalid"}`,
		`{"branch":"ok","ref":"nope"}`:        `{"message":"Invalid reference name"}`,
	} {
		resp, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/branches", strings.NewReader(body), nil,
			"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
		if resp.StatusCode != 400 || strings.TrimSpace(string(raw)) != want {
			t.Errorf("%s: %d %s", body, resp.StatusCode, raw)
		}
	}
	base := "/api/v4/projects/" + store.IDString(w.project.ID) + "/repository"
	var p map[string]any
	r, raw := w.s.JSON(t, http.MethodPut, base+"/branches/topic%2Fx/protect?developers_can_push=true", nil, &p, "PRIVATE-TOKEN", w.s.RootToken)
	if r.StatusCode != 200 || p["protected"] != true || p["developers_can_push"] != true || p["developers_can_merge"] != false {
		t.Fatalf("protect: %d %s", r.StatusCode, raw)
	}
	r, raw = w.s.JSON(t, http.MethodDelete, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/branches/topic%2Fx", nil, nil, "PRIVATE-TOKEN", w.s.RootToken)
	if r.StatusCode != 405 || strings.TrimSpace(string(raw)) != `{"message":"Protected branch cant be removed"}` {
		t.Fatalf("delete protected: %d %s", r.StatusCode, raw)
	}
	if r, raw := w.s.JSON(t, http.MethodPut, base+"/branches/topic%2Fx/unprotect", nil, nil, "PRIVATE-TOKEN", w.s.RootToken); r.StatusCode != 200 || !strings.Contains(string(raw), `"protected":false`) {
		t.Fatalf("unprotect: %d %s", r.StatusCode, raw)
	}
	if _, err := c.Branches.DeleteBranch(w.project.ID, "topic/x"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	r, raw = w.s.JSON(t, http.MethodDelete, base+"/branches/master", nil, nil, "PRIVATE-TOKEN", w.s.RootToken)
	if r.StatusCode != 405 || strings.TrimSpace(string(raw)) != `{"message":"Cannot remove HEAD branch"}` {
		t.Fatalf("delete default: %d %s", r.StatusCode, raw)
	}
	// Readers of a public project may not write.
	reader := w.s.CreateUser(t, "reader")
	if _, resp, err := reader.Client.Branches.CreateBranch(w.project.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("x"), Ref: gitlab.Ptr("master")}); err == nil || resp.StatusCode != 403 {
		t.Fatalf("non-member create: %v", resp.StatusCode)
	}
}

func TestTagWritesAndReleases(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	c := w.s.Client
	base := "/api/v4/projects/" + store.IDString(w.project.ID) + "/repository"
	var tag struct {
		Message string `json:"message"`
		Commit  struct {
			ID string `json:"id"`
		} `json:"commit"`
		Release *struct {
			Description string `json:"description"`
		} `json:"release"`
	}
	r, raw := w.s.JSON(t, http.MethodPost, base+"/tags", strings.NewReader(`{"tag_name":"v3.0","ref":"master","message":"three","release_description":"notes"}`), &tag,
		"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
	if r.StatusCode != 201 || tag.Message != "three" || tag.Commit.ID != w.head || tag.Release == nil || tag.Release.Description != "notes" {
		t.Fatalf("create: %d %s", r.StatusCode, raw)
	}
	if typ := gitCmd(t, w.bare, "cat-file", "-t", "refs/tags/v3.0"); typ != "tag" {
		t.Fatalf("an annotated tag object, got %s", typ)
	}
	gitCmd(t, w.bare, "fsck", "--strict")
	light, _, err := c.Tags.CreateTag(w.project.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("light"), Ref: gitlab.Ptr("v1.0")})
	if err != nil || light.Message != "" {
		t.Fatalf("lightweight %+v %v", light, err)
	}
	for body, want := range map[string]string{
		`{"tag_name":"v3.0","ref":"master"}`: `{"message":"Tag v3.0 already exists"}`,
		`{"tag_name":"x","ref":"nope"}`:      `{"message":"Target nope is invalid"}`,
		`{"tag_name":"a b","ref":"master"}`:  `{"message":"Tag name invalid"}`,
	} {
		resp, raw := w.s.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(w.project.ID)+"/repository/tags", strings.NewReader(body), nil,
			"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/json")
		if resp.StatusCode != 405 || strings.TrimSpace(string(raw)) != want {
			t.Errorf("%s: %d %s", body, resp.StatusCode, raw)
		}
	}
	// Releases: 409 when one exists, PUT changes it, the tag shows it.
	if r, raw := w.s.JSON(t, http.MethodPost, base+"/tags/v3.0/release?description=again", nil, nil, "PRIVATE-TOKEN", w.s.RootToken); r.StatusCode != 409 ||
		strings.TrimSpace(string(raw)) != `{"message":"Release already exists"}` {
		t.Fatalf("second release: %d %s", r.StatusCode, raw)
	}
	if r, raw := w.s.JSON(t, http.MethodPost, base+"/tags/light/release?description=first+notes", nil, nil, "PRIVATE-TOKEN", w.s.RootToken); r.StatusCode != 201 ||
		strings.TrimSpace(string(raw)) != `{"tag_name":"light","description":"first notes"}` {
		t.Fatalf("release: %d %s", r.StatusCode, raw)
	}
	if r, _ := w.s.JSON(t, http.MethodPut, base+"/tags/light/release?description=changed", nil, nil, "PRIVATE-TOKEN", w.s.RootToken); r.StatusCode != 200 {
		t.Fatalf("update release: %d", r.StatusCode)
	}
	if r, raw := w.s.JSON(t, http.MethodPut, base+"/tags/v1.0/release?description=x", nil, nil, "PRIVATE-TOKEN", w.s.RootToken); r.StatusCode != 404 ||
		strings.TrimSpace(string(raw)) != `{"message":"404 Release Not Found"}` {
		t.Fatalf("update missing release: %d %s", r.StatusCode, raw)
	}
	got, _, err := c.Tags.GetTag(w.project.ID, "light")
	if err != nil || got.Release == nil || got.Release.Description != "changed" {
		t.Fatalf("tag with release %+v %v", got, err)
	}
	if _, err := c.Tags.DeleteTag(w.project.ID, "light"); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := c.Tags.GetTag(w.project.ID, "light"); err == nil || resp.StatusCode != 404 {
		t.Fatalf("deleted tag: %v", resp.StatusCode)
	}
}

// A ref changed through the API is a push in the project's activity feed.
func TestRefChangesReachTheFeed(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	if _, _, err := w.s.Client.Branches.CreateBranch(w.project.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("fresh"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.s.Client.Branches.DeleteBranch(w.project.ID, "fresh"); err != nil {
		t.Fatal(err)
	}
	var feed []struct {
		ActionName string         `json:"action_name"`
		Data       map[string]any `json:"data"`
	}
	deadline := 50
	for i := 0; ; i++ {
		feed = nil
		w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+store.IDString(w.project.ID)+"/events", nil, &feed)
		if len(feed) >= 3 || i == deadline {
			break
		}
		waitABit()
	}
	if len(feed) < 3 || feed[0].ActionName != "deleted" || feed[1].ActionName != "pushed new" {
		t.Fatalf("feed %+v", feed)
	}
	if feed[1].Data["ref"] != "refs/heads/fresh" || feed[1].Data["before"] != "0000000000000000000000000000000000000000" ||
		// One builder for every push event: a new branch brings the
		// commits no other branch has, none here, as with git push.
		feed[1].Data["after"] != w.head || feed[1].Data["total_commits_count"] != float64(0) {
		t.Fatalf("push data %+v", feed[1].Data)
	}
}
