package repository_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// TestRepositorySettingsProtectedBranches: a Master protects a branch
// from /-/settings/repository, and a Developer's git push over HTTP to it
// is refused; unprotected from the page, the same push goes through. A
// wildcard and its levels are listed as the API lists them; a Developer
// has no page and their forms change nothing; a forged token neither.
func TestRepositorySettingsProtectedBranches(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	dev, mas := g.CreateUser(t, "dev"), g.CreateUser(t, "mas")
	p := g.project(t, "guarded", gitlab.PrivateVisibility)
	g.addMember(t, p, dev, gitlab.DeveloperPermissions)
	g.addMember(t, p, mas, gitlab.MaintainerPermissions)
	work := c.newWork(t)
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.seed(t, p, work, "master", "master:refs/heads/stable")
	base := "/" + p.PathWithNamespace + "/-/settings/repository"
	api := fmt.Sprintf("/api/v4/projects/%d/protected_branches", p.ID)

	m := g.SignedIn(t, "mas", mas.Password)
	page := m.Get(t, base)
	page.Want(t, "repository settings", 200, "<h1>Repository settings</h1>", `<p class="muted">No branch is protected.</p>`,
		`<a href="`+base+`" aria-current="page">Repository</a>`, `<option value="stable"></option>`,
		`<option value="40" selected>Masters</option>`, `<option value="0">No one</option>`)
	form := func(kv ...string) url.Values {
		v := url.Values{"authenticity_token": {page.CSRF()}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}

	// A Developer: no page, no protecting, no unprotecting.
	d := g.SignedIn(t, "dev", dev.Password)
	d.Get(t, base).Want(t, "developer's repository settings", 404, "Page not found")
	tok := d.Get(t, "/").CSRF()
	d.Post(t, base+"/protect", url.Values{"authenticity_token": {tok}, "name": {"stable"}, "push_access_level": {"30"}, "merge_access_level": {"30"}}).
		Want(t, "developer protects", 404)
	// A forged token.
	m.Post(t, base+"/protect", url.Values{"authenticity_token": {"f00d"}, "name": {"stable"}, "push_access_level": {"40"}, "merge_access_level": {"40"}}).
		Want(t, "forged protect", 403)
	if r := g.Call(t, mas.Token, http.MethodGet, api, nil); strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("protections after refused posts: %s", r.Body)
	}

	// Bad input is said, nothing made.
	m.Post(t, base+"/protect", form("name", " ", "push_access_level", "40", "merge_access_level", "40")).Want(t, "blank name", 422, "Please name a branch")
	m.Post(t, base+"/protect", form("name", "stable", "push_access_level", "50", "merge_access_level", "40")).Want(t, "bad level", 422, "Please choose who may push")
	m.Post(t, base+"/nothing", form()).Want(t, "unknown action", 404)

	// Protect stable (Masters) and release-* (Developers push, no one merges).
	m.Post(t, base+"/protect", form("name", "stable", "push_access_level", "40", "merge_access_level", "40")).
		WantRedirect(t, "protect stable", http.StatusSeeOther, base)
	m.Post(t, base+"/protect", form("name", "release-*", "push_access_level", "30", "merge_access_level", "0")).
		WantRedirect(t, "protect release-*", http.StatusSeeOther, base)
	m.Post(t, base+"/protect", form("name", "stable", "push_access_level", "40", "merge_access_level", "40")).
		Want(t, "protect stable again", 422, "The branch stable is protected already")
	g.Call(t, mas.Token, http.MethodGet, api, nil).Expect(t, http.StatusOK,
		`[{"name":"stable","push_access_levels":[{"access_level":40,"access_level_description":"Masters"}],"merge_access_levels":[{"access_level":40,"access_level_description":"Masters"}]},`+
			`{"name":"release-*","push_access_levels":[{"access_level":30,"access_level_description":"Developers + Masters"}],"merge_access_levels":[{"access_level":0,"access_level_description":"No one"}]}]`)
	m.Get(t, base).Want(t, "listed", 200, `<caption class="muted">2 protected branches</caption>`,
		`<tr><td><code><bdi>release-*</bdi></code> <span class="badge">wildcard</span></td><td>Developers &#43; Masters</td><td>No one</td>`)

	// The Developer's push to stable is refused...
	clone := c.clone(t, g.url(p, dev.Username, dev.Token))
	c.ok(t, clone, "checkout", "-q", "stable")
	c.commit(t, clone, "dev on stable", map[string]string{"dev.txt": "d\n"})
	if stderr := c.fail(t, clone, "push", "origin", "stable"); !strings.Contains(strings.ToLower(stderr), "protected") {
		t.Errorf("the refused push does not say why:\n%s", stderr)
	}
	// ...a Developer's unprotect post changes nothing...
	d.Post(t, base+"/unprotect", url.Values{"authenticity_token": {tok}, "name": {"stable"}}).Want(t, "developer unprotects", 404)
	c.fail(t, clone, "push", "origin", "stable")
	// ...and once the Master unprotects it, the push goes through.
	m.Post(t, base+"/unprotect", form("name", "stable")).WantRedirect(t, "unprotect", http.StatusSeeOther, base)
	m.Post(t, base+"/unprotect", form("name", "stable")).Want(t, "unprotect again", 404)
	c.ok(t, clone, "push", "-q", "origin", "stable")
	g.Call(t, mas.Token, http.MethodGet, api+"/stable", nil).Expect(t, http.StatusNotFound, "")
}
