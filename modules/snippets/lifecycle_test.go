package snippets_test

import (
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// Pages of a project's snippets carry GitLab's headers and count only what
// the caller sees.
func TestProjectSnippetPagination(t *testing.T) {
	e := start(t)
	alice, bob := e.CreateUser(t, "alice"), e.CreateUser(t, "bob")
	p := stocktest.NewProject(t, alice.Client, "tools", "public")
	base := "/projects/" + store.IDString(p.ID) + "/snippets"
	var public, all []int64 // newest first
	for i := range 7 {
		vis := "public"
		if i%3 == 2 {
			vis = "private"
		}
		id := num(e.createSnippet(t, alice.Token, p.ID, "s"+store.IDString(int64(i)), vis)["id"])
		all = append([]int64{id}, all...)
		if vis == "public" {
			public = append([]int64{id}, public...)
		}
	}
	r := e.call(t, alice.Token, http.MethodGet, base+"?per_page=3", nil).status(t, 200)
	r.pages(t, 7, 3, 3, 1, "2", "")
	wantIDs(t, "page 1", r.arr(t), all[:3]...)
	r = e.call(t, alice.Token, http.MethodGet, base+"?per_page=3&page=3", nil).status(t, 200)
	r.pages(t, 7, 3, 3, 3, "", "2")
	wantIDs(t, "page 3", r.arr(t), all[6:]...)
	if link := r.Header.Get("Link"); !strings.Contains(link, base+"?page=2&per_page=3>; rel=\"prev\"") {
		t.Fatalf("Link %q", link)
	}
	// bob, a reader of the public project, counts the public ones only.
	r = e.call(t, bob.Token, http.MethodGet, base+"?per_page=2&page=2", nil).status(t, 200)
	r.pages(t, len(public), 3, 2, 2, "3", "1")
	wantIDs(t, "bob's page 2", r.arr(t), public[2:4]...)
	// Past the end: an empty page, real totals.
	r = e.call(t, "", http.MethodGet, base+"?page=9", nil).status(t, 200)
	r.pages(t, len(public), 1, 20, 9, "", "1") // the core points prev at the last page
	if r.Body != "[]" {
		t.Fatalf("page past the end: %s", r.Body)
	}
	// client-go walks the pages.
	var walked []int64
	opt := &gitlab.ListProjectSnippetsOptions{ListOptions: gitlab.ListOptions{PerPage: 2}}
	for {
		list, res, err := alice.Client.ProjectSnippets.ListSnippets(p.ID, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			walked = append(walked, s.ID)
		}
		if res.NextPage == 0 {
			break
		}
		opt.Page = res.NextPage
	}
	if len(walked) != len(all) || walked[0] != all[0] || walked[6] != all[6] {
		t.Fatalf("walked %v, want %v", walked, all)
	}
}

// Deleting a project removes its snippets (content too); a redelivered
// deletion changes nothing more. Other projects' snippets stay.
func TestProjectDeletionRemovesSnippets(t *testing.T) {
	e := start(t)
	alice := e.CreateUser(t, "alice")
	gone := stocktest.NewProject(t, alice.Client, "gone", "public")
	kept := stocktest.NewProject(t, alice.Client, "kept", "public")
	var goneIDs []int64
	for _, vis := range visibilities {
		goneIDs = append(goneIDs, num(e.createSnippet(t, alice.Token, gone.ID, vis, vis)["id"]))
	}
	keptID := num(e.createSnippet(t, alice.Token, kept.ID, "stays", "public")["id"])
	personal := e.call(t, alice.Token, http.MethodPost, "/snippets",
		map[string]any{"title": "mine", "file_name": "m.txt", "content": "m"}).status(t, 201).obj(t)
	note, _, err := alice.Client.Notes.CreateSnippetNote(gone.ID, goneIDs[0], &gitlab.CreateSnippetNoteOptions{Body: gitlab.Ptr("soon gone")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Client.Projects.DeleteProject(gone.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	for _, id := range goneIDs {
		if e.contentStored(t, id) {
			t.Fatalf("snippet %d of the deleted project is still stored", id)
		}
		// Not reachable as a personal snippet either.
		e.call(t, alice.Token, http.MethodGet, "/snippets/"+store.IDString(id), nil).want(t, 404, notFoundSnippet)
	}
	e.call(t, alice.Token, http.MethodGet, "/projects/"+store.IDString(gone.ID)+"/snippets", nil).want(t, 404, notFoundProject)
	if e.noteStored(t, note.ID) {
		t.Fatal("a note of the deleted project's snippet is still stored")
	}
	if !e.contentStored(t, keptID) || !e.contentStored(t, num(personal["id"])) {
		t.Fatal("another project's snippet or a personal one went with the project")
	}
	wantIDs(t, "kept", e.call(t, alice.Token, http.MethodGet, "/projects/"+store.IDString(kept.ID)+"/snippets", nil).status(t, 200).arr(t), keptID)

	// The outbox may deliver the deletion again: nothing fails, nothing
	// else goes.
	e.publish(t, projects.ProjectEvent{Action: projects.ProjectDeleted, ProjectID: gone.ID, UserID: alice.ID})
	if n := e.pending(t); n != 0 {
		t.Fatalf("%d events still pending after a redelivered deletion", n)
	}
	if !e.contentStored(t, keptID) {
		t.Fatal("a redelivered deletion removed another project's snippet")
	}
}

// Deleting a user removes the snippets they wrote, in projects and
// personal ones, as GitLab 9.x destroys them with the user.
func TestUserDeletionRemovesTheirSnippets(t *testing.T) {
	e := start(t)
	owner, leaver := e.CreateUser(t, "owner"), e.CreateUser(t, "leaver")
	p := stocktest.NewProject(t, owner.Client, "team", "public")
	stocktest.AddMember(t, owner.Client, p.ID, leaver.ID, gitlab.ReporterPermissions)
	theirs := num(e.createSnippet(t, leaver.Token, p.ID, "theirs", "public")["id"])
	ours := num(e.createSnippet(t, owner.Token, p.ID, "ours", "public")["id"])
	personal := num(e.call(t, leaver.Token, http.MethodPost, "/snippets",
		map[string]any{"title": "mine", "file_name": "m.txt", "content": "m", "visibility": "public"}).status(t, 201).obj(t)["id"])
	if _, err := e.Client.Users.DeleteUser(leaver.ID); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	if e.contentStored(t, theirs) || e.contentStored(t, personal) {
		t.Fatal("the deleted user's snippets are still stored")
	}
	wantIDs(t, "project list", e.call(t, owner.Token, http.MethodGet, "/projects/"+store.IDString(p.ID)+"/snippets", nil).status(t, 200).arr(t), ours)
	e.call(t, owner.Token, http.MethodGet, "/snippets/"+store.IDString(personal), nil).want(t, 404, notFoundSnippet)
	e.publish(t, identity.UserDeleted{UserID: leaver.ID, Username: "leaver"})
	if n := e.pending(t); n != 0 || !e.contentStored(t, ours) {
		t.Fatalf("a redelivered user deletion: %d pending, ours stored %v", n, e.contentStored(t, ours))
	}
}

var personalKeys = []string{"author", "created_at", "description", "expires_at", "file_name", "id", "project_id",
	"raw_url", "title", "updated_at", "visibility", "web_url"}

// Personal snippets as GitLab 9.x's /snippets has them.
func TestPersonalSnippets(t *testing.T) {
	e := start(t)
	alice, bob := e.CreateUser(t, "alice"), e.CreateUser(t, "bob")
	ext := e.CreateUser(t, "outsider", fennectest.External())
	admin := e.CreateUser(t, "administrator", fennectest.Admin())

	// Anonymous callers get 401 everywhere.
	for _, c := range []struct{ method, path string }{{"GET", "/snippets"}, {"GET", "/snippets/public"}, {"GET", "/snippets/1"},
		{"GET", "/snippets/1/raw"}, {"POST", "/snippets"}, {"PUT", "/snippets/1"}, {"DELETE", "/snippets/1"}} {
		e.call(t, "", c.method, c.path, nil).want(t, 401, unauthorized)
	}

	// Created through client-go; visibility defaults to internal.
	s, _, err := alice.Client.Snippets.CreateSnippet(&gitlab.CreateSnippetOptions{Title: gitlab.Ptr("Notes"),
		FileName: gitlab.Ptr("notes.md"), Content: gitlab.Ptr("# notes\n")})
	if err != nil || s.Visibility != "internal" || s.Author.Username != "alice" || s.ProjectID != 0 ||
		s.WebURL != e.URL+"/snippets/"+store.IDString(s.ID) || s.RawURL != s.WebURL+"/raw" {
		t.Fatalf("create: %+v %v", s, err)
	}
	got := e.call(t, alice.Token, http.MethodGet, "/snippets/"+store.IDString(s.ID), nil).status(t, 200).obj(t)
	if k := keys(got); strings.Join(k, ",") != strings.Join(personalKeys, ",") || got["project_id"] != nil {
		t.Fatalf("personal snippet %v", got)
	}
	pub := num(e.call(t, alice.Token, http.MethodPost, "/snippets", map[string]any{"title": "Pub", "file_name": "p.sh",
		"content": "echo hi", "visibility": "public"}).status(t, 201).obj(t)["id"])
	priv := num(e.call(t, alice.Token, http.MethodPost, "/snippets", map[string]any{"title": "Priv", "file_name": "p.txt",
		"content": "secret", "visibility": "private"}).status(t, 201).obj(t)["id"])
	// A project snippet is no personal snippet.
	p := stocktest.NewProject(t, alice.Client, "tools", "public")
	proj := num(e.createSnippet(t, alice.Token, p.ID, "in a project", "public")["id"])

	// Lists: one's own (every visibility), and every public one.
	own := e.call(t, alice.Token, http.MethodGet, "/snippets", nil).status(t, 200)
	wantIDs(t, "alice's", own.arr(t), priv, pub, s.ID)
	own.pages(t, 3, 1, 20, 1, "", "")
	e.call(t, bob.Token, http.MethodGet, "/snippets", nil).want(t, 200, "[]")
	publicList := e.call(t, bob.Token, http.MethodGet, "/snippets/public?per_page=1", nil).status(t, 200)
	wantIDs(t, "public", publicList.arr(t), pub)
	publicList.pages(t, 1, 1, 1, 1, "", "")
	list, _, err := bob.Client.Snippets.ExploreSnippets(nil)
	if err != nil || len(list) != 1 || list[0].ID != pub {
		t.Fatalf("explore: %v %v", list, err)
	}

	// Who sees what.
	for _, c := range []struct {
		who   string
		token string
		id    int64
		see   bool
	}{
		{"bob, internal", bob.Token, s.ID, true}, {"bob, public", bob.Token, pub, true}, {"bob, private", bob.Token, priv, false},
		{"external, internal", ext.Token, s.ID, false}, {"external, public", ext.Token, pub, true},
		{"admin, private", admin.Token, priv, true}, {"alice, private", alice.Token, priv, true},
		{"alice, a project snippet", alice.Token, proj, false},
	} {
		get := e.call(t, c.token, http.MethodGet, "/snippets/"+store.IDString(c.id), nil)
		raw := e.call(t, c.token, http.MethodGet, "/snippets/"+store.IDString(c.id)+"/raw", nil)
		if !c.see {
			get.want(t, 404, notFoundSnippet)
			raw.want(t, 404, notFoundSnippet)
			continue
		}
		get.status(t, 200)
		if raw.status(t, 200).Header.Get("X-Content-Type-Options") != "nosniff" || raw.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("%s: raw headers %v", c.who, raw.Header)
		}
	}
	if raw, _, err := bob.Client.Snippets.SnippetContent(pub); err != nil || string(raw) != "echo hi" {
		t.Fatalf("raw through client-go: %q %v", raw, err)
	}

	// Changes: the author or an administrator.
	e.call(t, bob.Token, http.MethodPut, "/snippets/"+store.IDString(pub), map[string]any{"title": "bob's"}).want(t, 403, forbidden)
	e.call(t, bob.Token, http.MethodPut, "/snippets/"+store.IDString(priv), map[string]any{"title": "bob's"}).want(t, 404, notFoundSnippet)
	e.call(t, bob.Token, http.MethodDelete, "/snippets/"+store.IDString(pub), nil).want(t, 403, forbidden)
	e.call(t, bob.Token, http.MethodDelete, "/snippets/"+store.IDString(priv), nil).want(t, 404, notFoundSnippet)
	e.call(t, alice.Token, http.MethodPut, "/snippets/"+store.IDString(pub), map[string]any{}).
		want(t, 400, `{"error":"title, file_name, content, visibility are missing, at least one parameter must be provided"}`)
	e.call(t, alice.Token, http.MethodPut, "/snippets/"+store.IDString(pub), map[string]any{"file_name": "../x"}).status(t, 400)
	upd, _, err := alice.Client.Snippets.UpdateSnippet(pub, &gitlab.UpdateSnippetOptions{Content: gitlab.Ptr("echo bye"), Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil || upd.Visibility != "private" || upd.Title != "Pub" {
		t.Fatalf("update: %+v %v", upd, err)
	}
	e.call(t, bob.Token, http.MethodGet, "/snippets/"+store.IDString(pub), nil).want(t, 404, notFoundSnippet)
	e.call(t, admin.Token, http.MethodPut, "/snippets/"+store.IDString(pub), map[string]any{"title": "moderated"}).status(t, 200)
	if raw := e.call(t, alice.Token, http.MethodGet, "/snippets/"+store.IDString(pub)+"/raw", nil).Body; raw != "echo bye" {
		t.Fatalf("raw after update %q", raw)
	}

	// Bad input as for project snippets, with content's name.
	e.call(t, alice.Token, http.MethodPost, "/snippets", map[string]any{}).want(t, 400, `{"error":"title is missing, file_name is missing, content is missing"}`)
	e.call(t, alice.Token, http.MethodPost, "/snippets", map[string]any{"title": "t", "file_name": "..", "content": "c"}).status(t, 400)
	e.call(t, alice.Token, http.MethodPost, "/snippets", map[string]any{"title": "t", "file_name": "f", "content": "c", "visibility": "x"}).
		want(t, 400, `{"error":"visibility does not have a valid value"}`)
	// External users create no personal snippets.
	e.call(t, ext.Token, http.MethodPost, "/snippets", map[string]any{"title": "t", "file_name": "f", "content": "c"}).want(t, 403, forbidden)

	// Delete: 204, then 404.
	if res, err := alice.Client.Snippets.DeleteSnippet(s.ID); err != nil || res.StatusCode != 204 {
		t.Fatalf("delete: %v", err)
	}
	e.call(t, alice.Token, http.MethodDelete, "/snippets/"+store.IDString(s.ID), nil).want(t, 404, notFoundSnippet)
	e.call(t, admin.Token, http.MethodDelete, "/snippets/"+store.IDString(pub), nil).want(t, 204, "")
	if e.contentStored(t, s.ID) || e.contentStored(t, pub) {
		t.Fatal("a deleted personal snippet's content is still stored")
	}
	wantIDs(t, "alice's after deletes", e.call(t, alice.Token, http.MethodGet, "/snippets", nil).status(t, 200).arr(t), priv)
}
