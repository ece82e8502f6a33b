package projects_test

// Black-box tests of the project actions: star, archive, fork and the
// project users list. Helpers shared by uploads_test.go, hooks_test.go and
// share_test.go are prefixed "act" to stay clear of other test files of the
// package.

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

// actServer is the stock app with its bus and store, and a record of the
// ProjectEvents it delivered.
type actServer struct {
	*fennectest.Server
	bus *events.Bus
	db  *store.DB
	rec *actRecorder
}

type actRecorder struct {
	mu     sync.Mutex
	events []projects.ProjectEvent
}

func (r *actRecorder) all() []projects.ProjectEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]projects.ProjectEvent{}, r.events...)
}

func actStart(t *testing.T, opts ...fennectest.Option) *actServer {
	t.Helper()
	rec := &actRecorder{}
	a := &actServer{rec: rec}
	listener := fennec.NewModule("actions-test-recorder", fennec.ProvideSubscribers(func(fennec.None) []events.Subscriber {
		return []events.Subscriber{events.Subscribe("actions-test.project-events", func(_ context.Context, ev projects.ProjectEvent) error {
			rec.mu.Lock()
			rec.events = append(rec.events, ev)
			rec.mu.Unlock()
			return nil
		})}
	}))
	opts = append([]fennectest.Option{fennectest.WithExtract(&a.bus, &a.db), fennectest.WithOptions(fennec.WithModules(listener))}, opts...)
	a.Server = stocktest.Start(t, opts...)
	return a
}

// drain waits until every published event was delivered.
func (a *actServer) drain(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.bus.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// call sends a raw API request (path below /api/v4) with token (none when
// empty) and a JSON body (none when nil); it returns the status and body.
func (a *actServer) call(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	headers := []string{}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
		headers = append(headers, "Content-Type", "application/json")
	}
	if token != "" {
		headers = append(headers, "PRIVATE-TOKEN", token)
	}
	resp, raw := a.JSON(t, method, "/api/v4"+path, rd, nil, headers...)
	return resp.StatusCode, raw
}

// expect checks a raw call's status and, when want is not "", its exact
// JSON body.
func (a *actServer) expect(t *testing.T, method, path, token string, body any, status int, want string) []byte {
	t.Helper()
	got, raw := a.call(t, method, path, token, body)
	if got != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, status, raw)
	}
	if want != "" {
		actSameJSON(t, method+" "+path, raw, want)
	}
	return raw
}

func actSameJSON(t *testing.T, what string, raw []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("%s: body %q is not JSON: %v", what, raw, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s: body %s, want %s", what, gb, wb)
	}
}

func actProject(t *testing.T, c *gitlab.Client, name string, vis gitlab.VisibilityValue) *gitlab.Project {
	t.Helper()
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr(name), Visibility: gitlab.Ptr(vis),
		Description: gitlab.Ptr("the " + name + " project")})
	if err != nil {
		t.Fatalf("create project %s: %v", name, err)
	}
	return p
}

// actGroup creates a group owned by the client's user (POST /groups).
func actGroup(t *testing.T, c *gitlab.Client, path string, vis gitlab.VisibilityValue) *gitlab.Group {
	t.Helper()
	g, resp, err := c.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr(path), Path: gitlab.Ptr(path), Visibility: gitlab.Ptr(vis)})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		t.Skip("needs POST /groups")
	}
	if err != nil {
		t.Fatalf("create group %s: %v", path, err)
	}
	return g
}

func actAddProjectMember(t *testing.T, c *gitlab.Client, pid, uid int64, level gitlab.AccessLevelValue) {
	t.Helper()
	_, resp, err := c.ProjectMembers.AddProjectMember(pid, &gitlab.AddProjectMemberOptions{UserID: uid, AccessLevel: gitlab.Ptr(level)})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		t.Skip("needs POST /projects/:id/members")
	}
	if err != nil {
		t.Fatalf("add project member %d: %v", uid, err)
	}
}

func actAddGroupMember(t *testing.T, c *gitlab.Client, gid, uid int64, level gitlab.AccessLevelValue) {
	t.Helper()
	_, resp, err := c.GroupMembers.AddGroupMember(gid, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(uid), AccessLevel: gitlab.Ptr(level)})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		t.Skip("needs POST /groups/:id/members")
	}
	if err != nil {
		t.Fatalf("add group member %d: %v", uid, err)
	}
}

func actStatus(resp *gitlab.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

func TestActStarAndUnstar(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "stowner")
	fan := a.CreateUser(t, "stfan")
	pub := actProject(t, owner.Client, "shiny", gitlab.PublicVisibility)
	priv := actProject(t, owner.Client, "hidden", gitlab.PrivateVisibility)
	path := fmt.Sprintf("/projects/%d", pub.ID)

	p, resp, err := fan.Client.Projects.StarProject(pub.ID)
	if err != nil || resp.StatusCode != http.StatusCreated || p.StarCount != 1 || p.ID != pub.ID {
		t.Fatalf("star: %d %v %+v", actStatus(resp), err, p)
	}
	// Again: 304 with no body.
	got, raw := a.call(t, http.MethodPost, path+"/star", fan.Token, nil)
	if got != http.StatusNotModified || len(raw) != 0 {
		t.Fatalf("second star: %d %q, want 304 with no body", got, raw)
	}
	// A second user counts too, and the count shows everywhere.
	if p, _, err = owner.Client.Projects.StarProject(pub.ID); err != nil || p.StarCount != 2 {
		t.Fatalf("owner star: %v %+v", err, p)
	}
	if p, _, err = fan.Client.Projects.GetProject(pub.ID, nil); err != nil || p.StarCount != 2 {
		t.Fatalf("get: %v star_count %d", err, p.StarCount)
	}
	starred, _, err := fan.Client.Projects.ListProjects(&gitlab.ListProjectsOptions{Starred: gitlab.Ptr(true)})
	if err != nil || len(starred) != 1 || starred[0].ID != pub.ID {
		t.Fatalf("starred=true: %v %d projects", err, len(starred))
	}

	p, resp, err = fan.Client.Projects.UnstarProject(pub.ID)
	if err != nil || resp.StatusCode != http.StatusCreated || p.StarCount != 1 {
		t.Fatalf("unstar: %d %v %+v", actStatus(resp), err, p)
	}
	got, raw = a.call(t, http.MethodPost, path+"/unstar", fan.Token, nil)
	if got != http.StatusNotModified || len(raw) != 0 {
		t.Fatalf("second unstar: %d %q, want 304 with no body", got, raw)
	}
	// Star again after an unstar works.
	if p, _, err = fan.Client.Projects.StarProject(pub.ID); err != nil || p.StarCount != 2 {
		t.Fatalf("star again: %v %+v", err, p)
	}

	// Bad input.
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/star", priv.ID), fan.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/unstar", priv.ID), fan.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodPost, "/projects/999999/star", fan.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodPost, "/projects/stowner%2Fnope/star", fan.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodPost, path+"/star", "", nil, 401, `{"message":"401 Unauthorized"}`)
	// By full path.
	a.expect(t, http.MethodPost, "/projects/stowner%2Fshiny/unstar", owner.Token, nil, 201, "")
}

// Ten concurrent stars by one user: exactly one 201, the rest 304, and
// star_count 1.
func TestActStarConcurrent(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "")
	fan := a.CreateUser(t, "")
	p := actProject(t, owner.Client, "popular", gitlab.PublicVisibility)
	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v4/projects/%d/star", a.URL, p.ID), nil)
			req.Header.Set("PRIVATE-TOKEN", fan.Token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	sort.Ints(codes)
	want := []int{201, 304, 304, 304, 304, 304, 304, 304, 304, 304}
	if fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Fatalf("statuses %v, want %v", codes, want)
	}
	got, _, err := owner.Client.Projects.GetProject(p.ID, nil)
	if err != nil || got.StarCount != 1 {
		t.Fatalf("star_count: %v %+v", err, got)
	}
}

func TestActArchiveAndUnarchive(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "arowner")
	dev := a.CreateUser(t, "ardev")
	stranger := a.CreateUser(t, "arstranger")
	p := actProject(t, owner.Client, "old", gitlab.PrivateVisibility)
	path := fmt.Sprintf("/projects/%d", p.ID)

	got, resp, err := owner.Client.Projects.ArchiveProject(p.ID)
	if err != nil || resp.StatusCode != http.StatusCreated || !got.Archived || got.ID != p.ID {
		t.Fatalf("archive: %d %v %+v", actStatus(resp), err, got)
	}
	// Idempotent: 201 and still archived.
	raw := a.expect(t, http.MethodPost, path+"/archive", owner.Token, nil, 201, "")
	var view map[string]any
	_ = json.Unmarshal(raw, &view)
	if view["archived"] != true {
		t.Fatalf("second archive: %s", raw)
	}
	if list, _, err := owner.Client.Projects.ListProjects(&gitlab.ListProjectsOptions{Archived: gitlab.Ptr(true)}); err != nil || len(list) != 1 {
		t.Fatalf("archived=true list: %v %d", err, len(list))
	}
	got, _, err = owner.Client.Projects.UnarchiveProject(p.ID)
	if err != nil || got.Archived {
		t.Fatalf("unarchive: %v %+v", err, got)
	}
	a.expect(t, http.MethodPost, path+"/unarchive", owner.Token, nil, 201, "")

	// A developer may not; a stranger cannot even see it; an admin may.
	actAddProjectMember(t, owner.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	a.expect(t, http.MethodPost, path+"/archive", dev.Token, nil, 403, `{"message":"403 Forbidden"}`)
	a.expect(t, http.MethodPost, path+"/unarchive", dev.Token, nil, 403, `{"message":"403 Forbidden"}`)
	a.expect(t, http.MethodPost, path+"/archive", stranger.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodPost, path+"/archive", "", nil, 401, `{"message":"401 Unauthorized"}`)
	if got, _, err = a.Client.Projects.ArchiveProject(p.ID); err != nil || !got.Archived {
		t.Fatalf("admin archive: %v", err)
	}

	// One event per change, none for the idempotent repeats.
	a.drain(t)
	var actions []string
	for _, ev := range a.rec.all() {
		if ev.ProjectID == p.ID && ev.Action != projects.ProjectCreated {
			actions = append(actions, string(ev.Action))
		}
	}
	if fmt.Sprint(actions) != "[archived unarchived archived]" {
		t.Fatalf("events %v", actions)
	}
}

func TestActFork(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "fkowner")
	forker := a.CreateUser(t, "fkforker")
	guest := a.CreateUser(t, "fkguest")
	src := actProject(t, owner.Client, "upstream", gitlab.PublicVisibility)
	priv := actProject(t, owner.Client, "secret", gitlab.PrivateVisibility)

	// Empty options, not nil: client-go sends a nil options pointer as the
	// JSON body "null", which core/api's merger refuses (reported).
	f, resp, err := forker.Client.Projects.ForkProject(src.ID, &gitlab.ForkProjectOptions{})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("fork: %d %v", actStatus(resp), err)
	}
	switch {
	case f.ID == src.ID, f.Name != "upstream", f.Path != "upstream", f.PathWithNamespace != "fkforker/upstream",
		f.Namespace == nil || f.Namespace.Path != "fkforker", f.Visibility != gitlab.PublicVisibility,
		f.Description != "the upstream project", f.ForkedFromProject == nil || f.ForkedFromProject.ID != src.ID,
		f.ForkedFromProject.PathWithNamespace != "fkowner/upstream", f.StarCount != 0, f.ForksCount != 0:
		t.Fatalf("fork: %+v (forked from %+v)", f, f.ForkedFromProject)
	}
	if got, _, err := owner.Client.Projects.GetProject(src.ID, nil); err != nil || got.ForksCount != 1 {
		t.Fatalf("source forks_count: %v %+v", err, got)
	}
	a.drain(t)
	found := false
	for _, ev := range a.rec.all() {
		if ev.Action == "forked" && ev.ProjectID == f.ID && ev.ForkedFromID == src.ID && ev.UserID == forker.ID {
			found = true
		}
	}
	if !found {
		t.Fatalf("no forked event in %+v", a.rec.all())
	}

	// The same path again in the same namespace: 409 with the field errors.
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/fork", src.ID), forker.Token, nil, 409,
		`{"message":{"name":["has already been taken"],"path":["has already been taken"]}}`)
	// Forking into the owner's own namespace collides with the source.
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/fork", src.ID), owner.Token, nil, 409,
		`{"message":{"name":["has already been taken"],"path":["has already been taken"]}}`)
	// Another name and path are fine (a fork of a fork).
	ff, _, err := owner.Client.Projects.ForkProject(f.ID, &gitlab.ForkProjectOptions{Name: gitlab.Ptr("mine"), Path: gitlab.Ptr("mine")})
	if err != nil || ff.ForkedFromProject == nil || ff.ForkedFromProject.ID != f.ID || ff.PathWithNamespace != "fkowner/mine" {
		t.Fatalf("fork of a fork: %v %+v", err, ff)
	}

	// Into a namespace the caller cannot write: 404 Namespace Not Found.
	for _, ns := range []string{"fkowner", fmt.Sprint(src.Namespace.ID), "nosuchns", "99999"} {
		a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/fork", src.ID), guest.Token, map[string]any{"namespace": ns}, 404,
			`{"message":"404 Namespace Not Found"}`)
	}
	// An invisible source: 404 Project; a Guest of a private one lacks ReadCode: 403.
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/fork", priv.ID), forker.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	actAddProjectMember(t, owner.Client, priv.ID, guest.ID, gitlab.GuestPermissions)
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/fork", priv.ID), guest.Token, nil, 403, `{"message":"403 Forbidden"}`)
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/fork", src.ID), "", nil, 401, `{"message":"401 Unauthorized"}`)
	// Bad name or path: 400 with the field errors.
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/fork", src.ID), guest.Token, map[string]any{"path": "-bad"}, 400, "")

	// A private source keeps its visibility; the fork's own users are the forker.
	actAddProjectMember(t, owner.Client, priv.ID, forker.ID, gitlab.ReporterPermissions)
	pf, _, err := forker.Client.Projects.ForkProject(priv.ID, &gitlab.ForkProjectOptions{NamespacePath: gitlab.Ptr("fkforker")})
	if err != nil || pf.Visibility != gitlab.PrivateVisibility || pf.ForkedFromProject == nil {
		t.Fatalf("private fork: %v %+v", err, pf)
	}
	if _, resp, _ := guest.Client.Projects.GetProject(pf.ID, nil); actStatus(resp) != 404 {
		t.Fatalf("the private fork is visible to a guest of its source: %d", actStatus(resp))
	}

	// Into a group: Master may, Developer may not.
	g := actGroup(t, owner.Client, "fkgroup", gitlab.PrivateVisibility)
	actAddGroupMember(t, owner.Client, g.ID, forker.ID, gitlab.DeveloperPermissions)
	actAddGroupMember(t, owner.Client, g.ID, guest.ID, gitlab.MaintainerPermissions)
	a.expect(t, http.MethodPost, fmt.Sprintf("/projects/%d/fork", src.ID), forker.Token, map[string]any{"namespace": "fkgroup"}, 404,
		`{"message":"404 Namespace Not Found"}`)
	gf, _, err := guest.Client.Projects.ForkProject(src.ID, &gitlab.ForkProjectOptions{NamespaceID: gitlab.Ptr(g.ID)})
	if err != nil || gf.PathWithNamespace != "fkgroup/upstream" || gf.Namespace.Kind != "group" {
		t.Fatalf("group fork: %v %+v", err, gf)
	}
	if got, _, _ := owner.Client.Projects.GetProject(src.ID, nil); got.ForksCount != 2 {
		t.Fatalf("forks_count %d, want 2", got.ForksCount)
	}
	// Deleting a fork gives the count back.
	if _, err := owner.Client.Projects.DeleteProject(gf.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := owner.Client.Projects.GetProject(src.ID, nil); got.ForksCount != 1 {
		t.Fatalf("forks_count after deleting a fork %d, want 1", got.ForksCount)
	}
}

func TestActProjectUsers(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "puowner")
	member := a.CreateUser(t, "pumember")
	groupie := a.CreateUser(t, "pugroupie")
	friend := a.CreateUser(t, "pufriend")
	outsider := a.CreateUser(t, "puoutsider")

	// A personal project: the owner and the project members.
	p := actProject(t, owner.Client, "team", gitlab.PrivateVisibility)
	actAddProjectMember(t, owner.Client, p.ID, member.ID, gitlab.GuestPermissions)
	users, resp, err := owner.Client.Projects.ListProjectsUsers(p.ID, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(err)
	}
	if names := actUsernames(users); names != "puowner,pumember" {
		t.Fatalf("users %s", names)
	}
	raw := a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/users", p.ID), member.Token, nil, 200, "")
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 2 {
		t.Fatalf("users: %s", raw)
	}
	var keys []string
	for k := range list[0] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, ",") != "avatar_url,id,name,state,username,web_url" {
		t.Fatalf("keys %v", keys)
	}
	if list[0]["web_url"] != a.URL+"/puowner" || list[0]["state"] != "active" || list[0]["name"] != "User puowner" {
		t.Fatalf("user view %v", list[0])
	}
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/users", p.ID), outsider.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/users", p.ID), "", nil, 404, `{"message":"404 Project Not Found"}`)

	// Search by username or name, and pagination.
	users, _, err = owner.Client.Projects.ListProjectsUsers(p.ID, &gitlab.ListProjectUserOptions{Search: gitlab.Ptr("MEMB")})
	if err != nil || actUsernames(users) != "pumember" {
		t.Fatalf("search: %v %s", err, actUsernames(users))
	}
	users, resp, err = owner.Client.Projects.ListProjectsUsers(p.ID, &gitlab.ListProjectUserOptions{ListOptions: gitlab.ListOptions{Page: 2, PerPage: 1}})
	if err != nil || actUsernames(users) != "pumember" || resp.TotalItems != 2 || resp.TotalPages != 2 || resp.PreviousPage != 1 {
		t.Fatalf("page 2: %v %s total %d", err, actUsernames(users), resp.TotalItems)
	}

	// A group project: group members, project members and members of a
	// group the project is shared with; no namespace owner.
	g := actGroup(t, owner.Client, "puteam", gitlab.PrivateVisibility)
	actAddGroupMember(t, owner.Client, g.ID, groupie.ID, gitlab.ReporterPermissions)
	gp, _, err := owner.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("gp"), NamespaceID: gitlab.Ptr(g.ID)})
	if err != nil {
		t.Fatal(err)
	}
	actAddProjectMember(t, owner.Client, gp.ID, member.ID, gitlab.DeveloperPermissions)
	friends := actGroup(t, friend.Client, "pufriends", gitlab.PrivateVisibility)
	if _, err := owner.Client.Projects.ShareProjectWithGroup(gp.ID, &gitlab.ShareWithGroupOptions{GroupID: gitlab.Ptr(friends.ID),
		GroupAccess: gitlab.Ptr(gitlab.ReporterPermissions)}); err == nil {
		t.Fatal("sharing with a private group the sharer cannot see succeeded")
	}
	actAddGroupMember(t, friend.Client, friends.ID, owner.ID, gitlab.GuestPermissions)
	if _, err := owner.Client.Projects.ShareProjectWithGroup(gp.ID, &gitlab.ShareWithGroupOptions{GroupID: gitlab.Ptr(friends.ID),
		GroupAccess: gitlab.Ptr(gitlab.ReporterPermissions)}); err != nil {
		t.Fatal(err)
	}
	users, _, err = groupie.Client.Projects.ListProjectsUsers(gp.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := actUsernames(users); names != "puowner,pumember,pugroupie,pufriend" {
		t.Fatalf("group project users %s", names)
	}
}

// actUsernames lists usernames in id order, comma-separated.
func actUsernames(users []*gitlab.ProjectUser) string {
	names := make([]string, len(users))
	for i, u := range users {
		names[i] = u.Username
	}
	return strings.Join(names, ",")
}

// actEscape is url.PathEscape for a project's full path.
func actEscape(full string) string { return url.PathEscape(full) }

// GET /projects/:id of a fork shows its source too, not only the fork's
// own response.
func TestForkSourceInEveryView(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	src, _, err := s.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("upstream"), Visibility: gitlab.Ptr(gitlab.PublicVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	u := s.CreateUser(t, "forker")
	fork, _, err := u.Client.Projects.ForkProject(src.ID, &gitlab.ForkProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := u.Client.Projects.GetProject(fork.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ForkedFromProject == nil || got.ForkedFromProject.ID != src.ID {
		t.Fatalf("GET of a fork has forked_from_project %+v, want id %d", got.ForkedFromProject, src.ID)
	}
}
