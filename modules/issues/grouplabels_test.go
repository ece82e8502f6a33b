package issues_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// newGroup creates a group (a subgroup of parent when parent > 0) as c.
func newGroup(t testing.TB, c *gitlab.Client, path string, parent int64) *gitlab.Group {
	t.Helper()
	o := &gitlab.CreateGroupOptions{Name: gitlab.Ptr(strings.ToUpper(path)), Path: gitlab.Ptr(path)}
	if parent > 0 {
		o.ParentID = gitlab.Ptr(parent)
	}
	g, _, err := c.Groups.CreateGroup(o)
	if err != nil {
		t.Fatalf("create group %s: %v", path, err)
	}
	return g
}

func addGroupMember(t testing.TB, c *gitlab.Client, group, user int64, level gitlab.AccessLevelValue) {
	t.Helper()
	if _, _, err := c.GroupMembers.AddGroupMember(group, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(user), AccessLevel: &level}); err != nil {
		t.Fatalf("add group member %d: %v", user, err)
	}
}

// groupProject creates a project in a group as c.
func groupProject(t testing.TB, c *gitlab.Client, path string, group int64) *gitlab.Project {
	t.Helper()
	p, _, err := c.Projects.CreateProject(&gitlab.CreateProjectOptions{Path: gitlab.Ptr(path), NamespaceID: gitlab.Ptr(group)})
	if err != nil {
		t.Fatalf("create project %s: %v", path, err)
	}
	return p
}

func groupLabelsPath(group int64, rest string) string {
	return fmt.Sprintf("/api/v4/groups/%d/labels%s", group, rest)
}

func num(v any) string { return v.(json.Number).String() }

// TestGroupLabelsAPI covers /groups/:id/labels: create, list (paging,
// search, with_counts), read by name or id, edit and delete in both forms,
// who may do what, and bad input that changes nothing.
func TestGroupLabelsAPI(t *testing.T) {
	t.Parallel()
	e := start(t)
	owner := e.CreateUser(t, "glowner")
	rep := e.CreateUser(t, "glrep")
	guest := e.CreateUser(t, "glguest")
	stranger := e.CreateUser(t, "glstranger")
	g := newGroup(t, owner.Client, "glgroup", 0)
	addGroupMember(t, owner.Client, g.ID, rep.ID, gitlab.ReporterPermissions)
	addGroupMember(t, owner.Client, g.ID, guest.ID, gitlab.GuestPermissions)
	base := groupLabelsPath(g.ID, "")

	// A Reporter of the group creates; the answer is GitLab's GroupLabel
	// without counts.
	r := e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"name": " bug ", "color": "#d9534f", "description": "Broken", "priority": 3}).Expect(t, 201, "")
	bug := r.Object(t)
	bugID := num(bug["id"])
	r.Expect(t, 201, `{"id":`+bugID+`,"name":"bug","color":"#d9534f","description":"Broken","subscribed":false}`)
	r = e.Call(t, owner.Token, http.MethodPost, base, "name=feature&color=%23428BCA").Expect(t, 201, "")
	featureID := num(r.Object(t)["id"])
	r.Expect(t, 201, `{"id":`+featureID+`,"name":"feature","color":"#428BCA","description":null,"subscribed":false}`)

	// Refusals, each changing nothing.
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"name": "bug", "color": "#000000"}).Expect(t, 409, `{"message":"Label already exists"}`)
	// The API validates the required parameters before the handler, in
	// the order of the document.
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{}).Expect(t, 400, `{"error":"color is missing, name is missing"}`)
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"name": "x"}).Expect(t, 400, `{"error":"color is missing"}`)
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"color": "#FFF"}).Expect(t, 400, `{"error":"name is missing"}`)
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"name": "x", "color": "red-ish"}).
		Expect(t, 400, `{"message":{"color":["must be a valid color code"]}}`)
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"name": "a,b", "color": "#FFF"}).Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"name": " \t ", "color": "#FFF"}).Expect(t, 400, `{"message":{"title":["can't be blank"]}}`)
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"name": strings.Repeat("n", 256), "color": "#FFF"}).
		Expect(t, 400, `{"message":{"title":["is too long (maximum is 255 characters)"]}}`)
	e.Call(t, rep.Token, http.MethodPost, base, "name=bad%FFname&color=%23FFF").Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	e.Call(t, rep.Token, http.MethodPost, base, "name=ok&color=%23FFF&description=bad%FFbytes").Expect(t, 400, `{"message":{"description":["is invalid"]}}`)
	e.Call(t, rep.Token, http.MethodPost, base, map[string]any{"name": "ok", "color": "#FFF", "description": strings.Repeat("d", 1_000_001)}).
		Expect(t, 400, `{"message":{"description":["is too long (maximum is 1000000 characters)"]}}`)
	e.Call(t, rep.Token, http.MethodPost, base, []byte(`{"name":`)).Expect(t, 400, "")
	e.Call(t, guest.Token, http.MethodPost, base, map[string]any{"name": "g", "color": "#FFF"}).Expect(t, 403, `{"message":"403 Forbidden"}`)
	e.Call(t, stranger.Token, http.MethodPost, base, map[string]any{"name": "s", "color": "#FFF"}).Expect(t, 404, `{"message":"404 Group Not Found"}`)
	e.Call(t, "", http.MethodPost, base, map[string]any{"name": "a", "color": "#FFF"}).Expect(t, 401, `{"message":"401 Unauthorized"}`)
	e.Call(t, rep.Token, http.MethodPost, groupLabelsPath(999999, ""), map[string]any{"name": "a", "color": "#FFF"}).Expect(t, 404, `{"message":"404 Group Not Found"}`)

	// Readers list (sorted by name, paged), search and ask for counts.
	r = e.Call(t, guest.Token, http.MethodGet, base, nil).Expect(t, 200, "")
	if got := r.Names(t); !slices.Equal(got, []string{"bug", "feature"}) {
		t.Fatalf("list %v", got)
	}
	if got := keysOf(r.List(t)[0]); !slices.Equal(got, []string{"color", "description", "id", "name", "subscribed"}) {
		t.Fatalf("keys without counts %v", got)
	}
	if got := e.Call(t, guest.Token, http.MethodGet, base+"?per_page=1&page=2", nil).Expect(t, 200, "").Names(t); !slices.Equal(got, []string{"feature"}) {
		t.Fatalf("page 2 %v", got)
	}
	if got := e.Call(t, guest.Token, http.MethodGet, base+"?search=BROK", nil).Expect(t, 200, "").Names(t); !slices.Equal(got, []string{"bug"}) {
		t.Fatalf("search by description %v", got)
	}
	if got := e.Call(t, guest.Token, http.MethodGet, base+"?search=feat", nil).Expect(t, 200, "").Names(t); !slices.Equal(got, []string{"feature"}) {
		t.Fatalf("search by name %v", got)
	}
	r = e.Call(t, guest.Token, http.MethodGet, base+"?with_counts=true", nil).Expect(t, 200, "")
	if got := keysOf(r.List(t)[0]); !slices.Equal(got, []string{"closed_issues_count", "color", "description", "id", "name",
		"open_issues_count", "open_merge_requests_count", "subscribed"}) {
		t.Fatalf("keys with counts %v", got)
	}
	e.Call(t, guest.Token, http.MethodGet, base+"?include_ancestor_groups=maybe", nil).Expect(t, 400, `{"error":"include_ancestor_groups is invalid"}`)
	e.Call(t, stranger.Token, http.MethodGet, base, nil).Expect(t, 404, `{"message":"404 Group Not Found"}`)
	e.Call(t, "", http.MethodGet, base, nil).Expect(t, 401, `{"message":"401 Unauthorized"}`)

	// One label by name (URL-encoded) or id.
	e.Call(t, guest.Token, http.MethodGet, base+"/bug", nil).
		Expect(t, 200, `{"id":`+bugID+`,"name":"bug","color":"#d9534f","description":"Broken","subscribed":false}`)
	if got := e.Call(t, guest.Token, http.MethodGet, base+"/"+featureID, nil).Expect(t, 200, "").Object(t); got["name"] != "feature" {
		t.Fatalf("by id %v", got)
	}
	e.Call(t, guest.Token, http.MethodGet, base+"/nope", nil).Expect(t, 404, `{"message":"404 Label Not Found"}`)
	e.Call(t, guest.Token, http.MethodGet, base+"/999999", nil).Expect(t, 404, `{"message":"404 Label Not Found"}`)

	// Edits: by path, and the older form with the name in the body (what
	// python-gitlab's save sends).
	e.Call(t, rep.Token, http.MethodPut, base+"/bug", map[string]any{}).
		Expect(t, 400, `{"error":"new_name, color, description are missing, at least one parameter must be provided"}`)
	e.Call(t, rep.Token, http.MethodPut, base, map[string]any{"color": "#000"}).Expect(t, 400, `{"error":"name is missing"}`)
	e.Call(t, rep.Token, http.MethodPut, base+"/nope", map[string]any{"color": "#000"}).Expect(t, 404, `{"message":"404 Label Not Found"}`)
	e.Call(t, rep.Token, http.MethodPut, base+"/bug", map[string]any{"new_name": "feature"}).Expect(t, 409, `{"message":"Label already exists"}`)
	e.Call(t, rep.Token, http.MethodPut, base+"/bug", map[string]any{"color": "#12"}).Expect(t, 400, `{"message":{"color":["must be a valid color code"]}}`)
	e.Call(t, rep.Token, http.MethodPut, base+"/bug", map[string]any{"new_name": ""}).Expect(t, 400, `{"message":{"title":["can't be blank"]}}`)
	e.Call(t, guest.Token, http.MethodPut, base+"/bug", map[string]any{"color": "#000"}).Expect(t, 403, `{"message":"403 Forbidden"}`)
	e.Call(t, stranger.Token, http.MethodPut, base+"/bug", map[string]any{"color": "#000"}).Expect(t, 404, `{"message":"404 Group Not Found"}`)
	e.Call(t, rep.Token, http.MethodPut, base+"/bug", map[string]any{"new_name": "defect", "color": "#123456"}).
		Expect(t, 200, `{"id":`+bugID+`,"name":"defect","color":"#123456","description":"Broken","subscribed":false}`)
	e.Call(t, rep.Token, http.MethodPut, base, map[string]any{"name": "defect", "description": "Really broken"}).
		Expect(t, 200, `{"id":`+bugID+`,"name":"defect","color":"#123456","description":"Really broken","subscribed":false}`)
	e.Call(t, rep.Token, http.MethodPut, base+"/"+bugID, map[string]any{"description": ""}).
		Expect(t, 200, `{"id":`+bugID+`,"name":"defect","color":"#123456","description":null,"subscribed":false}`)

	// Deletes, in both forms.
	e.Call(t, guest.Token, http.MethodDelete, base+"/defect", nil).Expect(t, 403, `{"message":"403 Forbidden"}`)
	e.Call(t, rep.Token, http.MethodDelete, base, nil).Expect(t, 400, `{"error":"name is missing"}`)
	e.Call(t, rep.Token, http.MethodDelete, base+"/defect", nil).Expect(t, 204, "")
	e.Call(t, rep.Token, http.MethodDelete, base+"/defect", nil).Expect(t, 404, `{"message":"404 Label Not Found"}`)
	e.Call(t, rep.Token, http.MethodDelete, base+"?name=feature", nil).Expect(t, 204, "")
	if got := e.Call(t, guest.Token, http.MethodGet, base, nil).Expect(t, 200, "").Names(t); len(got) != 0 {
		t.Fatalf("left after deletes %v", got)
	}
}

// TestGroupLabelsInProjects: a project sees its group's and ancestors'
// labels; issues and merge requests take them by name; filters, counts
// and label events work with them; renaming and deleting one reaches the
// issues that carry it; names clash as GitLab's do.
func TestGroupLabelsInProjects(t *testing.T) {
	t.Parallel()
	e := start(t)
	owner := e.CreateUser(t, "gpowner")
	guest := e.CreateUser(t, "gpguest")
	top := newGroup(t, owner.Client, "gptop", 0)
	sub := newGroup(t, owner.Client, "gpsub", top.ID)
	p := groupProject(t, owner.Client, "gpproj", sub.ID)
	addGroupMember(t, owner.Client, top.ID, guest.ID, gitlab.GuestPermissions)
	for _, l := range []struct {
		group int64
		name  string
	}{{top.ID, "toplabel"}, {sub.ID, "sublabel"}, {top.ID, "shared"}} {
		e.Call(t, owner.Token, http.MethodPost, groupLabelsPath(l.group, ""), map[string]any{"name": l.name, "color": "#00FF00"}).Expect(t, 201, "")
	}
	// A subgroup cannot take a name a group above it has (GitLab's create
	// looks among the labels available to the group), nor rename to one.
	e.Call(t, owner.Token, http.MethodPost, groupLabelsPath(sub.ID, ""), map[string]any{"name": "shared", "color": "#00FF00"}).Expect(t, 409, `{"message":"Label already exists"}`)
	e.Call(t, owner.Token, http.MethodPut, groupLabelsPath(sub.ID, "/sublabel"), map[string]any{"new_name": "shared"}).Expect(t, 409, `{"message":"Label already exists"}`)
	if got := e.Call(t, owner.Token, http.MethodGet, groupLabelsPath(sub.ID, "?include_ancestor_groups=false"), nil).Expect(t, 200, "").Names(t); !slices.Equal(got, []string{"sublabel"}) {
		t.Fatalf("sub's own labels %v", got)
	}
	if got := e.Call(t, owner.Token, http.MethodGet, groupLabelsPath(sub.ID, ""), nil).Expect(t, 200, "").Names(t); !slices.Equal(got, []string{"shared", "sublabel", "toplabel"}) {
		t.Fatalf("sub's labels with its ancestors' %v", got)
	}
	// The subgroup reads an ancestor's label but edits and deletes its own only.
	e.Call(t, owner.Token, http.MethodGet, groupLabelsPath(sub.ID, "/toplabel"), nil).Expect(t, 200, "")
	e.Call(t, owner.Token, http.MethodPut, groupLabelsPath(sub.ID, "/toplabel"), map[string]any{"color": "#000"}).Expect(t, 404, `{"message":"404 Label Not Found"}`)
	e.Call(t, owner.Token, http.MethodDelete, groupLabelsPath(sub.ID, "/toplabel"), nil).Expect(t, 404, `{"message":"404 Label Not Found"}`)

	path := projectPath(p.ID, "/labels")
	e.Call(t, owner.Token, http.MethodPost, path, map[string]any{"name": "own", "color": "#FF0000"}).Expect(t, 201, "")
	// A project label may not take a name its groups have (GitLab's
	// create_label: 409), nor be renamed to one.
	e.Call(t, owner.Token, http.MethodPost, path, map[string]any{"name": "toplabel", "color": "#FF0000"}).Expect(t, 409, `{"message":"Label already exists"}`)
	e.Call(t, owner.Token, http.MethodPut, path+"/own", map[string]any{"new_name": "sublabel"}).Expect(t, 409, `{"message":"Label already exists"}`)

	r := e.Call(t, guest.Token, http.MethodGet, path, nil).Expect(t, 200, "")
	if got := r.Names(t); !slices.Equal(got, []string{"own", "shared", "sublabel", "toplabel"}) {
		t.Fatalf("project labels %v", got)
	}
	for _, l := range r.List(t) {
		if want := l["name"] == "own"; l["is_project_label"] != want {
			t.Fatalf("is_project_label of %v", l)
		}
	}
	if got := keysOf(r.List(t)[0]); !slices.Equal(got, []string{"closed_issues_count", "color", "description", "id", "is_project_label", "name",
		"open_issues_count", "open_merge_requests_count", "priority", "subscribed"}) {
		t.Fatalf("project label keys %v", got)
	}
	if got := e.Call(t, guest.Token, http.MethodGet, path+"?include_ancestor_groups=false", nil).Expect(t, 200, "").Names(t); !slices.Equal(got, []string{"own", "sublabel"}) {
		t.Fatalf("without ancestors %v", got)
	}
	if got := e.Call(t, guest.Token, http.MethodGet, path+"?search=LABEL", nil).Expect(t, 200, "").Names(t); !slices.Equal(got, []string{"sublabel", "toplabel"}) {
		t.Fatalf("search %v", got)
	}
	// Read through the project; edited and deleted through the group only.
	if got := e.Call(t, guest.Token, http.MethodGet, path+"/toplabel", nil).Expect(t, 200, "").Object(t); got["is_project_label"] != false {
		t.Fatalf("group label through the project %v", got)
	}
	e.Call(t, owner.Token, http.MethodPut, path+"/toplabel", map[string]any{"color": "#000"}).Expect(t, 404, `{"message":"404 Label Not Found"}`)
	e.Call(t, owner.Token, http.MethodDelete, path+"/toplabel", nil).Expect(t, 404, `{"message":"404 Label Not Found"}`)

	// Issues take the group labels by name; a name nobody has becomes a
	// project label.
	i1 := e.Call(t, owner.Token, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "one", "labels": []string{"toplabel", "own", "fresh"}}).
		Expect(t, 201, "").Object(t)
	if got := fmt.Sprint(i1["labels"]); got != "[fresh own toplabel]" {
		t.Fatalf("issue labels %s", got)
	}
	iid1, _ := i1["iid"].(json.Number).Int64()
	e.Call(t, owner.Token, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "two", "labels": "sublabel", "confidential": true}).Expect(t, 201, "")
	e.Call(t, owner.Token, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "three"}).Expect(t, 201, "")
	e.Call(t, owner.Token, http.MethodPut, issuePath(p.ID, 3), map[string]any{"labels": "toplabel", "state_event": "close"}).Expect(t, 200, "")
	if got := e.Call(t, owner.Token, http.MethodGet, path+"/fresh", nil).Expect(t, 200, "").Object(t); got["is_project_label"] != true {
		t.Fatalf("a label made on the fly %v", got)
	}
	// An issue of a personal project given "toplabel" gets a project
	// label of its own.
	personal := stocktest.NewProject(t, owner.Client, "gppersonal", "private")
	e.Call(t, owner.Token, http.MethodPost, projectPath(personal.ID, "/issues"), map[string]any{"title": "elsewhere", "labels": "toplabel"}).Expect(t, 201, "")
	if got := e.Call(t, owner.Token, http.MethodGet, projectPath(personal.ID, "/labels/toplabel"), nil).Expect(t, 200, "").Object(t); got["is_project_label"] != true {
		t.Fatalf("a personal project's label %v", got)
	}

	// Filters find issues by a group label's name.
	for _, c := range []struct {
		query string
		want  string
	}{
		{"labels=toplabel", "[3 1]"},
		{"labels=toplabel&state=opened", "[1]"},
		{"labels=sublabel", "[2]"},
		{"labels=toplabel,own", "[1]"},
		{"labels=None", "[]"},
		{"labels=Any", "[3 2 1]"},
		{"labels=nope", "[]"},
	} {
		if got := e.Call(t, owner.Token, http.MethodGet, projectPath(p.ID, "/issues?"+c.query), nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != c.want {
			t.Fatalf("%s: %v, want %s", c.query, got, c.want)
		}
	}
	if got := e.Call(t, owner.Token, http.MethodGet, "/api/v4/issues?scope=all&labels=toplabel", nil).Expect(t, 200, "").List(t); len(got) != 3 {
		t.Fatalf("GET /issues by a group label: %d issues", len(got))
	}

	// Counts: in the project's list, its own issues; in the group's, the
	// issues of the projects the caller may read; a confidential issue
	// counts for those who may see it.
	counts := func(token, path, name string) string {
		t.Helper()
		for _, l := range e.Call(t, token, http.MethodGet, path, nil).Expect(t, 200, "").List(t) {
			if l["name"] == name {
				return num(l["open_issues_count"]) + "/" + num(l["closed_issues_count"])
			}
		}
		t.Fatalf("no %s in %s", name, path)
		return ""
	}
	if got := counts(owner.Token, path, "toplabel"); got != "1/1" {
		t.Fatalf("toplabel in the project %s", got)
	}
	if got := counts(owner.Token, projectPath(personal.ID, "/labels"), "toplabel"); got != "1/0" {
		t.Fatalf("the personal project's own toplabel %s", got)
	}
	if got := counts(owner.Token, groupLabelsPath(top.ID, "?with_counts=true"), "toplabel"); got != "1/1" {
		t.Fatalf("toplabel in the group %s", got)
	}
	if got := counts(owner.Token, path, "sublabel"); got != "1/0" {
		t.Fatalf("sublabel for the owner %s", got)
	}
	if got := counts(guest.Token, path, "sublabel"); got != "0/0" {
		t.Fatalf("sublabel for a guest %s", got)
	}
	if got := counts(guest.Token, groupLabelsPath(sub.ID, "?with_counts=true"), "sublabel"); got != "0/0" {
		t.Fatalf("sublabel in the group for a guest %s", got)
	}

	// Label events name the group label.
	ev := e.Call(t, owner.Token, http.MethodGet, issuePath(p.ID, iid1, "/resource_label_events"), nil).Expect(t, 200, "").List(t)
	var evNames []string
	for _, x := range ev {
		evNames = append(evNames, x["label"].(map[string]any)["name"].(string)+":"+x["action"].(string))
	}
	if fmt.Sprint(evNames) != "[toplabel:add own:add fresh:add]" {
		t.Fatalf("label events %v", evNames)
	}

	// Renaming the group label renames it on the issues; deleting it takes
	// it off them, and its events stay without it.
	e.Call(t, owner.Token, http.MethodPut, groupLabelsPath(top.ID, "/toplabel"), map[string]any{"new_name": "renamed"}).Expect(t, 200, "")
	if got := fmt.Sprint(e.Call(t, owner.Token, http.MethodGet, issuePath(p.ID, iid1), nil).Expect(t, 200, "").Object(t)["labels"]); got != "[fresh own renamed]" {
		t.Fatalf("after the rename %s", got)
	}
	if got := e.Call(t, owner.Token, http.MethodGet, projectPath(p.ID, "/issues?labels=renamed"), nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != "[3 1]" {
		t.Fatalf("filter by the new name %v", got)
	}
	e.Call(t, owner.Token, http.MethodDelete, groupLabelsPath(top.ID, "/renamed"), nil).Expect(t, 204, "")
	if got := fmt.Sprint(e.Call(t, owner.Token, http.MethodGet, issuePath(p.ID, iid1), nil).Expect(t, 200, "").Object(t)["labels"]); got != "[fresh own]" {
		t.Fatalf("after the delete %s", got)
	}
	if got := fmt.Sprint(e.Call(t, owner.Token, http.MethodGet, issuePath(p.ID, 3), nil).Expect(t, 200, "").Object(t)["labels"]); got != "[]" {
		t.Fatalf("the closed issue after the delete %s", got)
	}
	if l := e.Call(t, owner.Token, http.MethodGet, issuePath(p.ID, iid1, "/resource_label_events"), nil).Expect(t, 200, "").List(t)[0]["label"]; l != nil {
		t.Fatalf("a deleted group label in an event %v", l)
	}
	if got := e.Call(t, owner.Token, http.MethodGet, projectPath(p.ID, "/issues?labels=Any"), nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != "[2 1]" {
		t.Fatalf("Any after the delete %v", got)
	}
}

// TestGroupLabelsOnMergeRequests: a merge request takes a group label by
// name and records its event.
func TestGroupLabelsOnMergeRequests(t *testing.T) {
	t.Parallel()
	e := start(t)
	g := newGroup(t, e.Client, "mrgroup", 0)
	p := groupProject(t, e.Client, "mrproj", g.ID)
	e.Call(t, e.RootToken, http.MethodPost, groupLabelsPath(g.ID, ""), map[string]any{"name": "review", "color": "#00FF00"}).Expect(t, 201, "")
	e.Call(t, e.RootToken, http.MethodPost, projectPath(p.ID, "/repository/files/README"),
		map[string]any{"branch": "main", "content": "hi", "commit_message": "first"}).Expect(t, 201, "")
	e.Call(t, e.RootToken, http.MethodPost, projectPath(p.ID, "/repository/files/feature.txt"),
		map[string]any{"branch": "feature", "start_branch": "main", "content": "more", "commit_message": "more"}).Expect(t, 201, "")
	mr := e.Call(t, e.RootToken, http.MethodPost, projectPath(p.ID, "/merge_requests"), map[string]any{"source_branch": "feature",
		"target_branch": "main", "title": "Feature", "labels": []string{"review"}}).Expect(t, 201, "").Object(t)
	if got := fmt.Sprint(mr["labels"]); got != "[review]" {
		t.Fatalf("merge request labels %s", got)
	}
	if got := e.Call(t, e.RootToken, http.MethodGet, projectPath(p.ID, "/labels/review"), nil).Expect(t, 200, "").Object(t); got["is_project_label"] != false {
		t.Fatalf("the merge request's label %v (a project label was made)", got)
	}
	ev := e.Call(t, e.RootToken, http.MethodGet, projectPath(p.ID, "/merge_requests/"+num(mr["iid"])+"/resource_label_events"), nil).Expect(t, 200, "").List(t)
	if len(ev) != 1 || ev[0]["label"].(map[string]any)["name"] != "review" || ev[0]["action"] != "add" {
		t.Fatalf("merge request label events %v", ev)
	}
}

// TestInheritedGroupMilestones: an issue of a project in a subgroup takes
// a milestone of a group above it, and the milestone filters find it.
func TestInheritedGroupMilestones(t *testing.T) {
	t.Parallel()
	e := start(t)
	top := newGroup(t, e.Client, "mstop", 0)
	sub := newGroup(t, e.Client, "mssub", top.ID)
	p := groupProject(t, e.Client, "msproj", sub.ID)
	m := e.Call(t, e.RootToken, http.MethodPost, fmt.Sprintf("/api/v4/groups/%d/milestones", top.ID), map[string]any{"title": "v1"}).Expect(t, 201, "").Object(t)
	r := e.Call(t, e.RootToken, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "in v1", "milestone_id": num(m["id"])}).Expect(t, 201, "")
	if ms, _ := r.Object(t)["milestone"].(map[string]any); ms == nil || ms["title"] != "v1" || num(ms["group_id"]) != store.IDString(top.ID) {
		t.Fatalf("issue milestone %s", r.Body)
	}
	e.Call(t, e.RootToken, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "none"}).Expect(t, 201, "")
	for _, c := range []struct{ query, want string }{
		{"milestone=v1", "[1]"},
		{"milestone=Any+Milestone", "[1]"},
		{"milestone=No+Milestone", "[2]"},
	} {
		if got := e.Call(t, e.RootToken, http.MethodGet, projectPath(p.ID, "/issues?"+c.query), nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != c.want {
			t.Fatalf("%s: %v, want %s", c.query, got, c.want)
		}
	}
}

// TestGroupDeletionDropsLabelsAndMilestones: deleting a group deletes its
// labels and milestones (and its subgroups'), with the group.
func TestGroupDeletionDropsLabelsAndMilestones(t *testing.T) {
	t.Parallel()
	e := start(t)
	top := newGroup(t, e.Client, "deltop", 0)
	sub := newGroup(t, e.Client, "delsub", top.ID)
	keep := newGroup(t, e.Client, "keep", 0)
	p := groupProject(t, e.Client, "delproj", sub.ID)
	for _, g := range []int64{top.ID, sub.ID, keep.ID} {
		e.Call(t, e.RootToken, http.MethodPost, groupLabelsPath(g, ""), map[string]any{"name": "l" + store.IDString(g), "color": "#00FF00"}).Expect(t, 201, "")
		e.Call(t, e.RootToken, http.MethodPost, fmt.Sprintf("/api/v4/groups/%d/milestones", g), map[string]any{"title": "m" + store.IDString(g)}).Expect(t, 201, "")
	}
	e.Call(t, e.RootToken, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "x", "labels": "l" + store.IDString(top.ID)}).Expect(t, 201, "")
	if _, err := e.Client.Groups.DeleteGroup(top.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	groupsOf := func(bucket string) []int64 {
		t.Helper()
		var out []int64
		err := e.db.View(context.Background(), func(tx *store.Tx) error {
			return store.Keys(bucket).ForEach(tx, func(_, v []byte) error {
				var row struct {
					GroupID int64 `json:"group_id"`
				}
				if err := json.Unmarshal(v, &row); err != nil {
					return err
				}
				if row.GroupID != 0 {
					out = append(out, row.GroupID)
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := groupsOf("issues.labels"); !slices.Equal(got, []int64{keep.ID}) {
		t.Fatalf("group labels left %v, want only the kept group's", got)
	}
	if got := groupsOf("issues.milestones"); !slices.Equal(got, []int64{keep.ID}) {
		t.Fatalf("group milestones left %v, want only the kept group's", got)
	}
	e.Call(t, e.RootToken, http.MethodGet, groupLabelsPath(keep.ID, "/l"+store.IDString(keep.ID)), nil).Expect(t, 200, "")
}
