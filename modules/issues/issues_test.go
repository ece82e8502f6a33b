package issues_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

var issueKeys = []string{"assignee", "assignees", "author", "confidential", "created_at", "description", "downvotes",
	"due_date", "id", "iid", "labels", "milestone", "project_id", "state", "title", "updated_at", "upvotes",
	"user_notes_count", "web_url"}

var timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestIssueLifecycle(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "Tracker", "public")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.DeveloperPermissions)

	due := gitlab.ISOTime(time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC))
	i := newIssue(t, alice.Client, p.ID, "  First bug  ", func(o *gitlab.CreateIssueOptions) {
		o.Description = gitlab.Ptr("It crashes")
		o.Labels = &gitlab.LabelOptions{"bug", "ünïcode"}
		o.AssigneeIDs = &[]int64{bob.ID}
		o.DueDate = &due
	})
	if i.IID != 1 || i.Title != "First bug" || i.State != "opened" || i.Author.Username != "alice" ||
		len(i.Assignees) != 1 || i.Assignees[0].Username != "bob" || i.Assignee.Username != "bob" ||
		!slices.Equal([]string(i.Labels), []string{"bug", "ünïcode"}) || i.DueDate == nil || time.Time(*i.DueDate).Format("2006-01-02") != "2030-01-02" ||
		i.WebURL != s.URL+"/alice/tracker/issues/1" || i.ProjectID != p.ID {
		t.Fatalf("created %+v", i)
	}

	t.Run("the 9.x view, exactly", func(t *testing.T) {
		one := s.Call(t, "", http.MethodGet, issuePath(p.ID, 1), nil).Expect(t, 200, "").Object(t)
		want := append(slices.Clone(issueKeys), "subscribed")
		slices.Sort(want)
		if got := keysOf(one); !slices.Equal(got, want) {
			t.Fatalf("keys %v, want %v", got, want)
		}
		for _, k := range []string{"created_at", "updated_at"} {
			if !timestamp.MatchString(one[k].(string)) {
				t.Fatalf("%s = %v", k, one[k])
			}
		}
		if one["milestone"] != nil || one["due_date"] != "2030-01-02" || one["confidential"] != false ||
			one["user_notes_count"].(json.Number).String() != "0" || one["subscribed"] != false {
			t.Fatalf("view %v", one)
		}
		author := one["author"].(map[string]any)
		if got := keysOf(author); !slices.Equal(got, []string{"avatar_url", "id", "name", "state", "username", "web_url"}) {
			t.Fatalf("author keys %v", got)
		}
		list := s.Call(t, "", http.MethodGet, projectPath(p.ID, "/issues"), nil).Expect(t, 200, "").List(t)
		if got := keysOf(list[0]); !slices.Equal(got, issueKeys) {
			t.Fatalf("list keys %v, want %v (no subscribed)", got, issueKeys)
		}
		bare := newIssue(t, alice.Client, p.ID, "bare")
		raw := s.Call(t, "", http.MethodGet, issuePath(p.ID, int64(bare.IID)), nil).Object(t)
		if raw["description"] != nil || raw["assignee"] != nil || len(raw["assignees"].([]any)) != 0 || len(raw["labels"].([]any)) != 0 {
			t.Fatalf("bare issue %v", raw)
		}
	})

	t.Run("close, reopen (9.x says reopened), opened filter matches both", func(t *testing.T) {
		up, _, err := bob.Client.Issues.UpdateIssue(p.ID, 1, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")})
		if err != nil || up.State != "closed" {
			t.Fatalf("close: %+v %v", up, err)
		}
		up, _, err = bob.Client.Issues.UpdateIssue(p.ID, 1, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("reopen")})
		if err != nil || up.State != "reopened" {
			t.Fatalf("reopen: %+v %v", up, err)
		}
		got := s.Call(t, "", http.MethodGet, projectPath(p.ID, "/issues?state=opened&sort=asc"), nil).IIDs(t)
		if !slices.Contains(got, 1) {
			t.Fatalf("opened filter %v misses the reopened issue", got)
		}
		s.Call(t, bob.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{"state_event": "shut"}).
			Expect(t, 400, `{"error":"state_event does not have a valid value"}`)
		s.Call(t, bob.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{}).
			Expect(t, 400, `{"error":"assignee_id, assignee_ids, confidential, created_at, description, due_date, labels, milestone_id, state_event, title are missing, at least one parameter must be provided"}`)
	})

	t.Run("edit fields, unassign, relabel", func(t *testing.T) {
		up, _, err := bob.Client.Issues.UpdateIssue(p.ID, 1, &gitlab.UpdateIssueOptions{Title: gitlab.Ptr("Renamed"),
			Labels: &gitlab.LabelOptions{"feature"}, AssigneeIDs: &[]int64{}, Confidential: gitlab.Ptr(true)})
		if err != nil || up.Title != "Renamed" || !slices.Equal([]string(up.Labels), []string{"feature"}) || len(up.Assignees) != 0 ||
			up.Assignee != nil || !up.Confidential {
			t.Fatalf("update: %+v %v", up, err)
		}
		if !up.UpdatedAt.After(*up.CreatedAt) {
			t.Fatalf("updated_at %v not after created_at %v", up.UpdatedAt, up.CreatedAt)
		}
	})

	t.Run("delete: owner only, 204, then 404", func(t *testing.T) {
		s.Call(t, bob.Token, http.MethodDelete, issuePath(p.ID, 1), nil).Expect(t, 403, `{"message":"403 Forbidden"}`)
		s.Call(t, alice.Token, http.MethodDelete, issuePath(p.ID, 1), nil).Expect(t, 204, "")
		s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, 1), nil).Expect(t, 404, `{"message":"404 Not found"}`)
		s.Call(t, alice.Token, http.MethodDelete, issuePath(p.ID, 1), nil).Expect(t, 404, `{"message":"404 Not found"}`)
		s.Call(t, s.RootToken, http.MethodDelete, issuePath(p.ID, 2), nil).Expect(t, 204, "")
		// iids are never reused.
		if i := newIssue(t, alice.Client, p.ID, "after"); i.IID != 3 {
			t.Fatalf("iid %d after deletes, want 3", i.IID)
		}
	})
	_ = fennectest.CheckPages
}

// Form-encoded parameters as older clients send them: the legacy
// assignee_id, assignee_ids[], booleans as strings; created_at is honoured
// for owners and administrators only.
func TestFormParamsAndBackdating(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	dev := s.CreateUser(t, "dev")
	p := stocktest.NewProject(t, alice.Client, "forms", "private")
	stocktest.AddMember(t, alice.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	one := s.Call(t, dev.Token, http.MethodPost, projectPath(p.ID, "/issues"),
		"title=Form&assignee_id="+store.IDString(alice.ID)+"&confidential=true&labels=x,y&created_at=2001-02-03T04:05:06Z").Expect(t, 201, "").Object(t)
	if one["confidential"] != true || one["assignee"].(map[string]any)["username"] != "alice" || len(one["labels"].([]any)) != 2 {
		t.Fatalf("form create %v", one)
	}
	if one["created_at"] == "2001-02-03T04:05:06.000Z" {
		t.Fatal("a developer backdated an issue")
	}
	two := s.Call(t, alice.Token, http.MethodPost, projectPath(p.ID, "/issues"),
		"title=Old&assignee_ids[]="+store.IDString(dev.ID)+"&assignee_ids[]="+store.IDString(alice.ID)+"&created_at=2001-02-03T04:05:06Z").Expect(t, 201, "").Object(t)
	if two["created_at"] != "2001-02-03T04:05:06.000Z" {
		t.Fatalf("the owner's created_at: %v", two["created_at"])
	}
	// GitLab CE keeps one assignee: the first.
	if as := two["assignees"].([]any); len(as) != 1 || as[0].(map[string]any)["username"] != "dev" {
		t.Fatalf("assignees %v", two["assignees"])
	}
	// An assignee who cannot see the project is dropped.
	stranger := s.CreateUser(t, "stranger")
	three := s.Call(t, alice.Token, http.MethodPost, projectPath(p.ID, "/issues"), "title=x&assignee_id="+store.IDString(stranger.ID)).Expect(t, 201, "").Object(t)
	if three["assignee"] != nil {
		t.Fatalf("a stranger was assigned: %v", three["assignee"])
	}
}
