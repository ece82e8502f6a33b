package stock_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// basicKeys are the fields of GitLab's basic user, the view every response
// that embeds a user shows.
var basicKeys = []string{"id", "name", "username", "state", "avatar_url", "web_url"}

// TestEmbeddedUsersAreOneView checks that every response embedding a user
// (commit status and comment authors, members, project users, event
// authors) shows the same basic view as GET /users, and that a deleted
// author of a status or comment is the ghost user, not an empty object.
func TestEmbeddedUsersAreOneView(t *testing.T) {
	t.Parallel()
	var bus *events.Bus
	s := stocktest.Start(t, fennectest.WithExtract(&bus))
	drain := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := bus.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
	alice := s.CreateUser(t, "alice.b-1")
	p, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("shown"), Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: alice.ID, AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	c, _, err := alice.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{
		Branch: gitlab.Ptr("master"), CommitMessage: gitlab.Ptr("first"),
		Actions: []*gitlab.CommitActionOptions{{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr("a.txt"), Content: gitlab.Ptr("a\n")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Commits.SetCommitStatus(p.ID, c.ID, &gitlab.SetCommitStatusOptions{State: gitlab.Success}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Commits.PostCommitComment(p.ID, c.ID, &gitlab.PostCommitCommentOptions{Note: gitlab.Ptr("nice")}); err != nil {
		t.Fatal(err)
	}
	drain()

	get := func(path string) json.RawMessage {
		t.Helper()
		resp, raw := s.JSON(t, http.MethodGet, path, nil, nil, "PRIVATE-TOKEN", alice.Token)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
		}
		return raw
	}
	// The reference: the public view of /users as a non-administrator sees it.
	var listed []map[string]any
	if err := json.Unmarshal(get("/api/v4/users?username="+alice.Username), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("users: %v %v", listed, err)
	}
	want := basic(t, listed[0])
	if want["web_url"] != s.URL+"/"+alice.Username || want["avatar_url"] == nil {
		t.Fatalf("reference view %v", want)
	}

	pid := fmt.Sprint(p.ID)
	embedded := map[string]func() map[string]any{
		"status author": func() map[string]any {
			return first(t, get("/api/v4/projects/"+pid+"/repository/commits/"+c.ID+"/statuses"), "author")
		},
		"comment author": func() map[string]any {
			return first(t, get("/api/v4/projects/"+pid+"/repository/commits/"+c.ID+"/comments"), "author")
		},
		"member": func() map[string]any {
			return first(t, get("/api/v4/projects/"+pid+"/members?query="+alice.Username), "")
		},
		"project user": func() map[string]any {
			return first(t, get("/api/v4/projects/"+pid+"/users?search="+alice.Username), "")
		},
		"event author": func() map[string]any { return first(t, get("/api/v4/users/"+alice.Username+"/events"), "author") },
	}
	for name, got := range embedded {
		if g := basic(t, got()); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", name, g, want)
		}
	}

	// Deleted, alice's statuses and comments stay and show the ghost user.
	if _, err := s.Client.Users.DeleteUser(alice.ID); err != nil {
		t.Fatal(err)
	}
	drain()
	ghost := map[string]any{"id": float64(alice.ID), "name": "Ghost User", "username": "ghost", "state": "blocked", "avatar_url": nil, "web_url": s.URL + "/ghost"}
	for name, path := range map[string]string{
		"status author":  "/api/v4/projects/" + pid + "/repository/commits/" + c.ID + "/statuses",
		"comment author": "/api/v4/projects/" + pid + "/repository/commits/" + c.ID + "/comments",
	} {
		resp, raw := s.JSON(t, http.MethodGet, path, nil, nil, "PRIVATE-TOKEN", s.RootToken)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
		if g := basic(t, first(t, raw, "author")); fmt.Sprint(g) != fmt.Sprint(ghost) {
			t.Errorf("deleted %s: %v, want %v", name, g, ghost)
		}
	}
}

// first is the first element of a JSON array, or its field key.
func first(t *testing.T, raw json.RawMessage, key string) map[string]any {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		t.Fatalf("want a non-empty list: %s (%v)", raw, err)
	}
	if key == "" {
		return list[0]
	}
	m, ok := list[0][key].(map[string]any)
	if !ok {
		t.Fatalf("no object %q in %s", key, raw)
	}
	return m
}

// basic keeps the basic user's keys, failing when one is missing.
func basic(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, k := range basicKeys {
		v, ok := m[k]
		if !ok {
			t.Fatalf("key %q missing in %v", k, m)
		}
		out[k] = v
	}
	return out
}
