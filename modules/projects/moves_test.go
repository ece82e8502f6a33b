package projects_test

// Black-box tests of the project lists and moves of later GitLab versions:
// GET /projects/:id/forks, GET /users/:user_id/projects, PUT
// /projects/:id/transfer and the members/all lists. They use the "act"
// helpers of actions_test.go.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// paths lists path_with_namespace of a JSON list of projects.
func movePaths(t *testing.T, raw []byte) []string {
	t.Helper()
	var ps []struct {
		PathWithNamespace string `json:"path_with_namespace"`
	}
	if err := json.Unmarshal(raw, &ps); err != nil {
		t.Fatalf("not a list of projects: %s", raw)
	}
	out := []string{}
	for _, p := range ps {
		out = append(out, p.PathWithNamespace)
	}
	return out
}

func moveSame(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

func TestForksList(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	owner := a.CreateUser(t, "flowner")
	bob := a.CreateUser(t, "flbob")
	carol := a.CreateUser(t, "flcarol")
	dave := a.CreateUser(t, "fldave")
	src := actProject(t, owner.Client, "upstream", gitlab.PublicVisibility)
	fork := func(u *gitlab.Client, id int64) *gitlab.Project {
		t.Helper()
		f, _, err := u.Projects.ForkProject(id, &gitlab.ForkProjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	bf := fork(bob.Client, src.ID)
	cf := fork(carol.Client, src.ID)
	if _, _, err := carol.Client.Projects.EditProject(cf.ID, &gitlab.EditProjectOptions{Visibility: gitlab.Ptr(gitlab.PrivateVisibility)}); err != nil {
		t.Fatal(err)
	}
	fork(dave.Client, bf.ID) // a fork of a fork is not a fork of src

	path := fmt.Sprintf("/projects/%d/forks", src.ID)
	for _, c := range []struct {
		who, token string
		want       []string
	}{
		{"anonymous", "", []string{"flbob/upstream"}},
		{"the owner", owner.Token, []string{"flbob/upstream"}},
		{"the private fork's owner", carol.Token, []string{"flcarol/upstream", "flbob/upstream"}},
		{"an administrator", a.RootToken, []string{"flcarol/upstream", "flbob/upstream"}},
	} {
		_, raw := a.call(t, http.MethodGet, path, c.token, nil)
		moveSame(t, "forks as "+c.who, movePaths(t, raw), c.want)
	}
	// GET /projects' filters and orders apply; simple=true is the short shape.
	_, raw := a.call(t, http.MethodGet, path+"?order_by=path&sort=asc&owned=true", carol.Token, nil)
	moveSame(t, "owned forks", movePaths(t, raw), []string{"flcarol/upstream"})
	_, raw = a.call(t, http.MethodGet, path+"?visibility=private", a.RootToken, nil)
	moveSame(t, "private forks", movePaths(t, raw), []string{"flcarol/upstream"})
	_, raw = a.call(t, http.MethodGet, path+"?simple=true", "", nil)
	var simple []map[string]any
	if err := json.Unmarshal(raw, &simple); err != nil || len(simple) != 1 || len(simple[0]) != 7 || simple[0]["path_with_namespace"] != "flbob/upstream" {
		t.Errorf("simple forks: %s", raw)
	}
	// A source the caller cannot see: 404.
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/forks", cf.ID), bob.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	_, raw = a.call(t, http.MethodGet, fmt.Sprintf("/projects/%d/forks", bf.ID), "", nil)
	moveSame(t, "forks of the fork", movePaths(t, raw), []string{"fldave/upstream"})
	_, raw = a.call(t, http.MethodGet, fmt.Sprintf("/projects/%d/forks", cf.ID), carol.Token, nil)
	moveSame(t, "forks of the private fork", movePaths(t, raw), []string{})
}

func TestUserProjectsList(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	alice := a.CreateUser(t, "upalice")
	bob := a.CreateUser(t, "upbob")
	actProject(t, alice.Client, "pub", gitlab.PublicVisibility)
	actProject(t, alice.Client, "priv", gitlab.PrivateVisibility)
	actProject(t, alice.Client, "intern", gitlab.InternalVisibility)
	g := actGroup(t, alice.Client, "upgroup", gitlab.PublicVisibility)
	if _, _, err := alice.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("ingroup"), NamespaceID: gitlab.Ptr(g.ID),
		Visibility: gitlab.Ptr(gitlab.PublicVisibility)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who, token, user string
		want             []string
	}{
		{"anonymous", "", fmt.Sprint(alice.ID), []string{"upalice/pub"}},
		{"another user", bob.Token, fmt.Sprint(alice.ID), []string{"upalice/intern", "upalice/pub"}},
		{"the user", alice.Token, fmt.Sprint(alice.ID), []string{"upalice/intern", "upalice/priv", "upalice/pub"}},
		{"an administrator by username", a.RootToken, "upalice", []string{"upalice/intern", "upalice/priv", "upalice/pub"}},
		{"a user without projects", alice.Token, fmt.Sprint(bob.ID), []string{}},
	} {
		resp, raw := a.JSON(t, http.MethodGet, "/api/v4/users/"+c.user+"/projects", nil, nil, "PRIVATE-TOKEN", c.token)
		if resp.StatusCode != 200 || resp.Header.Get("X-Total") != fmt.Sprint(len(c.want)) {
			t.Errorf("%s: %d X-Total %q %s", c.who, resp.StatusCode, resp.Header.Get("X-Total"), raw)
		}
		moveSame(t, "user projects as "+c.who, movePaths(t, raw), c.want)
	}
	_, raw := a.call(t, http.MethodGet, fmt.Sprintf("/users/%d/projects?order_by=name&sort=asc", alice.ID), alice.Token, nil)
	moveSame(t, "ordered by name", movePaths(t, raw), []string{"upalice/intern", "upalice/priv", "upalice/pub"})
	_, raw = a.call(t, http.MethodGet, fmt.Sprintf("/users/%d/projects?search=pri", alice.ID), alice.Token, nil)
	moveSame(t, "searched", movePaths(t, raw), []string{"upalice/priv"})
	a.expect(t, http.MethodGet, "/users/99999/projects", "", nil, 404, `{"message":"404 User Not Found"}`)
	a.expect(t, http.MethodGet, "/users/nosuchuser/projects", "", nil, 404, `{"message":"404 User Not Found"}`)
}

func TestTransferProject(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	alice := a.CreateUser(t, "tralice")
	bob := a.CreateUser(t, "trbob")
	p := actProject(t, alice.Client, "moved", gitlab.PrivateVisibility)
	if _, _, err := alice.Client.RepositoryFiles.CreateFile(p.ID, "README.md", &gitlab.CreateFileOptions{Branch: gitlab.Ptr("master"),
		Content: gitlab.Ptr("hello\n"), CommitMessage: gitlab.Ptr("first")}); err != nil {
		t.Fatal(err)
	}
	team := actGroup(t, alice.Client, "trteam", gitlab.PrivateVisibility)
	other := actGroup(t, bob.Client, "trother", gitlab.PrivateVisibility)
	actAddGroupMember(t, bob.Client, other.ID, alice.ID, gitlab.DeveloperPermissions)
	actAddGroupMember(t, alice.Client, team.ID, bob.ID, gitlab.DeveloperPermissions)
	path := fmt.Sprintf("/projects/%d/transfer", p.ID)

	// Who may not: a member below Owner (403), a stranger (404), anonymous (401).
	actAddProjectMember(t, alice.Client, p.ID, bob.ID, gitlab.MaintainerPermissions)
	a.expect(t, http.MethodPut, path, bob.Token, map[string]any{"namespace": "trbob"}, 403, `{"message":"403 Forbidden"}`)
	stranger := a.CreateUser(t, "trstranger")
	a.expect(t, http.MethodPut, path, stranger.Token, map[string]any{"namespace": "trstranger"}, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodPut, path, "", map[string]any{"namespace": "trteam"}, 401, `{"message":"401 Unauthorized"}`)
	// Where the owner may not create projects: 404 Namespace Not Found.
	for _, ns := range []string{"trother", fmt.Sprint(other.ID), "trbob", "nosuchns"} {
		a.expect(t, http.MethodPut, path, alice.Token, map[string]any{"namespace": ns}, 404, `{"message":"404 Namespace Not Found"}`)
	}
	a.expect(t, http.MethodPut, path, alice.Token, map[string]any{}, 400, `{"error":"namespace is missing"}`)
	a.expect(t, http.MethodPut, path, alice.Token, map[string]any{"namespace": "tralice"}, 400,
		`{"message":"Failed to transfer project {:new_namespace=>[\"Please select a new namespace for your project.\"]}"}`)
	// A project of the same path in the target: refused, nothing moved.
	clash, _, err := alice.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("moved"), NamespaceID: gitlab.Ptr(team.ID)})
	if err != nil {
		t.Fatal(err)
	}
	a.expect(t, http.MethodPut, path, alice.Token, map[string]any{"namespace": "trteam"}, 400,
		`{"message":"Failed to transfer project {:new_namespace=>[\"Project with same name or path in target namespace already exists\"]}"}`)
	if _, err := alice.Client.Projects.DeleteProject(clash.ID, nil); err != nil {
		t.Fatal(err)
	}
	a.drain(t)

	// The move: by path, into a group alice owns.
	raw := a.expect(t, http.MethodPut, path, alice.Token, map[string]any{"namespace": "trteam"}, 200, "")
	var v struct {
		ID                int64  `json:"id"`
		PathWithNamespace string `json:"path_with_namespace"`
		NameWithNamespace string `json:"name_with_namespace"`
		WebURL            string `json:"web_url"`
		HTTPURLToRepo     string `json:"http_url_to_repo"`
		Namespace         struct {
			ID   int64  `json:"id"`
			Kind string `json:"kind"`
			Path string `json:"path"`
		} `json:"namespace"`
		Owner *struct{} `json:"owner"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.ID != p.ID || v.PathWithNamespace != "trteam/moved" || v.NameWithNamespace != "trteam / moved" ||
		v.WebURL != a.URL+"/trteam/moved" || v.HTTPURLToRepo != a.URL+"/trteam/moved.git" ||
		v.Namespace.ID != team.ID || v.Namespace.Kind != "group" || v.Namespace.Path != "trteam" || v.Owner != nil {
		t.Fatalf("transferred: %s", raw)
	}
	a.drain(t)
	found := false
	for _, ev := range a.rec.all() {
		if ev.Action == "updated" && ev.ProjectID == p.ID && ev.UserID == alice.ID {
			found = true
		}
	}
	if !found {
		t.Errorf("no updated event for the transfer in %+v", a.rec.all())
	}
	// The new path names it, the old one no longer does; the repository is
	// where it was (stored by id).
	a.expect(t, http.MethodGet, "/projects/"+actEscape("trteam/moved"), alice.Token, nil, 200, "")
	a.expect(t, http.MethodGet, "/projects/"+actEscape("tralice/moved"), alice.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	if f, _, err := alice.Client.RepositoryFiles.GetRawFile(p.ID, "README.md", &gitlab.GetRawFileOptions{Ref: gitlab.Ptr("master")}); err != nil || string(f) != "hello\n" {
		t.Fatalf("the repository after the transfer: %v %q", err, f)
	}
	// The former owner stays as Master; bob keeps his membership, and as a
	// Developer of the group still may not transfer it.
	_, raw = a.call(t, http.MethodGet, fmt.Sprintf("/projects/%d/members/%d", p.ID, alice.ID), alice.Token, nil)
	if !strings.Contains(string(raw), `"access_level":40`) {
		t.Errorf("the former owner's membership: %s", raw)
	}
	a.expect(t, http.MethodPut, path, bob.Token, map[string]any{"namespace": "trbob"}, 403, `{"message":"403 Forbidden"}`)
	// An administrator moves it anywhere, by namespace id.
	bobs := actProject(t, bob.Client, "bobs", gitlab.PrivateVisibility)
	target := fmt.Sprint(bobs.Namespace.ID)
	raw = a.expect(t, http.MethodPut, path, a.RootToken, map[string]any{"namespace": target}, 200, "")
	if !strings.Contains(string(raw), `"path_with_namespace":"trbob/moved"`) {
		t.Fatalf("moved by an administrator: %s", raw)
	}
	// The event of a transfer says "updated": webhooks keep the new path.
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d", p.ID), bob.Token, nil, 200, "")
}

func TestMembersAll(t *testing.T) {
	t.Parallel()
	a := actStart(t)
	alice := a.CreateUser(t, "maalice")
	bob := a.CreateUser(t, "mabob")
	carol := a.CreateUser(t, "macarol")
	dave := a.CreateUser(t, "madave")
	erin := a.CreateUser(t, "maerin")
	frank := a.CreateUser(t, "mafrank")
	g := actGroup(t, alice.Client, "magroup", gitlab.PrivateVisibility)
	actAddGroupMember(t, alice.Client, g.ID, bob.ID, gitlab.DeveloperPermissions)
	actAddGroupMember(t, alice.Client, g.ID, carol.ID, gitlab.ReporterPermissions)
	p, _, err := alice.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Name: gitlab.Ptr("inherit"), NamespaceID: gitlab.Ptr(g.ID)})
	if err != nil {
		t.Fatal(err)
	}
	actAddProjectMember(t, alice.Client, p.ID, carol.ID, gitlab.MaintainerPermissions)
	actAddProjectMember(t, alice.Client, p.ID, dave.ID, gitlab.GuestPermissions)
	shared := actGroup(t, erin.Client, "mashared", gitlab.PublicVisibility)
	if _, err := alice.Client.Projects.ShareProjectWithGroup(p.ID, &gitlab.ShareWithGroupOptions{GroupID: gitlab.Ptr(shared.ID),
		GroupAccess: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}

	type member struct {
		Username    string  `json:"username"`
		AccessLevel int     `json:"access_level"`
		ExpiresAt   *string `json:"expires_at"`
	}
	list := func(path, token string) []string {
		t.Helper()
		var ms []member
		resp, raw := a.JSON(t, http.MethodGet, "/api/v4"+path, nil, &ms, "PRIVATE-TOKEN", token)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
		out := []string{}
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%s:%d", m.Username, m.AccessLevel))
		}
		return out
	}
	// Project: its members, its group's, the shared group's (capped at the
	// share's level), each once at the highest level, by user id.
	moveSame(t, "project members/all", list(fmt.Sprintf("/projects/%d/members/all", p.ID), dave.Token),
		[]string{"maalice:50", "mabob:30", "macarol:40", "madave:10", "maerin:30"})
	moveSame(t, "project members (explicit only)", list(fmt.Sprintf("/projects/%d/members", p.ID), dave.Token),
		[]string{"macarol:40", "madave:10"})
	moveSame(t, "query", list(fmt.Sprintf("/projects/%d/members/all?query=ca", p.ID), dave.Token), []string{"macarol:40"})
	moveSame(t, "page", list(fmt.Sprintf("/projects/%d/members/all?per_page=2&page=2", p.ID), dave.Token), []string{"macarol:40", "madave:10"})
	// Group: its members (no subgroups).
	moveSame(t, "group members/all", list(fmt.Sprintf("/groups/%d/members/all", g.ID), bob.Token),
		[]string{"maalice:50", "mabob:30", "macarol:20"})
	// A personal project: the namespace's owner at Owner.
	pp := actProject(t, frank.Client, "own", gitlab.PrivateVisibility)
	actAddProjectMember(t, frank.Client, pp.ID, bob.ID, gitlab.DeveloperPermissions)
	moveSame(t, "personal members/all", list(fmt.Sprintf("/projects/%d/members/all", pp.ID), bob.Token), []string{"mabob:30", "mafrank:50"})

	// One member, inherited or not.
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/members/all/%d", p.ID, erin.ID), dave.Token, nil, 200, "")
	_, raw := a.call(t, http.MethodGet, fmt.Sprintf("/projects/%d/members/all/%d", p.ID, carol.ID), dave.Token, nil)
	var m member
	if err := json.Unmarshal(raw, &m); err != nil || m.Username != "macarol" || m.AccessLevel != 40 || m.ExpiresAt != nil {
		t.Errorf("carol via members/all: %s", raw)
	}
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/members/%d", p.ID, erin.ID), dave.Token, nil, 404, `{"message":"404 Member Not Found"}`)
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/members/all/%d", p.ID, frank.ID), dave.Token, nil, 404, `{"message":"404 Member Not Found"}`)
	a.expect(t, http.MethodGet, fmt.Sprintf("/groups/%d/members/all/%d", g.ID, bob.ID), bob.Token, nil, 200, "")
	// Who cannot see the project or group cannot list.
	a.expect(t, http.MethodGet, fmt.Sprintf("/projects/%d/members/all", p.ID), frank.Token, nil, 404, `{"message":"404 Project Not Found"}`)
	a.expect(t, http.MethodGet, fmt.Sprintf("/groups/%d/members/all", g.ID), frank.Token, nil, 404, `{"message":"404 Group Not Found"}`)
}
