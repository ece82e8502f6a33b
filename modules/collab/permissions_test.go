package collab_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
)

// post adds a note as token and returns the status and the note's id.
func (e *env) post(t testing.TB, token string, projectID, iid int64, body string) (int, string) {
	t.Helper()
	status, _, raw := e.call(t, token, http.MethodPost, notesPath(projectID, iid), jsonBody(map[string]string{"body": body}))
	var n struct{ ID int64 }
	_ = json.Unmarshal(raw, &n)
	return status, store.IDString(n.ID)
}

func TestWhoMayReadAndWrite(t *testing.T) {
	t.Parallel()
	e := start(t)
	alice := e.user(t, "alice") // owner
	admin := e.user(t, "boss", fennectest.Admin())
	guest, dev, master, stranger := e.user(t, "guest"), e.user(t, "dev"), e.user(t, "master"), e.user(t, "stranger")
	priv := e.project(t, alice.Client, "priv", "private")
	pub := e.project(t, alice.Client, "pub", "public")
	for _, p := range []*gitlab.Project{priv, pub} {
		e.member(t, p, guest, gitlab.GuestPermissions)
		e.member(t, p, dev, gitlab.DeveloperPermissions)
		e.member(t, p, master, gitlab.MaintainerPermissions)
	}
	thing := e.things.add(priv.ID, alice.ID, "Private thing", false)
	pubThing := e.things.add(pub.ID, alice.ID, "Public thing", false)
	secret := e.things.add(priv.ID, alice.ID, "Secret thing", true, dev.ID)

	t.Run("reading", func(t *testing.T) {
		for _, c := range []struct {
			who    string
			token  string
			path   string
			status int
		}{
			{"anonymous on public", "", notesPath(pub.ID, pubThing.IID), 200},
			{"stranger on public", stranger.Token, notesPath(pub.ID, pubThing.IID), 200},
			{"anonymous on private", "", notesPath(priv.ID, thing.IID), 404},
			{"stranger on private", stranger.Token, notesPath(priv.ID, thing.IID), 404},
			{"guest on private", guest.Token, notesPath(priv.ID, thing.IID), 200},
			{"guest on a confidential thing", guest.Token, notesPath(priv.ID, secret.IID), 404},
			{"assignee on a confidential thing", dev.Token, notesPath(priv.ID, secret.IID), 200},
			{"admin on private", admin.Token, notesPath(priv.ID, thing.IID), 200},
		} {
			status, _, raw := e.call(t, c.token, http.MethodGet, c.path, "")
			if status != c.status {
				t.Errorf("%s: %d %s, want %d", c.who, status, raw, c.status)
			}
		}
	})

	t.Run("commenting", func(t *testing.T) {
		for _, c := range []struct {
			who    string
			token  string
			p      *gitlab.Project
			iid    int64
			status int
			want   string
		}{
			{"anonymous on public", "", pub, pubThing.IID, 401, `{"message":"401 Unauthorized"}`},
			{"stranger on public", stranger.Token, pub, pubThing.IID, 201, ""},
			{"stranger on private", stranger.Token, priv, thing.IID, 404, `{"message":"404 Project Not Found"}`},
			{"guest on private", guest.Token, priv, thing.IID, 201, ""},
			{"guest on a confidential thing", guest.Token, priv, secret.IID, 404, `{"message":"404 Thing Not Found"}`},
			{"assignee on a confidential thing", dev.Token, priv, secret.IID, 201, ""},
		} {
			status, _, raw := e.call(t, c.token, http.MethodPost, notesPath(c.p.ID, c.iid), `{"body":"hi"}`)
			if status != c.status || (c.want != "" && strings.TrimSpace(string(raw)) != c.want) {
				t.Errorf("%s: %d %s, want %d %s", c.who, status, raw, c.status, c.want)
			}
		}
		e.locked.Store(thing.ID, true)
		defer e.locked.Delete(thing.ID)
		status, _, raw := e.call(t, dev.Token, http.MethodPost, notesPath(priv.ID, thing.IID), `{"body":"hi"}`)
		if status != 403 {
			t.Errorf("a kind's CanComment refusal: %d %s, want 403", status, raw)
		}
	})

	t.Run("changing", func(t *testing.T) {
		_, noteID := e.post(t, dev.Token, priv.ID, thing.IID, "by dev")
		path := notesPath(priv.ID, thing.IID) + "/" + noteID
		for _, c := range []struct {
			who    string
			token  string
			status int
		}{
			{"a guest", guest.Token, 403},
			{"a stranger", stranger.Token, 404},
			{"the author", dev.Token, 200},
			{"a master", master.Token, 200},
			{"the owner", alice.Token, 200},
			{"an admin", admin.Token, 200},
		} {
			status, _, raw := e.call(t, c.token, http.MethodPut, path, `{"body":"edited by `+c.who+`"}`)
			if status != c.status {
				t.Errorf("PUT by %s: %d %s, want %d", c.who, status, raw, c.status)
			}
		}
		status, _, raw := e.call(t, dev.Token, http.MethodPut, path, `{"body":"  "}`)
		if status != 400 || strings.TrimSpace(string(raw)) != `{"error":"body is missing"}` {
			t.Errorf("blank PUT: %d %s", status, raw)
		}
		status, _, raw = e.call(t, dev.Token, http.MethodGet, path, "")
		if status != 200 || !strings.Contains(string(raw), `"body":"edited by an admin"`) {
			t.Errorf("after the edits: %d %s", status, raw)
		}
		status, _, raw = e.call(t, guest.Token, http.MethodDelete, path, "")
		wantStatus(t, status, raw, 403)
		status, _, raw = e.call(t, master.Token, http.MethodDelete, path, "")
		wantStatus(t, status, raw, 204)
		if len(raw) != 0 {
			t.Errorf("204 with a body: %s", raw)
		}
		status, _, raw = e.call(t, master.Token, http.MethodDelete, path, "")
		if status != 404 || strings.TrimSpace(string(raw)) != `{"message":"404 Note Not Found"}` {
			t.Errorf("second DELETE: %d %s", status, raw)
		}
		_, own := e.post(t, dev.Token, priv.ID, thing.IID, "mine")
		status, _, raw = e.call(t, dev.Token, http.MethodDelete, notesPath(priv.ID, thing.IID)+"/"+own, "")
		wantStatus(t, status, raw, 204)
	})

	t.Run("system notes are nobody's to change", func(t *testing.T) {
		if err := e.collab.System(t.Context(), thing, alice.ID, "closed"); err != nil {
			t.Fatal(err)
		}
		var list []struct {
			ID     int64
			System bool
		}
		_, _, raw := e.call(t, alice.Token, http.MethodGet, notesPath(priv.ID, thing.IID)+"?per_page=100", "")
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		sys := list[len(list)-1]
		if !sys.System {
			t.Fatalf("last note %s", raw)
		}
		path := notesPath(priv.ID, thing.IID) + "/" + store.IDString(sys.ID)
		for _, m := range []string{http.MethodPut, http.MethodDelete} {
			status, _, raw := e.call(t, admin.Token, m, path, `{"body":"rewritten"}`)
			if status != 403 {
				t.Errorf("%s of a system note: %d %s", m, status, raw)
			}
		}
		if _, _, raw := e.call(t, alice.Token, http.MethodPost, notesPath(priv.ID, thing.IID), `{"body":"x","system":true}`); strings.Contains(string(raw), `"system":true`) {
			t.Errorf("a system note through the API: %s", raw)
		}
	})

	t.Run("created_at", func(t *testing.T) {
		const when = "2016-03-04T05:06:07.000Z"
		for _, c := range []struct {
			who   string
			token string
			kept  bool
		}{{"the owner", alice.Token, true}, {"an admin", admin.Token, true}, {"a master", master.Token, false}, {"a developer", dev.Token, false}} {
			status, _, raw := e.call(t, c.token, http.MethodPost, notesPath(priv.ID, thing.IID), `{"body":"dated","created_at":"2016-03-04T06:06:07+01:00"}`)
			wantStatus(t, status, raw, 201)
			if kept := strings.Contains(string(raw), `"created_at":"`+when+`"`); kept != c.kept {
				t.Errorf("created_at from %s kept=%v: %s", c.who, kept, raw)
			}
		}
	})

	t.Run("archived projects refuse writes", func(t *testing.T) {
		_, noteID := e.post(t, dev.Token, pub.ID, pubThing.IID, "before the archive")
		if _, _, err := alice.Client.Projects.ArchiveProject(pub.ID); err != nil {
			t.Fatal(err)
		}
		path := notesPath(pub.ID, pubThing.IID)
		for _, c := range [][2]string{{http.MethodPost, path}, {http.MethodPut, path + "/" + noteID}, {http.MethodDelete, path + "/" + noteID}} {
			status, _, raw := e.call(t, dev.Token, c[0], c[1], `{"body":"after"}`)
			if status != 403 {
				t.Errorf("%s on an archived project: %d %s", c[0], status, raw)
			}
		}
		status, _, raw := e.call(t, "", http.MethodGet, path+"/"+noteID, "")
		wantStatus(t, status, raw, 200)
	})
}
