package collab_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/collab/target"
)

func awardsPath(projectID, iid int64) string {
	return "/api/v4/projects/" + store.IDString(projectID) + "/things/" + store.IDString(iid) + "/award_emoji"
}

func noteAwardsPath(projectID, iid int64, noteID string) string {
	return "/api/v4/projects/" + store.IDString(projectID) + "/things/" + store.IDString(iid) + "/notes/" + noteID + "/award_emoji"
}

func nameBody(name string) string { return jsonBody(map[string]string{"name": name}) }

// sameJSON compares JSON by value: the server escapes ">" as \u003e where
// GitLab wrote it as is, which decodes the same.
func sameJSON(got []byte, want string) bool {
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	return reflect.DeepEqual(g, w)
}

func wantJSON(t testing.TB, got []byte, want string) {
	t.Helper()
	if !sameJSON(got, want) {
		t.Fatalf("body %s, want %s", got, want)
	}
}

// award gives an emoji as token and returns the award's id; want is the
// status expected.
func (e *env) award(t testing.TB, token, path, name string, want int) string {
	t.Helper()
	status, _, raw := e.call(t, token, http.MethodPost, path, nameBody(name))
	wantStatus(t, status, raw, want)
	var a struct{ ID int64 }
	_ = json.Unmarshal(raw, &a)
	return store.IDString(a.ID)
}

func (e *env) votes(t testing.TB, typ string, id int64) target.Votes {
	t.Helper()
	v, err := e.collab.Votes(context.Background(), typ, []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	return v[id]
}

// The award emoji API on a noteable: its exact shape, aliases stored
// under their main name, the order of the list, the votes it counts, and
// GitLab's answers for a repeated award, an unknown name, a vote on one's
// own noteable and someone else's award taken back.
func TestAwardEmojiOnNoteable(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob, carol := e.user(t, "alice"), e.user(t, "bob"), e.user(t, "carol")
	admin := e.user(t, "boss", fennectest.Admin())
	p := e.project(t, alice.Client, "box", "private")
	e.member(t, p, bob, gitlab.DeveloperPermissions)
	e.member(t, p, carol, gitlab.GuestPermissions)
	thing := e.things.add(p.ID, alice.ID, "Thing", false)
	path := awardsPath(p.ID, thing.IID)

	status, _, raw := e.call(t, bob.Token, http.MethodPost, path, nameBody("+1"))
	wantStatus(t, status, raw, http.StatusCreated)
	var created map[string]any
	if err := json.Unmarshal(raw, &created); err != nil {
		t.Fatal(err)
	}
	keys := []string{"awardable_id", "awardable_type", "created_at", "id", "name", "updated_at", "user"}
	got := make([]string, 0, len(created))
	for k := range created {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, keys) {
		t.Fatalf("award keys %v, want %v", got, keys)
	}
	user := created["user"].(map[string]any)
	if created["name"] != "thumbsup" || created["awardable_type"] != "Thing" || created["awardable_id"] != float64(thing.ID) ||
		user["username"] != "bob" || user["id"] != float64(bob.ID) || user["state"] != "active" || created["created_at"] != created["updated_at"] {
		t.Fatalf("award %s", raw)
	}
	upID := store.IDString(int64(created["id"].(float64)))
	tadaID := e.award(t, bob.Token, path, "tada", http.StatusCreated)
	e.award(t, carol.Token, path, "thumbsdown", http.StatusCreated)
	e.award(t, carol.Token, path, "-1", http.StatusNotFound) // "-1" is thumbsdown, given already
	if v := e.votes(t, "Thing", thing.ID); v != (target.Votes{Up: 1, Down: 1}) {
		t.Fatalf("votes %+v", v)
	}

	status, h, raw := e.call(t, carol.Token, http.MethodGet, path+"?per_page=2", "")
	wantStatus(t, status, raw, http.StatusOK)
	var list []struct {
		ID   int64
		Name string
		User struct{ Username string }
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || store.IDString(list[0].ID) != upID || list[0].Name != "thumbsup" || store.IDString(list[1].ID) != tadaID || list[1].User.Username != "bob" {
		t.Fatalf("first page %s", raw)
	}
	fennectest.CheckPages(t, "award emoji", h, 3, 2, 2, 1, "2", "")
	status, _, raw = e.call(t, carol.Token, http.MethodGet, path+"/"+tadaID, "")
	wantStatus(t, status, raw, http.StatusOK)
	var one struct{ Name string }
	if err := json.Unmarshal(raw, &one); err != nil || one.Name != "tada" {
		t.Fatalf("one %s", raw)
	}

	for _, c := range []struct {
		what, token, method, path, body string
		status                          int
		want                            string
	}{
		{"the same emoji again", bob.Token, http.MethodPost, path, nameBody("thumbsup"), 404,
			`{"message":"404 Award Emoji {:name=>[\"has already been taken\"]} Not Found"}`},
		{"no such emoji", bob.Token, http.MethodPost, path, nameBody("not_an_emoji"), 404,
			`{"message":"404 Award Emoji {:name=>[\"is not included in the list\"]} Not Found"}`},
		{"colons are not part of the name", bob.Token, http.MethodPost, path, nameBody(":tada:"), 404,
			`{"message":"404 Award Emoji {:name=>[\"is not included in the list\"]} Not Found"}`},
		{"no name", bob.Token, http.MethodPost, path, `{}`, 400, `{"error":"name is missing"}`},
		{"a blank name", bob.Token, http.MethodPost, path, nameBody(" "), 400, `{"error":"name is missing"}`},
		{"the author's upvote", alice.Token, http.MethodPost, path, nameBody("thumbsup"), 404, `{"message":"404 Award Emoji Not Found"}`},
		{"the author's downvote by alias", alice.Token, http.MethodPost, path, nameBody("-1"), 404, `{"message":"404 Award Emoji Not Found"}`},
		{"anonymous", "", http.MethodGet, path, "", 401, `{"message":"401 Unauthorized"}`},
		{"an outsider", e.user(t, "outsider").Token, http.MethodGet, path, "", 404, `{"message":"404 Project Not Found"}`},
		{"no such thing", bob.Token, http.MethodGet, awardsPath(p.ID, 99), "", 404, `{"message":"404 Thing Not Found"}`},
		{"no such award", bob.Token, http.MethodGet, path + "/999999", "", 404, `{"message":"404 Award Emoji Not Found"}`},
		{"an award id that is no number", bob.Token, http.MethodGet, path + "/abc", "", 400, `{"error":"award_id is invalid"}`},
		{"someone else's award, even by the owner", alice.Token, http.MethodDelete, path + "/" + tadaID, "", 401, `{"message":"401 Unauthorized"}`},
	} {
		status, _, raw := e.call(t, c.token, c.method, c.path, c.body)
		if status != c.status || !sameJSON(raw, c.want) {
			t.Errorf("%s: %d %s, want %d %s", c.what, status, raw, c.status, c.want)
		}
	}
	// The author may award anything but a vote.
	e.award(t, alice.Token, path, "heart", http.StatusCreated)

	// Taken back by its user, or by an administrator.
	status, _, raw = e.call(t, admin.Token, http.MethodDelete, path+"/"+tadaID, "")
	wantStatus(t, status, raw, http.StatusNoContent)
	status, _, raw = e.call(t, bob.Token, http.MethodDelete, path+"/"+upID, "")
	wantStatus(t, status, raw, http.StatusNoContent)
	status, _, raw = e.call(t, bob.Token, http.MethodGet, path+"/"+upID, "")
	wantStatus(t, status, raw, http.StatusNotFound)
	if v := e.votes(t, "Thing", thing.ID); v != (target.Votes{Down: 1}) {
		t.Fatalf("votes after deletes %+v", v)
	}
	// Taken back, it may be given again.
	e.award(t, bob.Token, path, "thumbsup", http.StatusCreated)
	if v := e.votes(t, "Thing", thing.ID); v != (target.Votes{Up: 1, Down: 1}) {
		t.Fatalf("votes after a new upvote %+v", v)
	}

	// An award of another thing is no award of this one.
	other := e.things.add(p.ID, alice.ID, "Other", false)
	status, _, raw = e.call(t, bob.Token, http.MethodGet, awardsPath(p.ID, other.IID)+"/"+upID, "")
	wantStatus(t, status, raw, http.StatusNotFound)
}

// Awarding is commenting's right: a thing that refuses comments refuses
// awards with GitLab's 404, and an archived project refuses both.
func TestAwardEmojiRefused(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "public")
	thing := e.things.add(p.ID, alice.ID, "Thing", false)
	path := awardsPath(p.ID, thing.IID)
	given := e.award(t, bob.Token, path, "rocket", http.StatusCreated) // any signed-in reader of a public project

	e.locked.Store(thing.ID, true)
	status, _, raw := e.call(t, bob.Token, http.MethodPost, path, nameBody("tada"))
	wantStatus(t, status, raw, http.StatusNotFound)
	wantBody(t, raw, `{"message":"404 Award Emoji Not Found"}`)
	e.locked.Delete(thing.ID)

	if _, _, err := alice.Client.Projects.ArchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	status, _, raw = e.call(t, bob.Token, http.MethodPost, path, nameBody("tada"))
	wantStatus(t, status, raw, http.StatusForbidden)
	status, _, raw = e.call(t, bob.Token, http.MethodDelete, path+"/"+given, "")
	wantStatus(t, status, raw, http.StatusForbidden)
	status, _, raw = e.call(t, bob.Token, http.MethodGet, path, "")
	wantStatus(t, status, raw, http.StatusOK)
	var list []struct{ Name string }
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 || list[0].Name != "rocket" {
		t.Fatalf("list %s", raw)
	}
}

// Award emoji on notes: awardable "Note", the note author's own votes
// refused, a note of another noteable is no note, and a deleted note takes
// its awards with it.
func TestAwardEmojiOnNote(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "private")
	e.member(t, p, bob, gitlab.DeveloperPermissions)
	thing := e.things.add(p.ID, alice.ID, "Thing", false)
	other := e.things.add(p.ID, alice.ID, "Other", false)
	status, noteID := e.post(t, alice.Token, p.ID, thing.IID, "a comment")
	wantStatus(t, status, nil, http.StatusCreated)
	path := noteAwardsPath(p.ID, thing.IID, noteID)

	status, _, raw := e.call(t, bob.Token, http.MethodPost, path, nameBody("thumbsup"))
	wantStatus(t, status, raw, http.StatusCreated)
	var a struct {
		ID            int64
		Name          string
		AwardableID   int64  `json:"awardable_id"`
		AwardableType string `json:"awardable_type"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Name != "thumbsup" || store.IDString(a.AwardableID) != noteID || a.AwardableType != "Note" {
		t.Fatalf("note award %s", raw)
	}
	status, _, raw = e.call(t, alice.Token, http.MethodPost, path, nameBody("thumbsup"))
	wantStatus(t, status, raw, http.StatusNotFound)
	wantBody(t, raw, `{"message":"404 Award Emoji Not Found"}`)
	e.award(t, alice.Token, path, "eyes", http.StatusCreated)

	status, _, raw = e.call(t, bob.Token, http.MethodGet, path, "")
	wantStatus(t, status, raw, http.StatusOK)
	var list []struct{ Name string }
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 2 || list[0].Name != "thumbsup" || list[1].Name != "eyes" {
		t.Fatalf("note awards %s", raw)
	}
	// The note's awards are not the thing's, nor the thing's votes.
	status, _, raw = e.call(t, bob.Token, http.MethodGet, awardsPath(p.ID, thing.IID), "")
	wantStatus(t, status, raw, http.StatusOK)
	wantBody(t, raw, `[]`)
	if v := e.votes(t, "Thing", thing.ID); v != (target.Votes{}) {
		t.Fatalf("thing votes %+v", v)
	}
	id, _ := json.Number(noteID).Int64()
	if v := e.votes(t, "Note", id); v != (target.Votes{Up: 1}) {
		t.Fatalf("note votes %+v", v)
	}
	// Through another thing, the note is no note.
	status, _, raw = e.call(t, bob.Token, http.MethodGet, noteAwardsPath(p.ID, other.IID, noteID), "")
	wantStatus(t, status, raw, http.StatusNotFound)
	wantBody(t, raw, `{"message":"404 Note Not Found"}`)
	status, _, raw = e.call(t, bob.Token, http.MethodGet, path+"/"+store.IDString(a.ID), "")
	wantStatus(t, status, raw, http.StatusOK)
	status, _, raw = e.call(t, bob.Token, http.MethodGet, awardsPath(p.ID, thing.IID)+"/"+store.IDString(a.ID), "")
	wantStatus(t, status, raw, http.StatusNotFound)

	status, _, raw = e.call(t, alice.Token, http.MethodDelete, notesPath(p.ID, thing.IID)+"/"+noteID, "")
	wantStatus(t, status, raw, http.StatusNoContent)
	if v := e.votes(t, "Note", id); v != (target.Votes{}) {
		t.Fatalf("votes of a deleted note %+v", v)
	}
	status, _, raw = e.call(t, bob.Token, http.MethodGet, path, "")
	wantStatus(t, status, raw, http.StatusNotFound)
}

// A note whose body is only an award emoji awards it to the noteable and
// answers with the award (the spec's Note: "a different object is
// returned"); no note is stored, and the commenter's todo is done as for a
// comment. The author's own vote, other text, an unknown name and a kind
// without the rule stay comments.
func TestEmojiOnlyNoteAwards(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "private")
	e.member(t, p, bob, gitlab.DeveloperPermissions)
	thing := e.things.add(p.ID, alice.ID, "Thing", false)
	status, _ := e.post(t, alice.Token, p.ID, thing.IID, "@bob please look")
	wantStatus(t, status, nil, http.StatusCreated)
	if got := pendingTodos(t, bob); len(got) != 1 {
		t.Fatalf("todos before %v", got)
	}

	status, _, raw := e.call(t, bob.Token, http.MethodPost, notesPath(p.ID, thing.IID), jsonBody(map[string]string{"body": " :+1:\n"}))
	wantStatus(t, status, raw, http.StatusCreated)
	var a map[string]any
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if a["name"] != "thumbsup" || a["awardable_type"] != "Thing" || a["awardable_id"] != float64(thing.ID) || a["body"] != nil ||
		a["user"].(map[string]any)["username"] != "bob" {
		t.Fatalf("emoji note %s", raw)
	}
	if n := e.countNotes(t, thing.ID); n != 1 {
		t.Fatalf("%d notes, want the first one only", n)
	}
	if v := e.votes(t, "Thing", thing.ID); v != (target.Votes{Up: 1}) {
		t.Fatalf("votes %+v", v)
	}
	if got := pendingTodos(t, bob); len(got) != 0 {
		t.Fatalf("todos after the award %v", got)
	}
	status, _, raw = e.call(t, bob.Token, http.MethodGet, awardsPath(p.ID, thing.IID), "")
	wantStatus(t, status, raw, http.StatusOK)
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 || list[0]["id"] != a["id"] {
		t.Fatalf("awards %s", raw)
	}

	status, _, raw = e.call(t, bob.Token, http.MethodPost, notesPath(p.ID, thing.IID), jsonBody(map[string]string{"body": ":thumbsup:"}))
	wantStatus(t, status, raw, http.StatusNotFound)
	wantJSON(t, raw, `{"message":"404 Note {:name=>[\"has already been taken\"]} Not Found"}`)

	// These are comments.
	for _, c := range []struct {
		token, body string
		iid         int64
		path        string
	}{
		{alice.Token, ":+1:", thing.IID, ""},                // the author's own vote
		{bob.Token, ":tada: shipped", thing.IID, ""},        // more than an emoji
		{bob.Token, ":not_an_emoji:", thing.IID, ""},        // no such emoji
		{bob.Token, "::", thing.IID, ""},                    // no name
		{bob.Token, ":+1:", thing.ID, "gadgets"},            // a kind without the rule
		{alice.Token, ":heart:", thing.IID, "other-author"}, // the author may award other emoji
	} {
		path := notesPath(p.ID, c.iid)
		if c.path == "gadgets" {
			path = "/api/v4/projects/" + store.IDString(p.ID) + "/gadgets/" + store.IDString(c.iid) + "/notes"
		}
		status, _, raw := e.call(t, c.token, http.MethodPost, path, jsonBody(map[string]string{"body": c.body}))
		wantStatus(t, status, raw, http.StatusCreated)
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if c.path == "other-author" {
			if got["name"] != "heart" || got["user"].(map[string]any)["username"] != "alice" {
				t.Fatalf("%q by the author: %s", c.body, raw)
			}
			continue
		}
		if got["body"] != c.body || got["name"] != nil {
			t.Fatalf("%q: %s", c.body, raw)
		}
	}
	if n := e.countNotes(t, thing.ID); n != 5 {
		t.Fatalf("%d notes on the thing, want 5", n)
	}
}

// A removed noteable (target.Service.Remove) and a deleted project take
// their award emoji and votes with them, their notes' included.
func TestAwardEmojiRemoved(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice, bob := e.user(t, "alice"), e.user(t, "bob")
	p := e.project(t, alice.Client, "box", "public")
	thing := e.things.add(p.ID, alice.ID, "Thing", false)
	kept := e.things.add(p.ID, alice.ID, "Kept", false)
	_, noteID := e.post(t, alice.Token, p.ID, thing.IID, "a comment")
	nid, _ := json.Number(noteID).Int64()
	e.award(t, bob.Token, awardsPath(p.ID, thing.IID), "thumbsup", http.StatusCreated)
	e.award(t, bob.Token, noteAwardsPath(p.ID, thing.IID, noteID), "thumbsdown", http.StatusCreated)
	e.award(t, bob.Token, awardsPath(p.ID, kept.IID), "thumbsup", http.StatusCreated)

	if err := e.collab.Remove(context.Background(), thing.Target()); err != nil {
		t.Fatal(err)
	}
	if v, w := e.votes(t, "Thing", thing.ID), e.votes(t, "Note", nid); v != (target.Votes{}) || w != (target.Votes{}) {
		t.Fatalf("votes after Remove: thing %+v, note %+v", v, w)
	}
	if v := e.votes(t, "Thing", kept.ID); v != (target.Votes{Up: 1}) {
		t.Fatalf("another thing's votes %+v", v)
	}
	// The thing is still in the test kind's memory: its award list is empty.
	status, _, raw := e.call(t, bob.Token, http.MethodGet, awardsPath(p.ID, thing.IID), "")
	wantStatus(t, status, raw, http.StatusOK)
	wantBody(t, raw, `[]`)

	if _, err := alice.Client.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.Drain(t)
	if v := e.votes(t, "Thing", kept.ID); v != (target.Votes{}) {
		t.Fatalf("votes after the project's deletion %+v", v)
	}
}
