package notifications_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
)

// hookLog is a real HTTP server that records the webhooks it receives:
// each as "<X-Gitlab-Event> <object_kind> <action>".
type hookLog struct {
	mu  sync.Mutex
	got []string
	srv *httptest.Server
}

func newHookLog(t *testing.T) *hookLog {
	h := &hookLog{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var v struct {
			Kind  string `json:"object_kind"`
			Attrs struct {
				Action string `json:"action"`
			} `json:"object_attributes"`
		}
		_ = json.Unmarshal(body, &v)
		h.mu.Lock()
		h.got = append(h.got, strings.TrimSpace(r.Header.Get("X-Gitlab-Event")+" "+v.Kind+" "+v.Attrs.Action))
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookLog) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// TestPagesSendTheAPIsMailAndHooks: the same story told through the API
// in one project and through the web pages in another (a Developer opens
// an issue, a Reporter comments mentioning the Developer, the Developer
// closes it) sends the same mails, to the same people, and the same
// webhooks: the pages call the services the API calls.
func TestPagesSendTheAPIsMailAndHooks(t *testing.T) {
	t.Parallel()
	e := start(t, fennectest.WithConfig(func(c *config.Config) { c.AllowLocalRequests = true }))
	dev := e.CreateUser(t, "dev")
	rep := e.CreateUser(t, "rep")
	watcher := e.CreateUser(t, "watcher")
	hooks := map[string]*hookLog{}
	for _, name := range []string{"viaapi", "viapages"} {
		p := e.project(t, e.Client, name, "private")
		e.member(t, p, dev, gitlab.DeveloperPermissions)
		e.member(t, p, rep, gitlab.ReporterPermissions)
		e.member(t, p, watcher, gitlab.GuestPermissions)
		if _, _, err := watcher.Client.NotificationSettings.UpdateSettingsForProject(p.ID, &gitlab.NotificationSettingsOptions{
			Level: gitlab.Ptr(gitlab.WatchNotificationLevel)}); err != nil {
			t.Fatal(err)
		}
		hooks[name] = newHookLog(t)
		if _, _, err := e.Client.Projects.AddProjectHook(p.ID, &gitlab.AddProjectHookOptions{URL: gitlab.Ptr(hooks[name].srv.URL),
			IssuesEvents: gitlab.Ptr(true), NoteEvents: gitlab.Ptr(true), PushEvents: gitlab.Ptr(false)}); err != nil {
			t.Fatal(err)
		}
	}
	e.settle(t)
	e.smtp.mu.Lock()
	e.smtp.got = nil
	e.smtp.mu.Unlock()

	// Through the API.
	api, _, err := dev.Client.Issues.CreateIssue("root/viaapi", &gitlab.CreateIssueOptions{Title: gitlab.Ptr("It broke"), Description: gitlab.Ptr("Badly.")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := rep.Client.Notes.CreateIssueNote("root/viaapi", api.IID, &gitlab.CreateIssueNoteOptions{Body: gitlab.Ptr("Me too, @dev")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := dev.Client.Issues.UpdateIssue("root/viaapi", api.IID, &gitlab.UpdateIssueOptions{StateEvent: gitlab.Ptr("close")}); err != nil {
		t.Fatal(err)
	}

	// Through the pages, as the same people.
	d := e.SignedIn(t, "dev", dev.Password)
	r := e.SignedIn(t, "rep", rep.Password)
	form := d.Get(t, "/root/viapages/-/issues/new")
	must := func(what string, p fennectest.Page) {
		t.Helper()
		if p.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: %d\n%.1500s", what, p.StatusCode, p.Body)
		}
	}
	must("create", d.Post(t, "/root/viapages/-/issues", url.Values{"authenticity_token": {form.CSRF()}, "title": {"It broke"}, "description": {"Badly."}}))
	must("comment", r.Post(t, "/root/viapages/-/issues/1/notes", url.Values{"authenticity_token": {r.Get(t, "/root/viapages/-/issues/1").CSRF()},
		"note": {"Me too, @dev"}}))
	must("close", d.Post(t, "/root/viapages/-/issues/1/close", url.Values{"authenticity_token": {form.CSRF()}}))
	e.settle(t)

	// The mails: subject (the project's name taken out) and recipients.
	mails := map[string][]string{}
	for _, m := range e.smtp.mails() {
		key := ""
		for _, name := range []string{"viaapi", "viapages"} {
			if strings.Contains(m.Subject, name) {
				key = name
			}
		}
		if key == "" {
			t.Errorf("a mail of neither story: %q", m.Subject)
			continue
		}
		subject := strings.ReplaceAll(m.Subject, key, "P")
		mails[key] = append(mails[key], fmt.Sprintf("%s -> %s", subject, strings.Join(m.To, ",")))
	}
	for _, k := range []string{"viaapi", "viapages"} {
		slices.Sort(mails[k])
	}
	t.Logf("mails: %q; hooks: %q", mails["viapages"], hooks["viapages"].events())
	if len(mails["viaapi"]) == 0 || !slices.Equal(mails["viaapi"], mails["viapages"]) {
		t.Errorf("mails differ:\nAPI:   %q\npages: %q", mails["viaapi"], mails["viapages"])
	}
	fennectest.Poll(t, 10e9, func() (bool, string) {
		a, p := hooks["viaapi"].events(), hooks["viapages"].events()
		return len(a) >= 3 && slices.Equal(a, p), fmt.Sprintf("hooks differ:\nAPI:   %q\npages: %q", a, p)
	})
}
