package snippets_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// noteStored says whether the collab module still holds a note (what a
// snippet's deletion must remove through target.Service.Remove).
func (e *env) noteStored(t *testing.T, id int64) bool {
	t.Helper()
	found := false
	err := e.db.View(context.Background(), func(tx *store.Tx) error {
		found = store.Keys("notes.notes").Has(tx, store.Key(uint64(id)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// Notes on project snippets, served by the real collab module through the
// Snippet kind this module registers.
func TestSnippetNotes(t *testing.T) {
	e := start(t)
	owner, bob := e.CreateUser(t, "owner"), e.CreateUser(t, "bob")
	p := stocktest.NewProject(t, owner.Client, "tools", "public")
	sn := e.createSnippet(t, owner.Token, p.ID, "Hello", "public")
	sid := num(sn["id"])
	base := "/projects/" + store.IDString(p.ID) + "/snippets/" + store.IDString(sid) + "/notes"

	// client-go: create, list, update.
	n, _, err := owner.Client.Notes.CreateSnippetNote(p.ID, sid, &gitlab.CreateSnippetNoteOptions{Body: gitlab.Ptr("nice snippet")})
	if err != nil || n.Body != "nice snippet" || n.NoteableType != "Snippet" || n.NoteableID != sid || n.Author.Username != "owner" {
		t.Fatalf("create note: %+v %v", n, err)
	}
	// A reader of the public project who is no member comments too.
	bn, _, err := bob.Client.Notes.CreateSnippetNote(p.ID, sid, &gitlab.CreateSnippetNoteOptions{Body: gitlab.Ptr("+1 @owner")})
	if err != nil {
		t.Fatalf("bob's note: %v", err)
	}
	list, res, err := bob.Client.Notes.ListSnippetNotes(p.ID, sid, nil)
	if err != nil || len(list) != 2 || list[0].ID != n.ID || list[1].ID != bn.ID {
		t.Fatalf("list: %v %v", list, err)
	}
	if res.Header.Get("X-Total") != "2" {
		t.Fatalf("X-Total %q", res.Header.Get("X-Total"))
	}
	if u, _, err := owner.Client.Notes.UpdateSnippetNote(p.ID, sid, n.ID, &gitlab.UpdateSnippetNoteOptions{Body: gitlab.Ptr("very nice")}); err != nil || u.Body != "very nice" {
		t.Fatalf("update: %+v %v", u, err)
	}
	e.call(t, bob.Token, http.MethodPut, base+"/"+store.IDString(n.ID), map[string]any{"body": "mine now"}).want(t, 403, forbidden)

	// The spec's quirk: one note answers as a snippet-like record, with the
	// note's id, author and times and the snippet's title and file name.
	one := e.call(t, "", http.MethodGet, base+"/"+store.IDString(n.ID), nil).status(t, 200).obj(t)
	if got := keys(one); !slices.Equal(got, []string{"author", "body", "created_at", "expires_at", "file_name", "id", "title", "updated_at"}) {
		t.Fatalf("snippet note keys %v", got)
	}
	author := one["author"].(map[string]any)
	if num(one["id"]) != n.ID || one["title"] != "Hello" || one["file_name"] != "hello.rb" || one["expires_at"] != nil ||
		author["username"] != "owner" || one["body"] != "very nice" || one["created_at"] != n.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z") ||
		!timestamp.MatchString(one["updated_at"].(string)) {
		t.Fatalf("snippet note %v", one)
	}
	e.call(t, "", http.MethodGet, base+"/999999", nil).want(t, 404, `{"message":"404 Note Not Found"}`)

	// GitLab 9.x gives no todos for notes on snippets (Note#can_create_todo?
	// skips them): the mention of @owner adds none, since this module
	// registers no todo kind for snippets.
	e.Drain(t)
	todos, _, err := owner.Client.Todos.ListTodos(nil)
	if err != nil || len(todos) != 0 {
		t.Fatalf("todos after a mention in a snippet note: %v %v", todos, err)
	}

	// Anonymous callers read but do not write.
	e.call(t, "", http.MethodGet, base, nil).status(t, 200)
	e.call(t, "", http.MethodPost, base, map[string]any{"body": "anon"}).want(t, 401, unauthorized)
	// Unknown snippets, and snippets of another project, are the snippet's 404.
	other := stocktest.NewProject(t, owner.Client, "other", "public")
	e.call(t, owner.Token, http.MethodGet, "/projects/"+store.IDString(p.ID)+"/snippets/999999/notes", nil).want(t, 404, notFoundSnippet)
	e.call(t, owner.Token, http.MethodGet, "/projects/"+store.IDString(other.ID)+"/snippets/"+store.IDString(sid)+"/notes", nil).want(t, 404, notFoundSnippet)
	e.call(t, owner.Token, http.MethodPost, "/projects/"+store.IDString(other.ID)+"/snippets/"+store.IDString(sid)+"/notes", map[string]any{"body": "x"}).want(t, 404, notFoundSnippet)

	// Deleting the snippet removes its notes with it.
	if _, err := owner.Client.Notes.DeleteSnippetNote(p.ID, sid, bn.ID); err != nil {
		t.Fatal(err)
	}
	if e.noteStored(t, bn.ID) || !e.noteStored(t, n.ID) {
		t.Fatal("note delete removed the wrong note")
	}
	e.call(t, owner.Token, http.MethodDelete, "/projects/"+store.IDString(p.ID)+"/snippets/"+store.IDString(sid), nil).status(t, 200)
	if e.noteStored(t, n.ID) {
		t.Fatal("the deleted snippet's note is still stored")
	}
	e.call(t, owner.Token, http.MethodGet, base, nil).want(t, 404, notFoundSnippet)
}

// Snippet notes follow the snippet's visibility, the snippets switch and
// the archive rule.
func TestSnippetNotesPermissions(t *testing.T) {
	m := newMatrix(t)
	for _, pv := range visibilities {
		p := m.project(t, pv+"-notes", pv)
		for _, sv := range visibilities {
			sid := num(m.createSnippet(t, m.author.Token, p.ID, sv, sv)["id"])
			base := "/projects/" + store.IDString(p.ID) + "/snippets/" + store.IDString(sid) + "/notes"
			note := num(m.call(t, m.author.Token, http.MethodPost, base, map[string]any{"body": "by the author"}).status(t, 201).obj(t)["id"])
			for _, r := range m.roles {
				list := m.call(t, r.token, http.MethodGet, base, nil)
				get := m.call(t, r.token, http.MethodGet, base+"/"+store.IDString(note), nil)
				post := m.call(t, r.token, http.MethodPost, base, map[string]any{"body": "by " + r.name})
				switch {
				case !r.seesProject(pv):
					list.want(t, 404, notFoundProject)
					get.want(t, 404, notFoundProject)
					if r.signedIn() {
						post.want(t, 404, notFoundProject)
					} else {
						post.want(t, 401, unauthorized)
					}
				case !r.seesSnippet(sv):
					list.want(t, 404, notFoundSnippet)
					get.want(t, 404, notFoundSnippet)
					if r.signedIn() {
						post.want(t, 404, notFoundSnippet)
					} else {
						post.want(t, 401, unauthorized)
					}
				default:
					list.status(t, 200)
					if num(get.status(t, 200).obj(t)["id"]) != note {
						t.Fatalf("%s: get %s", r.name, get.Body)
					}
					if r.signedIn() {
						post.status(t, 201)
					} else {
						post.want(t, 401, unauthorized)
					}
				}
			}
		}
		// The switch off: 403 to those who see the project.
		sid := num(m.createSnippet(t, m.owner.Token, p.ID, "off", "public")["id"])
		base := "/projects/" + store.IDString(p.ID) + "/snippets/" + store.IDString(sid) + "/notes"
		m.call(t, m.owner.Token, http.MethodPut, "/projects/"+store.IDString(p.ID), map[string]any{"name": p.Name, "snippets_enabled": false}).status(t, 200)
		for _, r := range m.roles {
			got := m.call(t, r.token, http.MethodGet, base, nil)
			if r.seesProject(pv) {
				got.want(t, 403, forbidden)
			} else {
				got.want(t, 404, notFoundProject)
			}
		}
		m.call(t, m.owner.Token, http.MethodPut, "/projects/"+store.IDString(p.ID), map[string]any{"name": p.Name, "snippets_enabled": true}).status(t, 200)
		// Archived: notes are read, not written.
		if _, _, err := m.owner.Client.Projects.ArchiveProject(p.ID); err != nil {
			t.Fatal(err)
		}
		m.call(t, m.owner.Token, http.MethodPost, base, map[string]any{"body": "late"}).want(t, 403, forbidden)
		m.call(t, m.owner.Token, http.MethodGet, base, nil).status(t, 200)
	}
}
