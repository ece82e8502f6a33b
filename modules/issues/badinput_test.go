package issues_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

func TestBadInput(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "bad", "private")
	create := func(body any) fennectest.Reply {
		return s.Call(t, alice.Token, http.MethodPost, projectPath(p.ID, "/issues"), body)
	}
	count := func() int {
		return len(s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/issues?per_page=100"), nil).List(t))
	}

	create(map[string]any{}).Expect(t, 400, `{"error":"title is missing"}`)
	create(map[string]any{"description": "x"}).Expect(t, 400, `{"error":"title is missing"}`)
	create(map[string]any{"title": ""}).Expect(t, 400, `{"message":{"title":["can't be blank"]}}`)
	create(map[string]any{"title": " \t\n "}).Expect(t, 400, `{"message":{"title":["can't be blank"]}}`)
	create(map[string]any{"title": strings.Repeat("x", 256)}).Expect(t, 400, `{"message":{"title":["is too long (maximum is 255 characters)"]}}`)
	create(map[string]any{"title": strings.Repeat("x", 1<<20)}).Expect(t, 400, `{"message":{"title":["is too long (maximum is 255 characters)"]}}`)
	// Invalid UTF-8 in a form body (JSON cannot carry it).
	create("title=bad%FF%FEtitle").Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	create([]byte("{\"title\":\"bad\xff\"}")).Expect(t, 400, "")
	create(map[string]any{"title": "ok", "description": strings.Repeat("d", 1_000_001)}).Expect(t, 400, "")
	create("title=ok&description=bad%FFbytes").Expect(t, 400, `{"message":{"description":["is invalid"]}}`)
	create(map[string]any{"title": "ok", "due_date": "tomorrow"}).Expect(t, 400, `{"error":"due_date is invalid"}`)
	create(map[string]any{"title": "ok", "created_at": "yesterday"}).Expect(t, 400, `{"error":"created_at is invalid"}`)
	if n := count(); n != 0 {
		t.Fatalf("%d issues stored by bad requests", n)
	}

	t.Run("labels with commas split; unicode kept; a label named with a comma cannot be made", func(t *testing.T) {
		r := create("title=ok&labels=" + q("a, b ,,ß∂ƒ, a"))
		r.Expect(t, 201, "")
		got := r.Object(t)["labels"].([]any)
		if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "ß∂ƒ" {
			t.Fatalf("labels %v", got)
		}
		s.Call(t, alice.Token, http.MethodPost, projectPath(p.ID, "/labels"), map[string]any{"name": "x,y", "color": "#FF0000"}).
			Expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	})

	t.Run("unknown iids and projects", func(t *testing.T) {
		s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, 999), nil).Expect(t, 404, `{"message":"404 Not found"}`)
		s.Call(t, alice.Token, http.MethodPut, issuePath(p.ID, 999), map[string]any{"title": "x"}).Expect(t, 404, `{"message":"404 Not found"}`)
		s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, 0), nil).Expect(t, 404, `{"message":"404 Not found"}`)
		s.Call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/issues/abc"), nil).Expect(t, 400, `{"error":"issue_iid is invalid"}`)
		s.Call(t, alice.Token, http.MethodGet, "/api/v4/projects/999999/issues", nil).Expect(t, 404, `{"message":"404 Project Not Found"}`)
	})

	t.Run("edits validate too and store nothing", func(t *testing.T) {
		before := s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, 1), nil).Object(t)
		s.Call(t, alice.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{"title": "  "}).Expect(t, 400, `{"message":{"title":["can't be blank"]}}`)
		s.Call(t, alice.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{"state_event": "merge", "title": "new"}).
			Expect(t, 400, `{"error":"state_event does not have a valid value"}`)
		after := s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, 1), nil).Object(t)
		if before["title"] != after["title"] || before["updated_at"] != after["updated_at"] {
			t.Fatalf("changed by a refused edit: %v -> %v", before, after)
		}
	})

	t.Run("an archived project refuses writes, still reads", func(t *testing.T) {
		if _, _, err := alice.Client.Projects.ArchiveProject(p.ID); err != nil {
			t.Fatal(err)
		}
		create(map[string]any{"title": "late"}).Expect(t, 403, `{"message":"403 Forbidden"}`)
		s.Call(t, alice.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{"title": "x"}).Expect(t, 403, `{"message":"403 Forbidden"}`)
		s.Call(t, alice.Token, http.MethodGet, issuePath(p.ID, 1), nil).Expect(t, 200, "")
		if _, _, err := alice.Client.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr("z"), Color: gitlab.Ptr("#000000")}); err == nil {
			t.Fatal("label created on an archived project")
		}
	})
}
