package webhooks_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// The delivery log shows each attempt (headers with the secrets
// redacted, the payload, the answer), newest first and paginated; an
// entry can be read alone and sent again.
func TestDeliveryLogAndResend(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "logged", "private")
	rcv := newReceiver(t)
	h := addHook(t, alice.Client, p.ID, "http://u:pw@"+rcv.Listener.Addr().String()+"/log", "sekrit")
	base := "/projects/" + store.IDString(p.ID) + "/hooks/" + store.IDString(int64(h.ID))
	c1 := commitFile(t, alice.Client, p.ID, "master", "a", "1")
	c2 := commitFile(t, alice.Client, p.ID, "master", "a", "2")
	rcv.waitFor(t, "/log", 2)
	log := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 2)
	if log[0]["request_data"].(map[string]any)["after"] != c2.ID || log[1]["request_data"].(map[string]any)["after"] != c1.ID {
		t.Fatalf("not newest first: %v", log)
	}
	wantFields(t, "event", log[0], map[string]any{
		"id": anyValue, "hook_id": h.ID, "trigger": "push_events", "url": rcv.URL + "/log",
		"request_headers": map[string]any{"Content-Type": "application/json", "X-Gitlab-Event": "Push Hook",
			"X-Gitlab-Token": "[REDACTED]", "Authorization": "[REDACTED]"},
		"request_data": anyValue, "response_status": 200, "response_body": "received 2",
		"execution_duration": anyValue, "attempt": 1, "outcome": "delivered", "internal_error_message": nil, "created_at": anyValue,
	})
	if hdr := log[0]["response_headers"].(map[string]any); hdr["X-Receiver"] != "yes" {
		t.Errorf("response_headers = %v", hdr)
	}
	if strings.Contains(string(mustJSON(t, log)), "sekrit") || strings.Contains(string(mustJSON(t, log)), "pw@") {
		t.Error("the log shows a secret")
	}

	// Pagination.
	resp := e.Do(t, "GET", "/api/v4"+base+"/events?per_page=1&page=2", nil, "PRIVATE-TOKEN", alice.Token)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Total") != "2" || resp.Header.Get("X-Page") != "2" {
		t.Errorf("page 2: %d total=%q page=%q", resp.StatusCode, resp.Header.Get("X-Total"), resp.Header.Get("X-Page"))
	}

	// One entry.
	id := store.IDString(int64(log[1]["id"].(float64)))
	st, raw := e.call(t, alice.Token, "GET", base+"/events/"+id, nil)
	if st != 200 || obj(t, raw)["request_data"].(map[string]any)["after"] != c1.ID {
		t.Fatalf("get event: %d %s", st, raw)
	}

	// Resend: 201 with the new attempt; the receiver gets the same body.
	st, raw = e.call(t, alice.Token, "POST", base+"/events/"+id+"/resend", nil)
	if st != http.StatusCreated {
		t.Fatalf("resend: %d %s", st, raw)
	}
	again := obj(t, raw)
	wantFields(t, "resent", again, map[string]any{"attempt": 1, "outcome": "delivered", "response_status": 200, "trigger": "push_events"})
	got := rcv.waitFor(t, "/log", 3)
	if string(got[2].Raw) != string(got[0].Raw) {
		t.Errorf("resent body differs:\n%s\n%s", got[2].Raw, got[0].Raw)
	}
	if got[2].Header.Get("X-Gitlab-Token") != "sekrit" || got[2].User != "u" {
		t.Errorf("resend headers: %v", got[2].Header)
	}
	if n := len(hookEvents(t, e, alice.Token, p.ID, int64(h.ID))); n != 3 {
		t.Errorf("log has %d entries after the resend, want 3", n)
	}

	// Missing things.
	for path, want := range map[string]string{
		base + "/events/999999": `{"message":"404 Not found"}`,
		base + "/events/0":      `{"message":"404 Not found"}`,
		"/projects/" + store.IDString(p.ID) + "/hooks/999999/events": `{"message":"404 Not found"}`,
		"/projects/999999/hooks/1/events":                            `{"message":"404 Project Not Found"}`,
	} {
		st, raw := e.call(t, alice.Token, "GET", path, nil)
		if st != 404 || string(raw) != want {
			t.Errorf("GET %s: %d %s, want 404 %s", path, st, raw, want)
		}
	}
	for path, want := range map[string]string{
		base + "/events/abc": `{"error":"event_id is invalid"}`,
		"/projects/" + store.IDString(p.ID) + "/hooks/x/events": `{"error":"hook_id is invalid"}`,
	} {
		st, raw := e.call(t, alice.Token, "GET", path, nil)
		if st != 400 || string(raw) != want {
			t.Errorf("GET %s: %d %s, want 400 %s", path, st, raw, want)
		}
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := jsonMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Only Masters read a hook's log, resend and test; others get 403, and
// those who cannot see the project 404.
func TestDeliveryLogPermissions(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	dev := e.CreateUser(t, "dev")
	stranger := e.CreateUser(t, "stranger")
	p := stocktest.NewProject(t, alice.Client, "secret", "private")
	if _, _, err := alice.Client.ProjectMembers.AddProjectMember(p.ID, &gitlab.AddProjectMemberOptions{UserID: gitlab.Ptr(dev.ID),
		AccessLevel: gitlab.Ptr(gitlab.DeveloperPermissions)}); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/p", "")
	commitFile(t, alice.Client, p.ID, "master", "a", "1")
	log := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 1)
	base := "/projects/" + store.IDString(p.ID) + "/hooks/" + store.IDString(int64(h.ID))
	ev := base + "/events/" + store.IDString(int64(log[0]["id"].(float64)))
	for _, c := range []struct{ method, path string }{
		{"GET", base + "/events"}, {"GET", ev}, {"POST", ev + "/resend"}, {"POST", base + "/test/push_events"},
	} {
		if st, raw := e.call(t, dev.Token, c.method, c.path, nil); st != 403 || string(raw) != `{"message":"403 Forbidden"}` {
			t.Errorf("developer %s %s: %d %s", c.method, c.path, st, raw)
		}
		if st, raw := e.call(t, stranger.Token, c.method, c.path, nil); st != 404 || string(raw) != `{"message":"404 Project Not Found"}` {
			t.Errorf("stranger %s %s: %d %s", c.method, c.path, st, raw)
		}
		if st, _ := e.call(t, "", c.method, c.path, nil); st != 401 {
			t.Errorf("anonymous %s %s: %d", c.method, c.path, st)
		}
	}
	if got := len(rcv.all()); got != 1 {
		t.Errorf("the receiver got %d requests, want 1", got)
	}
}

// POST .../test/:trigger sends a sample built from the project's latest
// object of the kind: 201 with the attempt; 422 when there is none; 400
// for an unknown trigger.
func TestTestTriggers(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "tested", "private")
	rcv := newReceiver(t)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/t", "tt")
	base := "/projects/" + store.IDString(p.ID) + "/hooks/" + store.IDString(int64(h.ID)) + "/test/"

	for trig, msg := range map[string]string{
		"push_events":           "Ensure the project has at least one commit.",
		"tag_push_events":       "Ensure the project has tags.",
		"issues_events":         "Ensure the project has issues.",
		"note_events":           "Ensure the project has notes.",
		"merge_requests_events": "Ensure the project has merge requests.",
		"job_events":            "Ensure the project has CI jobs.",
		"pipeline_events":       "Ensure the project has CI pipelines.",
	} {
		st, raw := e.call(t, alice.Token, "POST", base+trig, nil)
		if st != 422 || string(raw) != `{"message":"`+msg+`"}` {
			t.Errorf("%s on an empty project: %d %s", trig, st, raw)
		}
	}
	for _, bad := range []string{"wiki_page_events", "nope", "PUSH_EVENTS"} {
		st, raw := e.call(t, alice.Token, "POST", base+bad, nil)
		if st != 400 || string(raw) != `{"error":"trigger does not have a valid value"}` {
			t.Errorf("trigger %s: %d %s", bad, st, raw)
		}
	}
	if got := len(rcv.all()); got != 0 {
		t.Fatalf("the receiver got %d requests", got)
	}

	c := commitFile(t, alice.Client, p.ID, "master", "a", "1")
	var note *gitlab.Note
	is, _, err := alice.Client.Issues.CreateIssue(p.ID, &gitlab.CreateIssueOptions{Title: gitlab.Ptr("Sample me")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"first", "second"} {
		if note, _, err = alice.Client.Notes.CreateIssueNote(p.ID, is.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr(body)}); err != nil {
			t.Fatal(err)
		}
	}
	e.Drain(t)
	before := len(rcv.waitFor(t, "/t", 5)) // the push, the issue, the tag and the notes themselves
	for trig, check := range map[string]func(m map[string]any){
		"push_events": func(m map[string]any) {
			wantFields(t, "push sample", m, map[string]any{"object_kind": "push", "after": c.ID, "ref": "refs/heads/master"})
		},
		"tag_push_events": func(m map[string]any) {
			wantFields(t, "tag sample", m, map[string]any{"object_kind": "tag_push", "ref": "refs/tags/v1", "checkout_sha": c.ID})
		},
		"issues_events": func(m map[string]any) {
			wantFields(t, "issue sample", m["object_attributes"].(map[string]any), map[string]any{"iid": is.IID, "title": "Sample me", "action": "open"})
		},
		"note_events": func(m map[string]any) {
			wantFields(t, "note sample", m["object_attributes"].(map[string]any), map[string]any{"id": note.ID, "note": "second", "noteable_type": "Issue"})
			wantFields(t, "note sample", m["issue"].(map[string]any), map[string]any{"iid": is.IID})
		},
	} {
		st, raw := e.call(t, alice.Token, "POST", base+trig, nil)
		if st != http.StatusCreated {
			t.Fatalf("%s: %d %s", trig, st, raw)
		}
		wantFields(t, trig, obj(t, raw), map[string]any{"trigger": trig, "response_status": 200, "attempt": 1})
		got := rcv.waitFor(t, "/t", before+1)
		before = len(got)
		if got[len(got)-1].Header.Get("X-Gitlab-Token") != "tt" {
			t.Errorf("%s: token %q", trig, got[len(got)-1].Header.Get("X-Gitlab-Token"))
		}
		check(got[len(got)-1].Body)
	}
}

// A failed test says "could not connect" and the class of the reason
// only, in its answer and in the hook's log: the transport's own error
// named the host's DNS resolver, or the address dialled (issue 27).
func TestTestTriggerFailureSaysOnlyTheReason(t *testing.T) {
	t.Parallel()
	e := start(t, true) // local destinations allowed: the errors come from the network
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "reasons", "private")
	commitFile(t, alice.Client, p.ID, "master", "a", "1")
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String() + "/x"
	closed.Close()
	tlsRcv := newTLSReceiver(t)
	for _, c := range []struct{ url, reason string }{
		{"http://fennec-no-such-host.invalid/x", "DNS lookup failed"},
		{refused, "connection refused"},
		{tlsRcv.URL + "/x", "TLS error (invalid certificate)"},
	} {
		h := addHook(t, alice.Client, p.ID, c.url, "")
		st, raw := e.call(t, alice.Token, "POST", "/projects/"+store.IDString(p.ID)+"/hooks/"+store.IDString(int64(h.ID))+"/test/push_events", nil)
		if want := `{"message":"Hook execution failed: could not connect: ` + c.reason + `"}`; st != 422 || string(raw) != want {
			t.Errorf("%s: %d %s, want 422 %s", c.url, st, raw, want)
		}
		log := waitEvents(t, e, alice.Token, p.ID, int64(h.ID), 1)
		if msg := log[0]["internal_error_message"]; msg != "could not connect: "+c.reason {
			t.Errorf("%s: logged %q", c.url, msg)
		}
	}
}

// A test of a hook whose receiver is down answers 422 with the reason.
func TestTestTriggerUnreachable(t *testing.T) {
	t.Parallel()
	e := start(t, false) // local destinations refused
	alice := e.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "unreachable", "private")
	commitFile(t, alice.Client, p.ID, "master", "a", "1")
	h := addHook(t, alice.Client, p.ID, "http://localhost:9/x", "")
	st, raw := e.call(t, alice.Token, "POST", "/projects/"+store.IDString(p.ID)+"/hooks/"+store.IDString(int64(h.ID))+"/test/push_events", nil)
	if st != 422 || string(raw) != `{"message":"Hook execution failed: Requests to localhost are not allowed"}` {
		t.Errorf("%d %s", st, raw)
	}
}
