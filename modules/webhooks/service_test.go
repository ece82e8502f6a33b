package webhooks_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
	"github.com/fennec-forge/fennec/modules/webhooks/webhook"
)

// TestServiceWithoutHTTP drives webhook.Service as a page or an admin
// command would, with no request behind it: the same rules and domain
// errors as the API, and what it logs is what the API then shows.
func TestServiceWithoutHTTP(t *testing.T) {
	t.Parallel()
	var svc webhook.Service
	var users auth.UserLookup
	e := start(t, true, fennectest.WithExtract(&svc, &users))
	alice, bob := e.CreateUser(t, "alice"), e.CreateUser(t, "bob")
	root := e.CreateUser(t, "boss", fennectest.Admin())
	asAlice, asBob, asRoot := fennectest.AsUser(t, users, alice.ID), fennectest.AsUser(t, users, bob.ID), fennectest.AsUser(t, users, root.ID)
	rcv := newReceiver(t)
	// The users' user_create events are delivered before the system hook
	// exists, so its log holds only what this test sends.
	e.Drain(t)

	// System hooks are for administrators.
	if _, _, err := svc.SystemHooks(asAlice, 0, 20); !errors.Is(err, webhook.ErrAdminOnly) {
		t.Fatalf("a user lists system hooks: %v", err)
	}
	if _, err := svc.AddSystemHook(asRoot, webhook.SystemHookFields{URL: "  "}); !errors.Is(err, webhook.ErrURLMissing) {
		t.Fatalf("no url: %v", err)
	}
	var bad *webhook.InvalidURLError
	if _, err := svc.AddSystemHook(asRoot, webhook.SystemHookFields{URL: "ftp://x"}); !errors.As(err, &bad) || bad.Problem == "" {
		t.Fatalf("an ftp url: %v", err)
	}
	sh, err := svc.AddSystemHook(asRoot, webhook.SystemHookFields{URL: rcv.URL + "/sys", Token: new("t0k")})
	if err != nil || sh.ID <= 0 || !sh.PushEvents || sh.TagPushEvents || !sh.EnableSSLVerification {
		t.Fatalf("add: %+v %v", sh, err)
	}
	if sample, err := svc.TestSystemHook(asRoot, sh.ID); err != nil || sample["event_name"] != "project_create" {
		t.Fatalf("test: %v %v", sample, err)
	}
	if got := rcv.waitFor(t, "/sys", 1); got[0].Header.Get("X-Gitlab-Token") != "t0k" || got[0].Header.Get("X-Gitlab-Event") != "System Hook" {
		t.Fatalf("the receiver got %+v", got[0].Header)
	}
	log, n, err := svc.SystemHookAttempts(asRoot, sh.ID, 0, 20)
	if err != nil || n != 1 || !log[0].System || log[0].Trigger != "system_hook_test" || log[0].Outcome != webhook.Delivered || log[0].ResponseStatus != http.StatusOK {
		t.Fatalf("system log: %d %+v %v", n, log, err)
	}
	st, raw := e.call(t, e.RootToken, "GET", "/hooks/"+store.IDString(sh.ID)+"/events", nil)
	if st != 200 || len(list(t, raw)) != 1 || int64(list(t, raw)[0]["id"].(float64)) != log[0].ID {
		t.Fatalf("the API's log: %d %s", st, raw)
	}

	// A project hook's log is for those who administer the project.
	p := stocktest.NewProject(t, alice.Client, "served", "private")
	project := store.IDString(p.ID)
	h := addHook(t, alice.Client, p.ID, rcv.URL+"/p", "")
	if _, err := svc.TestProjectHook(asAlice, project, int64(h.ID), "push_events"); !errors.Is(err, webhook.ErrNoSample) ||
		err.Error() != "Ensure the project has at least one commit." {
		t.Fatalf("a sample of an empty project: %v", err)
	}
	if _, err := svc.TestProjectHook(asAlice, project, int64(h.ID), "wiki_events"); !errors.Is(err, webhook.ErrUnknownTrigger) {
		t.Fatalf("an unknown trigger: %v", err)
	}
	if _, _, err := svc.ProjectHookAttempts(asBob, project, int64(h.ID), 0, 20); !errors.Is(err, projects.ErrNotFound) {
		t.Fatalf("a stranger reads the log: %v", err)
	}
	if _, _, err := svc.ProjectHookAttempts(asAlice, project, int64(h.ID)+100, 0, 20); !errors.Is(err, projects.ErrHookNotFound) {
		t.Fatalf("no such hook: %v", err)
	}
	commitFile(t, alice.Client, p.ID, "master", "a", "1")
	tried, err := svc.TestProjectHook(asAlice, project, int64(h.ID), "push_events")
	if err != nil || tried.Trigger != "push_events" || tried.Event != "Push Hook" || tried.Number != 1 || !tried.Answered() {
		t.Fatalf("test a push: %+v %v", tried, err)
	}
	again, err := svc.Resend(asAlice, project, int64(h.ID), tried.ID)
	if err != nil || again.ID == tried.ID || string(again.RequestBody) != string(tried.RequestBody) {
		t.Fatalf("resend: %+v %v", again, err)
	}
	if _, err := svc.ProjectHookAttempt(asAlice, project, int64(h.ID), log[0].ID); !errors.Is(err, webhook.ErrAttemptNotFound) {
		t.Fatalf("another hook's entry: %v", err)
	}

	// A receiver that does not answer is a NoAnswerError, logged all the same.
	rcv.Close()
	var none *webhook.NoAnswerError
	if _, err := svc.Resend(asAlice, project, int64(h.ID), tried.ID); !errors.As(err, &none) || none.Attempt.Outcome != webhook.Failed {
		t.Fatalf("a closed receiver: %v", err)
	}

	// Deleting the system hook drops it; twice is not found.
	if err := svc.DeleteSystemHook(asRoot, sh.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteSystemHook(asRoot, sh.ID); !errors.Is(err, webhook.ErrSystemHookNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
}
