package collab_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
)

// countNotes is how many notes a thing has, read through the service's
// count of user notes (bad input must store nothing).
func (e *env) countNotes(t testing.TB, id int64) int {
	t.Helper()
	counts, err := e.collab.UserNotesCounts(context.Background(), "Thing", []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	return counts[id]
}

func TestBadBodies(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.user(t, "alice")
	p := e.project(t, alice.Client, "box", "private")
	thing := e.things.add(p.ID, alice.ID, "First thing", false)
	path := notesPath(p.ID, thing.IID)

	cases := []struct {
		name, contentType, body string
		status                  int
		want                    string
	}{
		{"absent", "application/json", `{}`, 400, `{"error":"body is missing"}`},
		{"null", "application/json", `{"body":null}`, 400, `{"error":"body is missing"}`},
		{"empty", "application/json", `{"body":""}`, 400, `{"error":"body is missing"}`},
		{"whitespace only", "application/json", `{"body":" \t\n\r "}`, 400, `{"error":"body is missing"}`},
		{"invalid utf-8 form", "application/x-www-form-urlencoded", "body=%FF%FEabc", 400, `{"error":"body is invalid"}`},
		{"invalid utf-8 json", "application/json", "{\"body\":\"a\xff\xfeb\"}", 400, `{"error":"body is invalid"}`},
		{"1 MB", "application/json", `{"body":"` + strings.Repeat("a", 1<<20) + `"}`, 400,
			`{"message":{"note":["is too long (maximum is 1000000 characters)"]}}`},
		{"1 MB of 2-byte characters", "application/x-www-form-urlencoded", "body=" + strings.Repeat("%C3%A9", 1_000_001), 400,
			`{"message":{"note":["is too long (maximum is 1000000 characters)"]}}`},
		{"bad created_at from the owner", "application/json", `{"body":"x","created_at":"yesterday"}`, 400, `{"error":"created_at is invalid"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := e.Do(t, http.MethodPost, path, strings.NewReader(c.body), "PRIVATE-TOKEN", alice.Token, "Content-Type", c.contentType)
			raw := readAll(t, resp)
			wantStatus(t, resp.StatusCode, raw, c.status)
			if c.want != "" {
				wantBody(t, raw, c.want)
			}
		})
	}
	if n := e.countNotes(t, thing.ID); n != 0 {
		t.Fatalf("bad input stored %d notes", n)
	}
	// Exactly the limit is fine, in characters, not bytes.
	status, _, raw := e.call(t, alice.Token, http.MethodPost, path, jsonBody(map[string]string{"body": strings.Repeat("é", 1_000_000)}))
	wantStatus(t, status, raw, http.StatusCreated)
}

func TestUnknownIDs(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.user(t, "alice")
	p := e.project(t, alice.Client, "box", "private")
	other := e.project(t, alice.Client, "other", "private")
	thing := e.things.add(p.ID, alice.ID, "First thing", false)
	second := e.things.add(p.ID, alice.ID, "Second thing", false)
	elsewhere := e.things.add(other.ID, alice.ID, "Elsewhere", false)
	status, _, raw := e.call(t, alice.Token, http.MethodPost, notesPath(p.ID, thing.IID), jsonBody(map[string]string{"body": "on the first"}))
	wantStatus(t, status, raw, http.StatusCreated)
	noteID := strings.TrimSuffix(strings.SplitN(strings.SplitN(string(raw), `"id":`, 2)[1], ",", 2)[0], "}")

	for _, c := range []struct {
		method, path string
		status       int
		want         string
	}{
		{"GET", notesPath(p.ID, 99), 404, `{"message":"404 Thing Not Found"}`},
		{"POST", notesPath(p.ID, 99), 404, `{"message":"404 Thing Not Found"}`},
		{"GET", notesPath(99999, thing.IID), 404, `{"message":"404 Project Not Found"}`},
		{"GET", notesPath(p.ID, thing.IID) + "/999999", 404, `{"message":"404 Note Not Found"}`},
		{"GET", notesPath(p.ID, thing.IID) + "/abc", 404, `{"message":"404 Note Not Found"}`},
		{"GET", "/api/v4/projects/" + store.IDString(p.ID) + "/things/abc/notes", 400, `{"error":"thing_iid is invalid"}`},
		// The note exists, but on another thing of the project, or the
		// thing of its iid in another project: no note of this noteable.
		{"GET", notesPath(p.ID, second.IID) + "/" + noteID, 404, `{"message":"404 Note Not Found"}`},
		{"PUT", notesPath(p.ID, second.IID) + "/" + noteID, 404, `{"message":"404 Note Not Found"}`},
		{"DELETE", notesPath(p.ID, second.IID) + "/" + noteID, 404, `{"message":"404 Note Not Found"}`},
		{"GET", notesPath(other.ID, elsewhere.IID) + "/" + noteID, 404, `{"message":"404 Note Not Found"}`},
		{"DELETE", notesPath(other.ID, elsewhere.IID) + "/" + noteID, 404, `{"message":"404 Note Not Found"}`},
	} {
		body := ""
		if c.method == "PUT" || c.method == "POST" {
			body = `{"body":"x"}`
		}
		status, _, raw := e.call(t, alice.Token, c.method, c.path, body)
		if status != c.status || strings.TrimSpace(string(raw)) != c.want {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, status, raw, c.status, c.want)
		}
	}
	if n := e.countNotes(t, second.ID) + e.countNotes(t, elsewhere.ID); n != 0 {
		t.Fatalf("stored %d notes elsewhere", n)
	}
	status, _, raw = e.call(t, alice.Token, http.MethodGet, notesPath(p.ID, thing.IID)+"/"+noteID, "")
	wantStatus(t, status, raw, http.StatusOK)
}
