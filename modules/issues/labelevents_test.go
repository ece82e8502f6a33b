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
)

// GET .../issues/:iid/resource_label_events: every label added and
// removed, by whom, oldest first, from creation on; the label as it is
// now, or null once deleted.
func TestIssueLabelEvents(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := s.Client
	p := newProject(t, c, "labelled", "private")
	bob := s.CreateUser(t, "bob")
	addMember(t, c, p.ID, bob.ID, gitlab.ReporterPermissions)
	if _, _, err := c.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr("bug"), Color: gitlab.Ptr("#FF0000"),
		Description: gitlab.Ptr("broken")}); err != nil {
		t.Fatal(err)
	}
	i := newIssue(t, c, p.ID, "Labelled", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"bug"} })
	// Same labels: no event. Then bob swaps bug for feature, as a JSON list.
	s.call(t, s.RootToken, http.MethodPut, issuePath(p.ID, i.IID), map[string]any{"labels": "bug"}).expect(t, 200, "")
	s.call(t, bob.Token, http.MethodPut, issuePath(p.ID, i.IID), map[string]any{"labels": []string{"feature"}}).expect(t, 200, "")
	s.call(t, s.RootToken, http.MethodPut, issuePath(p.ID, i.IID), map[string]any{"labels": ""}).expect(t, 200, "")

	path := issuePath(p.ID, i.IID, "/resource_label_events")
	r := s.call(t, bob.Token, http.MethodGet, path, nil).expect(t, 200, "")
	type ev struct{ user, label, action string }
	var got []ev
	for _, e := range r.list(t) {
		got = append(got, ev{e["user"].(map[string]any)["username"].(string), e["label"].(map[string]any)["name"].(string), e["action"].(string)})
	}
	want := []ev{{"root", "bug", "add"}, {"bob", "feature", "add"}, {"bob", "bug", "remove"}, {"root", "feature", "remove"}}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	first := r.list(t)[0]
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
	one := s.call(t, bob.Token, http.MethodGet, path+"/"+store.IDString(id), nil).expect(t, 200, "").object(t)
	if one["action"] != "add" || one["id"] != first["id"] {
		t.Fatalf("one event %v", one)
	}
	// Another issue's event through this issue: not found.
	other := newIssue(t, c, p.ID, "Other", func(o *gitlab.CreateIssueOptions) { o.Labels = &gitlab.LabelOptions{"x"} })
	otherEvents := s.call(t, bob.Token, http.MethodGet, issuePath(p.ID, other.IID, "/resource_label_events"), nil).expect(t, 200, "").list(t)
	otherID, _ := otherEvents[0]["id"].(json.Number).Int64()
	s.call(t, bob.Token, http.MethodGet, path+"/"+store.IDString(otherID), nil).expect(t, 404, `{"message":"404 Not found"}`)

	// A deleted label leaves its events, without it.
	if _, err := c.Labels.DeleteLabel(p.ID, "bug", nil); err != nil {
		t.Fatal(err)
	}
	if l := s.call(t, bob.Token, http.MethodGet, path, nil).expect(t, 200, "").list(t)[0]["label"]; l != nil {
		t.Fatalf("a deleted label %v", l)
	}
	// Hidden to those who may not see the issue.
	stranger := s.CreateUser(t, "")
	s.call(t, stranger.Token, http.MethodGet, path, nil).expect(t, 404, `{"message":"404 Project Not Found"}`)
	// Deleting the issue deletes its events.
	s.call(t, s.RootToken, http.MethodDelete, issuePath(p.ID, other.IID), nil).expect(t, 204, "")
	s.call(t, bob.Token, http.MethodGet, issuePath(p.ID, other.IID, "/resource_label_events"), nil).expect(t, 404, `{"message":"404 Not found"}`)
	left := 0
	err := s.db.View(context.Background(), func(tx *store.Tx) error {
		return tx.Bucket([]byte("issues.label_events")).ForEach(func(_, v []byte) error {
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
