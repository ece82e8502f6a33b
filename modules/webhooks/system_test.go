package webhooks_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// System hooks: administrators add, list, test and delete them; they get
// user_create, project_create, push, project_destroy and user_destroy.
func TestSystemHooks(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	rcv := newReceiver(t)
	alice := e.CreateUser(t, "alice")

	// Only administrators.
	for _, c := range []struct{ method, path string }{{"GET", "/hooks"}, {"POST", "/hooks"}, {"GET", "/hooks/1"}, {"DELETE", "/hooks/1"}} {
		if st, raw := e.call(t, alice.Token, c.method, c.path, map[string]any{"url": rcv.URL}); st != 403 {
			t.Errorf("user %s %s: %d %s", c.method, c.path, st, raw)
		}
		if st, _ := e.call(t, "", c.method, c.path, nil); st != 401 {
			t.Errorf("anonymous %s %s: %d", c.method, c.path, st)
		}
	}
	// Bad input stores nothing.
	for body, want := range map[string]string{
		`{}`:                        `{"error":"url is missing"}`,
		`{"url":""}`:                `{"error":"url is missing"}`,
		`{"url":"ftp://x.example"}`: `{"message":{"url":["is blocked: Only allowed schemes are http, https"]}}`,
		`{"url":"http://"}`:         `{"message":{"url":["is blocked: URI is invalid"]}}`,
		`{"url":"http://x.example/` + strings.Repeat("a", 2048) + `"}`: `{"message":{"url":["is too long (maximum is 2048 characters)"]}}`,
		`{"url":`: `{"message":"400 Bad request - the request body is not valid JSON"}`,
		`{"url":"http://x.example","push_events":"maybe"}`: `{"error":"push_events is invalid"}`,
	} {
		resp := e.Do(t, "POST", "/api/v4/hooks", stringsReader(body), "PRIVATE-TOKEN", e.RootToken, "Content-Type", "application/json")
		raw := readAll(t, resp)
		if resp.StatusCode != 400 || raw != want {
			t.Errorf("POST /hooks %s: %d %s, want 400 %s", body, resp.StatusCode, raw, want)
		}
	}
	if hooks, _, err := e.Client.SystemHooks.ListHooks(); err != nil || len(hooks) != 0 {
		t.Fatalf("bad input stored %v (%v)", hooks, err)
	}
	st, raw := e.call(t, e.RootToken, "POST", "/hooks", map[string]any{"url": rcv.URL + "/sys", "token": "systok", "tag_push_events": true})
	if st != http.StatusCreated {
		t.Fatalf("add: %d %s", st, raw)
	}
	hook := obj(t, raw)
	wantFields(t, "system hook", hook, map[string]any{"id": anyValue, "url": rcv.URL + "/sys", "created_at": anyValue,
		"push_events": true, "tag_push_events": true, "repository_update_events": false, "enable_ssl_verification": true})
	if _, ok := hook["token"]; ok {
		t.Error("the token is shown")
	}
	hooks, _, err := e.Client.SystemHooks.ListHooks()
	if err != nil || len(hooks) != 1 || hooks[0].URL != rcv.URL+"/sys" {
		t.Fatalf("list: %v %v", hooks, err)
	}
	hid := int64(hook["id"].(float64))

	// user_create
	bob := e.CreateUser(t, "bob")
	d := rcv.waitFor(t, "/sys", 1)[0]
	if d.Header.Get("X-Gitlab-Event") != "System Hook" || d.Header.Get("X-Gitlab-Token") != "systok" {
		t.Errorf("headers: %v", d.Header)
	}
	wantExact(t, "user_create", d.Body, map[string]any{"event_name": "user_create", "created_at": anyValue, "updated_at": anyValue,
		"name": "User bob", "email": "bob@example.com", "user_id": bob.ID, "username": "bob"})
	golden(t, "system_user_create", d, known(e, rcv))

	// project_create, then a push, then project_destroy.
	p := stocktest.NewProject(t, bob.Client, "sysproj", "private")
	d = rcv.waitFor(t, "/sys", 2)[1]
	wantExact(t, "project_create", d.Body, map[string]any{"event_name": "project_create", "created_at": anyValue, "updated_at": anyValue,
		"name": "sysproj", "path": "sysproj", "path_with_namespace": "bob/sysproj", "project_id": p.ID,
		"owner_name": "User bob", "owner_email": "bob@example.com", "project_visibility": "private"})
	golden(t, "system_project_create", d, known(e, rcv))
	c := commitFile(t, bob.Client, p.ID, "master", "a", "a")
	d = rcv.waitFor(t, "/sys", 3)[2]
	wantFields(t, "push", d.Body, map[string]any{"event_name": "push", "object_kind": "push", "after": c.ID, "project_id": p.ID,
		"user_id": bob.ID, "ref": "refs/heads/master", "project": anyValue, "repository": anyValue, "commits": anyValue})
	golden(t, "system_push", d, known(e, rcv))
	if _, err := bob.Client.Projects.DeleteProject(p.ID, nil); err != nil {
		t.Fatal(err)
	}
	d = rcv.waitFor(t, "/sys", 4)[3]
	wantExact(t, "project_destroy", d.Body, map[string]any{"event_name": "project_destroy", "name": "sysproj", "path": "sysproj",
		"path_with_namespace": "bob/sysproj", "project_id": p.ID, "owner_name": "User bob", "owner_email": "bob@example.com",
		"project_visibility": "private", "created_at": anyValue, "updated_at": anyValue})
	golden(t, "system_project_destroy", d, known(e, rcv))

	// user_destroy
	if _, err := e.Client.Users.DeleteUser(bob.ID); err != nil {
		t.Fatal(err)
	}
	d = rcv.waitFor(t, "/sys", 5)[4]
	wantExact(t, "user_destroy", d.Body, map[string]any{"event_name": "user_destroy", "name": "User bob", "email": "bob@example.com",
		"user_id": bob.ID, "username": "bob", "created_at": anyValue, "updated_at": anyValue})
	golden(t, "system_user_destroy", d, known(e, rcv))

	// The test: GET /hooks/:id sends 9.x's sample and answers it.
	st, raw = e.call(t, e.RootToken, "GET", "/hooks/"+store.IDString(hid), nil)
	if st != 200 {
		t.Fatalf("test: %d %s", st, raw)
	}
	sample := map[string]any{"event_name": "project_create", "name": "Ruby", "path": "ruby", "project_id": 1,
		"owner_name": "Someone", "owner_email": "example@gitlabhq.com"}
	if !equal(obj(t, raw), sample) {
		t.Errorf("test answered %s", raw)
	}
	if d = rcv.waitFor(t, "/sys", 6)[5]; !equal(d.Body, sample) {
		t.Errorf("test sent %s", d.Raw)
	}
	golden(t, "system_test_sample", d, known(e, rcv))
	// The log: five queued deliveries (each recorded just after its
	// answer, so poll) and the test.
	fennectest.Poll(t, 20*time.Second, func() (bool, string) {
		st, raw = e.call(t, e.RootToken, "GET", "/hooks/"+store.IDString(hid)+"/events", nil)
		if st != 200 {
			t.Fatalf("system hook log: %d %s", st, raw)
		}
		n := len(list(t, raw))
		if n > 6 {
			t.Fatalf("system hook log: %d entries, want 6: %s", n, raw)
		}
		return n == 6, fmt.Sprintf("system hook log: %d entries, want 6: %s", n, raw)
	})

	// Delete: 204, then gone.
	if _, err := e.Client.SystemHooks.DeleteHook(hid); err != nil {
		t.Fatal(err)
	}
	for m, want := range map[string]string{"GET": `{"message":"404 Not found"}`, "DELETE": `{"message":"404 System hook Not Found"}`} {
		if st, raw := e.call(t, e.RootToken, m, "/hooks/"+store.IDString(hid), nil); st != 404 || string(raw) != want {
			t.Errorf("%s deleted hook: %d %s", m, st, raw)
		}
	}
	e.CreateUser(t, "carol")
	e.Drain(t)
	if n := len(rcv.all()); n != 6 {
		t.Errorf("%d deliveries after the delete, want 6", n)
	}
}

// A system hook without push_events gets no pushes.
func TestSystemHookPushSwitch(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	rcv := newReceiver(t)
	if _, _, err := e.Client.SystemHooks.AddHook(&gitlab.AddHookOptions{URL: gitlab.Ptr(rcv.URL + "/np"), PushEvents: gitlab.Ptr(false)}); err != nil {
		t.Fatal(err)
	}
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "quiet", "private")
	commitFile(t, alice.Client, p.ID, "master", "a", "a")
	e.Drain(t)
	got := rcv.waitFor(t, "/np", 2)
	e.Drain(t)
	for _, d := range rcv.all() {
		if d.Body["event_name"] == "push" {
			t.Errorf("a push reached a hook without push_events")
		}
	}
	if got[0].Body["event_name"] != "user_create" || got[1].Body["event_name"] != "project_create" {
		t.Errorf("got %v, %v", got[0].Body["event_name"], got[1].Body["event_name"])
	}
}
