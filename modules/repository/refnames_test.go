package repository_test

import (
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/store"
)

// badRefNames are names git check-ref-format or GitLab refuse for a branch
// or a tag.
var badRefNames = []string{
	"refs/heads/master", "refs/tags/v1.0", "refs/remotes/origin/x", "refs/x", "@", "HEAD", "-rf",
	"a..b", "a@{1}", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[b", `a\b`, "a\x01b", "a\x7fb", "a\tb", "a\nb",
	".hidden", "a/.b", "a.lock", "a.lock/b", "a/b.lock", "a/", "a.", "a//b", "/a", "a/./b", "a/../b",
}

// Names that begin with refs/ and every other name git refuses are refused
// by each API that creates a branch or a tag, with GitLab's answers.
func TestRefNameRules(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	base := "/api/v4/projects/" + store.IDString(w.project.ID) + "/repository"
	post := func(method, path string, form url.Values) (int, string) {
		t.Helper()
		r, raw := w.s.JSON(t, method, base+path, strings.NewReader(form.Encode()), nil,
			"PRIVATE-TOKEN", w.s.RootToken, "Content-Type", "application/x-www-form-urlencoded")
		return r.StatusCode, strings.TrimSpace(string(raw))
	}
	before := refsOf(t, w.bare)
	// (Invalid UTF-8 cannot come this way: the API decodes parameters to
	// valid UTF-8. The push test sends such a name.)
	for _, name := range badRefNames {
		checks := []struct {
			what, method, path string
			form               url.Values
			status             int
			body               string
		}{
			{"create branch", http.MethodPost, "/branches", url.Values{"branch": {name}, "ref": {"master"}},
				400, `{"message":"Branch name is invalid"}`},
			{"create tag", http.MethodPost, "/tags", url.Values{"tag_name": {name}, "ref": {"master"}},
				405, `{"message":"Tag name invalid"}`},
			{"commit to a new branch", http.MethodPost, "/commits", url.Values{"branch": {name}, "start_branch": {"master"},
				"commit_message": {"m"}, "actions[][action]": {"create"}, "actions[][file_path]": {"n.txt"}, "actions[][content]": {"n"}},
				400, `{"message":"Branch name is invalid"}`},
			{"files API on a new branch", http.MethodPost, "/files/n.txt", url.Values{"branch": {name}, "start_branch": {"master"},
				"commit_message": {"m"}, "content": {"n"}},
				400, `{"message":"Branch name is invalid"}`},
		}
		for _, c := range checks {
			if status, body := post(c.method, c.path, c.form); status != c.status || body != c.body {
				t.Errorf("%s %q: %d %s, want %d %s", c.what, name, status, body, c.status, c.body)
			}
		}
	}
	// A start_branch that no branch could have is refused like an unknown one.
	if status, body := post(http.MethodPost, "/commits", url.Values{"branch": {"ok-new"}, "start_branch": {"refs/heads/master"},
		"commit_message": {"m"}, "actions[][action]": {"create"}, "actions[][file_path]": {"n.txt"}, "actions[][content]": {"n"}}); status != 400 ||
		body != `{"message":"Invalid start branch"}` {
		t.Errorf("start_branch refs/heads/master: %d %s", status, body)
	}
	if after := refsOf(t, w.bare); after != before {
		t.Fatalf("refused names changed the refs:\nbefore\n%s\nafter\n%s", before, after)
	}
	// Unusual but valid names are still accepted.
	for _, name := range []string{"topic/@x", "a@b", "héllo", "v1.0-rc.1", "heads", "x/refs/heads/y", "lock.x"} {
		if status, body := post(http.MethodPost, "/branches", url.Values{"branch": {name}, "ref": {"master"}}); status != 201 {
			t.Errorf("branch %q: %d %s", name, status, body)
		}
		if status, body := post(http.MethodPost, "/tags", url.Values{"tag_name": {"t-" + name}, "ref": {"master"}}); status != 201 {
			t.Errorf("tag %q: %d %s", name, status, body)
		}
	}
	gitCmd(t, w.bare, "fsck", "--strict")
}

// A ref a client names resolves exactly as git rev-parse resolves it: a full
// name as given, then refs/<x>, refs/tags/<x>, refs/heads/<x>... So a branch
// named refs/heads/master, made before the names were checked, no longer
// stands in for master.
func TestRefResolutionFollowsGit(t *testing.T) {
	t.Parallel()
	w := newReadWorld(t, gitlab.PublicVisibility)
	first := gitCmd(t, w.bare, "rev-parse", "v1.0^{commit}")
	// Refs written straight to disk, as a repository may hold them from
	// before: impostors of master and of a tag, a branch with a tag's name.
	for ref, at := range map[string]string{
		"refs/heads/refs/heads/master": first,
		"refs/heads/refs/tags/v2.0":    first,
		"refs/heads/heads/master":      first,
		"refs/heads/v1.0":              w.head,
		"refs/heads/tags/v1.0":         w.head,
		"refs/heads/" + first[:7]:      w.head,
	} {
		gitCmd(t, w.bare, "update-ref", ref, at)
	}
	id := store.IDString(w.project.ID)
	revs := []string{"master", "refs/heads/master", "heads/master", "refs/heads/refs/heads/master", "v1.0", "tags/v1.0",
		"refs/tags/v1.0", "v2.0", "refs/tags/v2.0", "heads/v1.0", "refs/heads/v1.0", "feature", "HEAD", first, first[:7], w.head[:10]}
	for _, rev := range revs {
		want := bareGit(t, w.bare, "rev-parse", "--verify", "-q", rev+"^{commit}")
		var got struct {
			ID string `json:"id"`
		}
		r, raw := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+id+"/repository/commits/"+url.PathEscape(rev), nil, &got, "PRIVATE-TOKEN", w.s.RootToken)
		if r.StatusCode != 200 || got.ID != want {
			t.Errorf("commits/%s: %d %s, want git's %s", rev, r.StatusCode, raw, want)
		}
	}
	// The files and tree APIs take the same path: refs/heads/master is
	// master's content, not the impostor's.
	f, _, err := w.s.Client.RepositoryFiles.GetFile(w.project.ID, "README.md", &gitlab.GetFileOptions{Ref: gitlab.Ptr("refs/heads/master")})
	if err != nil || f.CommitID != w.head {
		t.Fatalf("file at refs/heads/master: %+v %v", f, err)
	}
	tree, _, err := w.s.Client.Repositories.ListTree(w.project.ID, &gitlab.ListTreeOptions{Ref: gitlab.Ptr("refs/heads/master")})
	if err != nil || len(tree) != 4 {
		t.Fatalf("tree at refs/heads/master: %d entries %v", len(tree), err)
	}
	// Unknown and malformed names are 404s.
	for _, rev := range []string{"refs/heads/nope", "nope", "master~1", "master^", "master@{0}", "-all", "refs/heads/../config"} {
		if r, raw := w.s.JSON(t, http.MethodGet, "/api/v4/projects/"+id+"/repository/commits/"+url.PathEscape(rev), nil, nil, "PRIVATE-TOKEN", w.s.RootToken); r.StatusCode != 404 {
			t.Errorf("commits/%s: %d %s", rev, r.StatusCode, raw)
		}
	}
	// A legacy impostor can still be deleted by its (short) name.
	if _, err := w.s.Client.Branches.DeleteBranch(w.project.ID, "refs/heads/master"); err != nil {
		t.Fatalf("delete the impostor: %v", err)
	}
	if got := gitCmd(t, w.bare, "rev-parse", "refs/heads/master"); got != w.head {
		t.Fatalf("master is %s after deleting the impostor", got)
	}
}

// receive-pack refuses the same names as the API: git shows "funny
// refname" and nothing is created; deleting a legacy bad name works.
func TestPushRefusesBadRefNames(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	p := g.project(t, "names", gitlab.PublicVisibility)
	work := c.newWork(t)
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.seed(t, p, work, "master")
	bare := g.bare(p)
	clone := c.clone(t, g.rootURL(p))
	c.commit(t, clone, "two", map[string]string{"b.txt": "2\n"})
	before := refsOf(t, bare)
	for _, dst := range []string{"refs/heads/refs/heads/master", "refs/tags/refs/tags/x", "refs/heads/refs/x", "refs/heads/HEAD",
		"refs/heads/@", "refs/tags/HEAD", "refs/heads/-x", "refs/heads/a\xffb"} {
		stderr := c.fail(t, clone, "push", "origin", "HEAD:"+dst)
		// git shows the name without refs/heads/ or refs/tags/.
		shown := strings.TrimPrefix(strings.TrimPrefix(dst, "refs/heads/"), "refs/tags/")
		if !strings.Contains(stderr, "! [remote rejected] HEAD -> "+shown+" (funny refname)") {
			t.Errorf("push to %s: git should show [remote rejected] (funny refname):\n%s", dst, stderr)
		}
	}
	if after := refsOf(t, bare); after != before {
		t.Fatalf("refused pushes changed the refs:\nbefore\n%s\nafter\n%s", before, after)
	}
	// A well-formed ref outside the rules, made before them, can be deleted.
	cmd := exec.Command("git", "update-ref", "refs/heads/refs/heads/master", "master")
	cmd.Dir = bare
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("update-ref: %v %s", err, out)
	}
	c.ok(t, clone, "push", "-q", "origin", ":refs/heads/refs/heads/master")
	if got := refOf(t, bare, "refs/heads/refs/heads/master"); got != "" {
		t.Fatalf("the legacy ref survived its delete: %s", got)
	}
	fsck(t, bare)
}

// git looks refs/<x> and refs/tags/<x> up before refs/heads/<x>: a tag (or a
// ref) named like a protected branch would hide it from every client asking
// for the short name. A developer may create neither.
func TestRefsCannotHideProtectedBranches(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	dev := g.CreateUser(t, "dev")
	p := g.project(t, "hide", gitlab.PublicVisibility)
	g.addMember(t, p, dev, gitlab.DeveloperPermissions)
	work := c.newWork(t)
	head := c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.seed(t, p, work, "master")
	g.protect(t, p, "master", false)
	bare := g.bare(p)
	clone := c.clone(t, g.url(p, dev.Username, dev.Token))
	c.commit(t, clone, "the developer's", map[string]string{"a.txt": "evil\n"})
	before := refsOf(t, bare)

	r, raw := g.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(p.ID)+"/repository/tags?tag_name=master&ref=master", nil, nil, "PRIVATE-TOKEN", dev.Token)
	if r.StatusCode != 405 || strings.TrimSpace(string(raw)) != `{"message":"Tag master would hide the protected branch master"}` {
		t.Errorf("tag master by a developer: %d %s", r.StatusCode, raw)
	}
	for _, dst := range []string{"refs/tags/master", "refs/master"} {
		stderr := c.fail(t, clone, "push", "origin", "HEAD:"+dst)
		if !strings.Contains(stderr, "[remote rejected]") || !strings.Contains(stderr, "hides the protected branch master") {
			t.Errorf("push to %s: git should show [remote rejected] (...hides the protected branch master):\n%s", dst, stderr)
		}
	}
	if after := refsOf(t, bare); after != before {
		t.Fatalf("refused refs were created:\nbefore\n%s\nafter\n%s", before, after)
	}
	f, _, err := g.Client.RepositoryFiles.GetFile(p.ID, "a.txt", &gitlab.GetFileOptions{Ref: gitlab.Ptr("master")})
	if err != nil || f.CommitID != head {
		t.Fatalf("master reads %+v %v", f, err)
	}
	// Other tags and refs are the developer's to make.
	c.ok(t, clone, "push", "-q", "origin", "HEAD:refs/tags/v1", "HEAD:refs/other")
	if r, raw := g.JSON(t, http.MethodPost, "/api/v4/projects/"+store.IDString(p.ID)+"/repository/tags?tag_name=v2&ref=master", nil, nil, "PRIVATE-TOKEN", dev.Token); r.StatusCode != 201 {
		t.Errorf("tag v2 by a developer: %d %s", r.StatusCode, raw)
	}
}
