package projects_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Tests of the module's web pages (issue 28): the start page, the
// dashboard, explore, group pages and user profiles, each as anonymous
// visitors, members and non-members see them. Data is made through the
// API; pages are read by a plain browser (fennectest.Browser).

// pgID creates through the API and returns the new object's id.
func pgID(t *testing.T, s *fennectest.Server, token, path string, body map[string]any) int64 {
	t.Helper()
	r := s.Call(t, token, http.MethodPost, path, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	var id int64
	if _, err := fmt.Sscan(string(r.Object(t)["id"].(interface{ String() string }).String()), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// pgHas fails unless the page has status and every fragment of want, and
// none of not.
func pgHas(t *testing.T, what string, p fennectest.Page, status int, want, not []string) {
	t.Helper()
	if p.StatusCode != status {
		t.Errorf("%s: status %d, want %d\n%.600s", what, p.StatusCode, status, p.Body)
		return
	}
	for _, w := range want {
		if !strings.Contains(p.Body, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, p.Body)
		}
	}
	for _, n := range not {
		if strings.Contains(p.Body, n) {
			t.Errorf("%s has %q:\n%s", what, n, p.Body)
		}
	}
}

// TestPagesExploreAndDashboard: explore lists public projects to anyone,
// internal ones to signed-in visitors, never a private one; the dashboard
// lists the visitor's memberships and starred projects, searched by a
// fragment of the name; "/" is one or the other; hostile text is escaped.
func TestPagesExploreAndDashboard(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "bob")
	pub := pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "pubproj", "visibility": "public",
		"description": "<script>alert(1)</script>"})
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "intproj", "visibility": "internal"})
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "privproj", "visibility": "private"})
	s.Call(t, bob.Token, http.MethodPost, fmt.Sprintf("/api/v4/projects/%d/star", pub), nil).Expect(t, http.StatusCreated, "")

	pubRow := `<a href="/alice/pubproj"><bdi>User alice / pubproj</bdi></a> <span class="badge" title="Visibility">public</span>`
	escaped := `<span class="muted"><bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi></span>`
	anon := s.NewBrowser(t)
	for _, path := range []string{"/explore/projects", "/"} {
		pgHas(t, "anonymous "+path, anon.Get(t, path), 200,
			[]string{"<h1>Explore projects</h1>", pubRow, escaped, `<caption class="muted">1 project</caption>`},
			[]string{`href="/alice/intproj"`, `href="/alice/privproj"`, "<script>alert", `href="/dashboard/projects"`})
	}
	b := s.SignedIn(t, "bob", bob.Password)
	pgHas(t, "bob's explore", b.Get(t, "/explore/projects"), 200,
		[]string{pubRow, `<a href="/alice/intproj">`, `<a href="/dashboard/projects">Projects</a>`, `<a href="/explore/projects">Explore</a>`},
		[]string{`href="/alice/privproj"`})
	a := s.SignedIn(t, "alice", alice.Password)
	pgHas(t, "alice's explore", a.Get(t, "/explore/projects"), 200, []string{pubRow, `<a href="/alice/intproj">`},
		[]string{`href="/alice/privproj"`})

	// The dashboard needs a user.
	p := anon.Get(t, "/dashboard/projects")
	if p.StatusCode != http.StatusFound || p.Header.Get("Location") != "/users/sign_in?return_to=%2Fdashboard%2Fprojects" {
		t.Errorf("anonymous dashboard: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	for _, path := range []string{"/dashboard/projects", "/"} {
		pgHas(t, "alice's "+path, a.Get(t, path), 200,
			[]string{"<h1>Your projects</h1>", pubRow, `<a href="/alice/intproj">`, `<a href="/alice/privproj">`,
				`<a href="/dashboard/projects" aria-current="page">Your projects</a>`, `<caption class="muted">3 projects</caption>`}, nil)
	}
	pgHas(t, "bob's dashboard", b.Get(t, "/dashboard/projects"), 200,
		[]string{`<p class="muted">You are not a member of any project yet.</p>`}, []string{`href="/alice/pubproj"`})
	pgHas(t, "bob's starred", b.Get(t, "/dashboard/projects/starred"), 200,
		[]string{"<h1>Starred projects</h1>", pubRow, `<span aria-label="1 star">★ 1</span>`,
			`<a href="/dashboard/projects/starred" aria-current="page">Starred projects</a>`}, []string{`href="/alice/intproj"`})
	pgHas(t, "alice's starred", a.Get(t, "/dashboard/projects/starred"), 200,
		[]string{`<p class="muted">You have not starred any project yet.</p>`}, []string{`href="/alice/pubproj"`})

	// Search by a fragment of the name (the trigram index), by ?name= and
	// ?search=; the query is shown back escaped.
	for _, q := range []string{"name=ivpr", "search=IVPR", "name=iv"} {
		pgHas(t, "search "+q, a.Get(t, "/dashboard/projects?"+q), 200, []string{`<a href="/alice/privproj">`},
			[]string{`href="/alice/pubproj"`, `href="/alice/intproj"`})
	}
	pgHas(t, "hostile search", a.Get(t, "/explore/projects?name=%3Cb%20x%3E&sort=%3Cb%3E&page=-3"), 200,
		[]string{`value="&lt;b x&gt;"`, `<p class="muted">No project matches your search.</p>`,
			`<option value="latest_activity_desc" selected>Last updated</option>`}, []string{"<b x>"})
}

// TestPagesPagination: 20 projects a page, next and previous links that
// keep the search and the order, on a profile.
func TestPagesPagination(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	carol := s.CreateUser(t, "carol")
	for i := range 21 {
		pgID(t, s, carol.Token, "/api/v4/projects", map[string]any{"name": fmt.Sprintf("p%02d", i), "visibility": "public"})
	}
	c := s.NewBrowser(t)
	pgHas(t, "page 1", c.Get(t, "/carol?sort=name_asc"), 200,
		[]string{`href="/carol/p00"`, `href="/carol/p19"`, `<span>Page 1 of 2</span>`, `<a href="/carol?page=2&amp;sort=name_asc" rel="next">Next</a>`,
			`<caption class="muted">21 projects</caption>`, `<option value="name_asc" selected>Name</option>`},
		[]string{`href="/carol/p20"`, `rel="prev"`})
	pgHas(t, "page 2", c.Get(t, "/carol?sort=name_asc&page=2"), 200,
		[]string{`href="/carol/p20"`, `<span>Page 2 of 2</span>`, `<a href="/carol?sort=name_asc" rel="prev">Previous</a>`},
		[]string{`href="/carol/p19"`, `rel="next"`})
	pgHas(t, "page 2 of a search", c.Get(t, "/explore/projects?name=p0&sort=name_desc"), 200,
		[]string{`href="/carol/p09"`, `href="/carol/p00"`, `<caption class="muted">10 projects</caption>`}, []string{`href="/carol/p10"`, `rel="next"`})
	pgHas(t, "explore page 2", c.Get(t, "/explore/projects?name=p&page=2&sort=name_desc"), 200,
		[]string{`href="/carol/p00"`, `<a href="/explore/projects?name=p&amp;sort=name_desc" rel="prev">Previous</a>`}, []string{`href="/carol/p01"`})
}

// TestPagesGroups: a group's page and members, at /groups/<full path> and
// its bare path, as members, non-members and anonymous visitors see them.
func TestPagesGroups(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice, bob, carol := s.CreateUser(t, "alice"), s.CreateUser(t, "bob"), s.CreateUser(t, "carol")
	team := pgID(t, s, alice.Token, "/api/v4/groups", map[string]any{"name": "Team", "path": "team", "visibility": "private",
		"description": "The <b>team</b>"})
	pgID(t, s, alice.Token, "/api/v4/groups", map[string]any{"name": "Backend", "path": "backend", "parent_id": team})
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "api", "namespace_id": team, "visibility": "private"})
	s.Call(t, alice.Token, http.MethodPost, fmt.Sprintf("/api/v4/groups/%d/members", team),
		map[string]any{"user_id": carol.ID, "access_level": 30}).Expect(t, http.StatusCreated, "")
	open := pgID(t, s, alice.Token, "/api/v4/groups", map[string]any{"name": "Open", "path": "open", "visibility": "public"})
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "shown", "namespace_id": open, "visibility": "public"})
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "hidden", "namespace_id": open, "visibility": "private"})

	anon, b, c := s.NewBrowser(t), s.SignedIn(t, "bob", bob.Password), s.SignedIn(t, "carol", carol.Password)
	// A private group: anonymous visitors sign in first, others get 404.
	for _, path := range []string{"/groups/team", "/groups/team/backend", "/groups/team/-/group_members"} {
		p := anon.Get(t, path)
		if want := "/users/sign_in?return_to=" + strings.ReplaceAll(path, "/", "%2F"); p.StatusCode != http.StatusFound || p.Header.Get("Location") != want {
			t.Errorf("anonymous %s: %d %q, want %q", path, p.StatusCode, p.Header.Get("Location"), want)
		}
		pgHas(t, "bob's "+path, b.Get(t, path), 404, []string{"<h1>Page not found</h1>"}, []string{"Team", "api"})
	}
	for _, path := range []string{"/team", "/team/backend"} {
		pgHas(t, "bob's "+path, b.Get(t, path), 404, []string{"<h1>Page not found</h1>"}, nil)
	}
	pgHas(t, "carol's group", c.Get(t, "/groups/team"), 200,
		[]string{`<title>Team · Fennec</title>`, `<h1><bdi>Team</bdi> <span class="badge" title="Visibility">private</span></h1>`,
			`<p><bdi>The &lt;b&gt;team&lt;/b&gt;</bdi></p>`, `<a href="/groups/team/backend"><bdi>Backend</bdi></a>`,
			`<a href="/team/api"><bdi>Team / api</bdi></a>`, `<a href="/groups/team" aria-current="page">Overview</a>`,
			`<a href="/groups/team/-/group_members">Members</a>`}, nil)
	pgHas(t, "carol's subgroup", c.Get(t, "/groups/team/backend"), 200,
		[]string{`<title>Team / Backend · Fennec</title>`, `<li><a href="/groups/team">Team</a></li><li><span aria-current="page">Backend</span></li>`,
			`<p class="muted">Group path: <bdi>team/backend</bdi></p>`, `<p class="muted">This group has no projects you may see.</p>`}, nil)
	pgHas(t, "carol's members", c.Get(t, "/groups/team/-/group_members"), 200,
		[]string{`<a href="/alice"><bdi>User alice</bdi></a> <span class="muted">@alice</span></td><td>Owner</td>`,
			`<a href="/carol"><bdi>User carol</bdi></a> <span class="muted">@carol</span></td><td>Developer</td>`,
			`<a href="/groups/team/-/group_members" aria-current="page">Members</a>`, `<caption class="muted">2 members</caption>`}, nil)
	pgHas(t, "unknown group page", c.Get(t, "/groups/team/-/group_members/x"), 404, nil, nil)
	// The bare paths send to the group's page; a project's stays the
	// project's overview.
	for path, want := range map[string]string{"/team": "/groups/team", "/team/backend": "/groups/team/backend", "/open": "/groups/open"} {
		if p := c.Get(t, path); p.StatusCode != http.StatusFound || p.Header.Get("Location") != want {
			t.Errorf("carol's %s: %d %q", path, p.StatusCode, p.Header.Get("Location"))
		}
	}
	if p := c.Get(t, "/team/api"); p.StatusCode != 200 || !strings.Contains(p.Body, "Team / api") {
		t.Errorf("carol's project overview: %d", p.StatusCode)
	}
	// A public group: anyone, each project only when they may see it.
	pgHas(t, "anonymous public group", anon.Get(t, "/groups/open"), 200,
		[]string{`<a href="/open/shown">`}, []string{`href="/open/hidden"`, "Subgroups"})
	pgHas(t, "alice's public group", s.SignedIn(t, "alice", alice.Password).Get(t, "/groups/open"), 200,
		[]string{`<a href="/open/shown">`, `<a href="/open/hidden">`}, nil)
	pgHas(t, "unknown group", c.Get(t, "/groups/nothing"), 404, []string{"<h1>Page not found</h1>"}, nil)
	// The visitor's groups (GET /groups?all_available=false: the
	// subgroup comes with its parent's membership), searchable.
	pgHas(t, "carol's groups", c.Get(t, "/dashboard/groups"), 200,
		[]string{"<h1>Your groups</h1>", `<a href="/groups/team"><bdi>Team</bdi></a>`, `<a href="/dashboard/groups">Groups</a>`,
			`<a href="/groups/team/backend"><bdi>Team / Backend</bdi></a>`, `<caption class="muted">2 groups</caption>`}, []string{`href="/groups/open"`})
	pgHas(t, "bob's groups", b.Get(t, "/dashboard/groups"), 200, []string{`<p class="muted">You are not a member of any group yet.</p>`}, nil)
	pgHas(t, "carol's groups searched", c.Get(t, "/dashboard/groups?name=zzz"), 200, []string{`<p class="muted">No group matches your search.</p>`}, nil)
	if p := anon.Get(t, "/dashboard/groups"); p.StatusCode != http.StatusFound || p.Header.Get("Location") != "/users/sign_in?return_to=%2Fdashboard%2Fgroups" {
		t.Errorf("anonymous groups: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	pgHas(t, "unknown bare path", c.Get(t, "/nothing"), 404, []string{"<h1>Page not found</h1>"}, nil)
}

// TestPagesUserProfile: a profile shows the user and the personal
// projects the visitor may see; an unknown or blocked user has no page.
func TestPagesUserProfile(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	alice, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "bob")
	dave := s.CreateUser(t, "dave")
	admin := s.CreateUser(t, "boss", fennectest.Admin())
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "pubproj", "visibility": "public"})
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "intproj", "visibility": "internal"})
	pgID(t, s, alice.Token, "/api/v4/projects", map[string]any{"name": "privproj", "visibility": "private"})
	head := []string{`<title>User alice (@alice) · Fennec</title>`, `<h1><bdi>User alice</bdi></h1>`, `<p class="muted">@alice · <a href="/users/alice/activity">Activity</a></p>`,
		`<span class="avatar avatar-l`, `<a href="/alice/pubproj">`}
	pgHas(t, "anonymous", s.NewBrowser(t).Get(t, "/alice"), 200, head, []string{`href="/alice/intproj"`, `href="/alice/privproj"`})
	pgHas(t, "bob", s.SignedIn(t, "bob", bob.Password).Get(t, "/alice"), 200, append(head, `<a href="/alice/intproj">`),
		[]string{`href="/alice/privproj"`})
	a := s.SignedIn(t, "alice", alice.Password)
	pgHas(t, "alice", a.Get(t, "/alice"), 200, append(head, `<a href="/alice/intproj">`, `<a href="/alice/privproj">`), nil)
	if p := a.Get(t, "/ALICE"); p.StatusCode != http.StatusFound || p.Header.Get("Location") != "/alice" {
		t.Errorf("/ALICE: %d %q", p.StatusCode, p.Header.Get("Location"))
	}
	pgHas(t, "unknown user", a.Get(t, "/nobody"), 404, []string{"<h1>Page not found</h1>"}, nil)
	pgHas(t, "dave before the block", a.Get(t, "/dave"), 200, []string{`<h1><bdi>User dave</bdi></h1>`}, nil)
	s.Call(t, admin.Token, http.MethodPost, fmt.Sprintf("/api/v4/users/%d/block", dave.ID), nil).Expect(t, http.StatusCreated, "")
	pgHas(t, "blocked user", a.Get(t, "/dave"), 404, []string{"<h1>Page not found</h1>"}, []string{"User dave"})
}
