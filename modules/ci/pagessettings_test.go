package ci_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// pageLog keeps every page a test got, to check at the end that no
// secret was ever written into one.
type pageLog []fennectest.Page

func (l *pageLog) add(p fennectest.Page) fennectest.Page { *l = append(*l, p); return p }

func (l pageLog) wantNone(t *testing.T, secrets ...string) {
	t.Helper()
	for _, p := range l {
		for _, s := range secrets {
			if strings.Contains(p.Body, s) {
				t.Errorf("a page (%s %s) shows the secret %q", p.Request.Method, p.Request.URL.Path, s)
			}
		}
	}
}

func wantSignInPage(t *testing.T, what string, p fennectest.Page) {
	t.Helper()
	if p.StatusCode != http.StatusFound || !strings.HasPrefix(p.Header.Get("Location"), "/users/sign_in?return_to=") {
		t.Errorf("%s: %d %q, want the sign-in redirect", what, p.StatusCode, p.Header.Get("Location"))
	}
}

// TestCISettingsPages: a project's Master manages its variables (values
// never in a page, a blank value keeps the old one), its runners (enable
// one of their other project's, disable, pause, resume), the registration
// token (masked, revealed by a POST, reset) and the shared runners
// switch; Developers, strangers, anonymous visitors and forged forms see
// and change nothing.
func TestCISettingsPages(t *testing.T) {
	t.Parallel()
	s := startRunners(t)
	alice, bob, dev := s.CreateUser(t, "alice"), s.CreateUser(t, "bob"), s.CreateUser(t, "dev")
	alpha := stocktest.NewProject(t, alice.Client, "alpha", "private")
	beta := stocktest.NewProject(t, alice.Client, "beta", "private")
	stocktest.AddMember(t, alice.Client, alpha.ID, dev.ID, gitlab.DeveloperPermissions)
	full, _, _ := alice.Client.Projects.GetProject(alpha.ID, nil)
	betaFull, _, _ := alice.Client.Projects.GetProject(beta.ID, nil)
	mine := registerRunner(t, s, full.RunnersToken, map[string]any{"description": "alpha's runner"})
	other := registerRunner(t, s, betaFull.RunnersToken, map[string]any{"description": "beta's runner"})
	shared := registerRunner(t, s, sharedToken(t, s), map[string]any{"description": "shared one"})
	const secretValue, apiValue, newValue = "v4lue-Very-Secret-1", "api-secret-xyz-2", "rotated-secret-3"
	if _, _, err := alice.Client.ProjectVariables.CreateVariable(alpha.ID, &gitlab.CreateProjectVariableOptions{
		Key: gitlab.Ptr("API_VAR"), Value: gitlab.Ptr(apiValue)}); err != nil {
		t.Fatal(err)
	}
	var pages pageLog
	a := s.SignedIn(t, "alice", alice.Password)
	const base = "/alice/alpha/-/settings/ci_cd"

	page := pages.add(a.Get(t, base))
	page.Want(t, "settings", 200, `<h1>CI/CD settings</h1>`, `<a href="/alice/alpha/-/settings/ci_cd" aria-current="page">CI/CD</a>`,
		`<td class="mono">API_VAR</td>`, `<li id="runner_`+strconv.FormatInt(mine.ID, 10)+`">`, `alpha&#39;s runner`,
		`Available specific runners`, `beta&#39;s runner`, `Shared runners are enabled for this project (1 shared runner on this instance).`,
		`Reveal token</button>`)
	page.WantNot(t, "settings", "shared one", full.RunnersToken)
	csrf := page.CSRF()

	// Variables: forged, refused, added.
	pages.add(a.Post(t, base+"/variables", url.Values{"authenticity_token": {"0000"}, "key": {"SECRET_ONE"}, "value": {secretValue}})).
		Want(t, "forged add", 403)
	pages.add(a.Post(t, base+"/variables", url.Values{"authenticity_token": {csrf}, "key": {"bad-key"}, "value": {secretValue}})).
		Want(t, "bad key", 422, `The variable was not added: The key can contain only letters, digits and &#39;_&#39;`, `value="bad-key"`)
	pages.add(a.Post(t, base+"/variables", url.Values{"authenticity_token": {csrf}, "key": {"API_VAR"}, "value": {secretValue}})).
		Want(t, "taken key", 422, `The project has a variable of that key already.`)
	pages.add(a.Post(t, base+"/variables", url.Values{"authenticity_token": {csrf}, "key": {"SECRET_ONE"}, "value": {secretValue}, "protected": {"1"}})).
		WantRedirect(t, "add", http.StatusSeeOther, base+"#variables")
	v, _, err := alice.Client.ProjectVariables.GetVariable(alpha.ID, "SECRET_ONE", nil)
	if err != nil || v.Value != secretValue || !v.Protected {
		t.Fatalf("the added variable: %+v %v", v, err)
	}
	if api, _, _ := alice.Client.ProjectVariables.GetVariable(alpha.ID, "API_VAR", nil); api.Value != apiValue {
		t.Fatalf("a refused form changed API_VAR: %+v", api)
	}
	pages.add(a.Get(t, base)).Want(t, "with variable", 200, `<tr id="variable_SECRET_ONE"><td class="mono">SECRET_ONE</td>`, `<td>Yes</td>`)
	edit := pages.add(a.Get(t, base+"/variables/SECRET_ONE/edit"))
	edit.Want(t, "edit", 200, `Edit variable <span class="mono">SECRET_ONE</span>`, `name="protected" value="1" checked`,
		`Leave this blank to keep it.`)
	// A blank value keeps the value; the protection follows the box.
	pages.add(a.Post(t, base+"/variables/SECRET_ONE", url.Values{"authenticity_token": {csrf}, "value": {""}})).
		WantRedirect(t, "keep value", http.StatusSeeOther, base+"#variables")
	if v, _, _ := alice.Client.ProjectVariables.GetVariable(alpha.ID, "SECRET_ONE", nil); v.Value != secretValue || v.Protected {
		t.Fatalf("after a blank edit: %+v", v)
	}
	pages.add(a.Post(t, base+"/variables/SECRET_ONE", url.Values{"authenticity_token": {csrf}, "value": {newValue}, "protected": {"1"}}))
	if v, _, _ := alice.Client.ProjectVariables.GetVariable(alpha.ID, "SECRET_ONE", nil); v.Value != newValue || !v.Protected {
		t.Fatalf("after an edit: %+v", v)
	}
	pages.add(a.Get(t, base+"/variables/NOPE/edit")).Want(t, "unknown variable", 404)
	pages.add(a.Get(t, base+"/variables/../edit")).Want(t, "traversal", 404)

	// Runners.
	mineID, otherID, sharedID := strconv.FormatInt(mine.ID, 10), strconv.FormatInt(other.ID, 10), strconv.FormatInt(shared.ID, 10)
	pages.add(a.Post(t, base+"/runners/"+otherID+"/enable", url.Values{"authenticity_token": {csrf}})).
		WantRedirect(t, "enable", http.StatusSeeOther, base+"#runners")
	if d, _, _ := alice.Client.Runners.GetRunnerDetails(other.ID); len(d.Projects) != 2 {
		t.Fatalf("the enabled runner's projects: %+v", d.Projects)
	}
	pages.add(a.Post(t, base+"/runners/"+otherID+"/enable", url.Values{"authenticity_token": {csrf}})).
		Want(t, "enable twice", 422, `The runner is enabled for this project already.`)
	pages.add(a.Post(t, base+"/runners/"+otherID+"/disable", url.Values{"authenticity_token": {csrf}}))
	if d, _, _ := alice.Client.Runners.GetRunnerDetails(other.ID); len(d.Projects) != 1 {
		t.Fatalf("the disabled runner's projects: %+v", d.Projects)
	}
	pages.add(a.Post(t, base+"/runners/"+mineID+"/disable", url.Values{"authenticity_token": {csrf}})).
		Want(t, "disable the only project", 422, `This is the runner&#39;s only project`)
	pages.add(a.Post(t, base+"/runners/"+mineID+"/pause", url.Values{"authenticity_token": {csrf}}))
	if d, _, _ := alice.Client.Runners.GetRunnerDetails(mine.ID); d.Active {
		t.Fatal("the runner was not paused")
	}
	pages.add(a.Get(t, base)).Want(t, "paused", 200, `<span class="badge">paused</span>`, `Resume<span class="sr-only"> runner `+mineID)
	pages.add(a.Post(t, base+"/runners/"+mineID+"/resume", url.Values{"authenticity_token": {csrf}}))
	if d, _, _ := alice.Client.Runners.GetRunnerDetails(mine.ID); !d.Active {
		t.Fatal("the runner was not resumed")
	}
	for _, c := range []string{"/runners/" + otherID + "/pause", "/runners/" + sharedID + "/pause", "/runners/" + sharedID + "/enable",
		"/runners/" + mineID + "/explode", "/runners/0" + mineID + "/pause"} {
		if st := pages.add(a.Post(t, base+c, url.Values{"authenticity_token": {csrf}})).StatusCode; st != 404 && st != 403 {
			t.Errorf("POST %s: %d", c, st)
		}
	}
	if d, _, _ := s.Client.Runners.GetRunnerDetails(shared.ID); !d.Active || len(d.Projects) != 0 {
		t.Errorf("the shared runner changed from a project's page: %+v", d)
	}

	// The registration token: masked, revealed by a POST, reset.
	revealed := a.Post(t, base+"/runners_token/reveal", url.Values{"authenticity_token": {csrf}})
	revealed.Want(t, "reveal", 200, `<code class="mono" id="registration-token">`+full.RunnersToken+`</code>`)
	if revealed.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the revealed token may be cached: %q", revealed.Header.Get("Cache-Control"))
	}
	pages.add(a.Get(t, base+"/runners_token/reset")).Want(t, "reset confirm", 200, `action="`+base+`/runners_token/reset"`)
	pages.add(a.Post(t, base+"/runners_token/reset", url.Values{"authenticity_token": {csrf}})).
		WantRedirect(t, "reset", http.StatusSeeOther, base+"#runners")
	after, _, _ := alice.Client.Projects.GetProject(alpha.ID, nil)
	if after.RunnersToken == full.RunnersToken || after.RunnersToken == "" {
		t.Fatalf("the token was not reset: %q", after.RunnersToken)
	}
	if code, _, _ := rawJSON(t, http.MethodPost, s.URL+"/api/v4/runners", map[string]any{"token": full.RunnersToken}); code != 403 {
		t.Errorf("the old token still registers: %d", code)
	}

	// Shared runners off.
	pages.add(a.Post(t, base+"/shared_runners", url.Values{"authenticity_token": {csrf}, "enabled": {"0"}})).
		WantRedirect(t, "shared off", http.StatusSeeOther, base+"#runners")
	if p, _, _ := alice.Client.Projects.GetProject(alpha.ID, nil); p.SharedRunnersEnabled {
		t.Fatal("shared runners still on")
	}
	pages.add(a.Get(t, base)).Want(t, "shared off", 200, `Shared runners are disabled for this project`, `Enable shared runners</button>`)

	// A Developer, a stranger, anonymous: nothing seen, nothing changed.
	d := s.SignedIn(t, "dev", dev.Password)
	devCSRF := pages.add(d.Get(t, "/alice/alpha")).CSRF()
	b := s.SignedIn(t, "bob", bob.Password)
	anon := s.NewBrowser(t)
	for _, path := range []string{base, base + "/variables/SECRET_ONE/edit", base + "/variables/SECRET_ONE/delete", base + "/runners_token/reset"} {
		pages.add(d.Get(t, path)).Want(t, "developer "+path, 404)
		pages.add(b.Get(t, path)).Want(t, "stranger "+path, 404)
		wantSignInPage(t, "anonymous "+path, anon.Get(t, path))
	}
	for _, c := range []struct {
		path string
		form url.Values
	}{
		{"/variables", url.Values{"key": {"DEV_VAR"}, "value": {"x"}}},
		{"/variables/SECRET_ONE", url.Values{"value": {"dev-was-here"}}},
		{"/variables/SECRET_ONE/delete", nil},
		{"/runners_token/reveal", nil},
		{"/runners_token/reset", nil},
		{"/shared_runners", url.Values{"enabled": {"1"}}},
		{"/runners/" + mineID + "/pause", nil},
		{"/runners/" + mineID + "/disable", nil},
	} {
		f := url.Values{"authenticity_token": {devCSRF}}
		for k, v := range c.form {
			f[k] = v
		}
		pages.add(d.Post(t, base+c.path, f)).Want(t, "developer POST "+c.path, 404)
	}
	if v, _, err := alice.Client.ProjectVariables.GetVariable(alpha.ID, "SECRET_ONE", nil); err != nil || v.Value != newValue {
		t.Fatalf("a Developer changed the variable: %+v %v", v, err)
	}
	vars, _, _ := alice.Client.ProjectVariables.ListVariables(alpha.ID, nil)
	p, _, _ := alice.Client.Projects.GetProject(alpha.ID, nil)
	r, _, _ := alice.Client.Runners.GetRunnerDetails(mine.ID)
	if len(vars) != 2 || p.RunnersToken != after.RunnersToken || p.SharedRunnersEnabled || !r.Active || len(r.Projects) != 1 {
		t.Fatalf("a Developer's forms changed something: %d variables, token changed %v, shared %v, runner %+v",
			len(vars), p.RunnersToken != after.RunnersToken, p.SharedRunnersEnabled, r)
	}

	// Remove a variable after a confirmation.
	confirm := pages.add(a.Get(t, base+"/variables/API_VAR/delete"))
	confirm.Want(t, "remove confirm", 200, `Remove the variable API_VAR?`, `action="`+base+`/variables/API_VAR/delete"`)
	pages.add(a.Post(t, base+"/variables/API_VAR/delete", url.Values{"authenticity_token": {confirm.CSRF()}})).
		WantRedirect(t, "remove", http.StatusSeeOther, base+"#variables")
	if _, resp, _ := alice.Client.ProjectVariables.GetVariable(alpha.ID, "API_VAR", nil); resp == nil || resp.StatusCode != 404 {
		t.Fatal("the variable was not removed")
	}
	pages.wantNone(t, secretValue, apiValue, newValue, after.RunnersToken)
}

// TestAdminRunnersPage: administrators see every runner and the shared
// registration token (masked until revealed), pause, resume and remove
// runners and reset the token; no one else sees the page or changes
// anything through it.
func TestAdminRunnersPage(t *testing.T) {
	t.Parallel()
	s := startRunners(t)
	alice := s.CreateUser(t, "alice")
	alpha := stocktest.NewProject(t, alice.Client, "alpha", "private")
	full, _, _ := alice.Client.Projects.GetProject(alpha.ID, nil)
	token := sharedToken(t, s)
	shared := registerRunner(t, s, token, map[string]any{"description": "shared <b>one</b>", "tag_list": []string{"linux"}})
	specific := registerRunner(t, s, full.RunnersToken, map[string]any{"description": "alpha's"})
	sharedID, specificID := strconv.FormatInt(shared.ID, 10), strconv.FormatInt(specific.ID, 10)

	a := s.SignedIn(t, "alice", alice.Password)
	aliceCSRF := a.Get(t, "/").CSRF()
	wantSignInPage(t, "anonymous", s.NewBrowser(t).Get(t, "/admin/runners"))
	a.Get(t, "/admin/runners").Want(t, "user", 404)
	rv := a.Post(t, "/admin/runners/token/reveal", url.Values{"authenticity_token": {aliceCSRF}})
	rv.Want(t, "user reveal", 404)
	rv.WantNot(t, "user reveal", token)
	a.Post(t, "/admin/runners/"+specificID+"/pause", url.Values{"authenticity_token": {aliceCSRF}}).Want(t, "user pause", 404)
	a.Post(t, "/admin/runners/token/reset", url.Values{"authenticity_token": {aliceCSRF}}).Want(t, "user reset", 404)
	if r, _, _ := s.Client.Runners.GetRunnerDetails(specific.ID); !r.Active {
		t.Fatal("a user paused a runner through the admin page")
	}
	if sharedToken(t, s) != token {
		t.Fatal("a user reset the token")
	}

	root := s.SignedIn(t, "root", s.RootPassword)
	page := root.Get(t, "/admin/runners")
	page.Want(t, "runners", 200, `<h1>Runners</h1>`, `<a href="/admin/runners" aria-current="page">Runners</a>`, `All runners (2)`,
		`<li id="runner_`+sharedID+`">`, `shared &lt;b&gt;one&lt;/b&gt;`, `<span class="badge">shared</span>`, `Tags: linux`,
		`<li id="runner_`+specificID+`">`, `Last contact: never`, `Reveal token</button>`)
	page.WantNot(t, "runners", token)
	csrf := page.CSRF()
	root.Post(t, "/admin/runners/token/reveal", url.Values{"authenticity_token": {csrf}}).
		Want(t, "reveal", 200, `<code class="mono" id="registration-token">`+token+`</code>`)
	root.Post(t, "/admin/runners/"+specificID+"/pause", url.Values{"authenticity_token": {"0"}}).Want(t, "forged pause", 403)
	root.Post(t, "/admin/runners/"+specificID+"/pause", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "pause", http.StatusSeeOther, "/admin/runners")
	if r, _, _ := s.Client.Runners.GetRunnerDetails(specific.ID); r.Active {
		t.Fatal("not paused")
	}
	root.Get(t, "/admin/runners").Want(t, "paused", 200, `Resume<span class="sr-only"> runner `+specificID)
	root.Post(t, "/admin/runners/"+specificID+"/resume", url.Values{"authenticity_token": {csrf}})
	if r, _, _ := s.Client.Runners.GetRunnerDetails(specific.ID); !r.Active {
		t.Fatal("not resumed")
	}
	root.Post(t, "/admin/runners/424242/pause", url.Values{"authenticity_token": {csrf}}).Want(t, "unknown runner", 404)
	root.Get(t, "/admin/runners/x/delete").Want(t, "bad id", 404)

	confirm := root.Get(t, "/admin/runners/"+sharedID+"/delete")
	confirm.Want(t, "remove confirm", 200, `Remove the runner #`+sharedID+` (shared &lt;b&gt;one&lt;/b&gt;)?`)
	root.Post(t, "/admin/runners/"+sharedID+"/delete", url.Values{"authenticity_token": {confirm.CSRF()}}).
		WantRedirect(t, "remove", http.StatusSeeOther, "/admin/runners")
	if _, resp, _ := s.Client.Runners.GetRunnerDetails(shared.ID); resp == nil || resp.StatusCode != 404 {
		t.Fatal("the runner was not removed")
	}

	root.Get(t, "/admin/runners/token/reset").Want(t, "reset confirm", 200, `action="/admin/runners/token/reset"`)
	root.Post(t, "/admin/runners/token/reset", url.Values{"authenticity_token": {csrf}}).
		WantRedirect(t, "reset", http.StatusSeeOther, "/admin/runners")
	if now := sharedToken(t, s); now == token || now == "" {
		t.Fatal("the token was not reset")
	}
}

// TestGroupCISettingsPage: a group's Masters manage its variables on the
// group's CI/CD settings page (values never in a page); Developers,
// strangers and anonymous visitors find no such page and change nothing.
func TestGroupCISettingsPage(t *testing.T) {
	t.Parallel()
	s := startRunners(t)
	alice, dev, bob := s.CreateUser(t, "alice"), s.CreateUser(t, "dev"), s.CreateUser(t, "bob")
	g, _, err := s.Client.Groups.CreateGroup(&gitlab.CreateGroupOptions{Name: gitlab.Ptr("Team"), Path: gitlab.Ptr("team"),
		Visibility: gitlab.Ptr(gitlab.PrivateVisibility)})
	if err != nil {
		t.Fatal(err)
	}
	for id, level := range map[int64]gitlab.AccessLevelValue{alice.ID: gitlab.MaintainerPermissions, dev.ID: gitlab.DeveloperPermissions} {
		if _, _, err := s.Client.GroupMembers.AddGroupMember(g.ID, &gitlab.AddGroupMemberOptions{UserID: gitlab.Ptr(id), AccessLevel: gitlab.Ptr(level)}); err != nil {
			t.Fatal(err)
		}
	}
	const base, value, newValue = "/groups/team/-/settings/ci_cd", "group-secret-value-1", "group-secret-value-2"
	var pages pageLog
	a := s.SignedIn(t, "alice", alice.Password)
	page := pages.add(a.Get(t, base))
	page.Want(t, "group settings", 200, `<h1>CI/CD settings</h1>`, `<a href="/groups/team/-/settings/ci_cd" aria-current="page">CI/CD</a>`,
		`No variables yet.`, `<form method="post" action="/groups/team/-/settings/ci_cd/variables" class="variable-form">`)
	csrf := page.CSRF()
	pages.add(a.Post(t, base+"/variables", url.Values{"authenticity_token": {csrf}, "key": {"no spaces"}, "value": {value}})).
		Want(t, "bad key", 422, `The variable was not added:`)
	pages.add(a.Post(t, base+"/variables", url.Values{"authenticity_token": {csrf}, "key": {"GROUP_VAR"}, "value": {value}})).
		WantRedirect(t, "add", http.StatusSeeOther, base+"#variables")
	pages.add(a.Get(t, base)).Want(t, "with variable", 200, `<td class="mono">GROUP_VAR</td>`)
	pages.add(a.Get(t, base+"/variables/GROUP_VAR/edit")).Want(t, "edit", 200, `Edit variable <span class="mono">GROUP_VAR</span>`)
	pages.add(a.Post(t, base+"/variables/GROUP_VAR", url.Values{"authenticity_token": {csrf}, "value": {""}, "protected": {"1"}}))
	v, _, err := s.Client.GroupVariables.GetVariable(g.ID, "GROUP_VAR", nil)
	if err != nil || v.Value != value || !v.Protected {
		t.Fatalf("after a blank edit: %+v %v", v, err)
	}
	pages.add(a.Post(t, base+"/variables/GROUP_VAR", url.Values{"authenticity_token": {csrf}, "value": {newValue}}))
	if v, _, _ := s.Client.GroupVariables.GetVariable(g.ID, "GROUP_VAR", nil); v.Value != newValue || v.Protected {
		t.Fatalf("after an edit: %+v", v)
	}

	d := s.SignedIn(t, "dev", dev.Password)
	devCSRF := pages.add(d.Get(t, "/")).CSRF()
	b := s.SignedIn(t, "bob", bob.Password)
	for _, path := range []string{base, base + "/variables/GROUP_VAR/edit", base + "/variables/GROUP_VAR/delete"} {
		pages.add(d.Get(t, path)).Want(t, "developer "+path, 404)
		pages.add(b.Get(t, path)).Want(t, "stranger "+path, 404)
		wantSignInPage(t, "anonymous "+path, s.NewBrowser(t).Get(t, path))
	}
	for _, path := range []string{base + "/variables", base + "/variables/GROUP_VAR", base + "/variables/GROUP_VAR/delete"} {
		pages.add(d.Post(t, path, url.Values{"authenticity_token": {devCSRF}, "key": {"DEV"}, "value": {"dev"}})).Want(t, "developer POST "+path, 404)
	}
	for _, path := range []string{"/groups/team/-/settings", "/groups/team/-/settings/nope", base + "/variables/GROUP_VAR/nope", "/groups/nogroup/-/settings/ci_cd"} {
		pages.add(a.Get(t, path)).Want(t, "unknown "+path, 404)
	}
	if vars, _, _ := s.Client.GroupVariables.ListVariables(g.ID, nil); len(vars) != 1 || vars[0].Value != newValue {
		t.Fatalf("a Developer's forms changed the variables: %+v", vars)
	}
	confirm := pages.add(a.Get(t, base+"/variables/GROUP_VAR/delete"))
	pages.add(a.Post(t, base+"/variables/GROUP_VAR/delete", url.Values{"authenticity_token": {confirm.CSRF()}})).
		WantRedirect(t, "remove", http.StatusSeeOther, base+"#variables")
	if vars, _, _ := s.Client.GroupVariables.ListVariables(g.ID, nil); len(vars) != 0 {
		t.Fatalf("not removed: %+v", vars)
	}
	pages.wantNone(t, value, newValue)
}
