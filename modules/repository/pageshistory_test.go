package repository_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/web"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

const hostileFile = "<b>bold</b>.txt"

// TestHistoryPagesCommits: the commits page lists 40 commits a page,
// newest first, with a next link only when a 41st exists; a path's
// history, a ref with a slash and hostile names work and stay escaped.
func TestHistoryPagesCommits(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "hist", "public")
	first := stocktest.CommitFiles(t, s.Client, p.ID, "master", "first <commit>", map[string]string{hostileFile: "bold\n"})
	var last *gitlab.Commit
	for i := 2; i <= 40; i++ {
		last = stocktest.CommitFiles(t, s.Client, p.ID, "master", fmt.Sprintf("commit %02d", i), map[string]string{fmt.Sprintf("f%02d", i): "x\n"})
	}
	c := s.NewBrowser(t)

	page := c.Get(t, "/root/hist/-/commits/master")
	wantPage(t, "40 commits", page, 200, `<h1>Commits</h1>`, `<a href="/root/hist/-/commits" aria-current="page">Commits</a>`,
		`<a href="/root/hist/-/commit/`+last.ID+`">commit 40</a>`, `first &lt;commit&gt;`,
		`<a class="mono" href="/root/hist/-/commit/`+first.ID+`">`+first.ID[:8]+`</a>`, `<time datetime="`, `class="avatar avatar-s`,
		`<option value="master" selected>master</option>`)
	if strings.Contains(page.Body, `rel="next"`) || strings.Contains(page.Body, `rel="prev"`) {
		t.Errorf("40 commits have another page:\n%s", page.Body)
	}
	if strings.Index(page.Body, "commit 40") > strings.Index(page.Body, "commit 39") {
		t.Error("the commits are not newest first")
	}
	wantPage(t, "default ref", c.Get(t, "/root/hist/-/commits"), 200, `commit 40</a>`)

	newest := stocktest.CommitFiles(t, s.Client, p.ID, "master", "commit 41", map[string]string{"f41": "x\n"})
	page = c.Get(t, "/root/hist/-/commits/master")
	wantPage(t, "41 commits", page, 200, `commit 41</a>`, `<a href="/root/hist/-/commits/master?page=2" rel="next">Next</a>`)
	if strings.Contains(page.Body, "first &lt;commit&gt;") {
		t.Error("page 1 lists the 41st commit")
	}
	page = c.Get(t, "/root/hist/-/commits/master?page=2")
	wantPage(t, "page 2", page, 200, `first &lt;commit&gt;`, `<a href="/root/hist/-/commits/master?page=1" rel="prev">Previous</a>`)
	if strings.Contains(page.Body, `rel="next"`) || strings.Contains(page.Body, newest.ID) {
		t.Errorf("page 2 is not the last:\n%s", page.Body)
	}

	// A file's history, its name escaped; a ref with a slash.
	fileHist := "/root/hist/-/commits/master/" + web.EscapePath(hostileFile)
	page = c.Get(t, fileHist)
	wantPage(t, "file history", page, 200, `<h1>Commits of <bdi>&lt;b&gt;bold&lt;/b&gt;.txt</bdi></h1>`, `first &lt;commit&gt;`)
	if strings.Contains(page.Body, "<b>bold") || strings.Contains(page.Body, "commit 02") {
		t.Errorf("file history:\n%s", page.Body)
	}
	if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature/x"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	onFeature := stocktest.CommitFiles(t, s.Client, p.ID, "feature/x", "on <feature>", map[string]string{"dir/f": "y\n"})
	wantPage(t, "feature/x", c.Get(t, "/root/hist/-/commits/feature/x/dir"), 200, `<h1>Commits of <bdi>dir</bdi></h1>`,
		`/root/hist/-/commit/`+onFeature.ID+`">on &lt;feature&gt;</a>`, `<option value="feature/x" selected>feature/x</option>`)
	wantRedirect(t, "switch ref", c.Get(t, "/root/hist/-/commits?ref=feature%2Fx&path=dir"), 302, "/root/hist/-/commits/feature/x/dir")
	wantPage(t, "unknown ref", c.Get(t, "/root/hist/-/commits/nope"), 404, `<h1>Page not found</h1>`)
	wantPage(t, "dot dot", c.Get(t, "/root/hist/-/commits/master/%2E%2E/x"), 404, `<h1>Page not found</h1>`)
}

// TestHistoryPagesCommit: a commit's page shows its message, author,
// parents, stats and diff, lines escaped and classed; a rename is "old →
// new"; a diff longer than 2,000 lines is cut with a note and collapsed.
func TestHistoryPagesCommit(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "one", "public")
	var long strings.Builder
	for i := range 2100 {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	first := stocktest.CommitFiles(t, s.Client, p.ID, "master", "first", map[string]string{"a.txt": "one\ntwo\nthree\n", "old.txt": "moved\n"})
	second, _, err := s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("change <things>\n\nThe body <i>here</i>.\n"), Actions: []*gitlab.CommitActionOptions{
			{Action: gitlab.Ptr(gitlab.FileUpdate), FilePath: gitlab.Ptr("a.txt"), Content: gitlab.Ptr("one\n<script>2</script>\nthree\n")},
			{Action: gitlab.Ptr(gitlab.FileMove), PreviousPath: gitlab.Ptr("old.txt"), FilePath: gitlab.Ptr("new.txt")},
			{Action: gitlab.Ptr(gitlab.FileCreate), FilePath: gitlab.Ptr(hostileFile), Content: gitlab.Ptr(long.String())},
		}})
	if err != nil {
		t.Fatal(err)
	}
	c := s.NewBrowser(t)
	page := c.Get(t, "/root/one/-/commit/"+second.ID)
	wantPage(t, "commit", page, 200, `<h1>change &lt;things&gt;</h1>`, `<pre class="plain">The body &lt;i&gt;here&lt;/i&gt;.</pre>`,
		`<span>Administrator</span>`, `<time datetime="`, `Parent <a class="mono" href="/root/one/-/commit/`+first.ID+`">`+first.ID[:8]+`</a>`,
		`3 files changed, <span class="ok">2102 additions</span>, <span class="bad">2 deletions</span>`,
		`<tr class="del"><td class="num">2</td><td class="num"></td><td>-two</td></tr>`,
		`<tr class="add"><td class="num"></td><td class="num">2</td><td>&#43;&lt;script&gt;2&lt;/script&gt;</td></tr>`,
		`<tr><td class="num">1</td><td class="num">1</td><td> one</td></tr>`,
		`<span class="badge">renamed</span> <bdi>old.txt</bdi> → <bdi>new.txt</bdi>`,
		`<bdi>&lt;b&gt;bold&lt;/b&gt;.txt</bdi>`, `101 more lines of this diff are not shown.`,
		`href="/root/one/-/tree/`+second.ID+`">Browse files</a>`, `<a href="/root/one/-/commits" aria-current="page">Commits</a>`)
	if strings.Contains(page.Body, "<script>2") || strings.Contains(page.Body, "<b>bold") || strings.Contains(page.Body, "&#43;line 2050") || !strings.Contains(page.Body, "&#43;line 1998") {
		t.Errorf("the diff is not escaped or not bounded")
	}
	// The long file's diff starts collapsed; the short ones open.
	if !strings.Contains(page.Body, `<details class="box diff" id="diff-0">`) || !strings.Contains(page.Body, `<details class="box diff" id="diff-1" open>`) {
		t.Errorf("collapsing:\n%.3000s", page.Body)
	}
	wantPage(t, "root commit", c.Get(t, "/root/one/-/commit/"+first.ID), 200, `No parents (the first commit)`, `<span class="badge">added</span> <bdi>a.txt</bdi>`)
	wantPage(t, "short sha", c.Get(t, "/root/one/-/commit/"+second.ID[:8]), 200, `<h1>change &lt;things&gt;</h1>`)
	wantPage(t, "unknown commit", c.Get(t, "/root/one/-/commit/0123456789abcdef0123456789abcdef01234567"), 404, `<h1>Page not found</h1>`)
	wantPage(t, "hostile sha", c.Get(t, "/root/one/-/commit/%3Cscript%3E"), 404, `<h1>Page not found</h1>`)
}

// TestHistoryPagesRefs: the branches page marks the default and protected
// branches and links each to its tree (a slash kept, hostile names
// escaped); the tags page shows annotated messages and commits.
func TestHistoryPagesRefs(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "tagged", "public")
	first := stocktest.CommitFiles(t, s.Client, p.ID, "master", "first <commit>", map[string]string{"a": "a\n"})
	for _, b := range []string{"feature/x", "x<b>y"} {
		if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(b), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Client.ProtectedBranches.ProtectRepositoryBranches(p.ID, &gitlab.ProtectRepositoryBranchesOptions{Name: gitlab.Ptr("feature/*")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Client.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("v1.0"), Ref: gitlab.Ptr("master"),
		Message: gitlab.Ptr("Release <one>")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Client.Tags.CreateTag(p.ID, &gitlab.CreateTagOptions{TagName: gitlab.Ptr("light"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	c := s.NewBrowser(t)
	page := c.Get(t, "/root/tagged/-/branches")
	wantPage(t, "branches", page, 200, `<h1>Branches</h1>`, `<caption class="muted">3 branches</caption>`,
		`<a href="/root/tagged/-/branches" aria-current="page">Branches</a>`,
		`<a href="/root/tagged/-/tree/master"><bdi>master</bdi></a> <span class="badge">default</span></td>`,
		`<a href="/root/tagged/-/tree/feature/x"><bdi>feature/x</bdi></a> <span class="badge warn">protected</span></td>`,
		`<a href="/root/tagged/-/tree/x%3Cb%3Ey"><bdi>x&lt;b&gt;y</bdi></a>`,
		`<a href="/root/tagged/-/commit/`+first.ID+`">first &lt;commit&gt;</a>`, `<time datetime="`)
	if strings.Contains(page.Body, "x<b>y") {
		t.Error("a branch name is not escaped")
	}
	wantPage(t, "tags", c.Get(t, "/root/tagged/-/tags"), 200, `<h1>Tags</h1>`, `<caption class="muted">2 tags</caption>`,
		`<a href="/root/tagged/-/tree/v1.0"><bdi>v1.0</bdi></a></td><td>Release &lt;one&gt;</td>`,
		`<a href="/root/tagged/-/tree/light"><bdi>light</bdi></a></td><td></td>`,
		`<a class="mono" href="/root/tagged/-/commit/`+first.ID+`">`+first.ID[:8]+`</a> first &lt;commit&gt;`)
	wantPage(t, "branches/x", c.Get(t, "/root/tagged/-/branches/x"), 404, `<h1>Page not found</h1>`)
}

// TestHistoryPagesPermissions: a private project's history pages are
// the API's: anonymous visitors are sent to sign in, non-members get the
// 404 page, members the pages.
func TestHistoryPagesPermissions(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "secret", "private")
	c := stocktest.CommitFiles(t, s.Client, p.ID, "master", "secret commit", map[string]string{"README": "top secret\n"})
	member, other := s.CreateUser(t, "member"), s.CreateUser(t, "other")
	stocktest.AddMember(t, s.Client, p.ID, member.ID, gitlab.ReporterPermissions)
	paths := []string{"/root/secret/-/commits/master", "/root/secret/-/commit/" + c.ID, "/root/secret/-/branches", "/root/secret/-/tags"}
	anon := s.NewBrowser(t)
	o := s.SignedIn(t, other.Username, other.Password)
	m := s.SignedIn(t, member.Username, member.Password)
	for _, path := range paths {
		wantRedirect(t, "anonymous "+path, anon.Get(t, path), 302, "/users/sign_in?return_to="+url.QueryEscape(path))
		page := o.Get(t, path)
		wantPage(t, "non-member "+path, page, 404, `<h1>Page not found</h1>`)
		if strings.Contains(page.Body, "secret commit") {
			t.Errorf("a non-member sees %s", path)
		}
		wantPage(t, "member "+path, m.Get(t, path), 200)
	}
	wantPage(t, "member commit", m.Get(t, paths[1]), 200, `<h1>secret commit</h1>`, `top secret`)
}

// TestHistoryPagesCompare: the comparison of two refs (one with a
// slash) lists the commits only the second has and their combined diff.
func TestHistoryPagesCompare(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "cmp", "public")
	stocktest.CommitFiles(t, s.Client, p.ID, "master", "base", map[string]string{"a.txt": "one\n"})
	if _, _, err := s.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("feature/x"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	c1 := stocktest.CommitFiles(t, s.Client, p.ID, "feature/x", "add <b>", map[string]string{hostileFile: "b\n"})
	c2 := stocktest.CommitFiles(t, s.Client, p.ID, "feature/x", "second", map[string]string{"c.txt": "c\n"})
	c := s.NewBrowser(t)
	page := c.Get(t, "/root/cmp/-/compare/master...feature/x")
	wantPage(t, "compare", page, 200, `<h1>Compare <bdi>master</bdi>...<bdi>feature/x</bdi></h1>`, `<h2>2 commits</h2>`, `<h2>2 files changed</h2>`,
		`<a href="/root/cmp/-/commit/`+c1.ID+`">add &lt;b&gt;</a>`, `<a href="/root/cmp/-/commit/`+c2.ID+`">second</a>`,
		`<span class="badge">added</span> <bdi>&lt;b&gt;bold&lt;/b&gt;.txt</bdi>`, `<tr class="add"><td class="num"></td><td class="num">1</td><td>&#43;c</td></tr>`,
		`<a href="/root/cmp/-/commits" aria-current="page">Commits</a>`)
	if strings.Index(page.Body, ">second</a>") > strings.Index(page.Body, ">add &lt;b&gt;</a>") {
		t.Error("the compared commits are not newest first")
	}
	wantPage(t, "same", c.Get(t, "/root/cmp/-/compare/master...master"), 200, `These are the same commit`)
	wantPage(t, "form", c.Get(t, "/root/cmp/-/compare"), 200, `<input id="compare-from" name="from" value="master" required>`)
	wantRedirect(t, "form answer", c.Get(t, "/root/cmp/-/compare?from=master&to=feature%2Fx"), 302, "/root/cmp/-/compare/master...feature/x")
	wantPage(t, "unknown ref", c.Get(t, "/root/cmp/-/compare/master...nope"), 404, `<h1>Page not found</h1>`)
	wantPage(t, "no dots", c.Get(t, "/root/cmp/-/compare/master"), 404, `<h1>Page not found</h1>`)
}

// TestHistoryPagesCommitFileBound: a commit of 501 files shows 500 of
// them and says one is left out.
func TestHistoryPagesCommitFileBound(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "many", "public")
	var actions []*gitlab.CommitActionOptions
	for i := range 501 {
		actions = append(actions, &gitlab.CommitActionOptions{Action: gitlab.Ptr(gitlab.FileCreate),
			FilePath: gitlab.Ptr(fmt.Sprintf("f%03d", i)), Content: gitlab.Ptr("x\n")})
	}
	commit, _, err := s.Client.Commits.CreateCommit(p.ID, &gitlab.CreateCommitOptions{Branch: gitlab.Ptr("master"),
		CommitMessage: gitlab.Ptr("many"), Actions: actions})
	if err != nil {
		t.Fatal(err)
	}
	page := s.NewBrowser(t).Get(t, "/root/many/-/commit/"+commit.ID)
	wantPage(t, "501 files", page, 200, `501 files changed`, `Only the first 500 changed files are shown; 1 more file left out.`,
		`id="diff-499"`, `<bdi>f499</bdi>`)
	if strings.Contains(page.Body, `id="diff-500"`) || strings.Contains(page.Body, "<bdi>f500</bdi>") {
		t.Error("the 501st file is shown")
	}
}

// TestHistoryPagesHideWhitespace: ?w=1 on a commit and a comparison
// shows a re-indented line as unchanged, keeps the real change beside
// it, leaves out a file whose change is whitespace alone (and says so),
// and links back to the full diff.
func TestHistoryPagesHideWhitespace(t *testing.T) {
	t.Parallel()
	s := stocktest.Start(t)
	p := stocktest.NewProject(t, s.Client, "spaces", "public")
	first := stocktest.CommitFiles(t, s.Client, p.ID, "master", "first", map[string]string{
		"a.go": "func f() {\n\treturn 1\n}\n", "b.txt": "one two\n"})
	c := stocktest.CommitFiles(t, s.Client, p.ID, "master", "reindent", map[string]string{
		"a.go": "func f() {\n        return 2\n}\n", "b.txt": "one   two  \n"})
	b := s.NewBrowser(t)
	full := b.Get(t, "/root/spaces/-/commit/"+c.ID)
	wantPage(t, "full diff", full, 200, `<a href="/root/spaces/-/commit/`+c.ID+`?w=1">Hide whitespace changes</a>`, `<bdi>b.txt</bdi>`)
	hidden := b.Get(t, "/root/spaces/-/commit/"+c.ID+"?w=1")
	wantPage(t, "hidden", hidden, 200, `<a href="/root/spaces/-/commit/`+c.ID+`">Show whitespace changes</a>`,
		`(1 file with whitespace changes only not shown)`, `<bdi>a.go</bdi>`)
	if strings.Contains(hidden.Body, "<bdi>b.txt</bdi>") {
		t.Error("the whitespace-only file is shown with ?w=1")
	}
	cmp := b.Get(t, "/root/spaces/-/compare/"+first.ID+"...master?w=1")
	wantPage(t, "compare hidden", cmp, 200, `Show whitespace changes</a>`, `(1 file with whitespace changes only not shown)`)
}
