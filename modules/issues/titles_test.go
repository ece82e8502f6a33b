package issues_test

import (
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Titles of issues, milestones and labels refuse control characters (NUL,
// other C0 characters inside the title, DEL, C1) as GitLab's "is invalid",
// on create and on edit, and store nothing (issue 27: an issue title held
// a NUL).
func TestTitlesRefuseControlCharacters(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "ctl", "private")
	bad := []string{"nul\x00here", "bell\x07", "line\nbreak", "tab\there", "del\x7f", "c1\u0085next", "esc\x1b[31mred"}

	issues := projectPath(p.ID, "/issues")
	for _, title := range bad {
		s.Call(t, alice.Token, http.MethodPost, issues, map[string]any{"title": title}).Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	}
	s.Call(t, alice.Token, http.MethodPost, issues, "title=form%00nul").Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	if n := len(s.Call(t, alice.Token, http.MethodGet, issues, nil).Expect(t, 200, "").List(t)); n != 0 {
		t.Fatalf("%d issues stored by refused creates", n)
	}
	// Unicode that is not a control character is a title like any other.
	s.Call(t, alice.Token, http.MethodPost, issues, map[string]any{"title": "  Ünïcödé 👨‍👩‍👧 ok\t"}).Expect(t, 201, "")
	for _, title := range bad {
		s.Call(t, alice.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{"title": title}).Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	}
	if got := s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, 1), nil).Expect(t, 200, "").Object(t)["title"]; got != "Ünïcödé 👨‍👩‍👧 ok" {
		t.Fatalf("title after refused edits %q", got)
	}

	milestones := projectPath(p.ID, "/milestones")
	for _, title := range bad {
		r := s.Call(t, alice.Token, http.MethodPost, milestones, map[string]any{"title": title}).Expect(t, 400, "")
		if msg := r.Object(t)["message"]; msg != `Failed to create milestone {:title=>["is invalid"]}` {
			t.Errorf("milestone %q: %v", title, msg)
		}
	}
	m := s.Call(t, alice.Token, http.MethodPost, milestones, map[string]any{"title": "v1"}).Expect(t, 201, "").Object(t)
	mpath := projectPath(p.ID, "/milestones/"+m["id"].(interface{ String() string }).String())
	r := s.Call(t, alice.Token, http.MethodPut, mpath, map[string]any{"title": "v\x002"}).Expect(t, 400, "")
	if msg := r.Object(t)["message"]; msg != `Failed to update milestone {:title=>["is invalid"]}` {
		t.Errorf("milestone edit: %v", msg)
	}
	if got := s.Call(t, alice.Token, http.MethodGet, milestones, nil).Expect(t, 200, "").List(t); len(got) != 1 || got[0]["title"] != "v1" {
		t.Fatalf("milestones after refused writes: %v", got)
	}

	labels := projectPath(p.ID, "/labels")
	for _, name := range bad {
		s.Call(t, alice.Token, http.MethodPost, labels, map[string]any{"name": name, "color": "#FF0000"}).
			Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	}
	s.Call(t, alice.Token, http.MethodPost, labels, map[string]any{"name": "bug", "color": "#FF0000"}).Expect(t, 201, "")
	s.Call(t, alice.Token, http.MethodPut, labels, map[string]any{"name": "bug", "new_name": "b\x00ug"}).
		Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	// A label named on an issue is made on the fly: a control character
	// there is refused like in a label's create.
	s.Call(t, alice.Token, http.MethodPost, issues, map[string]any{"title": "labelled", "labels": "ok,b\x00ad"}).
		Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	if got := s.Call(t, alice.Token, http.MethodGet, labels, nil).Expect(t, 200, "").List(t); len(got) != 1 || got[0]["name"] != "bug" {
		t.Fatalf("labels after refused writes: %v", got)
	}
}
