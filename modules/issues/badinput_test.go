package issues_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

func TestBadInput(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := newProject(t, alice.Client, "bad", "private")
	create := func(body any) reply {
		return s.call(t, alice.Token, http.MethodPost, projectPath(p.ID, "/issues"), body)
	}
	count := func() int {
		return len(s.call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/issues?per_page=100"), nil).list(t))
	}

	create(map[string]any{}).expect(t, 400, `{"error":"title is missing"}`)
	create(map[string]any{"description": "x"}).expect(t, 400, `{"error":"title is missing"}`)
	create(map[string]any{"title": ""}).expect(t, 400, `{"message":{"title":["can't be blank"]}}`)
	create(map[string]any{"title": " \t\n "}).expect(t, 400, `{"message":{"title":["can't be blank"]}}`)
	create(map[string]any{"title": strings.Repeat("x", 256)}).expect(t, 400, `{"message":{"title":["is too long (maximum is 255 characters)"]}}`)
	create(map[string]any{"title": strings.Repeat("x", 1<<20)}).expect(t, 400, `{"message":{"title":["is too long (maximum is 255 characters)"]}}`)
	// Invalid UTF-8 in a form body (JSON cannot carry it).
	create("title=bad%FF%FEtitle").expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	create([]byte("{\"title\":\"bad\xff\"}")).expect(t, 400, "")
	create(map[string]any{"title": "ok", "description": strings.Repeat("d", 1_000_001)}).expect(t, 400, "")
	create("title=ok&description=bad%FFbytes").expect(t, 400, `{"message":{"description":["is invalid"]}}`)
	create(map[string]any{"title": "ok", "due_date": "tomorrow"}).expect(t, 400, `{"error":"due_date is invalid"}`)
	create(map[string]any{"title": "ok", "created_at": "yesterday"}).expect(t, 400, `{"error":"created_at is invalid"}`)
	if n := count(); n != 0 {
		t.Fatalf("%d issues stored by bad requests", n)
	}

	t.Run("labels with commas split; unicode kept; a label named with a comma cannot be made", func(t *testing.T) {
		r := create("title=ok&labels=" + q("a, b ,,ß∂ƒ, a"))
		r.expect(t, 201, "")
		got := r.object(t)["labels"].([]any)
		if len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "ß∂ƒ" {
			t.Fatalf("labels %v", got)
		}
		s.call(t, alice.Token, http.MethodPost, projectPath(p.ID, "/labels"), map[string]any{"name": "x,y", "color": "#FF0000"}).
			expect(t, 400, `{"message":{"title":["is invalid"]}}`)
	})

	t.Run("unknown iids and projects", func(t *testing.T) {
		s.call(t, alice.Token, http.MethodGet, issuePath(p.ID, 999), nil).expect(t, 404, `{"message":"404 Not found"}`)
		s.call(t, alice.Token, http.MethodPut, issuePath(p.ID, 999), map[string]any{"title": "x"}).expect(t, 404, `{"message":"404 Not found"}`)
		s.call(t, alice.Token, http.MethodGet, issuePath(p.ID, 0), nil).expect(t, 404, `{"message":"404 Not found"}`)
		s.call(t, alice.Token, http.MethodGet, projectPath(p.ID, "/issues/abc"), nil).expect(t, 400, `{"error":"issue_iid is invalid"}`)
		s.call(t, alice.Token, http.MethodGet, "/api/v4/projects/999999/issues", nil).expect(t, 404, `{"message":"404 Project Not Found"}`)
	})

	t.Run("edits validate too and store nothing", func(t *testing.T) {
		before := s.call(t, alice.Token, http.MethodGet, issuePath(p.ID, 1), nil).object(t)
		s.call(t, alice.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{"title": "  "}).expect(t, 400, `{"message":{"title":["can't be blank"]}}`)
		s.call(t, alice.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{"state_event": "merge", "title": "new"}).
			expect(t, 400, `{"error":"state_event does not have a valid value"}`)
		after := s.call(t, alice.Token, http.MethodGet, issuePath(p.ID, 1), nil).object(t)
		if before["title"] != after["title"] || before["updated_at"] != after["updated_at"] {
			t.Fatalf("changed by a refused edit: %v -> %v", before, after)
		}
	})

	t.Run("an archived project refuses writes, still reads", func(t *testing.T) {
		if _, _, err := alice.Client.Projects.ArchiveProject(p.ID); err != nil {
			t.Fatal(err)
		}
		create(map[string]any{"title": "late"}).expect(t, 403, `{"message":"403 Forbidden"}`)
		s.call(t, alice.Token, http.MethodPut, issuePath(p.ID, 1), map[string]any{"title": "x"}).expect(t, 403, `{"message":"403 Forbidden"}`)
		s.call(t, alice.Token, http.MethodGet, issuePath(p.ID, 1), nil).expect(t, 200, "")
		if _, _, err := alice.Client.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr("z"), Color: gitlab.Ptr("#000000")}); err == nil {
			t.Fatal("label created on an archived project")
		}
	})
}
