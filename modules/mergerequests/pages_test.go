package mergerequests_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/modules/stock/stocktest"
)

// wantPage checks a page's status and that it holds each fragment.
func wantPage(t *testing.T, what string, p fennectest.Page, status int, fragments ...string) {
	t.Helper()
	p.Want(t, what, status, fragments...)
}

func wantNot(t *testing.T, what string, p fennectest.Page, fragments ...string) {
	t.Helper()
	p.WantNot(t, what, fragments...)
}

// formFields are the named inputs of the form with id on a page.
func formFields(t *testing.T, p fennectest.Page, id string) url.Values {
	t.Helper()
	_, after, ok := strings.Cut(p.Body, `id="`+id+`"`)
	if !ok {
		t.Fatalf("no form %s on the page:\n%.8000s", id, p.Body)
	}
	form, _, _ := strings.Cut(after, "</form>")
	v := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`).FindAllStringSubmatch(form, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	return v
}

// TestMergeRequestPagesFlow: the list, the Overview with its merge box as
// each role sees it, a line comment made on the Changes tab (seen by the
// API with its position, at its line, in the timeline), outdated by a
// later push, and a merge from the page while a second merge of the same
// page is refused with a clear page and merges nothing twice.
func TestMergeRequestPagesFlow(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "review", "private")
	w := s.clone(t, "alice", alice.Token, "alice/review")
	w.commit("base", map[string]string{"a.txt": "one\ntwo\nthree\n", "c.txt": "x  y\n"})
	w.git("push", "-q", "origin", "HEAD:master")
	w.git("checkout", "-q", "-b", "feature")
	head := w.commit("Make two loud", map[string]string{"a.txt": "one\nTWO\nthree\n", "b.go": "package b\n\nfunc B() {}\n", "c.txt": "x y\n"})
	w.git("push", "-q", "origin", "feature")
	s.Drain(t)
	mr := openMR(t, alice.Client, p.ID, "feature", "master", `Loud <script>alert(1)</script>`)
	bob, carol := s.CreateUser(t, "bob"), s.CreateUser(t, "carol")
	stocktest.AddMember(t, alice.Client, p.ID, bob.ID, gitlab.MaintainerPermissions)
	stocktest.AddMember(t, alice.Client, p.ID, carol.ID, gitlab.ReporterPermissions)
	const base = "/alice/review/-/merge_requests"
	const title = `<bdi>Loud &lt;script&gt;alert(1)&lt;/script&gt;</bdi>`

	// The list, with its counts; an anonymous visitor is sent to sign in.
	a := s.SignedIn(t, "alice", alice.Password)
	list := a.Get(t, base)
	wantPage(t, "list", list, 200, `Open <span class="count">1</span>`, `Merged <span class="count">0</span>`,
		`<a href="`+base+`/1">`+title+`</a>`, `<code><bdi>feature</bdi></code> → <code><bdi>master</bdi></code>`,
		`>Merge requests</a>`)
	wantNot(t, "list", list, "<script>alert(1)")
	wantPage(t, "search", a.Get(t, base+"?state=all&search=nothing"), 200, `No merge requests match these filters.`, `All <span class="count">0</span>`)
	anon := s.NewBrowser(t).Get(t, base+"/1")
	if anon.StatusCode != http.StatusFound || anon.Header.Get("Location") != "/users/sign_in?return_to="+url.QueryEscape(base+"/1") {
		t.Fatalf("anonymous: %d %q", anon.StatusCode, anon.Header.Get("Location"))
	}

	// The merge box as each sees it: a Reporter may not merge; WIP stops
	// everyone.
	c := s.SignedIn(t, "carol", carol.Password)
	page := c.Get(t, base+"/1")
	wantPage(t, "reporter's overview", page, 200, `<h1>`+title+`</h1>`, `You are not allowed to merge into master.`)
	wantNot(t, "reporter's overview", page, `class="merge-form"`)
	if _, _, err := alice.Client.MergeRequests.UpdateMergeRequest(p.ID, mr.IID, &gitlab.UpdateMergeRequestOptions{Title: gitlab.Ptr("WIP: loud")}); err != nil {
		t.Fatal(err)
	}
	b := s.SignedIn(t, "bob", bob.Password)
	wantPage(t, "work in progress", b.Get(t, base+"/1"), 200, `This merge request is a work in progress`)
	if _, _, err := alice.Client.MergeRequests.UpdateMergeRequest(p.ID, mr.IID, &gitlab.UpdateMergeRequestOptions{Title: gitlab.Ptr(`Loud <script>alert(1)</script>`)}); err != nil {
		t.Fatal(err)
	}

	// A line comment on the Changes tab: the link, the form under the
	// line, the thread the API sees with its position.
	changes := b.Get(t, base+"/1/diffs")
	link := base + "/1/diffs?line=0_0_2#line-form"
	wantPage(t, "changes", changes, 200, `<tr id="L0_0_2" class="add">`, `href="`+link+`"`, `<a href="#diff-1"><bdi>b.go</bdi></a>`,
		`<span class="hl-`)
	// The switches: whitespace-only changes hidden (and no line links:
	// comments name lines of the whole diff); side by side.
	spaces := b.Get(t, base+"/1/diffs?w=1")
	wantPage(t, "whitespace hidden", spaces, 200, `(1 file with whitespace changes only not shown)`, `>Show whitespace changes</a>`,
		`<a href="#diff-1"><bdi>b.go</bdi></a>`)
	wantNot(t, "whitespace hidden", spaces, `<bdi>c.txt</bdi>`, `comment on this line`)
	wantPage(t, "side by side", b.Get(t, base+"/1/diffs?view=parallel"), 200, `<table class="code parallel">`,
		`<td class="num del" id="L0_2_0">2</td>`, `<td class="num add" id="L0_0_2">2</td>`, `href="`+base+`/1/diffs?view=parallel&amp;line=0_0_2#line-form"`)
	wantPage(t, "side by side form", b.Get(t, base+"/1/diffs?view=parallel&line=0_0_2"), 200, `id="line-form"`,
		`<input type="hidden" name="new_line" value="2">`)
	form := b.Get(t, base+"/1/diffs?line=0_0_2")
	wantPage(t, "line form", form, 200, `id="line-form"`, `<input type="hidden" name="new_line" value="2">`,
		`<input type="hidden" name="head_sha" value="`+head+`">`)
	wantNot(t, "line form", form, `name="old_line"`)
	fields := formFields(t, form, "line-form")
	fields.Set("note", "")
	wantPage(t, "empty line comment", b.Post(t, base+"/1/discussions", fields), 422, `A comment cannot be empty.`, `id="line-form"`)
	fields.Set("note", "Why _shout_?")
	bad := url.Values{}
	for k, v := range fields {
		bad[k] = v
	}
	bad.Set("new_line", "3")
	wantPage(t, "a line not in the diff", b.Post(t, base+"/1/discussions", bad), 422, `The comment was not saved: the line is no longer in the diff.`,
		`>Why _shout_?</textarea>`)
	posted := b.Post(t, base+"/1/discussions", fields)
	threads, _, err := alice.Client.Discussions.ListMergeRequestDiscussions(p.ID, mr.IID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var noteID int64
	for _, d := range threads {
		if n := d.Notes[0]; n.Type == gitlab.DiffNote {
			if n.Position == nil || n.Position.NewLine != 2 || n.Position.OldLine != 0 || n.Position.NewPath != "a.txt" ||
				n.Position.HeadSHA != head || n.Body != "Why _shout_?" || n.Author.Username != "bob" || n.Position.BaseSHA == "" {
				t.Fatalf("the API's line comment: %+v %+v", n, n.Position)
			}
			noteID = int64(n.ID)
		}
	}
	anchor := "note_" + strconv.FormatInt(noteID, 10)
	if noteID == 0 || posted.StatusCode != http.StatusSeeOther || posted.Header.Get("Location") != base+"/1/diffs#"+anchor {
		t.Fatalf("line comment: %d %q %+v", posted.StatusCode, posted.Header.Get("Location"), threads)
	}
	wantPage(t, "comment at its line", b.Get(t, base+"/1/diffs"), 200, `<tr class="line-comments">`, `id="`+anchor+`"`,
		`<p>Why <em>shout</em>?</p>`)
	// A reply from the Changes tab joins the thread, as the API's reply.
	var threadID string
	for _, d := range threads {
		if d.Notes[0].Type == gitlab.DiffNote {
			threadID = d.ID
		}
	}
	reply := formFields(t, b.Get(t, base+"/1/diffs"), "reply-form-"+threadID)
	reply.Set("note", "Because it matters")
	replied := b.Post(t, base+"/1/reply", reply)
	thread, _, err := alice.Client.Discussions.GetMergeRequestDiscussion(p.ID, mr.IID, threadID)
	if err != nil || len(thread.Notes) != 2 || thread.Notes[1].Body != "Because it matters" || thread.Notes[1].Position == nil ||
		replied.StatusCode != http.StatusSeeOther || replied.Header.Get("Location") != base+"/1/diffs#note_"+strconv.FormatInt(thread.Notes[1].ID, 10) {
		t.Fatalf("reply: %d %q %v %+v", replied.StatusCode, replied.Header.Get("Location"), err, thread)
	}
	wantPage(t, "comment in the timeline", b.Get(t, base+"/1"), 200,
		`commented on <a href="`+base+`/1/diffs#`+anchor+`"><bdi>a.txt</bdi>, line 2</a>`)

	// A push that changes the line makes the comment outdated, shown with
	// the lines it was made on.
	first := head
	head = w.commit("Quieter", map[string]string{"a.txt": "one\nTwo\nthree\n"})
	w.git("push", "-q", "origin", "feature")
	s.Drain(t)
	page = b.Get(t, base+"/1")
	wantPage(t, "outdated", page, 200, `<span class="badge warn">outdated</span> <span>commented on an old version of <bdi>a.txt</bdi>, line 2</span>`,
		`<div class="code diff" tabindex="0" role="region" aria-label="The lines the comment was made on">`, `<td>&#43;TWO</td>`)
	wantPage(t, "changes after the push", b.Get(t, base+"/1/diffs"), 200, `1 outdated comment`)

	// Forms without the CSRF token, or with a forged one, merge nothing.
	for what, token := range map[string]string{"missing": "", "forged": strings.Repeat("ab", 32)} {
		r := b.Post(t, base+"/1/merge", url.Values{"authenticity_token": {token}, "sha": {head}})
		wantPage(t, what+" CSRF", r, 403, `Form expired`)
	}

	// A page loaded before the push merges nothing: the head it showed is
	// not the branch's any more.
	stale := formFields(t, b.Get(t, base+"/1"), "merge-box")
	stale.Set("sha", first)
	wantPage(t, "stale merge", b.Post(t, base+"/1/merge", stale), 409, `Not merged: the source branch changed since this page was loaded.`)

	// Two people merge from the same page: the first merges, the second
	// is told, and the merge request is merged once.
	bobPage, alicePage := b.Get(t, base+"/1"), a.Get(t, base+"/1")
	wantPage(t, "bob's merge box", bobPage, 200, `class="merge-form"`, `<input type="hidden" name="sha" value="`+head+`">`, `>Merge</button>`)
	bobForm, aliceForm := formFields(t, bobPage, "merge-box"), formFields(t, alicePage, "merge-box")
	// Both at once: one merges, the other gets the 409 page.
	var wg sync.WaitGroup
	var bobGot, aliceGot fennectest.Page
	wg.Add(2)
	go func() { defer wg.Done(); bobGot = b.Post(t, base+"/1/merge", bobForm) }()
	go func() { defer wg.Done(); aliceGot = a.Post(t, base+"/1/merge", aliceForm) }()
	wg.Wait()
	winner, loser, who := bobGot, aliceGot, "bob"
	if aliceGot.StatusCode == http.StatusSeeOther {
		winner, loser, who = aliceGot, bobGot, "alice"
	}
	if winner.StatusCode != http.StatusSeeOther || winner.Header.Get("Location") != base+"/1" {
		t.Fatalf("merge: %d %q\n%.3000s", winner.StatusCode, winner.Header.Get("Location"), winner.Body)
	}
	wantPage(t, "the second merge", loser, 409, `Not merged: this merge request was merged, closed or is being merged by someone else meanwhile.`)
	got, _, err := alice.Client.MergeRequests.GetMergeRequest(p.ID, mr.IID, nil)
	if err != nil || got.State != "merged" || got.MergedBy.Username != who {
		t.Fatalf("after the merges: %v %+v", err, got)
	}
	notes, _, _ := alice.Client.Notes.ListMergeRequestNotes(p.ID, mr.IID, &gitlab.ListMergeRequestNotesOptions{ListOptions: gitlab.ListOptions{PerPage: 100}})
	count := 0
	for _, n := range notes {
		if n.System && n.Body == "merged" {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d merged notes", count)
	}
	wantPage(t, "merged", a.Get(t, base+"/1"), 200, `<span class="badge state-merged">Merged</span>`, `Merged by <a href="/`+who+`"><bdi>User `+who+`</bdi></a>`)
	wantPage(t, "merged list", a.Get(t, base+"?state=merged"), 200, `Merged <span class="count">1</span>`, `Open <span class="count">0</span>`)
	wantPage(t, "commits", a.Get(t, base+"/1/commits"), 200, `>Make two loud</a>`, `>Quieter</a>`)
}

// TestMergeRequestPagesAccess: a private project's merge request is a 404
// page for a signed-in stranger (the sign-in redirect for anonymous), and
// a form posted by a user who lost access meanwhile changes nothing.
func TestMergeRequestPagesAccess(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "secret", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "base", map[string]string{"a.txt": "a\n"})
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("topic"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, alice.Client, p.ID, "topic", "change", map[string]string{"a.txt": "b\n"})
	openMR(t, alice.Client, p.ID, "topic", "master", "Topic")
	dave, eve := s.CreateUser(t, "dave"), s.CreateUser(t, "eve")
	stocktest.AddMember(t, alice.Client, p.ID, dave.ID, gitlab.DeveloperPermissions)
	const base = "/alice/secret/-/merge_requests"

	e := s.SignedIn(t, "eve", eve.Password)
	for _, path := range []string{base, base + "/1", base + "/1/diffs", base + "/1/commits", base + "/1/pipelines"} {
		wantPage(t, "stranger "+path, e.Get(t, path), 404)
	}
	wantPage(t, "unknown", s.SignedIn(t, "alice", alice.Password).Get(t, base+"/9"), 404)
	wantPage(t, "not a number", s.SignedIn(t, "alice", alice.Password).Get(t, base+"/01"), 404)

	// A Guest sees what the API lets a Guest see: the API's answer, as a
	// page.
	guest := s.CreateUser(t, "gus")
	stocktest.AddMember(t, alice.Client, p.ID, guest.ID, gitlab.GuestPermissions)
	_, resp, _ := guest.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil)
	gp := s.SignedIn(t, "gus", guest.Password).Get(t, base+"/1")
	if resp == nil || gp.StatusCode != resp.StatusCode {
		t.Fatalf("guest: page %d, API %v", gp.StatusCode, resp)
	}

	// On a public project an anonymous visitor reads the pages and is
	// offered to sign in, with no form.
	pub := stocktest.NewProject(t, alice.Client, "open", "public")
	stocktest.CommitFiles(t, alice.Client, pub.ID, "master", "base", map[string]string{"a.txt": "a\n"})
	if _, _, err := alice.Client.Branches.CreateBranch(pub.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("t"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, alice.Client, pub.ID, "t", "change", map[string]string{"a.txt": "b\n"})
	openMR(t, alice.Client, pub.ID, "t", "master", "Public")
	anon := s.NewBrowser(t)
	ap := anon.Get(t, "/alice/open/-/merge_requests/1")
	wantPage(t, "anonymous overview", ap, 200, `Sign in to merge.`, `to comment.`)
	wantNot(t, "anonymous overview", ap, `<form method="post"`)
	wantPage(t, "anonymous changes", anon.Get(t, "/alice/open/-/merge_requests/1/diffs"), 200, `to comment on a line.`)
	wantNot(t, "anonymous changes", anon.Get(t, "/alice/open/-/merge_requests/1/diffs?line=0_1_0"), `comment on this line`, `id="line-form"`)
	posted := anon.Post(t, "/alice/open/-/merge_requests/1/merge", url.Values{})
	wantPage(t, "anonymous merge", posted, 403)

	d := s.SignedIn(t, "dave", dave.Password)
	page := d.Get(t, base+"/1")
	wantPage(t, "developer", page, 200, `class="merge-form"`, `>Close merge request</button>`)
	token := page.CSRF()
	if _, err := alice.Client.ProjectMembers.DeleteProjectMember(p.ID, dave.ID); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"notes", "close", "merge"} {
		r := d.Post(t, base+"/1/"+action, url.Values{"authenticity_token": {token}, "note": {"late"}})
		wantPage(t, "lost access "+action, r, 404)
	}
	got, _, _ := alice.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil)
	notes, _, _ := alice.Client.Notes.ListMergeRequestNotes(p.ID, 1, nil)
	for _, n := range notes {
		// System notes ("added 1 commit", when the push that made the
		// branch is handled after the merge request opened) are no one's.
		if !n.System {
			t.Fatalf("a user without access commented: %+v", n)
		}
	}
	if got.State != "opened" {
		t.Fatalf("a user without access changed it: %s", got.State)
	}
}

// TestMergeRequestPagesNew: the new merge request page compares the
// branches, prefills the title and description from a single commit (the
// branch's name, readable, for several), creates through the service and
// refuses a second one of the same branches with the form kept.
func TestMergeRequestPagesNew(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "make", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "base", map[string]string{"a.txt": "a\n"})
	for _, b := range []string{"one", "fix-login_page"} {
		if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(b), Ref: gitlab.Ptr("master")}); err != nil {
			t.Fatal(err)
		}
	}
	stocktest.CommitFiles(t, alice.Client, p.ID, "one", "Add <b> file\n\nBecause *b* is needed.", map[string]string{"b.txt": "b\n"})
	stocktest.CommitFiles(t, alice.Client, p.ID, "fix-login_page", "first", map[string]string{"c.txt": "c\n"})
	stocktest.CommitFiles(t, alice.Client, p.ID, "fix-login_page", "second", map[string]string{"c.txt": "cc\n"})
	const base = "/alice/make/-/merge_requests"
	a := s.SignedIn(t, "alice", alice.Password)
	wantPage(t, "bare form", a.Get(t, base+"/new"), 200, `name="source_branch" value=""`, `name="target_branch" value="master"`)
	several := a.Get(t, base+"/new?source_branch=fix-login_page&target_branch=master")
	wantPage(t, "several commits", several, 200, `name="title" value="Fix login page"`, `>first</a>`, `>second</a>`, `<bdi>c.txt</bdi>`)
	one := a.Get(t, base+"/new?source_branch=one&target_branch=master")
	wantPage(t, "one commit", one, 200, `name="title" value="Add &lt;b&gt; file"`, `>Because *b* is needed.</textarea>`, `<bdi>b.txt</bdi>`)
	fields := formFields(t, one, "new-merge-request")
	fields.Set("title", "Add <b> file")
	fields.Set("description", "Because *b* is needed.")
	made := a.Post(t, base, fields)
	if made.StatusCode != http.StatusSeeOther || made.Header.Get("Location") != base+"/1" {
		t.Fatalf("create: %d %q\n%.3000s", made.StatusCode, made.Header.Get("Location"), made.Body)
	}
	got, _, err := alice.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil)
	if err != nil || got.Title != "Add <b> file" || got.SourceBranch != "one" || got.TargetBranch != "master" || got.Description != "Because *b* is needed." {
		t.Fatalf("the API's merge request: %v %+v", err, got)
	}
	again := a.Post(t, base, fields)
	wantPage(t, "same branches", again, 422, `an open merge request of these branches exists already.`, `value="Add &lt;b&gt; file"`)
	fields.Set("source_branch", "nope")
	wantPage(t, "missing branch", a.Post(t, base, fields), 422, `Source branch &#34;nope&#34; does not exist.`)
	wantPage(t, "anonymous", s.NewBrowser(t).Get(t, base+"/new"), 302)

	// The edit page saves through PUT's service call; its pickers offer
	// the team, the open milestones and the project's labels.
	ms, _, err := alice.Client.Milestones.CreateMilestone(p.ID, &gitlab.CreateMilestoneOptions{Title: gitlab.Ptr("v1 <i>")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Labels.CreateLabel(p.ID, &gitlab.CreateLabelOptions{Name: gitlab.Ptr("bug"), Color: gitlab.Ptr("#ff0000")}); err != nil {
		t.Fatal(err)
	}
	msID := strconv.FormatInt(ms.ID, 10)
	edit := a.Get(t, base+"/1/edit")
	wantPage(t, "edit form", edit, 200, `name="title" value="Add &lt;b&gt; file"`, `name="target_branch" value="master"`,
		`<option value="" selected>Unassigned</option><option value="alice">User alice (@alice)</option>`,
		`<option value="0" selected>None</option><option value="`+msID+`">v1 &lt;i&gt;</option>`,
		`<input type="checkbox" name="label" value="bug">`, `fill="#ff0000"`, `<label for="mr-labels">Other labels`)
	ef := url.Values{"authenticity_token": {edit.CSRF()}, "title": {"Add the b file"}, "description": {"Now *with* words"},
		"target_branch": {"master"}, "label": {"bug"}, "labels": {"ui, bug"}, "assignee": {"alice"}, "milestone_id": {msID}}
	saved := a.Post(t, base+"/1/edit", ef)
	if saved.StatusCode != http.StatusSeeOther || saved.Header.Get("Location") != base+"/1" {
		t.Fatalf("edit: %d %q\n%.2000s", saved.StatusCode, saved.Header.Get("Location"), saved.Body)
	}
	got, _, _ = alice.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil)
	if got.Title != "Add the b file" || got.Assignee == nil || got.Assignee.Username != "alice" || strings.Join(got.Labels, ",") != "bug,ui" ||
		got.Milestone == nil || got.Milestone.ID != ms.ID {
		t.Fatalf("after the edit: %+v", got)
	}
	// The form shows what was saved: the boxes checked (the typed label
	// was made, so it is a box now), the choices selected.
	wantPage(t, "edit form again", a.Get(t, base+"/1/edit"), 200, `<input type="checkbox" name="label" value="bug" checked>`,
		`<input type="checkbox" name="label" value="ui" checked>`, `name="labels" value=""`, `<option value="alice" selected>`,
		`<option value="`+msID+`" selected>`)
	ef.Set("milestone_id", "999999")
	wantPage(t, "foreign milestone", a.Post(t, base+"/1/edit", ef), 422, `The milestone is not one of the project&#39;s.`)
	ef.Set("milestone_id", msID)
	ef.Set("assignee", "nobody-here")
	wantPage(t, "unknown assignee", a.Post(t, base+"/1/edit", ef), 422, `No user is called nobody-here.`, `value="Add the b file"`)
	ef.Set("assignee", "")
	ef.Set("target_branch", "gone")
	wantPage(t, "unknown target", a.Post(t, base+"/1/edit", ef), 422, `Not saved: Target branch &#34;gone&#34; does not exist.`)
}

// TestMergeRequestPagesAutoMerge: while the head pipeline waits (no
// executor takes its job), the merge box offers Merge when pipeline
// succeeds; the page sets it as the API does, shows it, and its Cancel
// button drops it (a Reporter may not: 403, nothing changed).
func TestMergeRequestPagesAutoMerge(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "gated", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "base", map[string]string{"a.txt": "a\n"})
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("topic"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, alice.Client, p.ID, "topic", "with CI", map[string]string{".gitlab-ci.yml": "test:\n  script:\n    - echo ok\n", "a.txt": "b\n"})
	s.Drain(t)
	openMR(t, alice.Client, p.ID, "topic", "master", "Gated")
	carol := s.CreateUser(t, "carol")
	stocktest.AddMember(t, alice.Client, p.ID, carol.ID, gitlab.ReporterPermissions)
	const self = "/alice/gated/-/merge_requests/1"
	a := s.SignedIn(t, "alice", alice.Password)
	page := a.Get(t, self)
	wantPage(t, "pipeline waits", page, 200, `<span class="badge pipeline-pending">pipeline: pending</span>`,
		`<button type="submit" name="merge_when_pipeline_succeeds" value="1" class="primary">Merge when pipeline succeeds</button>`)
	form := formFields(t, page, "merge-box")
	form.Set("merge_when_pipeline_succeeds", "1")
	set := a.Post(t, self+"/merge", form)
	if set.StatusCode != http.StatusSeeOther || set.Header.Get("Location") != self {
		t.Fatalf("set the automatic merge: %d %q\n%.3000s", set.StatusCode, set.Header.Get("Location"), set.Body)
	}
	got, _, _ := alice.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil)
	if got.State != "opened" || !got.MergeWhenPipelineSucceeds {
		t.Fatalf("after the page's Merge when pipeline succeeds: %s %v", got.State, got.MergeWhenPipelineSucceeds)
	}
	page = a.Get(t, self)
	wantPage(t, "automatic merge set", page, 200, `Set to be merged automatically when the pipeline succeeds.`, `>Cancel automatic merge</button>`)
	wantNot(t, "automatic merge set", page, `class="merge-form"`)
	c := s.SignedIn(t, "carol", carol.Password)
	cp := c.Get(t, self)
	wantNot(t, "reporter", cp, `>Cancel automatic merge</button>`)
	wantPage(t, "reporter cancels", c.Post(t, self+"/cancel_auto_merge", url.Values{"authenticity_token": {cp.CSRF()}}), 403,
		`You are not allowed to cancel the automatic merge.`)
	canceled := a.Post(t, self+"/cancel_auto_merge", url.Values{"authenticity_token": {page.CSRF()}})
	if canceled.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %d", canceled.StatusCode)
	}
	if got, _, _ := alice.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil); got.MergeWhenPipelineSucceeds || got.State != "opened" {
		t.Fatalf("after cancel: %s %v", got.State, got.MergeWhenPipelineSucceeds)
	}
	wantPage(t, "after cancel", a.Get(t, self), 200, `Merge when pipeline succeeds</button>`)
}

// TestMergeRequestPagesHostile: hostile branch names, file paths, titles
// (bidi and zero-width characters), descriptions and comments render
// escaped in the list, the Overview, the Changes and the new page.
func TestMergeRequestPagesHostile(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "evil", "private")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "base", map[string]string{"a.txt": "a\n"})
	branch := `x<b>&"q"#1`
	if _, _, err := alice.Client.Branches.CreateBranch(p.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr(branch), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, alice.Client, p.ID, branch, "<img src=x onerror=alert(1)>", map[string]string{`<img src=x>.txt`: "<script>alert(1)</script>\n"})
	title := "Fix \u202eevil\u200b <i>"
	mr, _, err := alice.Client.MergeRequests.CreateMergeRequest(p.ID, &gitlab.CreateMergeRequestOptions{SourceBranch: gitlab.Ptr(branch),
		TargetBranch: gitlab.Ptr("master"), Title: gitlab.Ptr(title), Description: gitlab.Ptr("[x](javascript:alert(1)) <script>alert(2)</script>")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Client.Notes.CreateMergeRequestNote(p.ID, mr.IID, &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(`<img src=x onerror=alert(3)>`)}); err != nil {
		t.Fatal(err)
	}
	a := s.SignedIn(t, "alice", alice.Password)
	const base = "/alice/evil/-/merge_requests"
	escTitle := "<bdi>Fix \u202eevil\u200b &lt;i&gt;</bdi>"
	escBranch := `<code><bdi>x&lt;b&gt;&amp;&#34;q&#34;#1</bdi></code>`
	pages := map[string]fennectest.Page{
		"list":     a.Get(t, base),
		"overview": a.Get(t, base+"/1"),
		"changes":  a.Get(t, base+"/1/diffs"),
		"commits":  a.Get(t, base+"/1/commits"),
		"new":      a.Get(t, base+"/new?source_branch="+url.QueryEscape(branch)+"&target_branch=master"),
	}
	wantPage(t, "list", pages["list"], 200, escTitle, escBranch)
	wantPage(t, "overview", pages["overview"], 200, escTitle, escBranch)
	wantPage(t, "changes", pages["changes"], 200, `<bdi>&lt;img src=x&gt;.txt</bdi>`, `&lt;script&gt;alert(1)&lt;/script&gt;`)
	wantPage(t, "commits", pages["commits"], 200, `&lt;img src=x onerror=alert(1)&gt;`)
	wantPage(t, "new", pages["new"], 200, `value="x&lt;b&gt;&amp;&#34;q&#34;#1"`)
	for what, pg := range pages {
		wantNot(t, what, pg, "<script>alert", "<img src=x", `href="javascript:`, "<i>")
	}
}

// TestMergeRequestPagesFork: the new merge request page of a fork offers
// its upstream as the target, compares across the two and creates the
// merge request in the upstream, whose page it then shows.
func TestMergeRequestPagesFork(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	p := stocktest.NewProject(t, alice.Client, "up", "public")
	stocktest.CommitFiles(t, alice.Client, p.ID, "master", "base", map[string]string{"a.txt": "a\n"})
	bob := s.CreateUser(t, "bob")
	fork, _, err := bob.Client.Projects.ForkProject(p.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Drain(t)
	if _, _, err := bob.Client.Branches.CreateBranch(fork.ID, &gitlab.CreateBranchOptions{Branch: gitlab.Ptr("fix"), Ref: gitlab.Ptr("master")}); err != nil {
		t.Fatal(err)
	}
	stocktest.CommitFiles(t, bob.Client, fork.ID, "fix", "Fork work", map[string]string{"fork.txt": "from the fork\n"})
	bb := s.SignedIn(t, "bob", bob.Password)
	page := bb.Get(t, "/bob/up/-/merge_requests/new?source_branch=fix&target_branch=master&target_project_id="+strconv.FormatInt(p.ID, 10))
	wantPage(t, "fork's new page", page, 200, `<option value="`+strconv.FormatInt(p.ID, 10)+`" selected>alice/up (upstream)</option>`,
		`name="title" value="Fork work"`, `<bdi>fork.txt</bdi>`)
	fields := formFields(t, page, "new-merge-request")
	wantPage(t, "no title", bb.Post(t, "/bob/up/-/merge_requests", fields), 422, `The merge request was not created: title can&#39;t be blank.`)
	fields.Set("title", "Fork work")
	made := bb.Post(t, "/bob/up/-/merge_requests", fields)
	if made.StatusCode != http.StatusSeeOther || made.Header.Get("Location") != "/alice/up/-/merge_requests/1" {
		t.Fatalf("create from a fork: %d %q\n%.3000s", made.StatusCode, made.Header.Get("Location"), made.Body)
	}
	got, _, err := alice.Client.MergeRequests.GetMergeRequest(p.ID, 1, nil)
	if err != nil || got.SourceProjectID != fork.ID || got.TargetProjectID != p.ID {
		t.Fatalf("the API's merge request: %v %+v", err, got)
	}
	wantPage(t, "upstream's changes", bb.Get(t, "/alice/up/-/merge_requests/1/diffs"), 200, `<bdi>fork.txt</bdi>`)
}
