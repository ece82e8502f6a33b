package webhooks_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// logIDs are the delivery log's entries on a hook's page, newest first.
var logIDs = regexp.MustCompile(`<tr id="log_(\d+)">`)

func firstLogID(t *testing.T, p fennectest.Page) string {
	t.Helper()
	m := logIDs.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no delivery on the hook's page:\n%.4000s", p.Body)
	}
	return m[1]
}

func wantSignInRedirect(t *testing.T, what string, p fennectest.Page) {
	t.Helper()
	if p.StatusCode != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/users/sign_in?return_to=") {
		t.Errorf("%s: %d %q, want the sign-in redirect", what, p.StatusCode, p.Header.Get("Location"))
	}
}

// TestProjectHookPages: a Master adds a hook through the form (secret
// token never shown again), a push is delivered and its log entry shows
// the request (token masked) and the receiver's answer; a resend and a
// test reach the receiver again; an edit keeps the token; a failing
// receiver is shown as failed; Developers, strangers, anonymous visitors
// and forged forms see and change nothing; the hook is deleted after a
// confirmation.
func TestProjectHookPages(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	rcv := newReceiver(t)
	failing := newReceiver(t)
	failing.answer = func(int, delivery) int { return http.StatusInternalServerError }
	dev := e.CreateUser(t, "dev")
	stranger := e.CreateUser(t, "stranger")
	p := stocktest.NewProject(t, e.Client, "hooked", "private")
	stocktest.AddMember(t, e.Client, p.ID, dev.ID, gitlab.DeveloperPermissions)
	const secret = "s3cret-hook-token-9f2"
	root := e.SignedIn(t, "root", e.RootPassword)

	list := root.Get(t, "/root/hooked/-/hooks")
	list.Want(t, "empty list", 200, `<h1>Webhooks</h1>`, `No hooks yet.`, `<form method="post" action="/root/hooked/-/hooks" class="hook-form">`,
		`<a href="/root/hooked/-/hooks" aria-current="page">Webhooks</a>`, `name="push_events" value="1" checked`)
	form := url.Values{"authenticity_token": {list.CSRF()}, "url": {rcv.URL + "/in"}, "token": {secret},
		"push_events": {"1"}, "issues_events": {"1"}, "enable_ssl_verification": {"1"}}

	// A forged or missing token: 403 and nothing added.
	forged := url.Values{}
	for k, v := range form {
		forged[k] = v
	}
	forged.Set("authenticity_token", strings.Repeat("0", len(list.CSRF())))
	root.Post(t, "/root/hooked/-/hooks", forged).Want(t, "forged add", 403)
	forged.Del("authenticity_token")
	root.Post(t, "/root/hooked/-/hooks", forged).Want(t, "tokenless add", 403)
	// A URL that is not a hook's: 422 with the form kept, nothing added.
	bad := url.Values{"authenticity_token": {list.CSRF()}, "url": {"ftp://x.example/<b>"}, "token": {secret}, "tag_push_events": {"1"}}
	again := root.Post(t, "/root/hooked/-/hooks", bad)
	again.Want(t, "bad url", 422, `The hook was not added: The URL is not valid`, `value="ftp://x.example/&lt;b&gt;"`,
		`name="tag_push_events" value="1" checked`)
	again.WantNot(t, "bad url", secret, `name="push_events" value="1" checked`)
	long := url.Values{"authenticity_token": {list.CSRF()}, "url": {"http://x.example/" + strings.Repeat("a", 2100)}, "push_events": {"1"}}
	root.Post(t, "/root/hooked/-/hooks", long).Want(t, "long url", 422, `The hook was not added: The URL is not valid`)
	huge := url.Values{"authenticity_token": {list.CSRF()}, "url": {rcv.URL}, "token": {strings.Repeat("t", 4<<20)}}
	root.Post(t, "/root/hooked/-/hooks", huge).Want(t, "huge form", 413)
	if hooks, _, _ := e.Client.Projects.ListProjectHooks(p.ID, nil); len(hooks) != 0 {
		t.Fatalf("refused forms added %d hooks", len(hooks))
	}

	added := root.Post(t, "/root/hooked/-/hooks", form)
	hooks, _, err := e.Client.Projects.ListProjectHooks(p.ID, nil)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("hooks after the form: %v %v\n%d %.2000s", hooks, err, added.StatusCode, added.Body)
	}
	h := hooks[0]
	id := strconv.FormatInt(h.ID, 10)
	added.WantRedirect(t, "add", http.StatusSeeOther, "/root/hooked/-/hooks#hook_"+id)
	if h.URL != rcv.URL+"/in" || !h.PushEvents || !h.IssuesEvents || h.TagPushEvents || h.NoteEvents || !h.EnableSSLVerification {
		t.Fatalf("the API's hook: %+v", h)
	}
	list = root.Get(t, "/root/hooked/-/hooks")
	list.Want(t, "list", 200, `<li id="hook_`+id+`"><a href="/root/hooked/-/hooks/`+id+`/edit" class="mono">`+rcv.URL+`/in</a>`,
		`Push events, Issues events · SSL verification: enabled`)
	list.WantNot(t, "list", secret)

	// A push is delivered and logged.
	commitFile(t, e.Client, p.ID, "main", "README.md", "hello")
	got := rcv.waitFor(t, "/in", 1)
	if got[0].Header.Get("X-Gitlab-Token") != secret || got[0].Header.Get("X-Gitlab-Event") != "Push Hook" {
		t.Fatalf("the receiver got %v", got[0].Header)
	}
	var edit fennectest.Page
	fennectest.Poll(t, 10*time.Second, func() (bool, string) {
		edit = root.Get(t, "/root/hooked/-/hooks/"+id+"/edit")
		return strings.Contains(edit.Body, "Recent deliveries (1)"), "the push's delivery on the hook's page"
	})
	edit.Want(t, "edit", 200, `<h1>Hook `+id+`</h1>`, `<span class="badge ok">200</span> delivered</td><td>push_events</td>`,
		`A secret token is set; it is never shown.`, `value="`+rcv.URL+`/in"`, `name="issues_events" value="1" checked`,
		`<option value="push_events" selected>Push events</option>`)
	edit.WantNot(t, "edit", secret)
	logID := firstLogID(t, edit)
	entry := root.Get(t, "/root/hooked/-/hooks/"+id+"/hook_logs/"+logID)
	entry.Want(t, "entry", 200, `<h1>Delivery `+logID+`</h1>`, `X-Gitlab-Token: [REDACTED]`, `X-Gitlab-Event: Push Hook`,
		`&#34;object_kind&#34;: &#34;push&#34;`, `<pre class="hook-body" id="response-body">received 1</pre>`, `X-Receiver: yes`,
		`<span class="badge ok">200</span> delivered`)
	entry.WantNot(t, "entry", secret)

	// Resend: the receiver gets the same payload again, the page shows the
	// new entry.
	resent := root.Post(t, "/root/hooked/-/hooks/"+id+"/hook_logs/"+logID+"/retry", url.Values{"authenticity_token": {entry.CSRF()}})
	if resent.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resent.Header.Get("Location"), "/root/hooked/-/hooks/"+id+"/hook_logs/") {
		t.Fatalf("resend: %d %q", resent.StatusCode, resent.Header.Get("Location"))
	}
	got = rcv.waitFor(t, "/in", 2)
	if string(got[1].Raw) != string(got[0].Raw) {
		t.Errorf("the resent payload differs:\n%s\n%s", got[0].Raw, got[1].Raw)
	}
	root.Get(t, resent.Header.Get("Location")).Want(t, "resent entry", 200, `received 2`)

	// Test: a sample push, now.
	tested := root.Post(t, "/root/hooked/-/hooks/"+id+"/test", url.Values{"authenticity_token": {entry.CSRF()}, "trigger": {"push_events"}})
	if tested.StatusCode != http.StatusSeeOther {
		t.Fatalf("test: %d %.2000s", tested.StatusCode, tested.Body)
	}
	rcv.waitFor(t, "/in", 3)
	root.Get(t, tested.Header.Get("Location")).Want(t, "tested entry", 200, `received 3`, `push_events (Push Hook)`)
	root.Post(t, "/root/hooked/-/hooks/"+id+"/test", url.Values{"authenticity_token": {entry.CSRF()}, "trigger": {"nope"}}).
		Want(t, "unknown trigger", 422, `The test was not sent: choose one of the events offered.`)
	root.Post(t, "/root/hooked/-/hooks/"+id+"/test", url.Values{"authenticity_token": {entry.CSRF()}, "trigger": {"issues_events"}}).
		Want(t, "no sample", 422, `The test was not sent:`)

	// Edit: a blank token keeps the old one; the failing receiver is shown
	// as failed.
	saved := root.Post(t, "/root/hooked/-/hooks/"+id, url.Values{"authenticity_token": {entry.CSRF()}, "url": {failing.URL + "/f"},
		"token": {""}, "push_events": {"1"}, "note_events": {"1"}})
	saved.WantRedirect(t, "save", http.StatusSeeOther, "/root/hooked/-/hooks/"+id+"/edit")
	h, _, err = e.Client.Projects.GetProjectHook(p.ID, h.ID)
	if err != nil || h.URL != failing.URL+"/f" || !h.NoteEvents || h.IssuesEvents || h.EnableSSLVerification {
		t.Fatalf("after the edit: %+v %v", h, err)
	}
	tested = root.Post(t, "/root/hooked/-/hooks/"+id+"/test", url.Values{"authenticity_token": {entry.CSRF()}, "trigger": {"push_events"}})
	if tested.StatusCode != http.StatusSeeOther {
		t.Fatalf("test of the failing hook: %d %.2000s", tested.StatusCode, tested.Body)
	}
	if f := failing.waitFor(t, "/f", 1); f[0].Header.Get("X-Gitlab-Token") != secret {
		t.Errorf("the edit lost the token: %q", f[0].Header.Get("X-Gitlab-Token"))
	}
	root.Get(t, tested.Header.Get("Location")).Want(t, "failed entry", 200, `<span class="badge">500</span> failed`,
		`the receiver answered 500`)
	root.Get(t, "/root/hooked/-/hooks/"+id+"/edit").Want(t, "failed in the log", 200, `<span class="badge">500</span> failed</td>`)

	// Others: a Developer, a stranger, an anonymous visitor.
	d := e.SignedIn(t, "dev", dev.Password)
	devToken := d.Get(t, "/root/hooked").CSRF()
	if devToken == "" {
		t.Fatal("no CSRF token on the project's page")
	}
	s := e.SignedIn(t, "stranger", stranger.Password)
	stocktest.NewProject(t, e.NewClient(t, stranger.Token), "mine", "private")
	anon := e.NewBrowser(t)
	for _, path := range []string{"/root/hooked/-/hooks", "/root/hooked/-/hooks/" + id + "/edit", "/root/hooked/-/hooks/" + id + "/delete",
		"/root/hooked/-/hooks/" + id + "/hook_logs/" + logID} {
		d.Get(t, path).Want(t, "developer "+path, 404)
		s.Get(t, path).Want(t, "stranger "+path, 404)
		wantSignInRedirect(t, "anonymous "+path, anon.Get(t, path))
	}
	for _, path := range []string{"/stranger/mine/-/hooks/" + id + "/edit", "/stranger/mine/-/hooks/" + id + "/hook_logs/" + logID,
		"/root/hooked/-/hooks/0" + id + "/edit", "/root/hooked/-/hooks/" + id + "/hook_logs/x", "/root/hooked/-/hooks/" + id + "/../edit",
		"/root/hooked/-/hooks/" + id + "/hook_logs/" + logID + "/..%2F..%2Fedit", "/root/hooked/-/hooks/" + id + "/nope"} {
		if st := s.Get(t, path).StatusCode; st != 404 {
			t.Errorf("stranger %s: %d", path, st)
		}
	}
	before := len(failing.all())
	for _, c := range []struct {
		path string
		form url.Values
	}{
		{"/root/hooked/-/hooks", url.Values{"url": {"http://evil.example/"}}},
		{"/root/hooked/-/hooks/" + id, url.Values{"url": {"http://evil.example/"}, "push_events": {"1"}}},
		{"/root/hooked/-/hooks/" + id + "/delete", nil},
		{"/root/hooked/-/hooks/" + id + "/test", url.Values{"trigger": {"push_events"}}},
		{"/root/hooked/-/hooks/" + id + "/hook_logs/" + logID + "/retry", nil},
	} {
		f := url.Values{"authenticity_token": {devToken}}
		for k, v := range c.form {
			f[k] = v
		}
		d.Post(t, c.path, f).Want(t, "developer POST "+c.path, 404)
	}
	hooks, _, _ = e.Client.Projects.ListProjectHooks(p.ID, nil)
	if len(hooks) != 1 || hooks[0].URL != failing.URL+"/f" || len(failing.all()) != before {
		t.Fatalf("a Developer's forms changed something: %+v, %d requests (was %d)", hooks, len(failing.all()), before)
	}

	// Delete, after a confirmation.
	confirm := root.Get(t, "/root/hooked/-/hooks/"+id+"/delete")
	confirm.Want(t, "confirm", 200, `<form method="post" action="/root/hooked/-/hooks/`+id+`/delete">`, `Delete hook</button>`)
	root.Post(t, "/root/hooked/-/hooks/"+id+"/delete", url.Values{"authenticity_token": {confirm.CSRF()}}).
		WantRedirect(t, "delete", http.StatusSeeOther, "/root/hooked/-/hooks")
	if hooks, _, _ := e.Client.Projects.ListProjectHooks(p.ID, nil); len(hooks) != 0 {
		t.Fatalf("after the delete: %+v", hooks)
	}
	root.Get(t, "/root/hooked/-/hooks/"+id+"/edit").Want(t, "deleted hook", 404)
}

// TestSystemHookPages: administrators add a system hook (token never
// shown), test it, read the attempt, resend it and delete it; everyone
// else finds no such pages and changes nothing.
func TestSystemHookPages(t *testing.T) {
	t.Parallel()
	e := start(t, true)
	rcv := newReceiver(t)
	alice := e.CreateUser(t, "alice")
	const secret = "sys-hook-secret-77a"
	a := e.SignedIn(t, "alice", alice.Password)
	aliceToken := a.Get(t, "/").CSRF()
	wantSignInRedirect(t, "anonymous", e.NewBrowser(t).Get(t, "/admin/hooks"))
	a.Get(t, "/admin/hooks").Want(t, "user", 404)
	a.Post(t, "/admin/hooks", url.Values{"authenticity_token": {aliceToken}, "url": {rcv.URL}}).Want(t, "user add", 404)
	if hooks, _, _ := e.Client.SystemHooks.ListHooks(); len(hooks) != 0 {
		t.Fatalf("a user's form added %v", hooks)
	}

	root := e.SignedIn(t, "root", e.RootPassword)
	list := root.Get(t, "/admin/hooks")
	list.Want(t, "list", 200, `<h1>System Hooks</h1>`, `<a href="/admin/hooks" aria-current="page">System Hooks</a>`, `No hooks yet.`)
	root.Post(t, "/admin/hooks", url.Values{"authenticity_token": {"00"}, "url": {rcv.URL}}).Want(t, "forged", 403)
	root.Post(t, "/admin/hooks", url.Values{"authenticity_token": {list.CSRF()}, "url": {"gopher://x"}}).
		Want(t, "bad url", 422, `The hook was not added: The URL is blocked: Only allowed schemes are http, https.`)
	added := root.Post(t, "/admin/hooks", url.Values{"authenticity_token": {list.CSRF()}, "url": {rcv.URL + "/sys"}, "token": {secret},
		"tag_push_events": {"1"}, "enable_ssl_verification": {"1"}})
	hooks, _, err := e.Client.SystemHooks.ListHooks()
	if err != nil || len(hooks) != 1 {
		t.Fatalf("system hooks: %v %v", hooks, err)
	}
	id := strconv.FormatInt(hooks[0].ID, 10)
	added.WantRedirect(t, "add", http.StatusSeeOther, "/admin/hooks#hook_"+id)
	root.Get(t, "/admin/hooks").Want(t, "list", 200, `<li id="hook_`+id+`">`, `Tag push events · SSL verification: enabled`)

	tested := root.Post(t, "/admin/hooks/"+id+"/test", url.Values{"authenticity_token": {list.CSRF()}})
	tested.WantRedirect(t, "test", http.StatusSeeOther, "/admin/hooks/"+id+"/edit")
	got := rcv.waitFor(t, "/sys", 1)
	if got[0].Header.Get("X-Gitlab-Token") != secret || got[0].Body["event_name"] != "project_create" {
		t.Fatalf("the receiver got %v %s", got[0].Header, got[0].Raw)
	}
	edit := root.Get(t, "/admin/hooks/"+id+"/edit")
	edit.Want(t, "edit", 200, `Recent deliveries (1)`, `system_hook_test`, `Sends a sample project_create event.`)
	edit.WantNot(t, "edit", secret)
	logID := firstLogID(t, edit)
	entry := root.Get(t, "/admin/hooks/"+id+"/hook_logs/"+logID)
	entry.Want(t, "entry", 200, `X-Gitlab-Token: [REDACTED]`, `X-Gitlab-Event: System Hook`, `&#34;event_name&#34;: &#34;project_create&#34;`,
		`received 1`)
	entry.WantNot(t, "entry", secret)
	a.Get(t, "/admin/hooks/"+id+"/hook_logs/"+logID).Want(t, "user entry", 404)
	a.Post(t, "/admin/hooks/"+id+"/hook_logs/"+logID+"/retry", url.Values{"authenticity_token": {aliceToken}}).Want(t, "user resend", 404)
	a.Post(t, "/admin/hooks/"+id+"/delete", url.Values{"authenticity_token": {aliceToken}}).Want(t, "user delete", 404)
	if len(rcv.all()) != 1 {
		t.Fatalf("a user's resend reached the receiver")
	}
	resent := root.Post(t, "/admin/hooks/"+id+"/hook_logs/"+logID+"/retry", url.Values{"authenticity_token": {entry.CSRF()}})
	if resent.StatusCode != http.StatusSeeOther {
		t.Fatalf("resend: %d", resent.StatusCode)
	}
	rcv.waitFor(t, "/sys", 2)
	root.Get(t, resent.Header.Get("Location")).Want(t, "resent", 200, `received 2`)
	root.Get(t, "/admin/hooks/"+id+"/hook_logs/999999").Want(t, "unknown entry", 404)
	root.Get(t, "/admin/hooks/x/edit").Want(t, "bad id", 404)

	confirm := root.Get(t, "/admin/hooks/"+id+"/delete")
	confirm.Want(t, "confirm", 200, `action="/admin/hooks/`+id+`/delete"`)
	root.Post(t, "/admin/hooks/"+id+"/delete", url.Values{"authenticity_token": {confirm.CSRF()}}).
		WantRedirect(t, "delete", http.StatusSeeOther, "/admin/hooks")
	if hooks, _, _ := e.Client.SystemHooks.ListHooks(); len(hooks) != 0 {
		t.Fatalf("after the delete: %v", hooks)
	}
}
