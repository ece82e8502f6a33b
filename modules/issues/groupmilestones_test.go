package issues_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// TestGroupMilestones covers /groups/:id/milestones: create, list with
// filters, get, edit and close, permissions (group Master+ writes, group
// readers read, others 404), and issues of the group's projects carrying a
// group milestone.
func TestGroupMilestones(t *testing.T) {
	t.Parallel()
	e := start(t)
	owner := e.CreateUser(t, "gmowner")
	dev := e.CreateUser(t, "gmdev")
	stranger := e.CreateUser(t, "gmstranger")
	g, _, err := owner.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("MS Group"), Path: gitlab.Ptr("msgroup")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := owner.Client.GroupMembers.AddGroupMember(g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(dev.ID),
		AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/api/v4/groups/%d/milestones", g.ID)

	r := e.Call(t, owner.Token, http.MethodPost, base, map[string]any{"title": "v1", "description": "first", "due_date": "2026-12-31", "start_date": "2026-12-01"})
	r.Expect(t, http.StatusCreated, "")
	m := r.Object(t)
	if got := strings.Join(keysOf(m), ","); got != "created_at,description,due_date,group_id,id,iid,start_date,state,title,updated_at" {
		t.Fatalf("keys %s", got)
	}
	if m["iid"].(fmt.Stringer).String() != "1" || m["group_id"].(fmt.Stringer).String() != store.IDString(g.ID) || m["title"] != "v1" ||
		m["description"] != "first" || m["state"] != "active" || m["due_date"] != "2026-12-31" || m["start_date"] != "2026-12-01" {
		t.Fatalf("milestone %s", r.Body)
	}
	id := m["id"].(fmt.Stringer).String()
	r = e.Call(t, owner.Token, http.MethodPost, base, "title=v2")
	r.Expect(t, http.StatusCreated, "")
	if m2 := r.Object(t); m2["iid"].(fmt.Stringer).String() != "2" || m2["description"] != nil || m2["due_date"] != nil {
		t.Fatalf("second %s", r.Body)
	}
	id2 := r.Object(t)["id"].(fmt.Stringer).String()

	// Errors change nothing.
	e.Call(t, owner.Token, http.MethodPost, base, map[string]any{}).Expect(t, 400, `{"error":"title is missing"}`)
	e.Call(t, owner.Token, http.MethodPost, base, map[string]any{"title": "v1"}).Expect(t, 400, `{"message":"Failed to create milestone {:title=\u003e[\"has already been taken\"]}"}`)
	e.Call(t, dev.Token, http.MethodPost, base, map[string]any{"title": "dev"}).Expect(t, 403, `{"message":"403 Forbidden"}`)
	e.Call(t, stranger.Token, http.MethodPost, base, map[string]any{"title": "x"}).Expect(t, 404, `{"message":"404 Group Not Found"}`)
	e.Call(t, stranger.Token, http.MethodGet, base, nil).Expect(t, 404, `{"message":"404 Group Not Found"}`)
	e.Call(t, "", http.MethodPost, base, map[string]any{"title": "x"}).Expect(t, 401, `{"message":"401 Unauthorized"}`)

	// Readers list and filter.
	r = e.Call(t, dev.Token, http.MethodGet, base, nil).Expect(t, 200, "")
	if got := r.IIDs(t); fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("list %v", got)
	}
	if got := e.Call(t, dev.Token, http.MethodGet, base+"?search=FIRST", nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != "[1]" {
		t.Fatalf("search %v", got)
	}
	if got := e.Call(t, dev.Token, http.MethodGet, base+"?iids[]=2", nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != "[2]" {
		t.Fatalf("iids %v", got)
	}
	e.Call(t, dev.Token, http.MethodGet, base+"/"+id2, nil).Expect(t, 200, "")
	e.Call(t, dev.Token, http.MethodGet, base+"/999999", nil).Expect(t, 404, `{"message":"404 Not found"}`)

	// Edit and close; then state filters.
	e.Call(t, dev.Token, http.MethodPut, base+"/"+id2, map[string]any{"state_event": "close"}).Expect(t, 403, `{"message":"403 Forbidden"}`)
	r = e.Call(t, owner.Token, http.MethodPut, base+"/"+id2, map[string]any{"state_event": "close", "title": "v2.0"}).Expect(t, 200, "")
	if m := r.Object(t); m["state"] != "closed" || m["title"] != "v2.0" {
		t.Fatalf("closed %s", r.Body)
	}
	e.Call(t, owner.Token, http.MethodPut, base+"/"+id2, map[string]any{"state_event": "bogus"}).Expect(t, 400, `{"error":"state_event does not have a valid value"}`)
	if got := e.Call(t, dev.Token, http.MethodGet, base+"?state=closed", nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != "[2]" {
		t.Fatalf("closed list %v", got)
	}
	if got := e.Call(t, dev.Token, http.MethodGet, base+"?state=active", nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != "[1]" {
		t.Fatalf("active list %v", got)
	}

	// A project milestone route does not answer a group milestone, and the
	// group's projects' issues may carry one.
	p, _, err := owner.Client.Projects.CreateProject(&gitlab.CreateProjectOptions{Path: gitlab.Ptr("gmproj"), NamespaceID: gitlab.Ptr(g.ID)})
	if err != nil {
		t.Fatal(err)
	}
	e.Call(t, owner.Token, http.MethodGet, projectPath(p.ID, "/milestones/"+id), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	r = e.Call(t, owner.Token, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "in group ms", "milestone_id": id}).Expect(t, 201, "")
	ms, _ := r.Object(t)["milestone"].(map[string]any)
	if ms == nil || ms["group_id"].(fmt.Stringer).String() != store.IDString(g.ID) || ms["project_id"] != nil || ms["title"] != "v1" {
		t.Fatalf("issue milestone %s", r.Body)
	}
	e.Call(t, owner.Token, http.MethodPost, projectPath(p.ID, "/issues"), map[string]any{"title": "secret", "confidential": true, "milestone_id": id}).Expect(t, 201, "")
	// A personal project's issue cannot take the group's milestone.
	own := stocktest.NewProject(t, owner.Client, "personal", "private")
	r = e.Call(t, owner.Token, http.MethodPost, projectPath(own.ID, "/issues"), map[string]any{"title": "elsewhere", "milestone_id": id}).Expect(t, 201, "")
	if r.Object(t)["milestone"] != nil {
		t.Fatalf("foreign milestone taken: %s", r.Body)
	}
	e.Drain(t)
	r = e.Call(t, owner.Token, http.MethodGet, base+"/"+id+"/issues", nil).Expect(t, 200, "")
	if got := r.IIDs(t); fmt.Sprint(got) != "[2 1]" {
		t.Fatalf("milestone issues %v: %s", got, r.Body)
	}
	// A Guest of the group sees the public issue only.
	guest := e.CreateUser(t, "gmguest")
	if _, _, err := owner.Client.GroupMembers.AddGroupMember(g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(guest.ID),
		AccessLevel: gitlab.Ptr(gitlab.GuestPermissions)}); err != nil {
		t.Fatal(err)
	}
	if got := e.Call(t, guest.Token, http.MethodGet, base+"/"+id+"/issues", nil).Expect(t, 200, "").IIDs(t); fmt.Sprint(got) != "[1]" {
		t.Fatalf("guest's milestone issues %v", got)
	}
	e.Call(t, stranger.Token, http.MethodGet, base+"/"+id+"/issues", nil).Expect(t, 404, `{"message":"404 Group Not Found"}`)
}
