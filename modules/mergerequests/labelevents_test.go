package mergerequests_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// A merge request's resource label events, as an issue's: recorded at
// creation and at each label change, oldest first.
func TestMergeRequestLabelEvents(t *testing.T) {
	t.Parallel()
	s := start(t)
	p, mr, users := reviewed(t, s, "review")
	s.Call(t, s.RootToken, http.MethodPut, mrPath(p.ID, mr.IID), map[string]any{"labels": "review,ready"}).Expect(t, 200, "")
	s.Call(t, users["bob"].Token, http.MethodPut, mrPath(p.ID, mr.IID), map[string]any{"labels": []string{"ready"}}).Expect(t, 200, "")

	type ev struct{ user, label, action string }
	var got []ev
	carol := users["carol"].Token
	list := s.Call(t, carol, http.MethodGet, mrPath(p.ID, mr.IID, "/resource_label_events"), nil).Expect(t, 200, "").List(t)
	for _, e := range list {
		got = append(got, ev{e["user"].(map[string]any)["username"].(string), e["label"].(map[string]any)["name"].(string), e["action"].(string)})
	}
	if want := []ev{{"alice", "review", "add"}, {"root", "ready", "add"}, {"bob", "review", "remove"}}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if list[0]["resource_type"] != "MergeRequest" || list[0]["resource_id"] != json.Number(store.IDString(mr.ID)) {
		t.Fatalf("an event %v", list[0])
	}
	id, _ := list[2]["id"].(json.Number).Int64()
	if one := s.Call(t, carol, http.MethodGet, mrPath(p.ID, mr.IID, "/resource_label_events/"+store.IDString(id)), nil).Expect(t, 200, "").Object(t); one["action"] != "remove" {
		t.Fatalf("one event %v", one)
	}
	s.Call(t, carol, http.MethodGet, mrPath(p.ID, mr.IID, "/resource_label_events/999999"), nil).Expect(t, 404, `{"message":"404 Not found"}`)
	stranger := s.CreateUser(t, "")
	s.Call(t, stranger.Token, http.MethodGet, mrPath(p.ID, mr.IID, "/resource_label_events"), nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
}
