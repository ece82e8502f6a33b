package projects_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

func TestHooksCRUD(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "hkowner")
	p := actProject(t, owner.Client, "hooked", gitlab.PrivateVisibility)
	base := fmt.Sprintf("/projects/%d/hooks", p.ID)

	h, resp, err := owner.Client.Projects.AddProjectHook(p.ID, &gitlab.AddProjectHookOptions{
		URL: gitlab.Ptr("https://ci.example.com/hook"), Token: gitlab.Ptr("s3cret"), IssuesEvents: gitlab.Ptr(true),
	})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("add: %d %v", actStatus(resp), err)
	}
	if h.URL != "https://ci.example.com/hook" || h.ProjectID != p.ID || !h.PushEvents || !h.IssuesEvents || h.MergeRequestsEvents ||
		h.TagPushEvents || h.NoteEvents || h.JobEvents || h.PipelineEvents || h.WikiPageEvents || !h.EnableSSLVerification || h.CreatedAt == nil {
		t.Fatalf("defaults: %+v", h)
	}

	// The spec's keys exactly, and never the token.
	raw := a.expect(t, http.MethodGet, fmt.Sprintf("%s/%d", base, h.ID), owner.Token, nil, 200, "")
	var view map[string]any
	_ = json.Unmarshal(raw, &view)
	var keys []string
	for k := range view {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := "created_at,enable_ssl_verification,id,issues_events,job_events,merge_requests_events,note_events," +
		"pipeline_events,project_id,push_events,tag_push_events,url,wiki_page_events"
	if strings.Join(keys, ",") != want {
		t.Fatalf("keys %v", keys)
	}
	if strings.Contains(string(raw), "s3cret") {
		t.Fatal("the token was returned")
	}
	if ts, _ := view["created_at"].(string); len(ts) != len("2017-05-24T10:14:38.000Z") || !strings.HasSuffix(ts, "Z") {
		t.Fatalf("created_at %q", ts)
	}

	// Edit: the URL and the switches given change, the others stay.
	h2, _, err := owner.Client.Projects.EditProjectHook(p.ID, h.ID, &gitlab.EditProjectHookOptions{
		URL: gitlab.Ptr("http://ci.example.com/v2"), PushEvents: gitlab.Ptr(false), JobEvents: gitlab.Ptr(true),
		EnableSSLVerification: gitlab.Ptr(false),
	})
	if err != nil || h2.ID != h.ID || h2.URL != "http://ci.example.com/v2" || h2.PushEvents || !h2.JobEvents || !h2.IssuesEvents ||
		h2.EnableSSLVerification {
		t.Fatalf("edit: %v %+v", err, h2)
	}
	got, _, err := owner.Client.Projects.GetProjectHook(p.ID, h.ID)
	if err != nil || got.URL != h2.URL || got.PushEvents {
		t.Fatalf("get after edit: %v %+v", err, got)
	}
	// Form parameters work too (booleans as strings).
	form := "url=http%3A%2F%2Fform.example.com&push_events=false&note_events=1&token=t"
	resp2, raw := a.JSON(t, http.MethodPost, "/api/v4"+base, strings.NewReader(form), nil,
		"Content-Type", "application/x-www-form-urlencoded", "PRIVATE-TOKEN", owner.Token)
	if resp2.StatusCode != 201 || !strings.Contains(string(raw), `"push_events":false`) || !strings.Contains(string(raw), `"note_events":true`) {
		t.Fatalf("form add: %d %s", resp2.StatusCode, raw)
	}

	// List, paginated, in id order.
	for i := 0; i < 3; i++ {
		if _, _, err := owner.Client.Projects.AddProjectHook(p.ID, &gitlab.AddProjectHookOptions{URL: gitlab.Ptr(fmt.Sprintf("https://h%d.example.com", i))}); err != nil {
			t.Fatal(err)
		}
	}
	list, resp, err := owner.Client.Projects.ListProjectHooks(p.ID, &gitlab.ListProjectHooksOptions{ListOptions: gitlab.ListOptions{PerPage: 2, Page: 2}})
	if err != nil || len(list) != 2 || resp.TotalItems != 5 || resp.TotalPages != 3 || list[0].URL != "https://h0.example.com" {
		t.Fatalf("list: %v %d items, total %d", err, len(list), resp.TotalItems)
	}

	// Delete: 204, then 404.
	resp, err = owner.Client.Projects.DeleteProjectHook(p.ID, h.ID)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %v", actStatus(resp), err)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		a.expect(t, m, fmt.Sprintf("%s/%d", base, h.ID), owner.Token, nil, 404, `{"message":"404 Not found"}`)
	}
	a.expect(t, http.MethodPut, fmt.Sprintf("%s/%d", base, h.ID), owner.Token, map[string]any{"url": "https://x.example.com"}, 404,
		`{"message":"404 Not found"}`)
}

// invalidURL is GitLab's answer (422) for a hook url that does not
// validate, whatever the reason (shape, length, a local destination).
const invalidURL = `{"error":"Invalid url given"}`

func TestHooksBadInputAndAccess(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "hbowner")
	master := a.CreateUser(t, "hbmaster")
	dev := a.CreateUser(t, "hbdev")
	stranger := a.CreateUser(t, "hbstranger")
	p := actProject(t, owner.Client, "guarded", gitlab.PrivateVisibility)
	pub := actProject(t, owner.Client, "open", gitlab.PublicVisibility)
	base := fmt.Sprintf("/projects/%d/hooks", p.ID)
	h, _, err := owner.Client.Projects.AddProjectHook(p.ID, &gitlab.AddProjectHookOptions{URL: gitlab.Ptr("https://ok.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	one := fmt.Sprintf("%s/%d", base, h.ID)

	for _, tc := range []struct {
		url  any
		want string
	}{
		{"ftp://x", invalidURL},
		{"javascript:alert(1)", invalidURL},
		{"not a url", invalidURL},
		{"http://", invalidURL},
		{"/relative/path", invalidURL},
		{"http://exa mple.com", invalidURL},
		{"https://example.com/" + strings.Repeat("a", 2048), invalidURL},
		{"", invalidURL},
		// Server-side request forgery: literal local destinations are refused
		// while allow_local_requests is off (names are checked at connect time).
		{"http://127.0.0.1:8080/hook", invalidURL},
		{"http://[::1]/hook", invalidURL},
		{"http://10.1.2.3/hook", invalidURL},
		{"http://169.254.169.254/latest/meta-data", invalidURL},
		{"http://2130706433/hook", invalidURL},
	} {
		a.expect(t, http.MethodPost, base, owner.Token, map[string]any{"url": tc.url}, 422, tc.want)
		a.expect(t, http.MethodPut, one, owner.Token, map[string]any{"url": tc.url}, 422, tc.want)
	}
	a.expect(t, http.MethodPost, base, owner.Token, map[string]any{"push_events": true}, 400, `{"error":"url is missing"}`)
	a.expect(t, http.MethodPut, one, owner.Token, map[string]any{"push_events": true}, 400, `{"error":"url is missing"}`)
	a.expect(t, http.MethodPost, base, owner.Token, map[string]any{"url": "https://x.example.com", "push_events": "maybe"}, 400,
		`{"error":"push_events is invalid"}`)

	// Unknown hooks, hooks of another project, bad ids.
	other, _, err := owner.Client.Projects.AddProjectHook(pub.ID, &gitlab.AddProjectHookOptions{URL: gitlab.Ptr("https://other.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{base + "/999999", fmt.Sprintf("%s/%d", base, other.ID), base + "/0", base + "/-1"} {
		a.expect(t, http.MethodGet, path, owner.Token, nil, 404, `{"message":"404 Not found"}`)
		a.expect(t, http.MethodDelete, path, owner.Token, nil, 404, `{"message":"404 Not found"}`)
	}
	a.expect(t, http.MethodGet, base+"/abc", owner.Token, nil, 400, `{"error":"hook_id is invalid"}`)

	// Master and up only; strangers do not see the project.
	actAddProjectMember(t, owner.Client, p.ID, master.ID, gitlab.MaintainerPermissions)
	actAddProjectMember(t, owner.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	if _, _, err := master.Client.Projects.ListProjectHooks(p.ID, nil); err != nil {
		t.Fatalf("master list: %v", err)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{{http.MethodGet, base, nil}, {http.MethodGet, one, nil}, {http.MethodPost, base, map[string]any{"url": "https://x.example.com"}},
		{http.MethodPut, one, map[string]any{"url": "https://x.example.com"}}, {http.MethodDelete, one, nil}} {
		a.expect(t, c.method, c.path, dev.Token, c.body, 403, `{"message":"403 Forbidden"}`)
		a.expect(t, c.method, c.path, stranger.Token, c.body, 404, `{"message":"404 Project Not Found"}`)
		a.expect(t, c.method, c.path, "", c.body, 401, `{"message":"401 Unauthorized"}`)
	}
	// Readers of a public project are not Masters either.
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/hooks", pub.ID), stranger.Token, nil, 403, `{"message":"403 Forbidden"}`)
}

// Deleting a project deletes its hooks (through the "deleted" event).
func TestHooksGoWithTheProject(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "hgowner")
	p := actProject(t, owner.Client, "doomed", gitlab.PrivateVisibility)
	keep := actProject(t, owner.Client, "kept", gitlab.PrivateVisibility)
	h1, _, err := owner.Client.Projects.AddProjectHook(p.ID, &gitlab.AddProjectHookOptions{URL: gitlab.Ptr("https://a.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	h2, _, err := owner.Client.Projects.AddProjectHook(keep.ID, &gitlab.AddProjectHookOptions{URL: gitlab.Ptr("https://b.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Client.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	a.drain(t)
	stored := func(id int64) bool {
		found := false
		_ = a.db.View(t.Context(), func(tx *store.Tx) error {
			found = store.Keys("projects.hooks").Has(tx, store.Key(uint64(id)))
			return nil
		})
		return found
	}
	if stored(h1.ID) {
		t.Fatal("the deleted project's hook is still stored")
	}
	if !stored(h2.ID) {
		t.Fatal("another project's hook went too")
	}
}
