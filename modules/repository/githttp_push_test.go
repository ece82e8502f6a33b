package repository_test

// Black-box tests of git push over smart HTTP with the real git CLI.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/repository"
)

// clone clones url into a new directory and returns it.
func (c *gitCLI) clone(t *testing.T, url string, extra ...string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "clone")
	c.ok(t, t.TempDir(), append(append([]string{"clone", "-q"}, extra...), url, dst)...)
	return dst
}

// feedEvent is an entry of GET /projects/:id/events.
type feedEvent struct {
	ActionName     string `json:"action_name"`
	AuthorUsername string `json:"author_username"`
	PushData       *struct {
		CommitCount int     `json:"commit_count"`
		RefType     string  `json:"ref_type"`
		CommitFrom  *string `json:"commit_from"`
		CommitTo    *string `json:"commit_to"`
		Ref         string  `json:"ref"`
	} `json:"push_data"`
}

func (e feedEvent) String() string {
	b, _ := json.Marshal(e)
	return string(b)
}

// waitEvents polls the project's feed until, for each description, an
// entry matches its predicate; it reports the ones never seen.
func (g *gitServer) waitEvents(t *testing.T, p *gitlab.Project, want map[string]func(feedEvent) bool) {
	t.Helper()
	var raw []byte
	missing := map[string]bool{}
	eventually(func() bool {
		var feed []feedEvent
		var r *http.Response
		r, raw = g.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/projects/%d/events?per_page=100", p.ID), nil, nil, "PRIVATE-TOKEN", g.RootToken)
		if r.StatusCode != 200 || json.Unmarshal(raw, &feed) != nil {
			return false
		}
		clear(missing)
		for what, match := range want {
			missing[what] = true
			for _, e := range feed {
				if match(e) {
					delete(missing, what)
					break
				}
			}
		}
		return len(missing) == 0
	})
	if len(missing) == 0 {
		return
	}
	var names []string
	for what := range missing {
		names = append(names, what)
	}
	sort.Strings(names)
	t.Errorf("not in the feed: %s\nfeed:\n%s", strings.Join(names, "; "), raw)
}

func strp(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// protect protects a branch (as root).
func (g *gitServer) protect(t *testing.T, p *gitlab.Project, branch string, developersCanPush bool) {
	t.Helper()
	r, raw := g.JSON(t, http.MethodPut, fmt.Sprintf("/api/v4/projects/%d/repository/branches/%s/protect?developers_can_push=%v", p.ID, branch, developersCanPush),
		nil, nil, "PRIVATE-TOKEN", g.RootToken)
	if r.StatusCode != 200 {
		t.Fatalf("protect %s: %d %s", branch, r.StatusCode, raw)
	}
}

// lastActivity is a user's last_activity_on as root sees it.
func (g *gitServer) lastActivity(t *testing.T, u *fennectest.User) any {
	t.Helper()
	var out map[string]any
	if r, raw := g.JSON(t, http.MethodGet, fmt.Sprintf("/api/v4/users/%d", u.ID), nil, &out, "PRIVATE-TOKEN", g.RootToken); r.StatusCode != 200 {
		t.Fatalf("GET user: %d %s", r.StatusCode, raw)
	}
	return out["last_activity_on"]
}

// The life of a repository pushed with the git CLI: the first push of an
// empty project (which sets the default branch), more commits, branches,
// tags, a force push, deletes and a thin pack; the API sees each of them,
// and the feed has the pushes with their push_data.
func TestGitPushLifecycle(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	pusher := g.CreateUser(t, "pusher")
	p := g.project(t, "life", gitlab.PublicVisibility)
	g.addMember(t, p, pusher, gitlab.MaintainerPermissions)
	bare := g.bare(p)
	url := g.url(p, pusher.Username, pusher.Token)

	if a := g.lastActivity(t, pusher); a != nil {
		t.Fatalf("last_activity_on %v before any git access", a)
	}

	work := filepath.Join(t.TempDir(), "w")
	if _, stderr := c.okErr(t, t.TempDir(), "clone", url, work); !strings.Contains(stderr, "You appear to have cloned an empty repository") {
		t.Errorf("clone of the empty project: %s", stderr)
	}
	c.ok(t, work, "checkout", "-q", "-b", "main")
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	c.commit(t, work, "two", map[string]string{"b.txt": "2\n"})
	three := c.commit(t, work, "three", map[string]string{"dir/c.txt": "3\n"})
	c.ok(t, work, "push", "-q", "origin", "main")
	if got := refOf(t, bare, "refs/heads/main"); got != three {
		t.Fatalf("main on the server is %q, want %s", got, three)
	}

	t.Run("the first branch becomes the default", func(t *testing.T) {
		var got string
		if !eventually(func() bool {
			pr, _, err := g.Client.Projects.GetProject(p.ID, nil)
			if err == nil {
				got = pr.DefaultBranch
			}
			return got == "main"
		}) {
			t.Errorf("default_branch %q, want main", got)
		}
		fresh := newGitCLI(t).clone(t, g.url(p, "", ""))
		if got := c.ok(t, fresh, "symbolic-ref", "--short", "HEAD"); got != "main" {
			t.Errorf("a fresh clone checks out %s, want main", got)
		}
		if got := c.ok(t, fresh, "rev-parse", "HEAD"); got != three {
			t.Errorf("a fresh clone is at %s, want %s", got, three)
		}
	})

	c.commit(t, work, "four", map[string]string{"a.txt": "4\n"})
	five := c.commit(t, work, "five", map[string]string{"a.txt": "5\n"})
	c.ok(t, work, "push", "-q", "origin", "main")
	if got := refOf(t, bare, "refs/heads/main"); got != five {
		t.Errorf("main on the server is %q, want %s", got, five)
	}

	// A new branch.
	c.ok(t, work, "checkout", "-q", "-b", "feature")
	feat := c.commit(t, work, "feature work", map[string]string{"feature.txt": "f\n"})
	c.ok(t, work, "push", "-q", "-u", "origin", "feature")
	if br, _, err := g.Client.Branches.GetBranch(p.ID, "feature"); err != nil || br.Commit == nil || br.Commit.ID != feat {
		t.Errorf("GET branch feature: %+v %v", br, err)
	}
	branches, _, err := g.Client.Branches.ListBranches(p.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range branches {
		names = append(names, b.Name+"@"+b.Commit.ID)
	}
	if got, want := strings.Join(names, " "), "feature@"+feat+" main@"+five; got != want {
		t.Errorf("branches %s, want %s", got, want)
	}

	// Tags, annotated and lightweight.
	c.ok(t, work, "tag", "-a", "v1.0", "-m", "version one", "main")
	c.ok(t, work, "tag", "v1.0-light", "main~1")
	c.ok(t, work, "push", "-q", "origin", "v1.0", "v1.0-light")
	if got := bareGit(t, bare, "cat-file", "-t", "refs/tags/v1.0"); got != "tag" {
		t.Errorf("v1.0 on the server is a %s", got)
	}
	if got := refOf(t, bare, "refs/tags/v1.0-light"); got != c.ok(t, work, "rev-parse", "main~1") {
		t.Errorf("v1.0-light on the server is %s", got)
	}
	tags, _, err := g.Client.Tags.ListTags(p.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, tg := range tags {
		names = append(names, tg.Name+"@"+tg.Commit.ID)
	}
	sort.Strings(names)
	if got, want := strings.Join(names, " "), "v1.0-light@"+c.ok(t, work, "rev-parse", "main~1")+" v1.0@"+five; got != want {
		t.Errorf("tags %s, want %s", got, want)
	}

	// A force push of the feature branch.
	c.ok(t, work, "reset", "-q", "--hard", "HEAD~1")
	rewritten := c.commit(t, work, "feature rewritten", map[string]string{"feature.txt": "g\n"})
	if stderr := c.fail(t, work, "push", "origin", "feature"); !strings.Contains(stderr, "[rejected]") {
		t.Errorf("a non-fast-forward push without force: %s", stderr)
	}
	c.ok(t, work, "push", "-q", "origin", "+feature")
	if got := refOf(t, bare, "refs/heads/feature"); got != rewritten {
		t.Errorf("feature on the server is %s after a force push, want %s", got, rewritten)
	}

	// Deletes of a branch and of a tag.
	c.ok(t, work, "push", "-q", "origin", ":feature")
	if got := refOf(t, bare, "refs/heads/feature"); got != "" {
		t.Errorf("feature is still %s after its delete", got)
	}
	if _, resp, err := g.Client.Branches.GetBranch(p.ID, "feature"); err == nil || resp.StatusCode != 404 {
		t.Errorf("GET branch feature after its delete: %v", err)
	}
	c.ok(t, work, "push", "-q", "origin", "--delete", "v1.0-light")
	if got := refOf(t, bare, "refs/tags/v1.0-light"); got != "" {
		t.Errorf("v1.0-light is still %s after its delete", got)
	}
	if tags, _, err := g.Client.Tags.ListTags(p.ID, nil); err != nil || len(tags) != 1 || tags[0].Name != "v1.0" {
		t.Errorf("tags after a delete: %v", err)
	}

	// A thin pack: an edit of a big file the server has.
	c.ok(t, work, "checkout", "-q", "main")
	var big strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&big, "line %d of a file big enough for deltas\n", i)
	}
	c.commit(t, work, "big file", map[string]string{"big.txt": big.String()})
	c.ok(t, work, "push", "-q", "origin", "main")
	edited := strings.Replace(big.String(), "line 1500 of", "LINE 1500 OF", 1)
	edit := c.commit(t, work, "edit the big file", map[string]string{"big.txt": edited})
	_, stderr := c.okErr(t, work, "push", "--thin", "origin", "main")
	if got := refOf(t, bare, "refs/heads/main"); got != edit {
		t.Fatalf("main on the server is %s after a thin push, want %s (%s)", got, edit, stderr)
	}
	if got := bareGit(t, bare, "rev-parse", "main:big.txt"); got != c.ok(t, work, "rev-parse", "HEAD:big.txt") {
		t.Errorf("big.txt on the server is %s", got)
	}
	fsck(t, bare)

	// The commits API sees what was pushed.
	commits, _, err := g.Client.Commits.ListCommits(p.ID, &gitlab.ListCommitsOptions{RefName: gitlab.Ptr("main"), ListOptions: gitlab.ListOptions{PerPage: 100}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cm := range commits {
		ids = append(ids, cm.ID)
	}
	if got, want := strings.Join(ids, "\n"), c.ok(t, work, "rev-list", "main"); got != want {
		t.Errorf("commits API:\n%s\nwant:\n%s", got, want)
	}

	// The feed.
	isPush := func(e feedEvent, action, ref, refType string) bool {
		return e.ActionName == action && e.AuthorUsername == "pusher" && e.PushData != nil && e.PushData.Ref == ref && e.PushData.RefType == refType
	}
	g.waitEvents(t, p, map[string]func(feedEvent) bool{
		`"pushed new" main with 3 commits`: func(e feedEvent) bool {
			return isPush(e, "pushed new", "main", "branch") && e.PushData.CommitCount == 3 && e.PushData.CommitFrom == nil && strp(e.PushData.CommitTo) == three
		},
		`"pushed to" main with 2 commits`: func(e feedEvent) bool {
			return isPush(e, "pushed to", "main", "branch") && e.PushData.CommitCount == 2 && strp(e.PushData.CommitFrom) == three && strp(e.PushData.CommitTo) == five
		},
		`"pushed new" feature`: func(e feedEvent) bool {
			return isPush(e, "pushed new", "feature", "branch") && strp(e.PushData.CommitTo) == feat
		},
		`"pushed new" tag v1.0`: func(e feedEvent) bool {
			return isPush(e, "pushed new", "v1.0", "tag")
		},
		`"pushed to" main with the thin pack`: func(e feedEvent) bool {
			return isPush(e, "pushed to", "main", "branch") && e.PushData.CommitCount == 1 && strp(e.PushData.CommitTo) == edit
		},
	})

	// The pusher's activity.
	if a := g.lastActivity(t, pusher); a != today() {
		t.Errorf("last_activity_on %v after pushes, want %s", a, today())
	}

	// A clone over HTTP is activity too (only SSH and pushes counted).
	// git sends credentials only when asked (a 401), so the project is
	// made private for the reader's clone to be signed in.
	if _, _, err := g.Client.Projects.EditProject(p.ID, &gitlab.EditProjectOptions{Visibility: gitlab.Ptr(gitlab.PrivateVisibility)}); err != nil {
		t.Fatal(err)
	}
	reader := g.CreateUser(t, "reader")
	g.addMember(t, p, reader, gitlab.ReporterPermissions)
	if a := g.lastActivity(t, reader); a != nil {
		t.Fatalf("reader's last_activity_on %v before cloning", a)
	}
	c.ok(t, t.TempDir(), "clone", "-q", g.url(p, reader.Username, reader.Token), filepath.Join(t.TempDir(), "r"))
	if a := g.lastActivity(t, reader); a != today() {
		t.Errorf("reader's last_activity_on %v after an HTTP clone, want %s", a, today())
	}
}

// Another clone fetches and pulls what was pushed: commits, annotated and
// lightweight tags, and enough of them that git gzips its request.
func TestGitFetchAfterPush(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	p := g.project(t, "fetch", gitlab.PublicVisibility)
	work := c.newWork(t)
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	c.commit(t, work, "two", map[string]string{"a.txt": "2\n"})
	g.seed(t, p, work, "master")

	a := c.clone(t, g.rootURL(p))
	b := c.clone(t, g.rootURL(p))
	c.commit(t, b, "three", map[string]string{"a.txt": "3\n"})
	bHead := c.commit(t, b, "four", map[string]string{"b.txt": "4\n"})
	c.ok(t, b, "push", "-q", "origin", "master")

	c.ok(t, a, "fetch", "-q")
	if got := c.ok(t, a, "rev-parse", "origin/master"); got != bHead {
		t.Errorf("origin/master %s after fetch, want %s", got, bHead)
	}
	c.ok(t, a, "pull", "-q", "--ff-only")
	if got := c.ok(t, a, "rev-parse", "HEAD"); got != bHead {
		t.Errorf("HEAD %s after pull, want %s", got, bHead)
	}

	// Tags: annotated, lightweight, and forty more.
	c.ok(t, b, "tag", "-a", "rel-1", "-m", "release 1")
	c.ok(t, b, "tag", "light-1", "HEAD~1")
	for i := 0; i < 40; i++ {
		c.ok(t, b, "tag", fmt.Sprintf("bulk-%02d-with-a-longish-name", i), fmt.Sprintf("HEAD~%d", i%4))
	}
	c.ok(t, b, "push", "-q", "origin", "--tags")
	c.ok(t, a, "fetch", "-q", "--tags")
	if got, want := c.ok(t, a, "show-ref", "--tags"), c.ok(t, b, "show-ref", "--tags"); got != want {
		t.Errorf("tags after fetch --tags:\n%s\nwant:\n%s", got, want)
	}
	if got := c.ok(t, a, "cat-file", "-t", "rel-1"); got != "tag" {
		t.Errorf("rel-1 is a %s", got)
	}
	if got := c.ok(t, a, "rev-parse", "light-1"); got != c.ok(t, b, "rev-parse", "HEAD~1") {
		t.Errorf("light-1 is %s", got)
	}

	// Pull with tags.
	bHead = c.commit(t, b, "five", map[string]string{"c.txt": "5\n"})
	c.ok(t, b, "tag", "-a", "rel-2", "-m", "release 2")
	c.ok(t, b, "tag", "light-2")
	c.ok(t, b, "push", "-q", "origin", "master", "rel-2", "light-2")
	c.ok(t, a, "pull", "-q", "--tags", "--ff-only", "origin", "master")
	if got := c.ok(t, a, "rev-parse", "HEAD"); got != bHead {
		t.Errorf("HEAD %s after pull --tags, want %s", got, bHead)
	}
	if got, want := c.ok(t, a, "rev-parse", "rel-2", "light-2"), c.ok(t, b, "rev-parse", "rel-2", "light-2"); got != want {
		t.Errorf("rel-2, light-2 after pull --tags: %s, want %s", got, want)
	}
	c.ok(t, a, "fsck", "--strict", "--no-dangling")
	fsck(t, g.bare(p))
}

// A push of 1,000 commits.
func TestGitPushManyCommits(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	p := g.project(t, "many", gitlab.PublicVisibility)
	work := c.newWork(t)
	base := c.commit(t, work, "base", map[string]string{"README.md": "base\n"})
	g.seed(t, p, work, "master")

	clone := c.clone(t, g.rootURL(p))
	head := c.fastImport(t, clone, "master", 1000, "many")
	c.ok(t, clone, "push", "-q", "origin", "master")
	bare := g.bare(p)
	if got := refOf(t, bare, "refs/heads/master"); got != head {
		t.Fatalf("master on the server is %s, want %s", got, head)
	}
	if got := bareGit(t, bare, "rev-list", "--count", "master"); got != "1001" {
		t.Errorf("%s commits on the server, want 1001", got)
	}
	fresh := newGitCLI(t).clone(t, g.url(p, "", ""))
	if got := c.ok(t, fresh, "rev-list", "--count", "HEAD"); got != "1001" {
		t.Errorf("%s commits in a fresh clone, want 1001", got)
	}
	g.waitEvents(t, p, map[string]func(feedEvent) bool{`"pushed to" master with 1000 commits`: func(e feedEvent) bool {
		return e.ActionName == "pushed to" && e.PushData != nil && e.PushData.Ref == "master" && e.PushData.RefType == "branch" &&
			e.PushData.CommitCount == 1000 && strp(e.PushData.CommitFrom) == base && strp(e.PushData.CommitTo) == head
	}})
	fsck(t, bare)
}

// Two clones push to one branch at once, five times: each time exactly one
// wins, the other is rejected, and the repository stays consistent.
func TestGitPushConcurrent(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	p := g.project(t, "race", gitlab.PublicVisibility)
	work := c.newWork(t)
	c.commit(t, work, "base", map[string]string{"README.md": "base\n"})
	g.seed(t, p, work, "master")
	bare := g.bare(p)
	clones := []string{c.clone(t, g.rootURL(p)), c.clone(t, g.rootURL(p))}
	const rounds = 5
	for round := 0; round < rounds; round++ {
		heads := make([]string, 2)
		for i, dir := range clones {
			c.ok(t, dir, "fetch", "-q")
			c.ok(t, dir, "reset", "-q", "--hard", "origin/master")
			heads[i] = c.commit(t, dir, fmt.Sprintf("round %d from %d", round, i), map[string]string{fmt.Sprintf("f-%d-%d.txt", round, i): "x\n"})
		}
		start := make(chan struct{})
		errs := make([]error, 2)
		stderrs := make([]string, 2)
		var wg sync.WaitGroup
		for i, dir := range clones {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, stderrs[i], errs[i] = c.try(t, dir, nil, "push", "origin", "master")
			}()
		}
		close(start)
		wg.Wait()
		won := -1
		for i, err := range errs {
			if err == nil {
				if won >= 0 {
					t.Fatalf("round %d: both pushes succeeded", round)
				}
				won = i
			}
		}
		if won < 0 {
			t.Fatalf("round %d: both pushes failed:\n%s\n%s", round, stderrs[0], stderrs[1])
		}
		if lost := stderrs[1-won]; !strings.Contains(lost, "rejected") {
			t.Errorf("round %d: the loser's stderr:\n%s", round, lost)
		}
		if got := refOf(t, bare, "refs/heads/master"); got != heads[won] {
			t.Fatalf("round %d: master is %s, want the winner's %s", round, got, heads[won])
		}
	}
	if got := bareGit(t, bare, "rev-list", "--count", "master"); got != fmt.Sprint(1+rounds) {
		t.Errorf("%s commits on master, want %d", got, 1+rounds)
	}
	fsck(t, bare)
}

// Protected branches: developers may not push unless developers_can_push,
// masters may; force pushes and deletes are refused for everyone; an
// --atomic push with one refused ref changes nothing.
func TestGitPushProtected(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	dev := g.CreateUser(t, "dev")
	mas := g.CreateUser(t, "mas")
	p := g.project(t, "prot", gitlab.PublicVisibility)
	g.addMember(t, p, dev, gitlab.DeveloperPermissions)
	g.addMember(t, p, mas, gitlab.MaintainerPermissions)
	work := c.newWork(t)
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	c.commit(t, work, "two", map[string]string{"a.txt": "2\n"})
	g.seed(t, p, work, "master", "master:refs/heads/release")
	g.protect(t, p, "master", false)
	g.protect(t, p, "release", false)
	bare := g.bare(p)
	devURL, masURL, rootURL := g.url(p, dev.Username, dev.Token), g.url(p, mas.Username, mas.Token), g.rootURL(p)

	refused := func(t *testing.T, what, stderr, ref string) {
		t.Helper()
		// "! [remote rejected] src -> ref (reason)", or for a delete
		// "! [remote rejected] ref (reason)".
		if !strings.Contains(stderr, "! [remote rejected] ") || !(strings.Contains(stderr, " -> "+ref+" (") || strings.Contains(stderr, "] "+ref+" (")) {
			t.Errorf("%s: git should show [remote rejected] for %s:\n%s", what, ref, stderr)
		}
		if !strings.Contains(strings.ToLower(stderr), "protected") {
			t.Errorf("%s: the refusal does not say the branch is protected:\n%s", what, stderr)
		}
	}

	d := c.clone(t, devURL)
	c.commit(t, d, "dev on master", map[string]string{"dev.txt": "d\n"})
	before := refOf(t, bare, "refs/heads/master")
	refused(t, "developer push to master", c.fail(t, d, "push", "origin", "master"), "master")
	if got := refOf(t, bare, "refs/heads/master"); got != before {
		t.Fatalf("master moved to %s on a refused push", got)
	}

	m := c.clone(t, masURL)
	masHead := c.commit(t, m, "master-level on master", map[string]string{"mas.txt": "m\n"})
	c.ok(t, m, "push", "-q", "origin", "master")
	if got := refOf(t, bare, "refs/heads/master"); got != masHead {
		t.Fatalf("master is %s after a master-level push, want %s", got, masHead)
	}

	// Force pushes and deletes: refused for a master-level user and for an
	// administrator.
	c.ok(t, m, "reset", "-q", "--hard", "HEAD~1")
	c.commit(t, m, "rewrite", map[string]string{"mas.txt": "rewritten\n"})
	for who, u := range map[string]string{"master-level": masURL, "admin": rootURL} {
		refused(t, who+" force push to master", c.fail(t, m, "push", u, "+master:master"), "master")
		refused(t, who+" delete of release", c.fail(t, m, "push", u, ":release"), "release")
	}
	if got := refOf(t, bare, "refs/heads/master"); got != masHead {
		t.Fatalf("master is %s after refused force pushes, want %s", got, masHead)
	}
	releaseHead := refOf(t, bare, "refs/heads/release")
	if releaseHead == "" {
		t.Fatal("release was deleted")
	}

	// developers_can_push lets developers push, not force or delete.
	g.protect(t, p, "release", true)
	c.ok(t, d, "fetch", "-q")
	c.ok(t, d, "checkout", "-q", "-b", "rel", "origin/release")
	relHead := c.commit(t, d, "dev on release", map[string]string{"rel.txt": "r\n"})
	c.ok(t, d, "push", "-q", "origin", "rel:release")
	if got := refOf(t, bare, "refs/heads/release"); got != relHead {
		t.Fatalf("release is %s after a developer push with developers_can_push, want %s", got, relHead)
	}
	c.ok(t, d, "reset", "-q", "--hard", "HEAD~1")
	c.commit(t, d, "dev rewrite", map[string]string{"rel.txt": "rewritten\n"})
	refused(t, "developer force push to release", c.fail(t, d, "push", "origin", "+rel:release"), "release")
	refused(t, "developer delete of release", c.fail(t, d, "push", "origin", ":release"), "release")
	if got := refOf(t, bare, "refs/heads/release"); got != relHead {
		t.Fatalf("release is %s after refused pushes, want %s", got, relHead)
	}

	// --atomic: the server must offer it, and one refused ref refuses all.
	r := g.raw(t, http.MethodGet, "/"+p.PathWithNamespace+".git/info/refs?service=git-receive-pack", dev.Username, dev.Token, nil)
	if lines, _ := pktLines(r.body); r.status != 200 || len(lines) < 3 || !strings.Contains(lines[2], "atomic") {
		t.Errorf("receive-pack advertisement without atomic: %d %q", r.status, clip(r.body))
	}
	c.ok(t, d, "checkout", "-q", "-B", "master", "origin/master")
	c.ok(t, d, "reset", "-q", "--hard", "origin/master")
	c.commit(t, d, "atomic", map[string]string{"atomic.txt": "a\n"})
	stderr := c.fail(t, d, "push", "--atomic", "origin", "HEAD:refs/heads/atomic-new", "HEAD:master")
	if strings.Contains(stderr, "does not support --atomic") {
		t.Errorf("git: %s", stderr)
	}
	if got := refOf(t, bare, "refs/heads/atomic-new"); got != "" {
		t.Errorf("an --atomic push with a refused ref created atomic-new (%s):\n%s", got, stderr)
	}
	if got := refOf(t, bare, "refs/heads/master"); got != masHead {
		t.Errorf("master is %s after an --atomic push", got)
	}
	stderr = c.fail(t, d, "push", "origin", "HEAD:refs/heads/non-atomic", "HEAD:master")
	if got := refOf(t, bare, "refs/heads/non-atomic"); got != c.ok(t, d, "rev-parse", "HEAD") {
		t.Errorf("without --atomic the allowed ref is created: %q\n%s", got, stderr)
	}
	refused(t, "developer push to master in a two-ref push", stderr, "master")
	if got := refOf(t, bare, "refs/heads/master"); got != masHead {
		t.Errorf("master is %s after a refused push", got)
	}
	fsck(t, bare)
}

// An archived project refuses pushes (and still serves clones) until it is
// unarchived.
func TestGitPushArchived(t *testing.T) {
	t.Parallel()
	g := startGit(t)
	c := g.cli
	dev := g.CreateUser(t, "dev")
	p := g.project(t, "old", gitlab.PublicVisibility)
	g.addMember(t, p, dev, gitlab.DeveloperPermissions)
	work := c.newWork(t)
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.seed(t, p, work, "master")
	bare := g.bare(p)
	if _, _, err := g.Client.Projects.ArchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	clone := c.clone(t, g.url(p, dev.Username, dev.Token))
	head := c.commit(t, clone, "on an archived project", map[string]string{"b.txt": "2\n"})
	before := repoState(t, bare)
	for who, u := range map[string]string{"developer": g.url(p, dev.Username, dev.Token), "admin": g.rootURL(p)} {
		stderr := c.fail(t, clone, "push", u, "master", "HEAD:refs/heads/new")
		if !strings.Contains(strings.ToLower(stderr), "archived") {
			t.Errorf("%s: the refusal does not say the project is archived:\n%s", who, stderr)
		}
	}
	sameState(t, "pushes to an archived project", before, repoState(t, bare))
	if _, _, err := g.Client.Projects.UnarchiveProject(p.ID); err != nil {
		t.Fatal(err)
	}
	c.ok(t, clone, "push", "-q", "origin", "master")
	if got := refOf(t, bare, "refs/heads/master"); got != head {
		t.Errorf("master is %s after unarchiving, want %s", got, head)
	}
	fsck(t, bare)
}

// A push bigger than max_push_bytes is refused cleanly and leaves the
// repository as it was; smaller pushes go on working.
func TestGitMaxPushSize(t *testing.T) {
	t.Parallel()
	g := startGit(t, fennectest.WithModuleConfig(repository.SectionName, func(c *repository.Config) { c.MaxPushBytes = 256 << 10 }))
	c := g.cli
	p := g.project(t, "limited", gitlab.PublicVisibility)
	work := c.newWork(t)
	c.commit(t, work, "one", map[string]string{"a.txt": "1\n"})
	g.seed(t, p, work, "master")
	bare := g.bare(p)
	clone := c.clone(t, g.rootURL(p))
	small := c.commit(t, clone, "small", map[string]string{"b.txt": "small\n"})
	c.ok(t, clone, "push", "-q", "origin", "master")
	if got := refOf(t, bare, "refs/heads/master"); got != small {
		t.Fatalf("master is %s after a small push", got)
	}

	noise := make([]byte, 1<<20) // incompressible: the pack is over 1 MiB
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	big := c.commit(t, clone, "big", map[string]string{"noise.bin": string(noise)})
	before := repoState(t, bare)
	stderr := c.fail(t, clone, "push", "origin", "master")
	t.Logf("git on a push over the limit:\n%s", stderr)
	sameState(t, "a push over the limit", before, repoState(t, bare))

	// The same pack by raw HTTP: a 4xx, or an unpack error.
	pack := packObjects(t, c, clone, "--revs", big+"\n^"+small+"\n")
	r := g.raw(t, http.MethodPost, "/"+p.PathWithNamespace+".git/git-receive-pack", "root", g.RootToken,
		bytes.NewReader(receive(pack, small+" "+big+" refs/heads/master")), "Content-Type", "application/x-git-receive-pack-request")
	refusedPush(t, "raw push over the limit", r, "refs/heads/master")
	sameState(t, "a raw push over the limit", before, repoState(t, bare))

	c.ok(t, clone, "reset", "-q", "--hard", "HEAD~1")
	after := c.commit(t, clone, "small again", map[string]string{"c.txt": hex.EncodeToString(noise[:1000])})
	c.ok(t, clone, "push", "-q", "origin", "master")
	if got := refOf(t, bare, "refs/heads/master"); got != after {
		t.Errorf("master is %s after a small push following a refused one, want %s", got, after)
	}
	fsck(t, bare)
}
