package projects_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Helpers of the group and member tests (prefixed grp so they do not clash
// with other test files of the package).

// grpRecorder records the MemberEvents and ProjectEvents delivered by the bus.
type grpRecorder struct {
	mu       sync.Mutex
	members  []projects.MemberEvent
	projects []projects.ProjectEvent
}

func (r *grpRecorder) module() fennec.Module {
	return fennec.NewModule("grouptest", fennec.ProvideSubscribers(func(fennec.None) []events.Subscriber {
		return []events.Subscriber{
			events.Subscribe("grouptest.members", func(_ context.Context, ev projects.MemberEvent) error {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.members = append(r.members, ev)
				return nil
			}),
			events.Subscribe("grouptest.projects", func(_ context.Context, ev projects.ProjectEvent) error {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.projects = append(r.projects, ev)
				return nil
			}),
		}
	}))
}

// waitMember waits for a MemberEvent matching want (all fields).
func (r *grpRecorder) waitMember(t *testing.T, want projects.MemberEvent) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, ev := range r.members {
			if ev == want {
				r.mu.Unlock()
				return
			}
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("no MemberEvent %+v; got %+v", want, r.members)
}

func (r *grpRecorder) waitProject(t *testing.T, want projects.ProjectEvent) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, ev := range r.projects {
			if ev.Action == want.Action && ev.ProjectID == want.ProjectID && ev.UserID == want.UserID {
				r.mu.Unlock()
				return
			}
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no ProjectEvent %+v", want)
}

func grpStart(t *testing.T) (*fennectest.Server, *grpRecorder) {
	t.Helper()
	rec := &grpRecorder{}
	return stocktest.Start(t, fennectest.WithModules(rec.module())), rec
}

type grpResp struct {
	status int
	header http.Header
	raw    []byte
}

// grpCall sends a raw request; body is a string (form-encoded) or any
// value (JSON); token "" is anonymous.
func grpCall(t *testing.T, s *fennectest.Server, token, method, path string, body any) grpResp {
	t.Helper()
	var rd io.Reader
	headers := []string{}
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
		headers = append(headers, "Content-Type", "application/x-www-form-urlencoded")
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
		headers = append(headers, "Content-Type", "application/json")
	}
	if token != "" {
		headers = append(headers, "PRIVATE-TOKEN", token)
	}
	resp, raw := s.JSON(t, method, path, rd, nil, headers...)
	return grpResp{status: resp.StatusCode, header: resp.Header, raw: raw}
}

func (r grpResp) expect(t *testing.T, status int, body string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if body != "" && strings.TrimSpace(string(r.raw)) != body {
		t.Fatalf("body %s, want %s", r.raw, body)
	}
}

func (r grpResp) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.raw, &m); err != nil {
		t.Fatalf("decode %s: %v", r.raw, err)
	}
	return m
}

func (r grpResp) list(t *testing.T) []map[string]any {
	t.Helper()
	var l []map[string]any
	if err := json.Unmarshal(r.raw, &l); err != nil {
		t.Fatalf("decode %s: %v", r.raw, err)
	}
	return l
}

// grpField returns a string field of each item.
func grpField(items []map[string]any, key string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, fmt.Sprint(it[key]))
	}
	return out
}

func grpKeys(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func grpNewGroup(t *testing.T, c *gitlab.Client, path, vis string) *gitlab.Group {
	t.Helper()
	g, resp, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Group " + path), Path: gitlab.Ptr(path),
		Visibility: gitlab.Ptr(gitlab.VisibilityValue(vis))})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create group %s: %v", path, err)
	}
	return g
}

func grpNewProject(t *testing.T, c *gitlab.Client, ns int64, path, vis string) *gitlab.Project {
	t.Helper()
	opt := &gitlab.CreateProjectOptions{Path: gitlab.Ptr(path), Visibility: gitlab.Ptr(gitlab.VisibilityValue(vis))}
	if ns != 0 {
		opt.NamespaceID = gitlab.Ptr(ns)
	}
	p, _, err := c.Projects.CreateProject(opt)
	if err != nil {
		t.Fatalf("create project %s: %v", path, err)
	}
	return p
}

func grpAddMember(t *testing.T, c *gitlab.Client, group any, user int64, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := c.GroupMembers.AddGroupMember(group, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(user), AccessLevel: gitlab.Ptr(level)}); err != nil {
		t.Fatalf("add member %d: %v", user, err)
	}
}

func grpGroupPaths(gs []*gitlab.Group) []string {
	out := make([]string, 0, len(gs))
	for _, g := range gs {
		out = append(out, g.Path)
	}
	return out
}

func grpSame(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

const grpGroupKeys = "avatar_url,description,full_name,full_path,id,lfs_enabled,name,parent_id,path,request_access_enabled,visibility,web_url"

func TestCreateGroup(t *testing.T) {
	t.Parallel()
	s, rec := grpStart(t)
	alice := s.CreateUser(t, "alice")
	ext := s.CreateUser(t, "outsider", fennectest.External())

	t.Run("client-go, creator becomes Owner", func(t *testing.T) {
		g, resp, err := alice.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Fennec Team"),
			Path: gitlab.Ptr("fennec-team"), Description: gitlab.Ptr("We build it")})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("%v %v", resp, err)
		}
		if g.ID <= 0 || g.Name != "Fennec Team" || g.Path != "fennec-team" || g.Description != "We build it" ||
			g.Visibility != gitlab.PrivateVisibility || g.WebURL != s.URL+"/groups/fennec-team" ||
			g.FullName != "Fennec Team" || g.FullPath != "fennec-team" || g.ParentID != 0 {
			t.Fatalf("group %+v", g)
		}
		ms, _, err := alice.Client.Groups.ListGroupMembers(g.ID, nil)
		if err != nil || len(ms) != 1 || ms[0].ID != alice.ID || ms[0].AccessLevel != gitlab.OwnerPermissions {
			t.Fatalf("members %v %+v", err, ms)
		}
		rec.waitMember(t, projects.MemberEvent{Action: "joined", GroupID: g.ID, UserID: alice.ID, AuthorID: alice.ID})
	})
	t.Run("raw shape", func(t *testing.T) {
		r := grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/groups", map[string]any{"name": "Shape", "path": "shape", "visibility": "internal"})
		r.expect(t, http.StatusCreated, "")
		m := r.object(t)
		if got := grpKeys(m); got != grpGroupKeys {
			t.Fatalf("keys %s, want %s", got, grpGroupKeys)
		}
		if m["parent_id"] != nil || m["avatar_url"] != nil || m["visibility"] != "internal" || m["description"] != "" ||
			m["lfs_enabled"] != true || m["request_access_enabled"] != false {
			t.Fatalf("group %s", r.raw)
		}
	})
	t.Run("form-encoded", func(t *testing.T) {
		r := grpCall(t, s, alice.Token, http.MethodPost, "/api/v4/groups", "name=Form+Group&path=form-group&visibility=public")
		r.expect(t, http.StatusCreated, "")
		if m := r.object(t); m["path"] != "form-group" || m["visibility"] != "public" {
			t.Fatalf("group %s", r.raw)
		}
	})
	for _, tc := range []struct {
		name   string
		token  string
		body   any
		status int
		want   string
	}{
		{"anonymous", "", map[string]any{"name": "x", "path": "x"}, 401, `{"message":"401 Unauthorized"}`},
		{"external user", ext.Token, map[string]any{"name": "x", "path": "x"}, 403, `{"message":"403 Forbidden - external users cannot create groups"}`},
		{"missing both", alice.Token, map[string]any{}, 400, `{"error":"name is missing, path is missing"}`},
		{"missing path", alice.Token, map[string]any{"name": "x"}, 400, `{"error":"path is missing"}`},
		{"bad visibility", alice.Token, map[string]any{"name": "x", "path": "x", "visibility": "secret"}, 400, `{"error":"visibility does not have a valid value"}`},
		{"path taken", alice.Token, map[string]any{"name": "Other", "path": "fennec-team"}, 400, `{"message":{"path":["has already been taken"]}}`},
		{"path taken, other case", alice.Token, map[string]any{"name": "Other", "path": "FENNEC-TEAM"}, 400, `{"message":{"path":["has already been taken"]}}`},
		{"path is a username", alice.Token, map[string]any{"name": "Other", "path": "Alice"}, 400, `{"message":{"path":["has already been taken"]}}`},
		{"name taken", alice.Token, map[string]any{"name": "fennec team", "path": "other"}, 400, `{"message":{"name":["has already been taken"]}}`},
		{"reserved path", alice.Token, map[string]any{"name": "Other", "path": "api"}, 400, `{"message":{"path":["api is a reserved name"]}}`},
		{"bad path", alice.Token, map[string]any{"name": "Other", "path": "-x"}, 400, ""},
		{"blank name", alice.Token, map[string]any{"name": " ", "path": "blank"}, 400, `{"message":{"name":["can't be blank"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grpCall(t, s, tc.token, http.MethodPost, "/api/v4/groups", tc.body).expect(t, tc.status, tc.want)
		})
	}
}

func TestListAndGetGroups(t *testing.T) {
	t.Parallel()
	s, _ := grpStart(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	dave := s.CreateUser(t, "dave")
	ext := s.CreateUser(t, "ext", fennectest.External())
	pub := grpNewGroup(t, alice.Client, "pub", "public")
	grpNewGroup(t, alice.Client, "int", "internal")
	priv := grpNewGroup(t, alice.Client, "priv", "private")
	hidden := grpNewGroup(t, alice.Client, "hidden", "private")
	grpNewGroup(t, bob.Client, "bobs", "private")
	grpAddMember(t, alice.Client, priv.ID, bob.ID, gitlab.DeveloperPermissions)
	// dave is a member of one project of "hidden", not of the group.
	p := grpNewProject(t, alice.Client, hidden.ID, "inside", "private")
	if _, _, err := alice.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: dave.ID, AccessLevel: gitlab.Ptr(gitlab.GuestPermissions)}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		who  string
		c    *gitlab.Client
		opt  *gitlab.ListGroupsOptions
		want []string
	}{
		{"anonymous", s.NewClient(t, ""), nil, []string{"pub"}},
		{"external", ext.Client, nil, []string{"pub"}},
		{"signed-in non-member", carol.Client, nil, []string{"int", "pub"}},
		{"member of priv and owner of bobs", bob.Client, nil, []string{"bobs", "int", "priv", "pub"}},
		{"project member inside hidden", dave.Client, nil, []string{"hidden", "int", "pub"}},
		{"owner", alice.Client, nil, []string{"hidden", "int", "priv", "pub"}},
		{"admin sees all", s.Client, nil, []string{"bobs", "hidden", "int", "priv", "pub"}},
		{"owned", alice.Client, &gitlab.ListGroupsOptions{Owned: gitlab.Ptr(true)}, []string{"hidden", "int", "priv", "pub"}},
		{"owned by bob", bob.Client, &gitlab.ListGroupsOptions{Owned: gitlab.Ptr(true)}, []string{"bobs"}},
		{"all_available=false: own groups", bob.Client, &gitlab.ListGroupsOptions{AllAvailable: gitlab.Ptr(false)}, []string{"bobs", "priv"}},
		{"all_available=false via a project", dave.Client, &gitlab.ListGroupsOptions{AllAvailable: gitlab.Ptr(false)}, []string{"hidden"}},
		{"min_access_level", bob.Client, &gitlab.ListGroupsOptions{MinAccessLevel: gitlab.Ptr(gitlab.MaintainerPermissions)}, []string{"bobs"}},
		{"search", carol.Client, &gitlab.ListGroupsOptions{Search: gitlab.Ptr("PU")}, []string{"pub"}},
		{"order_by path desc", alice.Client, &gitlab.ListGroupsOptions{OrderBy: gitlab.Ptr("path"), Sort: gitlab.Ptr("desc")}, []string{"pub", "priv", "int", "hidden"}},
		{"skip_groups", alice.Client, &gitlab.ListGroupsOptions{SkipGroups: &[]int64{pub.ID, priv.ID}}, []string{"hidden", "int"}},
	} {
		t.Run(tc.who, func(t *testing.T) {
			gs, resp, err := tc.c.Groups.ListGroups(tc.opt)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatal(err)
			}
			grpSame(t, "groups", grpGroupPaths(gs), tc.want)
		})
	}

	t.Run("pagination", func(t *testing.T) {
		r := grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups?per_page=3&page=2", nil)
		r.expect(t, http.StatusOK, "")
		grpSame(t, "page 2", grpField(r.list(t), "path"), []string{"pub"})
		for h, want := range map[string]string{"X-Total": "4", "X-Total-Pages": "2", "X-Page": "2", "X-Per-Page": "3", "X-Prev-Page": "1", "X-Next-Page": ""} {
			if got := r.header.Get(h); got != want {
				t.Errorf("%s = %q, want %q", h, got, want)
			}
		}
		if link := r.header.Get("Link"); !strings.Contains(link, `rel="first"`) || !strings.Contains(link, `rel="prev"`) {
			t.Errorf("Link %q", link)
		}
		grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups?page=9", nil).expect(t, http.StatusOK, "[]")
	})

	t.Run("get by id and by path", func(t *testing.T) {
		for _, ref := range []string{fmt.Sprint(priv.ID), "priv", "PRIV"} {
			g, _, err := bob.Client.Groups.GetGroup(ref, nil)
			if err != nil || g.ID != priv.ID || g.Path != "priv" {
				t.Fatalf("%s: %v %+v", ref, err, g)
			}
		}
		g, _, err := dave.Client.Groups.GetGroup("hidden", nil)
		if err != nil || g.ID != hidden.ID {
			t.Fatalf("a project member sees the group: %v", err)
		}
	})
	t.Run("invisible groups are 404", func(t *testing.T) {
		for _, tc := range []struct{ who, token, ref string }{
			{"non-member, private", carol.Token, "priv"},
			{"non-member, private, by id", carol.Token, fmt.Sprint(priv.ID)},
			{"anonymous, internal", "", "int"},
			{"external, internal", ext.Token, "int"},
			{"unknown", alice.Token, "nope"},
			{"a user namespace is no group", alice.Token, "alice"},
		} {
			grpCall(t, s, tc.token, http.MethodGet, "/api/v4/groups/"+url.PathEscape(tc.ref), nil).expect(t, http.StatusNotFound, `{"message":"404 Group Not Found"}`)
			grpCall(t, s, tc.token, http.MethodGet, "/api/v4/groups/"+url.PathEscape(tc.ref)+"/projects", nil).expect(t, http.StatusNotFound, `{"message":"404 Group Not Found"}`)
			grpCall(t, s, tc.token, http.MethodGet, "/api/v4/groups/"+url.PathEscape(tc.ref)+"/members", nil).expect(t, http.StatusNotFound, `{"message":"404 Group Not Found"}`)
		}
	})
	// search goes through the groups' search index (three bytes and more)
	// or scans (shorter): either way it is the list without it filtered
	// by name or path in any case, in the same order, with its count.
	t.Run("search equals the list filtered", func(t *testing.T) {
		check := func(t *testing.T) {
			t.Helper()
			callers := map[string]string{"anonymous": "", "ext": ext.Token, "carol": carol.Token, "bob": bob.Token, "dave": dave.Token, "alice": alice.Token, "admin": s.RootToken}
			for who, token := range callers {
				for _, filter := range []string{"", "&owned=true", "&all_available=false", "&order_by=path&sort=desc", "&min_access_level=30"} {
					base := grpCall(t, s, token, http.MethodGet, "/api/v4/groups?per_page=100"+filter, nil).list(t)
					for _, q := range []string{"GROUP ", "pri", "roup p", "ub", "nope", "  hid  ", "bob", "ALICE", "intér", "ÉRIEUR"} {
						want := []string{}
						for _, g := range base {
							if store.ContainsFold(g["name"].(string), strings.TrimSpace(q)) || store.ContainsFold(g["path"].(string), strings.TrimSpace(q)) {
								want = append(want, g["path"].(string))
							}
						}
						r := grpCall(t, s, token, http.MethodGet, "/api/v4/groups?per_page=100&search="+url.QueryEscape(q)+filter, nil)
						r.expect(t, http.StatusOK, "")
						grpSame(t, who+" search="+q+filter, grpField(r.list(t), "path"), want)
						if got := r.header.Get("X-Total"); got != fmt.Sprint(len(want)) {
							t.Fatalf("%s search=%q%s: X-Total %s, want %d", who, q, filter, got, len(want))
						}
					}
				}
			}
		}
		check(t)
		grpCall(t, s, alice.Token, http.MethodPut, "/api/v4/groups/int", map[string]any{"name": "Intérieur"}).expect(t, http.StatusOK, "")
		check(t)
		r := grpCall(t, s, s.RootToken, http.MethodGet, "/api/v4/groups?search=group+&per_page=1&page=2", nil)
		grpSame(t, "page 2", grpField(r.list(t), "path"), []string{"hidden"})
		if got := r.header.Get("X-Total"); got != "4" {
			t.Fatalf("X-Total %s", got)
		}
	})
}

func TestGroupDetailAndProjects(t *testing.T) {
	t.Parallel()
	s, _ := grpStart(t)
	alice := s.CreateUser(t, "alice")
	carol := s.CreateUser(t, "carol")
	g := grpNewGroup(t, alice.Client, "team", "public")
	grpNewProject(t, alice.Client, g.ID, "open", "public")
	grpNewProject(t, alice.Client, g.ID, "inner", "internal")
	grpNewProject(t, alice.Client, g.ID, "secret", "private")
	archived := grpNewProject(t, alice.Client, g.ID, "old", "public")
	if _, _, err := alice.Client.Projects.ArchiveProject(archived.ID); err != nil {
		t.Logf("archive not available yet (%v): archived filter not checked", err)
		archived = nil
	}

	t.Run("detail lists the projects the caller can see", func(t *testing.T) {
		for _, tc := range []struct {
			who   string
			token string
			want  []string
		}{
			{"owner", alice.Token, []string{"old", "secret", "inner", "open"}},
			{"signed-in", carol.Token, []string{"old", "inner", "open"}},
			{"anonymous", "", []string{"old", "open"}},
		} {
			r := grpCall(t, s, tc.token, http.MethodGet, "/api/v4/groups/team", nil)
			r.expect(t, http.StatusOK, "")
			m := r.object(t)
			var body struct {
				Projects       []map[string]any `json:"projects"`
				SharedProjects []map[string]any `json:"shared_projects"`
			}
			if err := json.Unmarshal(r.raw, &body); err != nil || body.SharedProjects == nil {
				t.Fatalf("%s: %s", tc.who, r.raw)
			}
			grpSame(t, tc.who, grpField(body.Projects, "path"), tc.want)
			if m["web_url"] != s.URL+"/groups/team" || m["full_path"] != "team" {
				t.Fatalf("group %v", m)
			}
			if pw := body.Projects[len(body.Projects)-1]["path_with_namespace"]; pw != "team/open" {
				t.Fatalf("path_with_namespace %v", pw)
			}
		}
	})
	t.Run("group projects", func(t *testing.T) {
		ps, resp, err := carol.Client.Groups.ListGroupProjects("team", nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatal(err)
		}
		got := []string{}
		for _, p := range ps {
			got = append(got, p.Path)
		}
		grpSame(t, "carol", got, []string{"old", "inner", "open"})

		r := grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/groups/%d/projects?per_page=2&order_by=name&sort=asc", g.ID), nil)
		r.expect(t, http.StatusOK, "")
		grpSame(t, "page 1 by name", grpField(r.list(t), "path"), []string{"inner", "old"})
		if r.header.Get("X-Total") != "4" || r.header.Get("X-Next-Page") != "2" {
			t.Fatalf("headers %v", r.header)
		}
		r = grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/team/projects?visibility=private", nil)
		grpSame(t, "private only", grpField(r.list(t), "path"), []string{"secret"})
		r = grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/team/projects?search=NER", nil)
		grpSame(t, "search", grpField(r.list(t), "path"), []string{"inner"})
		r = grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/team/projects?simple=true&search=open", nil)
		if l := r.list(t); len(l) != 1 || grpKeys(l[0]) != "http_url_to_repo,id,name,name_with_namespace,path,path_with_namespace,web_url" {
			t.Fatalf("simple %s", r.raw)
		}
		if archived != nil {
			r = grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/team/projects?archived=true", nil)
			grpSame(t, "archived", grpField(r.list(t), "path"), []string{"old"})
		}
	})
}

func TestUpdateGroup(t *testing.T) {
	t.Parallel()
	s, _ := grpStart(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	g := grpNewGroup(t, alice.Client, "team", "internal")
	grpNewGroup(t, alice.Client, "taken", "private")
	grpAddMember(t, alice.Client, g.ID, bob.ID, gitlab.MaintainerPermissions)
	p := grpNewProject(t, alice.Client, g.ID, "app", "internal")

	t.Run("owner edits", func(t *testing.T) {
		got, resp, err := alice.Client.Groups.UpdateGroup(g.ID, &gitlab.UpdateGroupOptions{Name: gitlab.Ptr("The Team"),
			Description: gitlab.Ptr("new"), Path: gitlab.Ptr("the-team")})
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatal(err)
		}
		if got.Name != "The Team" || got.Path != "the-team" || got.Description != "new" || got.WebURL != s.URL+"/groups/the-team" {
			t.Fatalf("group %+v", got)
		}
		proj, _, err := alice.Client.Projects.GetProject("the-team/app", nil)
		if err != nil || proj.ID != p.ID || proj.PathWithNamespace != "the-team/app" || proj.Namespace.Name != "The Team" {
			t.Fatalf("project after rename: %v %+v", err, proj)
		}
		grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/team", nil).expect(t, http.StatusNotFound, `{"message":"404 Group Not Found"}`)
	})
	t.Run("admin edits", func(t *testing.T) {
		if _, _, err := s.Client.Groups.UpdateGroup(g.ID, &gitlab.UpdateGroupOptions{Description: gitlab.Ptr("by root")}); err != nil {
			t.Fatal(err)
		}
	})
	for _, tc := range []struct {
		name   string
		token  string
		body   any
		status int
		want   string
	}{
		{"a Master is not enough", bob.Token, map[string]any{"description": "x"}, 403, `{"message":"403 Forbidden"}`},
		{"signed-in non-member", carol.Token, map[string]any{"description": "x"}, 403, `{"message":"403 Forbidden"}`},
		{"anonymous", "", map[string]any{"description": "x"}, 401, `{"message":"401 Unauthorized"}`},
		{"nothing to change", alice.Token, map[string]any{}, 400,
			`{"error":"name, path, description, visibility, lfs_enabled, request_access_enabled are missing, at least one parameter must be provided"}`},
		{"path taken", alice.Token, map[string]any{"path": "Taken"}, 400, `{"message":{"path":["has already been taken"]}}`},
		{"path is a username", alice.Token, map[string]any{"path": "carol"}, 400, `{"message":{"path":["has already been taken"]}}`},
		{"name taken", alice.Token, map[string]any{"name": "Group taken"}, 400, `{"message":{"name":["has already been taken"]}}`},
		{"bad visibility", alice.Token, map[string]any{"visibility": "x"}, 400, `{"error":"visibility does not have a valid value"}`},
		{"less visible than its projects", alice.Token, map[string]any{"visibility": "private"}, 400,
			`{"message":{"visibility_level":["private is not allowed since this group contains projects with higher visibility."]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grpCall(t, s, tc.token, http.MethodPut, fmt.Sprintf("/api/v4/groups/%d", g.ID), tc.body).expect(t, tc.status, tc.want)
		})
	}
	t.Run("private group invisible to non-members is 404", func(t *testing.T) {
		grpCall(t, s, carol.Token, http.MethodPut, "/api/v4/groups/taken", map[string]any{"description": "x"}).expect(t, 404, `{"message":"404 Group Not Found"}`)
	})
	t.Run("visibility up, and unchanged path of other case", func(t *testing.T) {
		r := grpCall(t, s, alice.Token, http.MethodPut, "/api/v4/groups/the-team", "visibility=public&path=The-Team")
		r.expect(t, http.StatusOK, "")
		m := r.object(t)
		if m["visibility"] != "public" || m["path"] != "The-Team" {
			t.Fatalf("group %s", r.raw)
		}
		if ps, ok := m["projects"].([]any); !ok || len(ps) != 1 {
			t.Fatalf("PUT answers the group detail: %s", r.raw)
		}
	})
}

func TestDeleteGroup(t *testing.T) {
	t.Parallel()
	s, rec := grpStart(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	g := grpNewGroup(t, alice.Client, "doomed", "public")
	other := grpNewGroup(t, alice.Client, "other", "private")
	grpAddMember(t, alice.Client, g.ID, bob.ID, gitlab.MaintainerPermissions)
	p1 := grpNewProject(t, alice.Client, g.ID, "one", "public")
	p2 := grpNewProject(t, alice.Client, g.ID, "two", "private")
	mine := grpNewProject(t, alice.Client, 0, "mine", "private")

	grpCall(t, s, bob.Token, http.MethodDelete, "/api/v4/groups/doomed", nil).expect(t, http.StatusForbidden, `{"message":"403 Forbidden"}`)
	grpCall(t, s, bob.Token, http.MethodDelete, "/api/v4/groups/other", nil).expect(t, http.StatusNotFound, `{"message":"404 Group Not Found"}`)
	grpCall(t, s, "", http.MethodDelete, "/api/v4/groups/doomed", nil).expect(t, http.StatusUnauthorized, "")

	resp, err := alice.Client.Groups.DeleteGroup(g.ID, nil)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("%v %v", resp, err)
	}
	grpCall(t, s, alice.Token, http.MethodGet, "/api/v4/groups/doomed", nil).expect(t, http.StatusNotFound, `{"message":"404 Group Not Found"}`)
	for _, p := range []*gitlab.Project{p1, p2} {
		grpCall(t, s, alice.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", p.ID), nil).expect(t, http.StatusNotFound, `{"message":"404 Project Not Found"}`)
		rec.waitProject(t, projects.ProjectEvent{Action: "deleted", ProjectID: p.ID, UserID: alice.ID})
	}
	if _, _, err := alice.Client.Projects.GetProject(mine.ID, nil); err != nil {
		t.Fatalf("a personal project stays: %v", err)
	}
	// The path is free again, and the old members are gone.
	again := grpNewGroup(t, alice.Client, "doomed", "public")
	ms, _, err := alice.Client.Groups.ListGroupMembers(again.ID, nil)
	if err != nil || len(ms) != 1 || ms[0].ID != alice.ID {
		t.Fatalf("members of the new group: %v %+v", err, ms)
	}
	if _, err := s.Client.Groups.DeleteGroup(other.ID, nil); err != nil {
		t.Fatalf("admin deletes: %v", err)
	}
}

// TestGroupGivesProjectAccess: a private project in a group is visible to
// the group's members with their group level, and to nobody else.
func TestGroupGivesProjectAccess(t *testing.T) {
	t.Parallel()
	s, _ := grpStart(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	carol := s.CreateUser(t, "carol")
	g := grpNewGroup(t, alice.Client, "team", "private")
	grpAddMember(t, alice.Client, g.ID, bob.ID, gitlab.DeveloperPermissions)
	p := grpNewProject(t, alice.Client, g.ID, "app", "private")

	r := grpCall(t, s, bob.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", p.ID), nil)
	r.expect(t, http.StatusOK, "")
	var body struct {
		Permissions map[string]any `json:"permissions"`
	}
	if err := json.Unmarshal(r.raw, &body); err != nil {
		t.Fatal(err)
	}
	if body.Permissions == nil || body.Permissions["project_access"] != nil {
		t.Fatalf("permissions %s", r.raw)
	}
	ga, _ := body.Permissions["group_access"].(map[string]any)
	if ga["access_level"] != float64(30) || ga["notification_level"] != float64(3) {
		t.Fatalf("group_access %v", body.Permissions)
	}
	grpCall(t, s, bob.Token, http.MethodGet, "/api/v4/projects/team%2Fapp", nil).expect(t, http.StatusOK, "")
	grpCall(t, s, carol.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", p.ID), nil).expect(t, http.StatusNotFound, `{"message":"404 Project Not Found"}`)
	grpCall(t, s, "", http.MethodGet, "/api/v4/projects/team%2Fapp", nil).expect(t, http.StatusNotFound, `{"message":"404 Project Not Found"}`)

	ps, _, err := bob.Client.Projects.ListProjects(&gitlab.ListProjectsOptions{Membership: gitlab.Ptr(true)})
	if err != nil || len(ps) != 1 || ps[0].ID != p.ID {
		t.Fatalf("membership=true: %v %+v", err, ps)
	}
	ps, _, err = carol.Client.Projects.ListProjects(nil)
	if err != nil || len(ps) != 0 {
		t.Fatalf("carol lists %v %+v", err, ps)
	}
	// Group projects list, for a member.
	gps, _, err := bob.Client.Groups.ListGroupProjects(g.ID, nil)
	if err != nil || len(gps) != 1 || gps[0].ID != p.ID {
		t.Fatalf("group projects %v %+v", err, gps)
	}
	// Leaving the group takes the access away.
	if _, err := bob.Client.GroupMembers.RemoveGroupMember(g.ID, bob.ID, nil); err != nil {
		t.Fatal(err)
	}
	grpCall(t, s, bob.Token, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d", p.ID), nil).expect(t, http.StatusNotFound, `{"message":"404 Project Not Found"}`)
}
