package issues_test

import (
	"net/http"
	"slices"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

func TestLabels(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	guest := s.CreateUser(t, "guest")
	rep := s.CreateUser(t, "rep")
	p := stocktest.NewProject(t, alice.Client, "labels", "public")
	stocktest.AddMember(t, alice.Client, p.ID, guest.ID, gitlab.GuestPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	path := projectPath(p.ID, "/labels")

	l, _, err := rep.Client.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr("bug"), Color: gitlab.Ptr("#d9534f"),
		Description: gitlab.Ptr("Broken"), Priority: gitlab.Ptr(int64(2))})
	if err != nil || l.Name != "bug" || l.Color != "#d9534f" || l.Description != "Broken" || l.Priority != 2 {
		t.Fatalf("create: %+v %v", l, err)
	}
	s.Call(t, rep.Token, http.MethodPost, path, map[string]any{"name": "bug", "color": "#000000"}).Expect(t, 409, `{"message":"Label already exists"}`)
	s.Call(t, rep.Token, http.MethodPost, path, map[string]any{}).Expect(t, 400, `{"error":"name is missing, color is missing"}`)
	s.Call(t, rep.Token, http.MethodPost, path, map[string]any{"name": "x", "color": "red-ish"}).
		Expect(t, 400, `{"message":{"color":["must be a valid color code"]}}`)
	s.Call(t, guest.Token, http.MethodPost, path, map[string]any{"name": "g", "color": "#FFF"}).Expect(t, 403, `{"message":"403 Forbidden"}`)
	s.Call(t, "", http.MethodPost, path, map[string]any{"name": "g", "color": "#FFF"}).Expect(t, 401, "")

	// Issues count into the label; labels named on an issue appear.
	newIssue(t, alice.Client, p.ID, "one", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"bug", "new one"} })
	newIssue(t, alice.Client, p.ID, "two", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"bug"} })
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, 2, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	r := s.Call(t, "", http.MethodGet, path, nil).Expect(t, 200, "")
	fennectest.CheckPages(t, "labels", r.Header, 2, 1, 20, 1, "", "")
	list := r.List(t)
	if got := keysOf(list[0]); !slices.Equal(got, []string{"closed_issues_count", "color", "description", "id", "is_project_label", "name",
		"open_issues_count", "open_merge_requests_count", "priority", "subscribed"}) {
		t.Fatalf("label keys %v", got)
	}
	if list[0]["name"] != "bug" || list[0]["open_issues_count"].(interface{ String() string }).String() != "1" ||
		list[0]["closed_issues_count"].(interface{ String() string }).String() != "1" || list[1]["name"] != "new one" ||
		list[1]["color"] != "#428BCA" || list[1]["priority"] != nil {
		t.Fatalf("labels %v", list)
	}

	t.Run("one label by name or id", func(t *testing.T) {
		// 405 before: only PUT and DELETE had this path.
		byName := s.Call(t, "", http.MethodGet, path+"/bug", nil).Expect(t, 200, "").Object(t)
		if byName["name"] != "bug" || byName["open_issues_count"].(interface{ String() string }).String() != "1" {
			t.Fatalf("GET label by name: %v", byName)
		}
		id := byName["id"].(interface{ String() string }).String()
		if byID := s.Call(t, "", http.MethodGet, path+"/"+id, nil).Expect(t, 200, "").Object(t); byID["name"] != "bug" {
			t.Fatalf("GET label by id: %v", byID)
		}
		if got := s.Call(t, "", http.MethodGet, path+"/new%20one", nil).Expect(t, 200, "").Object(t); got["name"] != "new one" {
			t.Fatalf("GET label with a space: %v", got)
		}
		s.Call(t, "", http.MethodGet, path+"/nope", nil).Expect(t, 404, `{"message":"404 Label Not Found"}`)
	})
	t.Run("edit by name, rename carries the issues", func(t *testing.T) {
		s.Call(t, rep.Token, http.MethodPut, path, map[string]any{"name": "bug"}).
			Expect(t, 400, `{"error":"new_name, color, description, priority are missing, at least one parameter must be provided"}`)
		s.Call(t, rep.Token, http.MethodPut, path, map[string]any{"name": "nope", "color": "#123456"}).Expect(t, 404, `{"message":"404 Label Not Found"}`)
		s.Call(t, rep.Token, http.MethodPut, path, map[string]any{"name": "bug", "new_name": "new one"}).Expect(t, 409, "")
		up, _, err := rep.Client.Labels.UpdateLabel(p.ID, "bug", &gitlab.UpdateLabelOptions{NewName: gitlab.Ptr("defect"), Color: gitlab.Ptr("#123")})
		if err != nil || up.Name != "defect" || up.Color != "#123" {
			t.Fatalf("update %+v %v", up, err)
		}
		i, _, _ := alice.Client.Issues.GetIssue(p.ID, 1)
		if !slices.Equal([]string(i.Labels), []string{"defect", "new one"}) {
			t.Fatalf("issue labels %v", i.Labels)
		}
	})
	t.Run("delete takes it off issues", func(t *testing.T) {
		s.Call(t, rep.Token, http.MethodDelete, path+"?name="+q("new one"), nil).Expect(t, 204, "")
		s.Call(t, rep.Token, http.MethodDelete, path+"?name="+q("new one"), nil).Expect(t, 404, `{"message":"404 Label Not Found"}`)
		s.Call(t, rep.Token, http.MethodDelete, path, nil).Expect(t, 400, `{"error":"name is missing"}`)
		i, _, _ := alice.Client.Issues.GetIssue(p.ID, 1)
		if !slices.Equal([]string(i.Labels), []string{"defect"}) {
			t.Fatalf("issue labels %v", i.Labels)
		}
	})
}

func TestMilestones(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	dev := s.CreateUser(t, "dev")
	p := stocktest.NewProject(t, alice.Client, "ms", "public")
	stocktest.AddMember(t, alice.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	path := projectPath(p.ID, "/milestones")

	s.Call(t, alice.Token, http.MethodPost, path, map[string]any{}).Expect(t, 400, `{"error":"title is missing"}`)
	s.Call(t, dev.Token, http.MethodPost, path, map[string]any{"title": "x"}).Expect(t, 403, "")
	m1 := s.Call(t, alice.Token, http.MethodPost, path, map[string]any{"title": "v1", "description": "first",
		"due_date": "2030-05-01", "start_date": "2030-04-01"}).Expect(t, 201, "").Object(t)
	if got := keysOf(m1); !slices.Equal(got, []string{"created_at", "description", "due_date", "id", "iid", "project_id",
		"start_date", "state", "title", "updated_at"}) {
		t.Fatalf("milestone keys %v", got)
	}
	if m1["iid"].(interface{ String() string }).String() != "1" || m1["state"] != "active" || m1["due_date"] != "2030-05-01" || m1["start_date"] != "2030-04-01" {
		t.Fatalf("milestone %v", m1)
	}
	dup := s.Call(t, alice.Token, http.MethodPost, path, map[string]any{"title": "v1"}).Expect(t, 400, "").Object(t)
	if dup["message"] != `Failed to create milestone {:title=>["has already been taken"]}` {
		t.Fatalf("duplicate: %v", dup)
	}
	m2, _, err := alice.Client.Milestones.CreateMilestone(p.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v2 beta")})
	if err != nil || m2.IID != 2 {
		t.Fatalf("%+v %v", m2, err)
	}
	id1 := m1["id"].(interface{ String() string }).String()

	up, _, err := alice.Client.Milestones.UpdateMilestone(p.ID, m2.ID, &gitlab.UpdateMilestoneOptions{StateEvent: gitlab.Ptr("close")})
	if err != nil || up.State != "closed" {
		t.Fatalf("close %+v %v", up, err)
	}
	s.Call(t, alice.Token, http.MethodPut, projectPath(p.ID, "/milestones/"+id1), map[string]any{"state_event": "finish"}).
		Expect(t, 400, `{"error":"state_event does not have a valid value"}`)
	s.Call(t, alice.Token, http.MethodPut, projectPath(p.ID, "/milestones/"+id1), map[string]any{}).Expect(t, 400, "")
	s.Call(t, "", http.MethodGet, projectPath(p.ID, "/milestones/99999"), nil).Expect(t, 404, `{"message":"404 Not found"}`)

	for q, want := range map[string][]string{"": {"v1", "v2 beta"}, "?state=active": {"v1"}, "?state=closed": {"v2 beta"},
		"?iids[]=2": {"v2 beta"}, "?search=BETA": {"v2 beta"}} {
		var got []string
		for _, m := range s.Call(t, "", http.MethodGet, path+q, nil).Expect(t, 200, "").List(t) {
			got = append(got, m["title"].(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("milestones%s = %v, want %v", q, got, want)
		}
	}

	// The milestone's issues, and the issue view's milestone.
	i := newIssue(t, alice.Client, p.ID, "in v1", func(o *gitlab.CreateIssueOptions) { o.MilestoneID = gitlab.Ptr(int64(mustInt(t, id1))) })
	if i.Milestone == nil || i.Milestone.Title != "v1" || i.Milestone.IID != 1 {
		t.Fatalf("issue milestone %+v", i.Milestone)
	}
	newIssue(t, alice.Client, p.ID, "elsewhere")
	r := s.Call(t, "", http.MethodGet, projectPath(p.ID, "/milestones/"+id1+"/issues"), nil).Expect(t, 200, "")
	if got := r.IIDs(t); !slices.Equal(got, []int64{1}) {
		t.Fatalf("milestone issues %v", got)
	}
	fennectest.CheckPages(t, "milestone issues", r.Header, 1, 1, 20, 1, "", "")
	// A guest (non-member here) creating with a milestone: ignored, as
	// GitLab filters admin-only fields of guests.
	g := s.CreateUser(t, "g")
	gi := newIssue(t, g.Client, p.ID, "guest's", func(o *gitlab.CreateIssueOptions) {
		o.MilestoneID = gitlab.Ptr(int64(mustInt(t, id1)))
		o.Labels = &gitlab.LabelOptions{"sneaky"}
	})
	if gi.Milestone != nil || len(gi.Labels) != 0 {
		t.Fatalf("guest set admin fields: %+v", gi)
	}
}

func mustInt(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// A label's issue counts are those the caller may see: a confidential
// issue counts for Reporter+ members, its author and its assignees only
// (issue 27: an anonymous reader saw open_issues_count 1 for a label only a
// confidential issue carried). The counts follow the issues through
// confidential toggles, closes, relabels, deletes and the label's delete.
func TestLabelCountsHideConfidentialIssues(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice") // owner
	rep := s.CreateUser(t, "rep")
	guest := s.CreateUser(t, "guest") // Guest member, assignee of one confidential issue
	bob := s.CreateUser(t, "bob")     // non-member, author of one confidential issue
	carol := s.CreateUser(t, "carol") // non-member
	p := stocktest.NewProject(t, alice.Client, "conflabels", "public")
	stocktest.AddMember(t, alice.Client, p.ID, rep.ID, gitlab.ReporterPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, guest.ID, gitlab.GuestPermissions)
	path := projectPath(p.ID, "/labels")
	tokens := map[string]string{"anonymous": "", "carol": carol.Token, "bob": bob.Token, "guest": guest.Token, "rep": rep.Token, "alice": alice.Token}
	// counts reads label name's [open, closed] as each caller.
	check := func(step, name string, want map[string][2]int) {
		t.Helper()
		for who, w := range want {
			var got [2]int
			found := false
			for _, l := range s.Call(t, tokens[who], http.MethodGet, path, nil).Expect(t, 200, "").List(t) {
				if l["name"] == name {
					found = true
					got = [2]int{mustInt(t, l["open_issues_count"].(interface{ String() string }).String()),
						mustInt(t, l["closed_issues_count"].(interface{ String() string }).String())}
				}
			}
			if !found || got != w {
				t.Errorf("%s: %s sees label %q with open/closed %v (found %v), want %v", step, who, name, got, found, w)
			}
		}
	}

	// Only a confidential issue carries "secret".
	newIssue(t, alice.Client, p.ID, "hidden", func(o *gitlab.CreateIssueOptions) {
		o.Confidential = gitlab.Ptr(true)
		o.Labels = &gitlab.LabelOptions{"secret"}
	})
	check("one confidential issue", "secret", map[string][2]int{"anonymous": {0, 0}, "carol": {0, 0}, "bob": {0, 0}, "guest": {0, 0}, "rep": {1, 0}, "alice": {1, 0}})

	// Bob's own confidential issue, labelled by the owner; one assigned to
	// the guest, closed; a public one.
	bi := newIssue(t, bob.Client, p.ID, "bob's", func(o *gitlab.CreateIssueOptions) { o.Confidential = gitlab.Ptr(true) })
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, bi.IID, &gitlab.UpdateIssueOptions{Labels: &gitlab.LabelOptions{"secret"}}); err != nil {
		t.Fatal(err)
	}
	gi := newIssue(t, alice.Client, p.ID, "the guest's", func(o *gitlab.CreateIssueOptions) {
		o.Confidential = gitlab.Ptr(true)
		o.Labels = &gitlab.LabelOptions{"secret"}
		o.AssigneeIDs = &[]int64{guest.ID}
	})
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, gi.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}
	pub := newIssue(t, alice.Client, p.ID, "public", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"secret"} })
	check("mixed", "secret", map[string][2]int{"anonymous": {1, 0}, "carol": {1, 0}, "bob": {2, 0}, "guest": {1, 1}, "rep": {3, 1}, "alice": {3, 1}})

	// The public one turns confidential; bob's loses the label; the
	// guest's is reopened.
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, pub.IID, &gitlab.UpdateIssueOptions{Confidential: gitlab.Ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, bi.IID, &gitlab.UpdateIssueOptions{Labels: &gitlab.LabelOptions{"other"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Issues.UpdateIssue(p.ID, gi.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("reopen")}); err != nil {
		t.Fatal(err)
	}
	check("after edits", "secret", map[string][2]int{"anonymous": {0, 0}, "carol": {0, 0}, "bob": {0, 0}, "guest": {1, 0}, "rep": {3, 0}, "alice": {3, 0}})
	check("after edits", "other", map[string][2]int{"anonymous": {0, 0}, "bob": {1, 0}, "rep": {1, 0}})

	// A deleted issue no longer counts; a label deleted and made again
	// starts from nothing.
	if _, err := alice.Client.Issues.DeleteIssue(p.ID, pub.IID); err != nil {
		t.Fatal(err)
	}
	check("after delete", "secret", map[string][2]int{"anonymous": {0, 0}, "guest": {1, 0}, "rep": {2, 0}})
	s.Call(t, alice.Token, http.MethodDelete, path+"?name=secret", nil).Expect(t, 204, "")
	s.Call(t, alice.Token, http.MethodPost, path, map[string]any{"name": "secret", "color": "#000000"}).Expect(t, 201, "")
	check("label made again", "secret", map[string][2]int{"anonymous": {0, 0}, "guest": {0, 0}, "rep": {0, 0}})
}
