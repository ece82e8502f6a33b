package snippets_test

import (
	"net/http"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// role is one kind of caller of the permission matrix.
type role struct {
	name     string
	token    string // "" for anonymous
	level    int    // project membership, 0 for none
	admin    bool
	external bool
	author   bool // wrote the matrix's snippets
}

func (r role) signedIn() bool { return r.token != "" }

// seesProject: members and administrators always; public projects to
// anyone; internal ones to signed-in users who are not external.
func (r role) seesProject(pv string) bool {
	return r.admin || r.level > 0 || pv == "public" || (pv == "internal" && r.signedIn() && !r.external)
}

// seesSnippet is GitLab 9.x's rule once the project is readable: members
// and administrators see all, the author their own, others by visibility.
func (r role) seesSnippet(sv string) bool {
	return r.admin || r.level > 0 || r.author || sv == "public" || (sv == "internal" && r.signedIn() && !r.external)
}

// mayCreate is Reporter or above (administrators act as Owner).
func (r role) mayCreate() bool { return r.admin || r.level >= 20 }

// mayChange is the author or a Master (administrators act as Owner).
func (r role) mayChange() bool { return r.admin || r.author || r.level >= 40 }

// matrix is a running app with one user per role.
type matrix struct {
	*env
	owner *fennectest.User
	roles []role
	// memberIDs are the users added to every project, with their levels.
	members map[int64]gitlab.AccessLevelValue
	author  *fennectest.User
}

func newMatrix(t *testing.T) *matrix {
	e := start(t)
	m := &matrix{env: e, members: map[int64]gitlab.AccessLevelValue{}}
	m.owner = e.CreateUser(t, "owner")
	m.author = e.CreateUser(t, "author")
	add := func(name string, level int, opts ...fennectest.UserOption) role {
		u := e.CreateUser(t, name, opts...)
		if level > 0 {
			m.members[u.ID] = gitlab.AccessLevelValue(level)
		}
		return role{name: name, token: u.Token, level: level}
	}
	admin := add("administrator", 0, fennectest.Admin())
	admin.admin = true
	external := add("external", 0, fennectest.External())
	external.external = true
	m.members[m.author.ID] = gitlab.DeveloperPermissions
	m.roles = []role{
		{name: "anonymous"},
		add("nonmember", 0),
		add("guest", 10),
		add("reporter", 20),
		add("developer", 30),
		add("master", 40),
		{name: "owner", token: m.owner.Token, level: 50},
		admin,
		external,
		{name: "author", token: m.author.Token, level: 30, author: true},
	}
	return m
}

// project creates a project of the owner with every member added.
func (m *matrix) project(t *testing.T, name, visibility string) *gitlab.Project {
	t.Helper()
	p := stocktest.NewProject(t, m.owner.Client, name, visibility)
	for id, level := range m.members {
		stocktest.AddMember(t, m.owner.Client, p.ID, id, level)
	}
	return p
}

var visibilities = []string{"private", "internal", "public"}

func TestProjectSnippetPermissionMatrix(t *testing.T) {
	m := newMatrix(t)
	for _, pv := range visibilities {
		p := m.project(t, pv+"-project", pv)
		base := "/projects/" + store.IDString(p.ID) + "/snippets"
		// One snippet of each visibility, by the author (a Developer).
		bySV := map[string]int64{}
		for _, sv := range visibilities {
			bySV[sv] = num(m.createSnippet(t, m.author.Token, p.ID, sv+" snippet", sv)["id"])
		}
		for _, r := range m.roles {
			what := pv + " project, " + r.name
			// List: the snippets the role sees, newest first.
			list := m.call(t, r.token, http.MethodGet, base, nil)
			if !r.seesProject(pv) {
				list.want(t, 404, notFoundProject)
			} else {
				var want []int64
				for i := len(visibilities) - 1; i >= 0; i-- {
					if r.seesSnippet(visibilities[i]) {
						want = append(want, bySV[visibilities[i]])
					}
				}
				got := list.status(t, 200).arr(t)
				wantIDs(t, what+": list", got, want...)
				list.pages(t, len(want), 1, 20, 1, "", "")
			}
			for _, sv := range visibilities {
				what := what + ", " + sv + " snippet"
				one := base + "/" + store.IDString(bySV[sv])
				get, raw := m.call(t, r.token, http.MethodGet, one, nil), m.call(t, r.token, http.MethodGet, one+"/raw", nil)
				upd := m.call(t, r.token, http.MethodPut, one, map[string]any{"title": sv + " snippet"})
				switch {
				case !r.seesProject(pv):
					get.want(t, 404, notFoundProject)
					raw.want(t, 404, notFoundProject)
				case !r.seesSnippet(sv):
					get.want(t, 404, notFoundSnippet)
					raw.want(t, 404, notFoundSnippet)
				default:
					if g := get.status(t, 200).obj(t); num(g["id"]) != bySV[sv] || g["visibility"] != sv {
						t.Fatalf("%s: get %v", what, g)
					}
					if raw.status(t, 200).Body != "puts 'hello'" {
						t.Fatalf("%s: raw %q", what, raw.Body)
					}
				}
				// Update, and delete of the matrix's snippet by those who
				// may not (it must stay); those who may delete a copy.
				del := func() resp { return m.call(t, r.token, http.MethodDelete, one, nil) }
				switch {
				case !r.signedIn():
					upd.want(t, 401, unauthorized)
					del().want(t, 401, unauthorized)
				case !r.seesProject(pv):
					upd.want(t, 404, notFoundProject)
					del().want(t, 404, notFoundProject)
				case !r.seesSnippet(sv):
					upd.want(t, 404, notFoundSnippet)
					del().want(t, 200, "") // nothing there for them: the idempotent answer
				case !r.mayChange():
					upd.want(t, 403, forbidden)
					del().want(t, 403, forbidden)
				default:
					upd.status(t, 200)
					copyID := num(m.createSnippet(t, m.author.Token, p.ID, "copy", sv)["id"])
					d := m.call(t, r.token, http.MethodDelete, base+"/"+store.IDString(copyID), nil).status(t, 200).obj(t)
					if num(d["id"]) != copyID {
						t.Fatalf("%s: delete answered %v", what, d)
					}
					m.call(t, m.owner.Token, http.MethodGet, base+"/"+store.IDString(copyID), nil).want(t, 404, notFoundSnippet)
				}
				m.call(t, m.owner.Token, http.MethodGet, one, nil).status(t, 200) // still there
			}
			// Create.
			c := m.call(t, r.token, http.MethodPost, base, snippetBody("by "+r.name, "private"))
			switch {
			case !r.signedIn():
				c.want(t, 401, unauthorized)
			case !r.seesProject(pv):
				c.want(t, 404, notFoundProject)
			case !r.mayCreate():
				c.want(t, 403, forbidden)
			default:
				made := c.status(t, 201).obj(t)
				// Its author sees and changes it, whatever their level.
				m.call(t, r.token, http.MethodPut, base+"/"+store.IDString(num(made["id"])), map[string]any{"visibility": "public"}).status(t, 200)
				m.call(t, r.token, http.MethodDelete, base+"/"+store.IDString(num(made["id"])), nil).status(t, 200)
			}
		}
	}
}

// A member's private snippet in a public project is hidden from readers
// who are not members; its author sees it after leaving the project's
// members (public project), and a demoted author still changes it.
func TestPrivateSnippetOfAFormerMember(t *testing.T) {
	e := start(t)
	owner, bob, carol := e.CreateUser(t, "owner"), e.CreateUser(t, "bob"), e.CreateUser(t, "carol")
	p := stocktest.NewProject(t, owner.Client, "open", "public")
	stocktest.AddMember(t, owner.Client, p.ID, bob.ID, gitlab.ReporterPermissions)
	id := num(e.createSnippet(t, bob.Token, p.ID, "mine", "private")["id"])
	one := "/projects/" + store.IDString(p.ID) + "/snippets/" + store.IDString(id)
	e.call(t, carol.Token, http.MethodGet, one, nil).want(t, 404, notFoundSnippet)
	if _, err := owner.Client.ProjectMembers.DeleteProjectMember(p.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	e.call(t, bob.Token, http.MethodGet, one, nil).status(t, 200)
	e.call(t, bob.Token, http.MethodPut, one, map[string]any{"title": "still mine"}).status(t, 200)
	// Carol, a Guest member now, sees it (members see every snippet) but
	// may not change it.
	stocktest.AddMember(t, owner.Client, p.ID, carol.ID, gitlab.GuestPermissions)
	e.call(t, carol.Token, http.MethodGet, one, nil).status(t, 200)
	e.call(t, carol.Token, http.MethodPut, one, map[string]any{"title": "hers"}).want(t, 403, forbidden)
	e.call(t, carol.Token, http.MethodPost, "/projects/"+store.IDString(p.ID)+"/snippets", snippetBody("guest", "public")).want(t, 403, forbidden)
}

// With the snippets feature off, every snippet endpoint answers as the
// projects module does for a switched-off feature (403) to those who see
// the project, and 404 Project Not Found to others; nothing is changed.
func TestSnippetsFeatureOff(t *testing.T) {
	m := newMatrix(t)
	for _, pv := range visibilities {
		p := m.project(t, pv+"-off", pv)
		base := "/projects/" + store.IDString(p.ID) + "/snippets"
		id := num(m.createSnippet(t, m.author.Token, p.ID, "kept", "public")["id"])
		one := base + "/" + store.IDString(id)
		m.call(t, m.owner.Token, http.MethodPut, "/projects/"+store.IDString(p.ID), map[string]any{"name": p.Name, "snippets_enabled": false}).status(t, 200)
		for _, r := range m.roles {
			for _, c := range []struct{ method, path string }{
				{"GET", base}, {"GET", one}, {"GET", one + "/raw"}, {"POST", base}, {"PUT", one}, {"DELETE", one},
			} {
				var body any
				if c.method == "POST" || c.method == "PUT" {
					body = snippetBody("x", "public")
				}
				got := m.call(t, r.token, c.method, c.path, body)
				switch {
				case !r.signedIn() && c.method != "GET":
					got.want(t, 401, unauthorized)
				case !r.seesProject(pv):
					got.want(t, 404, notFoundProject)
				default:
					got.want(t, 403, forbidden)
				}
			}
		}
		m.call(t, m.owner.Token, http.MethodPut, "/projects/"+store.IDString(p.ID), map[string]any{"name": p.Name, "snippets_enabled": true}).status(t, 200)
		if g := m.call(t, m.owner.Token, http.MethodGet, one, nil).status(t, 200).obj(t); g["title"] != "kept" {
			t.Fatalf("snippet changed while the feature was off: %v", g)
		}
		m.call(t, m.owner.Token, http.MethodGet, base, nil).status(t, 200).pages(t, 1, 1, 20, 1, "", "")
	}
}

// An archived project keeps its snippets readable and refuses every write,
// to its owner and administrators too.
func TestArchivedProjectRefusesSnippetWrites(t *testing.T) {
	e := start(t)
	owner := e.CreateUser(t, "owner")
	admin := e.CreateUser(t, "administrator", fennectest.Admin())
	p := stocktest.NewProject(t, owner.Client, "old", "public")
	base := "/projects/" + store.IDString(p.ID) + "/snippets"
	id := num(e.createSnippet(t, owner.Token, p.ID, "frozen", "public")["id"])
	one := base + "/" + store.IDString(id)
	if _, _, err := owner.Client.Projects.ArchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{owner.Token, admin.Token} {
		e.call(t, token, http.MethodPost, base, snippetBody("new", "public")).want(t, 403, forbidden)
		e.call(t, token, http.MethodPut, one, map[string]any{"title": "thawed"}).want(t, 403, forbidden)
		e.call(t, token, http.MethodDelete, one, nil).want(t, 403, forbidden)
	}
	e.call(t, "", http.MethodGet, one, nil).status(t, 200)
	e.call(t, "", http.MethodGet, one+"/raw", nil).status(t, 200)
	wantIDs(t, "list", e.call(t, "", http.MethodGet, base, nil).status(t, 200).arr(t), id)
	if _, _, err := owner.Client.Projects.UnarchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	e.call(t, owner.Token, http.MethodPut, one, map[string]any{"title": "thawed"}).status(t, 200)
}
