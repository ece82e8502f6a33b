package issues_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// GET .../issues/:iid/resource_label_events: every label added and
// removed, by whom, oldest first, from creation on; the label as it is
// now, or null once deleted.
func TestIssueLabelEvents(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := stocktest.NewProject(t, c, "labelled", "private")
	bob := s.CreateUser(t, "bob")
	stocktest.AddMember(t, c, p.ID, bob.ID, gitlab.ReporterPermissions)
	if _, _, err := c.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr("bug"), Color: gitlab.Ptr("#FF0000"),
		Description: gitlab.Ptr("broken")}); err != nil {
		t.Fatal(err)
	}
	i := newIssue(t, c, p.ID, "Labelled", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"bug"} })
	// Same labels: no event. Then bob swaps bug for feature, as a JSON list.
	s.Call(t, s.RootToken, http.MethodPut, issuePath(p.ID, i.IID), map[string]any{"labels": "bug"}).Expect(t, 200, "")
	s.Call(t, bob.Token, http.MethodPut, issuePath(p.ID, i.IID), map[string]any{"labels": []string{"feature"}}).Expect(t, 200, "")
	s.Call(t, s.RootToken, http.MethodPut, issuePath(p.ID, i.IID), map[string]any{"labels": ""}).Expect(t, 200, "")

	path := issuePath(p.ID, i.IID, "/resource_label_events")
	r := s.Call(t, bob.Token, http.MethodGet, path, nil).Expect(t, 200, "")
	type ev struct{ user, label, action string }
	var got []ev
	for _, e := range r.List(t) {
		got = append(got, ev{e["user"].(map[string]any)["username"].(string), e["label"].(map[string]any)["name"].(string), e["action"].(string)})
	}
	want := []ev{{"root", "bug", "add"}, {"bob", "feature", "add"}, {"bob", "bug", "remove"}, {"root", "feature", "remove"}}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	first := r.List(t)[0]
	if !slices.Equal(keysOf(first), []string{"action", "created_at", "id", "label", "resource_id", "resource_type", "user"}) ||
		first["resource_type"] != "Issue" || first["resource_id"] != json.Number(store.IDString(i.ID)) ||
		!strings.HasSuffix(first["created_at"].(string), "Z") {
		t.Fatalf("an event %v", first)
	}
	label := first["label"].(map[string]any)
	if !slices.Equal(keysOf(label), []string{"color", "description", "id", "name"}) || label["color"] != "#FF0000" || label["description"] != "broken" {
		t.Fatalf("the event's label %v", label)
	}
	id, _ := first["id"].(json.Number).Int64()
	one := s.Call(t, bob.Token, http.MethodGet, path+"/"+store.IDString(id), nil).Expect(t, 200, "").Object(t)
	if one["action"] != "add" || one["id"] != first["id"] {
		t.Fatalf("one event %v", one)
	}
	// Another issue's event through this issue: not found.
	other := newIssue(t, c, p.ID, "Other", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"x"} })
	otherEvents := s.Call(t, bob.Token, http.MethodGet, issuePath(p.ID, other.IID, "/resource_label_events"), nil).Expect(t, 200, "").List(t)
	otherID, _ := otherEvents[0]["id"].(json.Number).Int64()
	s.Call(t, bob.Token, http.MethodGet, path+"/"+store.IDString(otherID), nil).Expect(t, 404, `{"message":"404 Not found"}`)

	// A deleted label leaves its events, without it.
	if _, err := c.Labels.DeleteLabel(p.ID, "bug", nil); err != nil {
		t.Fatal(err)
	}
	if l := s.Call(t, bob.Token, http.MethodGet, path, nil).Expect(t, 200, "").List(t)[0]["label"]; l != nil {
		t.Fatalf("a deleted label %v", l)
	}
	// Hidden to those who may not see the issue.
	stranger := s.CreateUser(t, "")
	s.Call(t, stranger.Token, http.MethodGet, path, nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
	// Deleting the issue deletes its events.
	s.Call(t, s.RootToken, http.MethodDelete, issuePath(p.ID, other.IID), nil).Expect(t, 204, "")
	s.Call(t, bob.Token, http.MethodGet, issuePath(p.ID, other.IID, "/resource_label_events"), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	left := 0
	err := s.db.View(context.Background(), func(tx *store.Tx) error {
		return store.Keys("issues.label_events").ForEach(tx, func(_, v []byte) error {
			var e struct {
				ResourceID int64 `json:"resource_id"`
			}
			if json.Unmarshal(v, &e) == nil && e.ResourceID == other.ID {
				left++
			}
			return nil
		})
	})
	if err != nil || left != 0 {
		t.Fatalf("%d events of the deleted issue left (%v)", left, err)
	}
}
