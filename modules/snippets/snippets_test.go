package snippets_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// snippetKeys are the fields of the spec's Snippet (with GitLab 9.x's
// description and the project_id every snippet view of GitLab carries).
var snippetKeys = []string{"author", "created_at", "description", "expires_at", "file_name", "id", "project_id",
	"title", "updated_at", "visibility", "web_url"}

func TestProjectSnippetLifecycle(t *testing.T) {
	e := start(t)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "tools", "public")
	base := "/projects/" + store.IDString(p.ID) + "/snippets"

	// Created with the spec's parameters, sent raw as JSON.
	created := e.call(t, alice.Token, http.MethodPost, base, map[string]any{
		"title": "Hello", "file_name": "hello.rb", "code": "puts 'hello'\n", "visibility": "public"}).status(t, http.StatusCreated).obj(t)
	if got := keys(created); !slices.Equal(got, snippetKeys) {
		t.Fatalf("snippet keys %v, want %v", got, snippetKeys)
	}
	id := num(created["id"])
	author := created["author"].(map[string]any)
	if created["title"] != "Hello" || created["file_name"] != "hello.rb" || created["visibility"] != "public" ||
		created["description"] != nil || created["expires_at"] != nil || num(created["project_id"]) != p.ID ||
		created["web_url"] != p.WebURL+"/snippets/"+store.IDString(id) || num(author["id"]) != alice.ID || author["username"] != "alice" ||
		!timestamp.MatchString(created["created_at"].(string)) || created["updated_at"] != created["created_at"] {
		t.Fatalf("created %v", created)
	}
	if got := keys(author); !slices.Equal(got, []string{"avatar_url", "id", "name", "state", "username", "web_url"}) {
		t.Fatalf("author keys %v", got)
	}

	// client-go reads it back, alone and in the list.
	got, _, err := alice.Client.ProjectSnippets.GetSnippet(p.ID, id)
	if err != nil || got.Title != "Hello" || got.FileName != "hello.rb" || got.Author.Username != "alice" || got.Visibility != "public" {
		t.Fatalf("get: %+v %v", got, err)
	}
	list, res, err := alice.Client.ProjectSnippets.ListSnippets(p.ID, nil)
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("list: %+v %v", list, err)
	}
	fennectest.CheckPages(t, "list", res.Header, 1, 1, 20, 1, "", "")

	// Raw content: plain text, named, never sniffed.
	r := e.call(t, "", http.MethodGet, base+"/"+store.IDString(id)+"/raw", nil).status(t, http.StatusOK)
	if r.Body != "puts 'hello'" || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		r.Header.Get("Content-Disposition") != `inline; filename="hello.rb"` || r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("raw: %q %v", r.Body, r.Header)
	}
	raw, _, err := alice.Client.ProjectSnippets.SnippetContent(p.ID, id)
	if err != nil || string(raw) != "puts 'hello'\n" {
		t.Fatalf("raw through client-go: %q %v", raw, err)
	}

	// client-go creates with content (today's name for code) and updates.
	made, _, err := alice.Client.ProjectSnippets.CreateSnippet(p.ID, &gitlab.CreateProjectSnippetOptions{
		Title: gitlab.Ptr("Second"), FileName: gitlab.Ptr("two.py"), Content: gitlab.Ptr("print(2)"),
		Description: gitlab.Ptr("the second one"), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil || made.Title != "Second" || made.Description != "the second one" || made.Visibility != "private" {
		t.Fatalf("create through client-go: %+v %v", made, err)
	}
	upd, _, err := alice.Client.ProjectSnippets.UpdateSnippet(p.ID, made.ID, &gitlab.UpdateProjectSnippetOptions{
		Title: gitlab.Ptr("Second, renamed"), Visibility: gitlab.Ptr(gitlab.InternalVisibility)})
	if err != nil || upd.Title != "Second, renamed" || upd.FileName != "two.py" || upd.Visibility != "internal" ||
		upd.Description != "the second one" || !upd.UpdatedAt.After(*upd.CreatedAt) && !upd.UpdatedAt.Equal(*upd.CreatedAt) {
		t.Fatalf("update through client-go: %+v %v", upd, err)
	}
	// The spec's code parameter changes the content; the rest stays.
	e.call(t, alice.Token, http.MethodPut, base+"/"+store.IDString(made.ID), "code=print%283%29").status(t, http.StatusOK)
	if raw, _, err := alice.Client.ProjectSnippets.SnippetContent(p.ID, made.ID); err != nil || string(raw) != "print(3)" {
		t.Fatalf("raw after update: %q %v", raw, err)
	}
	// Newest first.
	wantIDs(t, "list", e.call(t, alice.Token, http.MethodGet, base, nil).status(t, 200).arr(t), made.ID, id)

	// Delete answers 200 with the snippet, then 200 with nothing: the spec's
	// idempotent delete.
	del := e.call(t, alice.Token, http.MethodDelete, base+"/"+store.IDString(id), nil).status(t, http.StatusOK).obj(t)
	if num(del["id"]) != id || del["title"] != "Hello" {
		t.Fatalf("delete answered %v", del)
	}
	e.call(t, alice.Token, http.MethodDelete, base+"/"+store.IDString(id), nil).want(t, http.StatusOK, "")
	e.call(t, alice.Token, http.MethodDelete, base+"/999999", nil).want(t, http.StatusOK, "")
	if res, err := alice.Client.ProjectSnippets.DeleteSnippet(p.ID, id); err != nil || res.StatusCode != 200 {
		t.Fatalf("client-go delete of a deleted snippet: %v", err)
	}
	e.call(t, alice.Token, http.MethodGet, base+"/"+store.IDString(id), nil).want(t, 404, notFoundSnippet)
	e.call(t, alice.Token, http.MethodGet, base+"/"+store.IDString(id)+"/raw", nil).want(t, 404, notFoundSnippet)
	e.call(t, alice.Token, http.MethodPut, base+"/"+store.IDString(id), map[string]any{"title": "x"}).want(t, 404, notFoundSnippet)
	if e.contentStored(t, id) {
		t.Fatal("the deleted snippet's content is still stored")
	}
	wantIDs(t, "list after delete", e.call(t, alice.Token, http.MethodGet, base, nil).status(t, 200).arr(t), made.ID)

	// A snippet of another project is not found through this one.
	q := stocktest.NewProject(t, alice.Client, "other", "public")
	e.call(t, alice.Token, http.MethodGet, "/projects/"+store.IDString(q.ID)+"/snippets/"+store.IDString(made.ID), nil).want(t, 404, notFoundSnippet)
	e.call(t, alice.Token, http.MethodDelete, "/projects/"+store.IDString(q.ID)+"/snippets/"+store.IDString(made.ID), nil).want(t, 200, "")
	e.call(t, alice.Token, http.MethodGet, base+"/"+store.IDString(made.ID), nil).status(t, 200)
	// By the project's path too.
	e.call(t, alice.Token, http.MethodGet, "/projects/"+url.PathEscape("alice/tools")+"/snippets/"+store.IDString(made.ID), nil).status(t, 200)
}
